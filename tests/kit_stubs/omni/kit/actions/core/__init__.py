"""Stand-in for ``omni.kit.actions.core``: the action registry.

Behaviour used, as NVIDIA's own extensions use it (physics extscache 110.4.4):
``get_action_registry().register_action(extension_id, action_id, fn, display_name=..., description=...,
tag=...)`` returns the action, ``deregister_action(action)`` and
``deregister_all_actions_for_extension(extension_id)`` remove them (``omni.physx.ui``:
``omni/physxuicommon/windowmenuitem/__init__.py`` ``MenuItem``, ``omni/physxui/scripts/menu.py``
``_refresh_create_menu``); a menu item refers to one as ``onclick_action=(extension_id, action_id)``.
The Stage window's context menu runs it with only the parameters the action declares
(omni.kit.context_menu ``ContextMenuWidgetExtension._execute_action``: ``action_obj.parameters``,
``execute_action(*action, **params)``); ``parameters`` are the function's parameter names here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable


class Action:
    def __init__(
        self,
        extension_id: str,
        action_id: str,
        fn: Callable,
        display_name: str = "",
        description: str = "",
        icon_url: str = "",
        tag: str = "",
    ):
        self.extension_id, self.id, self._fn = extension_id, action_id, fn
        self.display_name, self.description, self.icon_url, self.tag = display_name, description, icon_url, tag

    @property
    def parameters(self) -> dict:
        return dict(inspect.signature(self._fn).parameters)

    def execute(self, *args, **kwargs):
        return self._fn(*args, **kwargs)


class ActionRegistry:
    def __init__(self):
        self._actions: dict[tuple[str, str], Action] = {}

    def register_action(
        self,
        extension_id: str,
        action_id: str,
        python_fn: Callable,
        display_name: str = "",
        description: str = "",
        icon_url: str = "",
        tag: str = "",
    ) -> Action:
        action = Action(extension_id, action_id, python_fn, display_name, description, icon_url, tag)
        self._actions[(extension_id, action_id)] = action
        return action

    def deregister_action(self, action_or_extension_id, action_id: str | None = None) -> None:
        if isinstance(action_or_extension_id, Action):
            key = (action_or_extension_id.extension_id, action_or_extension_id.id)
        else:
            key = (action_or_extension_id, action_id)
        self._actions.pop(key, None)

    def deregister_all_actions_for_extension(self, extension_id: str) -> None:
        for key in [k for k in self._actions if k[0] == extension_id]:
            del self._actions[key]

    def get_action(self, extension_id: str, action_id: str) -> Action | None:
        return self._actions.get((extension_id, action_id))

    def get_all_actions_for_extension(self, extension_id: str) -> list[Action]:
        return [a for k, a in self._actions.items() if k[0] == extension_id]


_REGISTRY = ActionRegistry()


def get_action_registry() -> ActionRegistry:
    return _REGISTRY


acquire_action_registry = get_action_registry


def execute_action(extension_id: str, action_id: str, *args, **kwargs):
    action = _REGISTRY.get_action(extension_id, action_id)
    if action is None:
        import carb

        carb.log_error(f"action {extension_id}::{action_id} is not registered")
        return None
    return action.execute(*args, **kwargs)
