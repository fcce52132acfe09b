"""Where the in-stage sweep writes its reports, for stages that may not live in a local folder.

Why: a stage opened in Kit may come from ``omniverse://`` or ``https://`` (its layer's path
is a URL: ``Path(url).parent`` is a relative ``omniverse:/server/...`` folder made in Kit's
working directory), from a folder the user cannot write, or from no file at all (a new
stage). Reports go next to the stage only when that is a local, writable folder; otherwise
to one local folder, the setting ``/exts/mimic_ext/fet022/fallbackReportDir``, by default
``~/Documents/mimic_ext/fet022`` (or the temporary folder where there is no Documents).

Pure Python (no ``omni``), so it is unit-tested without Kit.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit


def is_url(path: str) -> bool:
    """``omniverse://``, ``https://``, ``file:`` ...; not a Windows drive letter (``C:\\``)."""
    scheme = urlsplit(path).scheme
    return len(scheme) > 1


def local_file(identifier: str, real_path: str) -> Path | None:
    """The local file a layer was read from, or None (URL, anonymous layer, no file)."""
    for candidate in (real_path, identifier):
        if not candidate or candidate.startswith("anon:"):
            continue
        if is_url(candidate):
            parts = urlsplit(candidate)
            if parts.scheme == "file" and parts.path:
                return Path(unquote(parts.path))
            continue
        return Path(candidate)
    return None


def report_stem(identifier: str) -> str:
    """A file-name stem for the reports: the stage file's name without extension, else ``stage``."""
    if not identifier or identifier.startswith("anon:"):
        return "stage"
    name = unquote(urlsplit(identifier).path if is_url(identifier) else identifier)
    stem = Path(name.rstrip("/")).stem
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", stem).strip("._")
    return stem or "stage"


def default_fallback_dir(home: Path | None = None) -> Path:
    home = Path.home() if home is None else home
    documents = home / "Documents"
    if documents.is_dir():
        return documents / "mimic_ext" / "fet022"
    return Path(tempfile.gettempdir()) / "mimic_ext_fet022"


def folder_writable(folder: Path) -> bool:
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def report_location(
    identifier: str,
    real_path: str,
    chosen: str | os.PathLike | None = None,
    fallback: str | os.PathLike | None = None,
    writable: Callable[[Path], bool] | None = None,
) -> tuple[Path, str]:
    """(folder, stem) for the reports of the stage whose root layer is ``identifier`` / ``real_path``.

    ``chosen``: a folder the user picked (argument, the window's field, the ``reportDir``
    setting); it always wins. ``fallback``: the ``fallbackReportDir`` setting (empty: the
    default above) for stages that are not in a local, writable folder.
    """
    writable = writable or folder_writable
    stem = report_stem(identifier or real_path)
    if chosen:
        return Path(chosen).expanduser(), stem
    local = local_file(identifier, real_path)
    if local is not None and local.is_absolute() and writable(local.parent):
        return local.parent, stem
    return (Path(fallback).expanduser() if fallback else default_fallback_dir()), stem
