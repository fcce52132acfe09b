"""Stand-in for ``omni.kit.menu.utils`` (behaviour of Kit's ``omni/kit/menu/utils/utils.py``).

``add_menu_items(menu, name, menu_index=0, can_rebuild_menus=True, delegate=None)`` merges a list of
``MenuItemDescription`` into the menu called ``name`` and returns that list; ``remove_menu_items(menu, name,
can_rebuild_menus=True)`` removes the items of that same list. ``get_merged_menus()`` -> ``{name: [items]}``.
An item with ``onclick_action=(ext_id, action_id)`` runs that registered action when clicked (``_stub_click``;
NVIDIA's use: ``omni.physx.ui`` ``omni/physxuicommon/windowmenuitem/__init__.py`` ``MenuItem``).
"""

from __future__ import annotations

from collections.abc import Callable


class MenuItemDescription:
    def __init__(
        self,
        name: str = "",
        glyph: str = "",
        header=None,
        appear_after="",
        enabled: bool = True,
        ticked: bool = False,
        ticked_value=None,
        radio_group="",
        sub_menu=None,
        hotkey=None,
        name_fn=None,
        show_fn=None,
        enable_fn=None,
        ticked_fn=None,
        onclick_action=None,
        unclick_action=None,
        onclick_fn: Callable | None = None,
        unclick_fn=None,
        onclick_right_fn=None,
        original_svg_color: bool = False,
        original_menu_item=None,
        user=None,
        hotkey_window=None,
    ):
        self.name = name
        self.glyph = glyph
        self.header = header
        self.appear_after = appear_after
        self.enabled = enabled
        self.ticked = ticked
        self.ticked_value = ticked_value
        self.radio_group = radio_group
        self.sub_menu = sub_menu
        self.hotkey = hotkey
        self.name_fn = name_fn
        self.show_fn = show_fn
        self.enable_fn = enable_fn
        self.ticked_fn = ticked_fn
        self.onclick_action = onclick_action
        self.unclick_action = unclick_action
        self.onclick_fn = onclick_fn
        self.unclick_fn = unclick_fn
        self.onclick_right_fn = onclick_right_fn
        self.original_svg_color = original_svg_color
        self.original_menu_item = original_menu_item
        self.user = user or {}
        self.hotkey_window = hotkey_window

    def __repr__(self) -> str:
        return f"<MenuItemDescription {self.name!r}>"


_menus: dict[str, list] = {}


def add_menu_items(menu: list, name: str, menu_index: int = 0, can_rebuild_menus: bool = True, delegate=None):
    _menus.setdefault(name, []).extend(menu)
    return menu


def remove_menu_items(menu: list, name: str, can_rebuild_menus: bool = True) -> None:
    items = _menus.get(name, [])
    ids = {id(m) for m in menu}
    _menus[name] = [m for m in items if id(m) not in ids]
    if not _menus[name]:
        del _menus[name]


def refresh_menu_items(name: str, immediately=None) -> None:
    pass


def rebuild_menus() -> None:
    pass


def _stub_click(item: MenuItemDescription):
    """What clicking a menu item does: run its action (``onclick_action``), else its ``onclick_fn``."""
    if item.onclick_action:
        import omni.kit.actions.core

        return omni.kit.actions.core.execute_action(*item.onclick_action)
    return item.onclick_fn() if item.onclick_fn else None


def get_merged_menus() -> dict:
    return {name: list(items) for name, items in _menus.items()}
