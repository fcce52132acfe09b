"""Finding the ``#`` comments of a hand-written .usda before an in-place edit rewrites it.

USD keeps no comments: a layer is parsed into specs and written back from them, so saving
an edited .usda drops every ``#`` line (a 50 MB commented file came back as 5 KB). Keeping
them would mean editing the text ourselves, outside USD, which an atomic, validated save
through USD cannot promise; instead the edit says, before it writes, how many comment lines
it drops and how to keep them (``-o`` another file).
"""

from __future__ import annotations

import os
import re

#: a line whose first non-blank character is '#', after the '#usda 1.0' header line
_COMMENT = re.compile(rb"^[ \t]*#", re.M)


def comment_lines(path: str | os.PathLike) -> int:
    """How many ``#`` comment lines the text layer at ``path`` holds (0 for a binary layer or
    one that cannot be read: nothing to lose, or the save reports the problem)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return 0
    if not data.startswith(b"#usda"):
        return 0
    return max(0, len(_COMMENT.findall(data)) - 1)  # the header line is not a comment


def dropped_comments_warning(path: str | os.PathLike) -> str | None:
    """The warning an in-place save of ``path`` gives when it drops comments, else None."""
    n = comment_lines(path)
    if not n:
        return None
    return (
        f"{path}: holds {n} '#' comment line(s), which USD does not keep: this in-place edit drops them "
        "(give -o OTHER.usda to keep this file as it is)"
    )
