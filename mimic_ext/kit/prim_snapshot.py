"""The exact authored state of one prim on one layer, kept so that an undo can put it back.

Why a copy of the whole prim spec: an undo must restore not only values but whether an
attribute was authored at all (a fallback and an authored value equal to it read the same
but save differently), the ``apiSchemas`` list op, property order and anything else the
edit touched. ``Sdf.CopySpec`` of the prim spec captures all of it. When the layer had no
spec for the prim (e.g. the edit target is a session layer), the snapshot remembers the
first missing prefix instead, and restoring removes what the edit created there.

Pure pxr (no ``omni``), so it is unit-tested without Kit.
"""

from __future__ import annotations

from pxr import Sdf, Usd


class PrimSpecSnapshot:
    """What ``layer`` says about ``path`` (a prim path in that layer's namespace)."""

    def __init__(self, layer: Sdf.Layer, path: Sdf.Path | str):
        self.layer = layer
        self.path = Sdf.Path(str(path))
        self._copy: Sdf.Layer | None = None
        self._created_root: Sdf.Path | None = None
        if layer.GetPrimAtPath(self.path):
            self._copy = Sdf.Layer.CreateAnonymous("mimic_undo.usda")
            Sdf.CreatePrimInLayer(self._copy, self.path)
            if not Sdf.CopySpec(layer, self.path, self._copy, self.path):
                raise RuntimeError(f"cannot record {self.path} of {layer.identifier} for undo")
        else:
            for prefix in self.path.GetPrefixes():
                if not layer.GetPrimAtPath(prefix):
                    self._created_root = prefix
                    break

    @classmethod
    def of_edit_target(cls, stage: Usd.Stage, prim_path: Sdf.Path | str) -> "PrimSpecSnapshot":
        """Snapshot of the prim where the stage's edit target will write."""
        target = stage.GetEditTarget()
        return cls(target.GetLayer(), target.MapToSpecPath(Sdf.Path(str(prim_path))))

    def restore(self) -> None:
        """Put the layer back exactly as it was when the snapshot was taken."""
        with Sdf.ChangeBlock():
            if self._copy is not None:
                if not self.layer.GetPrimAtPath(self.path):
                    Sdf.CreatePrimInLayer(self.layer, self.path)
                if not Sdf.CopySpec(self._copy, self.path, self.layer, self.path):
                    raise RuntimeError(f"cannot restore {self.path} in {self.layer.identifier}")
                return
            if self._created_root is None:
                return
            spec = self.layer.GetPrimAtPath(self._created_root)
            if not spec:
                return
            parent_path = self._created_root.GetParentPath()
            parent = (self.layer.pseudoRoot if parent_path == Sdf.Path.absoluteRootPath
                      else self.layer.GetPrimAtPath(parent_path))
            del parent.nameChildren[self._created_root.name]
