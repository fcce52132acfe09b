"""Stand-in for ``omni.kit.context_menu``: extensions add entries to other windows' context menus.

Behaviour used (NVIDIA's ``omni.physx.ui``, ``omni/physxui/scripts/menu.py``
``_refresh_additional_menu``: ``omni.kit.context_menu.add_menu(menu_dict, "MENU",
"omni.kit.widget.stage")``, kept in an attribute and dropped (set to None) to remove it; its
``show_fn`` callables take the payload dict and read ``payload.get("prim_list", [])``, a list of
``Usd.Prim``). Building and clicking follow omni.kit.context_menu ``ContextMenuWidgetExtension``
(``_get_fn_result``: every ``show_fn`` in the list must return True; ``_build_menu``; ``_execute_action``:
one frame later, ``execute_action(ext_id, action_id, **{k: objects[k] for k in action.parameters if k in
objects})``).
"""

from __future__ import annotations

import asyncio
import weakref

import omni.kit.app


class _MenuSubscription:
    """Returned by ``add_menu``; the entry lives as long as this object does."""

    def __init__(self, menu_dict: dict, index: str, extension_id: str):
        self.menu_dict, self.index, self.extension_id = menu_dict, index, extension_id


_subscriptions: list[weakref.ref] = []


def add_menu(menu_dict: dict, index: str, extension_id: str) -> _MenuSubscription:
    sub = _MenuSubscription(menu_dict, index, extension_id)
    _subscriptions.append(weakref.ref(sub))
    return sub


def get_menu_dict(index: str, extension_id: str) -> list[dict]:
    live = [r() for r in _subscriptions]
    return [s.menu_dict for s in live if s is not None and s.index == index and s.extension_id == extension_id]


def _shown(entry: dict, objects: dict) -> bool:
    fns = entry.get("show_fn")
    if fns is None:
        return True
    for fn in fns if isinstance(fns, list) else [fns]:
        if not fn(objects):
            return False
    return True


def _stub_visible_entries(index: str, extension_id: str, objects: dict) -> list[dict]:
    """The leaf entries a right click with ``objects`` would show (tests only)."""
    return [e for e in get_menu_dict(index, extension_id) if _shown(e, objects)]


def _stub_click(entry: dict, objects: dict):
    """Click an entry as the context menu does: an action runs one frame later with its declared params."""
    action = entry.get("onclick_action")
    if action:
        import omni.kit.actions.core as ac

        async def run():
            await omni.kit.app.get_app().next_update_async()
            action_obj = ac.acquire_action_registry().get_action(action[0], action[1])
            params = {key: objects[key] for key in action_obj.parameters if key in objects}
            ac.execute_action(*action, **params)

        return asyncio.ensure_future(run(), loop=omni.kit.app.get_app()._loop)
    return entry["onclick_fn"](objects)
