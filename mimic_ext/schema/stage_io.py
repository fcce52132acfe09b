"""Opening and saving stages with errors a person can act on.

USD reports a bad file as a multi-line C++ error and prints every unresolved payload as
its own warning; users need one line that names the file. Saving goes through a
temporary file and a rename so that a failed save never leaves a half-written asset.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from pxr import Sdf, Tf, Usd

from ..atomic_write import write_atomically
from ..errors import MimicInputError

USD_EXTENSIONS = (".usd", ".usda", ".usdc", ".usdz")


@dataclass
class OpenedStage:
    """A stage plus what went wrong while composing it (missing payloads, references)."""

    stage: Usd.Stage
    path: Path
    composition_errors: list[str] = field(default_factory=list)

    def composition_summary(self) -> str | None:
        """One warning line for all composition errors, or None when there were none."""
        if not self.composition_errors:
            return None
        first = self.composition_errors[0].splitlines()[0]
        more = len(self.composition_errors) - 1
        return (f"{self.path}: {len(self.composition_errors)} composition error(s) "
                f"(missing payloads or references); first: {first}"
                + (f" (+{more} more)" if more else ""))


@contextlib.contextmanager
def _quiet_stderr():
    """Silence C++ diagnostics written straight to fd 2 (USD composition warnings)."""
    try:
        fd = os.dup(2)
    except OSError:
        yield
        return
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(fd, 2)
            os.close(fd)


def _first_usd_message(exc: Exception) -> str:
    """The first quoted message of a Tf error (the parser's, with file:line:column)."""
    text = str(exc)
    quoted = re.findall(r"in file \S+ : '(.*?)'\s*(?:\n\s*Error in|$)", text, flags=re.S)
    msg = quoted[0] if quoted else text.strip().splitlines()[-1]
    return " ".join(msg.split())


def open_stage(path: str | os.PathLike, quiet: bool = True) -> OpenedStage:
    """Open a USD file for reading; ``MimicInputError`` names the file and the problem."""
    p = Path(path)
    if not p.exists():
        raise MimicInputError(f"{p}: no such file")
    if p.is_dir():
        raise MimicInputError(f"{p}: is a folder, not a USD file")
    if p.suffix.lower() not in USD_EXTENSIONS or Sdf.FileFormat.FindByExtension(p.suffix.lstrip(".")) is None:
        raise MimicInputError(f"{p}: not a USD file (expected one of {', '.join(USD_EXTENSIONS)})")
    if not os.access(p, os.R_OK):
        raise MimicInputError(f"{p}: not readable (check the file's permissions)")
    ctx = _quiet_stderr() if quiet else contextlib.nullcontext()
    try:
        with ctx:
            stage = Usd.Stage.Open(str(p))
    except Tf.ErrorException as exc:
        raise MimicInputError(f"{p}: cannot be read as USD: {_first_usd_message(exc)}") from None
    if stage is None:
        raise MimicInputError(f"{p}: cannot be read as USD")
    errors = [str(e) for e in stage.GetCompositionErrors()]
    return OpenedStage(stage=stage, path=p, composition_errors=errors)


def save_layer_atomically(layer: Sdf.Layer, out_path: str | os.PathLike) -> Path:
    """Write ``layer`` to ``out_path`` so that the file appears only complete (atomic_write)."""
    out = Path(out_path)

    def export(tmp: Path) -> None:
        try:
            ok = layer.Export(str(tmp))
        except Tf.ErrorException as exc:
            raise MimicInputError(f"{out}: cannot write: {_first_usd_message(exc)}") from None
        if not ok:
            raise MimicInputError(f"{out}: cannot write (USD export failed)")

    return write_atomically(out, export)


def save_stage_atomically(stage: Usd.Stage, out_path: str | os.PathLike | None = None) -> Path:
    """Save the stage's root layer (the edit target of our edits) atomically.

    ``out_path`` None means in place. Only the root layer is written: sublayers and
    references stay as they are.
    """
    root = stage.GetRootLayer()
    target = Path(out_path) if out_path else Path(root.realPath)
    return save_layer_atomically(root, target)
