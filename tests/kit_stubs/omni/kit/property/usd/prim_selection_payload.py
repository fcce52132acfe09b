"""``PrimSelectionPayload`` (behaviour of Kit's ``prim_selection_payload.py``).

A list-like of ``Sdf.Path`` bound to a stage by weak reference: ``len`` is 0 and the payload is falsy once the
stage is gone; ``get_stage()`` dereferences; no ``__eq__`` (identity comparison).
"""

from __future__ import annotations

import weakref

from pxr import Sdf, Usd


class PrimSelectionPayload:
    def __init__(self, stage: weakref.ref[Usd.Stage], paths: list[Sdf.Path]):
        self._stage = stage
        self._payload = paths
        self._ignore_large_selection_override = False
        import omni.kit.property.usd

        self._large_selection_count = omni.kit.property.usd.get_large_selection_count()

    def __len__(self):
        if self._stage is None or self._stage() is None:
            return 0
        return len(self._payload)

    def __iter__(self):
        return self._payload.__iter__()

    def __getitem__(self, key):
        return self._payload.__getitem__(key)

    def __bool__(self):
        return self._stage is not None and self._stage() is not None and len(self._payload) > 0

    def get_stage(self):
        return self._stage() if self._stage else None

    def get_paths(self) -> list[Sdf.Path]:
        return self._payload

    def set_large_selection_override(self, state: bool):
        self._ignore_large_selection_override = state

    def get_large_selection_count(self):
        return self._large_selection_count

    def is_large_selection(self) -> bool:
        if not self._ignore_large_selection_override:
            return bool(self._large_selection_count and len(self._payload) > self._large_selection_count)
        return False

    def cleanup_payload(self):
        stage = self.get_stage()
        kept = [p for p in self.get_paths() if stage.GetPrimAtPath(p)]
        if len(kept) != len(self._payload):
            return PrimSelectionPayload(weakref.ref(stage), kept)
        return self
