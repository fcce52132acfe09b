"""Undo of one command's edit to one prim: only what that edit changed goes back.

Why not a copy of the whole prim spec: PhysX writes joint state on the same prim while a
simulation runs, and other panels write drives and limits there; putting the whole spec back
would erase those later writes. Kit's own helper works per property instead
(``omni.kit.usd_undo``, ``layer_undo.py``: ``UsdLayerUndo.reserve`` records one spec path,
or one info key of a prim, and ``UsdLayerUndo.undo`` removes a property that was new and
copies back one that existed). This class does the same for the properties an edit changed,
found by comparing the prim's specs on the edit target before and after the edit, so an
attribute that was unauthored is unauthored again (a fallback and an authored value equal to
it read the same but save differently). ``apiSchemas`` is undone item by item (the items the
edit added are taken out, the ones it removed put back), so an API applied meanwhile stays.
A prim spec the edit had to create (e.g. an ``over`` on a session layer) is removed again
when nothing else was written into it.

It keeps the layer's identifier, not the layer or the stage: Kit's undo history keeps
commands alive, and a closed stage must be able to go away.

Pure pxr (no ``omni``), so it is unit-tested without Kit.
"""

from __future__ import annotations

from pxr import Sdf, Usd

_API = "apiSchemas"
_LIST_FIELDS = ("explicitItems", "prependedItems", "appendedItems", "deletedItems")


def _fields(spec) -> dict:
    """Everything a property spec says, as comparable values."""
    return {key: spec.GetInfo(key) for key in spec.ListInfoKeys()}


def _items(list_op) -> dict[str, list]:
    return {f: list(getattr(list_op, f)) if list_op is not None else [] for f in _LIST_FIELDS}


class PrimEditUndo:
    """Record ``prim_path`` on the stage's edit target now; ``commit()`` after the edit; ``undo()``."""

    def __init__(self, stage: Usd.Stage, prim_path: str | Sdf.Path):
        target = stage.GetEditTarget()
        layer = target.GetLayer()
        self.layer_identifier = layer.identifier
        self.path = target.MapToSpecPath(Sdf.Path(str(prim_path)))
        self._layer = layer  # held only until commit()
        self._copy = Sdf.Layer.CreateAnonymous("mimic_undo.usda")
        self._created_root = next((p for p in self.path.GetPrefixes() if not layer.GetPrimAtPath(p)), None)
        spec = layer.GetPrimAtPath(self.path)
        self._before: dict[str, dict] = {}
        self._api_before = spec.GetInfo(_API) if spec and spec.HasInfo(_API) else None
        if spec:
            Sdf.CreatePrimInLayer(self._copy, self.path)
            for name, prop in spec.properties.items():
                self._before[name] = _fields(prop)
                Sdf.CopySpec(layer, prop.path, self._copy, prop.path)
        self.changed: list[str] = []
        self._api_added: dict[str, list] = {}
        self._api_removed: dict[str, list] = {}

    def commit(self) -> None:
        """Note what the edit changed; drop the rest of the record and the layer reference."""
        layer, self._layer = self._layer, None
        if layer is None:
            return
        spec = layer.GetPrimAtPath(self.path)
        after = {name: _fields(prop) for name, prop in spec.properties.items()} if spec else {}
        self.changed = sorted(n for n in set(self._before) | set(after) if self._before.get(n) != after.get(n))
        for name in set(self._before) - set(self.changed):
            kept = self._copy.GetPrimAtPath(self.path)
            kept.RemoveProperty(kept.properties[name])
        api_after = spec.GetInfo(_API) if spec and spec.HasInfo(_API) else None
        before, now = _items(self._api_before), _items(api_after)
        self._api_added = {f: [x for x in now[f] if x not in before[f]] for f in _LIST_FIELDS}
        self._api_removed = {f: [x for x in before[f] if x not in now[f]] for f in _LIST_FIELDS}

    @property
    def touched_anything(self) -> bool:
        return bool(self.changed or any(self._api_added.values()) or any(self._api_removed.values()))

    def undo(self) -> None:
        """Take back exactly what the edit changed."""
        layer = Sdf.Layer.Find(self.layer_identifier)
        if layer is None:
            raise RuntimeError(f"cannot undo the mimic edit of {self.path}: layer {self.layer_identifier} is closed")
        with Sdf.ChangeBlock():
            for name in self.changed:
                prop_path = self.path.AppendProperty(name)
                spec = layer.GetPrimAtPath(self.path)
                current = layer.GetPropertyAtPath(prop_path)
                if current:
                    spec.RemoveProperty(current)
                if name in self._before:
                    if not spec:
                        spec = Sdf.CreatePrimInLayer(layer, self.path)
                    if not Sdf.CopySpec(self._copy, prop_path, layer, prop_path):
                        raise RuntimeError(f"cannot restore {prop_path} in {layer.identifier}")
            self._undo_api(layer)
            self._remove_created_spec(layer)

    def _undo_api(self, layer: Sdf.Layer) -> None:
        if not any(self._api_added.values()) and not any(self._api_removed.values()):
            return
        spec = layer.GetPrimAtPath(self.path) or Sdf.CreatePrimInLayer(layer, self.path)
        current = _items(spec.GetInfo(_API) if spec.HasInfo(_API) else None)
        before = _items(self._api_before)
        explicit = (
            self._api_before.isExplicit
            if self._api_before is not None
            else spec.HasInfo(_API) and spec.GetInfo(_API).isExplicit
        )
        restored = Sdf.TokenListOp()
        for f in ("explicitItems",) if explicit else _LIST_FIELDS[1:]:
            items = [x for x in current[f] if x not in self._api_added[f]]
            for x in self._api_removed[f]:
                if x not in items:
                    items.insert(min(before[f].index(x), len(items)), x)
            setattr(restored, f, items)
        if self._api_before is None and not any(getattr(restored, f) for f in _LIST_FIELDS):
            spec.ClearInfo(_API)
        else:
            spec.SetInfo(_API, restored)

    def _remove_created_spec(self, layer: Sdf.Layer) -> None:
        """Remove the specs the edit created, from the prim up to the first one that was missing, while empty."""
        if self._created_root is None:
            return
        path = self.path
        while True:
            spec = layer.GetPrimAtPath(path)
            if spec:
                empty = (
                    not spec.properties
                    and not spec.nameChildren
                    and spec.specifier == Sdf.SpecifierOver
                    and set(spec.ListInfoKeys()) <= {"specifier"}
                )
                if not empty:
                    return
                parent = (
                    layer.pseudoRoot
                    if path.GetParentPath() == Sdf.Path.absoluteRootPath
                    else layer.GetPrimAtPath(path.GetParentPath())
                )
                del parent.nameChildren[path.name]
            if path == self._created_root:
                return
            path = path.GetParentPath()
