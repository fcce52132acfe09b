"""Writing a file so that it appears only complete: a temporary beside it, then a rename.

Every file mimic_ext writes (edited stages, imported robots, URDF exports, reports) goes
through here, so a full disk, a read-only or vanished folder or a crash never leaves a
half-written asset or destroys the previous one. Kept free of pxr so that report writers
in processes without USD can use it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

from .errors import MimicInputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(out_path: str | os.PathLike, write: Callable[[Path], None],
                     make_parent: bool = False) -> Path:
    """Call ``write(tmp)`` to fill a temporary in the target folder, then rename it to ``out_path``.

    The new file keeps the old one's permissions (a new one gets ``0666 & ~umask``, not
    mkstemp's private 0600). On any failure ``out_path`` is untouched and the temporary is
    removed; ``OSError`` becomes a one-line ``MimicInputError`` naming the file.
    """
    out = Path(out_path)
    folder = out.parent if str(out.parent) else Path(".")
    if make_parent:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MimicInputError(f"{out}: cannot create folder {folder}: {exc.strerror or exc}") from None
    if not folder.is_dir():
        raise MimicInputError(f"{out}: folder {folder} does not exist")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{out.stem}.", suffix=out.suffix or ".tmp", dir=folder)
    except OSError as exc:
        raise MimicInputError(f"{out}: cannot write in {folder}: {exc.strerror or exc}") from None
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        try:
            write(tmp)
            os.chmod(tmp, out.stat().st_mode & 0o777 if out.exists() else 0o666 & ~_umask())
            os.replace(tmp, out)
        except OSError as exc:
            raise MimicInputError(f"{out}: cannot write: {exc.strerror or exc}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return out


def write_text_atomically(out_path: str | os.PathLike, text: str, make_parent: bool = False) -> Path:
    """``write_atomically`` for UTF-8 text."""
    return write_atomically(out_path, lambda tmp: tmp.write_text(text, encoding="utf-8"), make_parent)
