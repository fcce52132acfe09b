"""Opening and saving stages with errors a person can act on.

USD reports a bad file as a multi-line C++ error and prints every unresolved payload as
its own warning; users need one line that names the file. USD would also block forever
on a FIFO and read /dev/zero until memory runs out, so every layer a stage composes
(sublayers, references, payloads, recursively) is checked to be a regular file of
bounded size before USD opens it. Saving goes through a temporary file and a rename so
that a failed save never leaves a half-written asset.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from pxr import Ar, Sdf, Tf, Usd

from ..atomic_write import write_atomically
from ..errors import MimicInputError
from ..input_files import MAX_INPUT_BYTES, check_input_file, check_regular_file
from ..native_stderr import quiet_native_stderr

USD_EXTENSIONS = (".usd", ".usda", ".usdc", ".usdz")
#: the extensions a stage can be saved to (usdz is read-only in USD)
WRITABLE_USD_EXTENSIONS = (".usda", ".usdc", ".usd")
#: robot descriptions the importers read (URDF, MJCF)
ROBOT_SUFFIXES = (".urdf", ".xml", ".mjcf")
#: binary layers (crate, usdz) are read lazily by USD, so they may be larger than text ones
#: (text layers get input_files.MAX_INPUT_BYTES, as every text input does)
MAX_BINARY_LAYER_BYTES = 1024 * 1024 * 1024
_BINARY_MAGIC = (b"PXR-USDC", b"PK\x03\x04")


@dataclass
class OpenedStage:
    """A stage plus what went wrong while composing it (missing payloads, references)."""

    stage: Usd.Stage
    path: Path
    composition_errors: list[str] = field(default_factory=list)
    #: every local file the stage reads (root layer first), symlinks resolved: the inputs
    #: an output must never overwrite
    files: list[Path] = field(default_factory=list)
    #: notes from reading it (e.g. an importer's, for a URDF opened as a stage)
    warnings: list[str] = field(default_factory=list)

    def composition_summary(self) -> str | None:
        """One warning line for all composition errors, or None when there were none."""
        if not self.composition_errors:
            return None
        first = self.composition_errors[0].splitlines()[0]
        more = len(self.composition_errors) - 1
        return (
            f"{self.path}: {len(self.composition_errors)} composition error(s) "
            f"(missing payloads or references); first: {first}" + (f" (+{more} more)" if more else "")
        )


def _first_usd_message(exc: Exception) -> str:
    """The first quoted message of a Tf error (the parser's, with file:line:column)."""
    text = str(exc)
    quoted = re.findall(r"in file \S+ : '(.*?)'\s*(?:\n\s*Error in|$)", text, flags=re.S)
    msg = quoted[0] if quoted else text.strip().splitlines()[-1]
    return " ".join(msg.split())


def _check_layer_file(path: str | os.PathLike, what: str = "USD layer") -> Path:
    """A layer USD may open: a regular file, text up to MAX_INPUT_BYTES, binary up to MAX_BINARY_LAYER_BYTES."""
    p = check_regular_file(path, what)
    try:
        with open(p, "rb") as fh:
            magic = fh.read(8)
    except OSError as exc:
        raise MimicInputError(f"{p}: cannot be read: {exc.strerror or exc}") from None
    binary = magic.startswith(_BINARY_MAGIC)
    return check_input_file(p, what, MAX_BINARY_LAYER_BYTES if binary else MAX_INPUT_BYTES)


def _open_layer(path: str) -> Sdf.Layer | None:
    """The layer at ``path``, re-read if an unedited copy is already in memory (a file changed on
    disk since, e.g. by another process, is seen as it is now). None when USD cannot parse it."""
    try:
        layer = Sdf.Layer.Find(path)
        if layer is not None and not layer.dirty:
            layer.Reload()
        return layer or Sdf.Layer.FindOrOpen(path)
    except Tf.ErrorException:
        return None


def _local_dependency(layer: Sdf.Layer, asset_path: str) -> str | None:
    """The local file a composition arc of ``layer`` names, when it exists on this machine."""
    if not asset_path or "`" in asset_path:  # empty, or an expression evaluated later
        return None
    resolver = Ar.GetResolver()
    try:
        identifier = resolver.CreateIdentifier(asset_path, Ar.ResolvedPath(layer.resolvedPath or layer.realPath))
        if Ar.IsPackageRelativePath(identifier):
            identifier = Ar.SplitPackageRelativePathOuter(identifier)[0]
        resolved = str(resolver.Resolve(identifier)) or identifier
    except Tf.ErrorException:
        return None
    return resolved if os.path.lexists(resolved) else None


def composed_layer_files(root: str | os.PathLike) -> tuple[list[Path], list[Sdf.Layer]]:
    """Check and open (with Sdf, not yet composed) the root layer and every layer it composes.

    Walks sublayers, references and payloads (variants included) recursively; each local
    file is checked before anything opens it, so a FIFO or device anywhere in the stage is
    one ``MimicInputError`` instead of a hang. Missing or unparsable dependencies are left
    for USD to report as composition errors. Returns the files (root first, symlinks
    resolved) and the open layers (hold them until the stage is open so USD reuses them).
    """
    root_path = _check_layer_file(root, "USD stage")
    files: list[Path] = []
    layers: list[Sdf.Layer] = []
    pending = [os.path.realpath(root_path)]
    seen = set(pending)
    while pending:
        path = pending.pop(0)
        if files:  # the root was checked above, with its own message
            try:
                _check_layer_file(path)
            except MimicInputError as exc:
                raise MimicInputError(f"{root}: composes {exc}") from None
        files.append(Path(path))
        layer = _open_layer(path)
        if layer is None:
            if len(files) == 1:
                return files, layers  # the root itself: Usd.Stage.Open reports why
            continue
        layers.append(layer)
        for asset_path in layer.GetCompositionAssetDependencies():
            dep = _local_dependency(layer, asset_path)
            if dep is not None and os.path.realpath(dep) not in seen:
                seen.add(os.path.realpath(dep))
                pending.append(os.path.realpath(dep))
    return files, layers


def open_stage(path: str | os.PathLike, quiet: bool = True) -> OpenedStage:
    """Open a USD file for reading; ``MimicInputError`` names the file and the problem."""
    p = Path(path)
    if not os.path.lexists(p):
        raise MimicInputError(f"{p}: no such file")
    if p.is_dir():
        raise MimicInputError(f"{p}: is a folder, not a USD file")
    if p.suffix.lower() not in USD_EXTENSIONS or Sdf.FileFormat.FindByExtension(p.suffix.lstrip(".")) is None:
        hint = (
            f"; for a URDF or MJCF robot run 'mimic-ext import {p} -o {p.with_suffix('.usda').name}' first"
            if p.suffix.lower() in ROBOT_SUFFIXES
            else ""
        )
        raise MimicInputError(f"{p}: not a USD file (expected one of {', '.join(USD_EXTENSIONS)}){hint}")
    files, layers = composed_layer_files(p)
    ctx = quiet_native_stderr() if quiet else contextlib.nullcontext()
    try:
        with ctx:
            stage = Usd.Stage.Open(str(p))
    except Tf.ErrorException as exc:
        raise MimicInputError(f"{p}: cannot be read as USD: {_first_usd_message(exc)}") from None
    if stage is None:
        raise MimicInputError(f"{p}: cannot be read as USD")
    del layers  # the stage holds what it uses now
    errors = [str(e) for e in stage.GetCompositionErrors()]
    return OpenedStage(stage=stage, path=p, composition_errors=errors, files=files)


def save_layer_atomically(layer: Sdf.Layer, out_path: str | os.PathLike, through_link: bool = False) -> Path:
    """Write ``layer`` to ``out_path`` so that the file appears only complete (atomic_write;
    a symlink ``out_path`` is refused unless ``through_link``)."""
    out = Path(out_path)

    def export(tmp: Path) -> None:
        try:
            ok = layer.Export(str(tmp))
        except Tf.ErrorException as exc:
            raise MimicInputError(f"{out}: cannot write: {_first_usd_message(exc)}") from None
        if not ok:
            raise MimicInputError(f"{out}: cannot write (USD export failed)")

    return write_atomically(out, export, through_link=through_link)


def save_stage_atomically(
    stage: Usd.Stage, out_path: str | os.PathLike | None = None, through_link: bool = False
) -> Path:
    """Save the stage's root layer (the edit target of our edits) atomically.

    ``out_path`` None means in place. Only the root layer is written: sublayers and
    references stay as they are. ``through_link``: an ``out_path`` that is a symlink (the
    stage's own file, opened through it) is written through instead of refused.
    """
    root = stage.GetRootLayer()
    target = Path(out_path) if out_path else Path(root.realPath)
    return save_layer_atomically(root, target, through_link=through_link or not out_path)
