"""Stand-in for ``carb.dictionary.Item``, what Kit's ``ExtensionManager.get_extension_dict`` returns.

Real API (Kit manual 110.0.0, ``carb.dictionary.Item``; a pybind11 class): ``get(self, arg0: str, arg1: object)
-> object`` "gets a value or child item by relative path, with a default": both arguments are required, so
``item.get("package")`` raises TypeError ("incompatible function arguments"); a subtree comes back as a child
``Item``, not a dict. ``get_dict()`` serializes the subtree into plain Python (dict/list/scalar; also checked
live by ``tools/kit_kernel_check.py``), ``get_keys()`` lists the child keys. Indexing (``item["path"]``) is
how Kit's own code reads a manifest key (KIT_API.md).
"""

from __future__ import annotations

import copy


class Item:
    def __init__(self, data: dict | None = None):
        self._data = data if data is not None else {}

    def get(self, *args):
        if len(args) != 2 or not isinstance(args[0], str):
            raise TypeError(
                "get(): incompatible function arguments. The following argument types are supported:\n"
                "    1. (self: carb.dictionary._dictionary.Item, arg0: str, arg1: object) -> object"
            )
        node = self._data
        for key in args[0].split("/"):
            if not isinstance(node, dict) or key not in node:
                return args[1]
            node = node[key]
        return Item(node) if isinstance(node, dict) else node

    def __getitem__(self, key: str):
        value = self._data[key]
        return Item(value) if isinstance(value, dict) else value

    def get_dict(self):
        return copy.deepcopy(self._data)

    def get_keys(self) -> list[str]:
        return list(self._data)
