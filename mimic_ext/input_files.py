"""Reading a file a user named without hanging or exhausting memory.

A FIFO blocks a reader forever and a device such as /dev/zero reports size 0 and never
ends, so every input (stages, their sublayers, URDF, MJCF and its includes, configs) is
checked to be a regular file before anything opens it, and the bytes actually read are
capped. Kept free of pxr so that any reader can use it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import MimicInputError

#: the largest robot description, config or stage layer read as a whole
MAX_INPUT_BYTES = 64 * 1024 * 1024

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def check_regular_file(path: str | os.PathLike, what: str = "input") -> Path:
    """``path`` as a Path when it names a readable regular file (symlinks followed), else a
    one-line ``MimicInputError`` that names it and says what it is instead."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise MimicInputError(f"{p}: no such file") from None
    except OSError as exc:
        raise MimicInputError(f"{p}: cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise MimicInputError(f"{p}: is {kind}, not a regular file; give the {what} as a file")
    if not os.access(p, os.R_OK):
        raise MimicInputError(f"{p}: not readable (check the file's permissions)")
    return p


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB"


def check_input_file(path: str | os.PathLike, what: str = "input", max_bytes: int = MAX_INPUT_BYTES) -> Path:
    """``check_regular_file`` plus a size cap, for inputs another library reads (USD layers):
    a regular file's reported size is true, so this bounds what that library will parse."""
    p = check_regular_file(path, what)
    size = os.stat(p).st_size
    if size > max_bytes:
        raise MimicInputError(f"{p}: {_mib(size)}, larger than the {_mib(max_bytes)} allowed for a {what}")
    return p


def read_input_bytes(path: str | os.PathLike, what: str = "input", max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The whole content of a regular file, refusing more than ``max_bytes`` actually read
    (the size a file reports is not trusted)."""
    p = check_regular_file(path, what)
    try:
        with open(p, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise MimicInputError(f"{p}: cannot be read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise MimicInputError(f"{p}: larger than the {_mib(max_bytes)} allowed for a {what}")
    return data


def read_input_text(path: str | os.PathLike, what: str = "input", max_bytes: int = MAX_INPUT_BYTES) -> str:
    """``read_input_bytes`` decoded as UTF-8; other bytes are one line naming the file and line."""
    data = read_input_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise MimicInputError(
            f"{Path(path)}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save the {what} as UTF-8"
        ) from None


def check_utf8_name(name: str) -> str:
    """``name`` when it is valid UTF-8, else a one-line ``MimicInputError`` showing its bytes.

    A file name that is not UTF-8 reaches Python as lone surrogates (PEP 383); USD, the
    reports and the terminal all take UTF-8, so such a name is refused before any work."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(name).decode("utf-8", "backslashreplace")
        raise MimicInputError(
            f"{shown}: the name is not UTF-8 text (USD and the reports take UTF-8 paths only); rename it"
        ) from None
    return name


def one_line(text: str) -> str:
    """``text`` printable on one line: newlines shown as ``\\n`` (a file name may hold one) and
    anything the terminal cannot take escaped."""
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
