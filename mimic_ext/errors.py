"""Errors a user can fix, as opposed to bugs.

The CLI turns a ``MimicInputError`` into one line on stderr and exit code 2; anything
else is a defect and keeps its traceback.
"""


class MimicInputError(Exception):
    """Bad input: a missing or unreadable file, an unknown prim, a value out of range.

    The message names the file, prim or line and says what to fix.
    """
