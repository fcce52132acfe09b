"""What a stored result was computed from, so that ``sweep --resume`` reuses it only when nothing
it depends on changed: the bytes of the stage's whole layer stack (sublayers, references,
payloads, and the assets they name), the sweep configuration, the engine and the tool version.

The content hash is taken from the files themselves, not their times: a catalogue copied to
another machine (or touched by a checkout) still resumes, and an edited sublayer does not.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from .. import __version__

#: read files in blocks of this size (a 1 GB payload is hashed without holding it)
_BLOCK = 1 << 20


def _file_digest(path: str, digest) -> None:
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK):
            digest.update(block)


def layer_files(path: str | os.PathLike) -> list[str]:
    """The files the stage at ``path`` is composed from (its layer stack and the assets it names),
    absolute, sorted; the stage file itself first. Unresolved references are left out (they are
    the sweep's error to report, and change nothing here until they appear)."""
    from pxr import UsdUtils

    root = os.path.abspath(os.fspath(path))
    layers, assets, _unresolved = UsdUtils.ComputeAllDependencies(root)
    found = {os.path.abspath(layer.realPath) for layer in layers if layer.realPath}
    found.update(os.path.abspath(str(a)) for a in assets if a)
    found.discard(root)
    return [root, *sorted(f for f in found if os.path.isfile(f))]


def content_hash(path: str | os.PathLike) -> str | None:
    """SHA-256 over the layer stack's file names (relative to the stage's folder) and bytes; None
    when the stage cannot be read (such a result is never reused)."""
    try:
        files = layer_files(path)
        digest = hashlib.sha256()
        base = os.path.dirname(files[0])
        for f in files:
            digest.update(os.path.relpath(f, base).encode() + b"\0")
            _file_digest(f, digest)
            digest.update(b"\0")
        return digest.hexdigest()
    except Exception:
        return None


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def unit_key(content: str | None, config: dict[str, Any], engine: str) -> dict[str, Any]:
    """The resume key of one stage on one engine: equal keys mean an equal result. ``content``:
    the stage's ``content_hash`` (hashed once per stage, shared by its engines)."""
    return {
        "content": content,
        "config": config_hash(config),
        "engine": engine,
        "tool": __version__,
    }


def reusable(stored: dict[str, Any] | None, wanted: dict[str, Any]) -> bool:
    """A stored key matches: same content (readable), configuration, engine and tool version."""
    return bool(stored) and wanted.get("content") is not None and stored == wanted


__all__ = ["config_hash", "content_hash", "layer_files", "reusable", "unit_key"]
