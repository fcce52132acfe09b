"""Stand-in for ``omni.ui``: a retained widget tree with ``with``-building, models and lazy frames.

Real behaviour (omni.ui docs per class; kit-app-template python_ui; Kit's SimplePropertyWidget source):
- a widget constructed inside ``with container:`` is added to the innermost open container; a ``Frame`` keeps
  one child (a new child replaces the old); ``Frame.set_build_fn(fn)`` / ``rebuild()`` build lazily, on the next
  draw of a visible frame (``update()`` of the app draws every visible window);
- every field has a ``.model``; without one it creates a default model; models notify value-changed,
  begin-edit and end-edit callbacks; ``ComboBox(index, "A", "B")`` builds an item model whose root value model
  holds the current index and whose ``add_item_changed_fn(fn(model, item))`` fires when it changes;
- ``Inspector.get_children(widget)`` lists a widget's children; ``Workspace.get_window(title)`` finds a window.
Keyword arguments are checked against the ones each widget accepts, so a typo fails here as it would in Kit.
"""

from __future__ import annotations

import enum
import itertools
import weakref
from collections.abc import Callable
from typing import Any

import omni.kit.app

# ---------------------------------------------------------------------------------------------
# lengths, enums, flags


class Length:
    def __init__(self, value: float):
        self.value = value


class Fraction(Length):
    pass


class Percent(Length):
    pass


class Pixel(Length):
    pass


class Alignment(enum.IntEnum):
    LEFT_TOP = 0
    LEFT_CENTER = 1
    LEFT_BOTTOM = 2
    CENTER_TOP = 3
    CENTER = 4
    CENTER_BOTTOM = 5
    RIGHT_TOP = 6
    RIGHT_CENTER = 7
    RIGHT_BOTTOM = 8
    LEFT = 1
    RIGHT = 7
    TOP = 3
    BOTTOM = 5


class DockPreference(enum.IntEnum):
    DISABLED = 0
    MAIN = 1
    RIGHT = 2
    LEFT = 3
    RIGHT_TOP = 4
    RIGHT_BOTTOM = 5
    LEFT_BOTTOM = 6


class DockPolicy(enum.IntEnum):
    DO_NOTHING = 0
    CURRENT_WINDOW_IS_ACTIVE = 1
    TARGET_WINDOW_IS_ACTIVE = 2


class ScrollBarPolicy(enum.IntEnum):
    SCROLLBAR_AS_NEEDED = 0
    SCROLLBAR_ALWAYS_OFF = 1
    SCROLLBAR_ALWAYS_ON = 2


WINDOW_FLAGS_NONE = 0
WINDOW_FLAGS_NO_TITLE_BAR = 1 << 0
WINDOW_FLAGS_NO_RESIZE = 1 << 1
WINDOW_FLAGS_NO_MOVE = 1 << 2
WINDOW_FLAGS_NO_SCROLLBAR = 1 << 3
WINDOW_FLAGS_NO_COLLAPSE = 1 << 5
WINDOW_FLAGS_NO_CLOSE = 1 << 31

# ---------------------------------------------------------------------------------------------
# models

_ids = itertools.count(1)


class _Subscription:
    def __init__(self, remove: Callable[[], None]):
        self._remove = remove

    def __del__(self):
        try:
            self._remove()
        except Exception:
            pass


class AbstractValueModel:
    def __init__(self, **kwargs):
        self._value_changed_fns: dict[int, Callable] = {}
        self._begin_edit_fns: dict[int, Callable] = {}
        self._end_edit_fns: dict[int, Callable] = {}

    # callbacks
    def add_value_changed_fn(self, fn: Callable[[AbstractValueModel], None]) -> int:
        i = next(_ids)
        self._value_changed_fns[i] = fn
        return i

    def remove_value_changed_fn(self, id: int) -> None:
        self._value_changed_fns.pop(id, None)

    def add_begin_edit_fn(self, fn: Callable[[AbstractValueModel], None]) -> int:
        i = next(_ids)
        self._begin_edit_fns[i] = fn
        return i

    def remove_begin_edit_fn(self, id: int) -> None:
        self._begin_edit_fns.pop(id, None)

    def add_end_edit_fn(self, fn: Callable[[AbstractValueModel], None]) -> int:
        i = next(_ids)
        self._end_edit_fns[i] = fn
        return i

    def remove_end_edit_fn(self, id: int) -> None:
        self._end_edit_fns.pop(id, None)

    def subscribe_value_changed_fn(self, fn) -> _Subscription:
        i = self.add_value_changed_fn(fn)
        return _Subscription(lambda: self.remove_value_changed_fn(i))

    def subscribe_begin_edit_fn(self, fn) -> _Subscription:
        i = self.add_begin_edit_fn(fn)
        return _Subscription(lambda: self.remove_begin_edit_fn(i))

    def subscribe_end_edit_fn(self, fn) -> _Subscription:
        i = self.add_end_edit_fn(fn)
        return _Subscription(lambda: self.remove_end_edit_fn(i))

    def begin_edit(self) -> None:
        for fn in list(self._begin_edit_fns.values()):
            fn(self)

    def end_edit(self) -> None:
        for fn in list(self._end_edit_fns.values()):
            fn(self)

    def _value_changed(self) -> None:
        for fn in list(self._value_changed_fns.values()):
            fn(self)

    # values (subclasses implement the getters and set_value)
    def get_value_as_float(self) -> float:
        raise NotImplementedError

    def get_value_as_int(self) -> int:
        return int(self.get_value_as_float())

    def get_value_as_bool(self) -> bool:
        return bool(self.get_value_as_int())

    def get_value_as_string(self) -> str:
        return str(self.get_value_as_float())

    def set_value(self, value) -> None:
        raise NotImplementedError

    as_float = property(lambda self: self.get_value_as_float(), lambda self, v: self.set_value(float(v)))
    as_int = property(lambda self: self.get_value_as_int(), lambda self, v: self.set_value(int(v)))
    as_bool = property(lambda self: self.get_value_as_bool(), lambda self, v: self.set_value(bool(v)))
    as_string = property(lambda self: self.get_value_as_string(), lambda self, v: self.set_value(str(v)))


def _to_float(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


class SimpleFloatModel(AbstractValueModel):
    def __init__(self, default_value: float = 0.0, **kwargs):
        self.min = kwargs.pop("min", None)
        self.max = kwargs.pop("max", None)
        super().__init__(**kwargs)
        self._value = float(default_value)

    def get_value_as_float(self) -> float:
        return self._value

    def get_value_as_string(self) -> str:
        return f"{self._value:g}"

    def set_value(self, value) -> None:
        v = _to_float(value)
        if v is None:
            return
        if self.min is not None and v < self.min:
            v = float(self.min)
        if self.max is not None and v > self.max:
            v = float(self.max)
        if v != self._value or (v != v and self._value == self._value):
            self._value = v
            self._value_changed()

    def get_min(self):
        return self.min

    def get_max(self):
        return self.max

    def set_min(self, v):
        self.min = v

    def set_max(self, v):
        self.max = v


class SimpleIntModel(AbstractValueModel):
    def __init__(self, default_value: int = 0, **kwargs):
        self.min = kwargs.pop("min", None)
        self.max = kwargs.pop("max", None)
        super().__init__(**kwargs)
        self._value = int(default_value)

    def get_value_as_float(self) -> float:
        return float(self._value)

    def get_value_as_int(self) -> int:
        return self._value

    def get_value_as_string(self) -> str:
        return str(self._value)

    def set_value(self, value) -> None:
        v = _to_float(value)
        if v is None:
            return
        v = int(v)
        if v != self._value:
            self._value = v
            self._value_changed()


class SimpleBoolModel(AbstractValueModel):
    def __init__(self, default_value: bool = False, **kwargs):
        super().__init__(**kwargs)
        self._value = bool(default_value)

    def get_value_as_float(self) -> float:
        return float(self._value)

    def get_value_as_bool(self) -> bool:
        return self._value

    def get_value_as_string(self) -> str:
        return "True" if self._value else "False"

    def set_value(self, value) -> None:
        v = value.lower() in ("1", "true") if isinstance(value, str) else bool(value)
        if v != self._value:
            self._value = v
            self._value_changed()


class SimpleStringModel(AbstractValueModel):
    def __init__(self, defaultValue: str = "", **kwargs):
        super().__init__(**kwargs)
        self._value = str(defaultValue)

    def get_value_as_string(self) -> str:
        return self._value

    def get_value_as_float(self) -> float:
        v = _to_float(self._value)
        return 0.0 if v is None else v

    def get_value_as_bool(self) -> bool:
        return self._value.lower() in ("1", "true")

    def set_value(self, value) -> None:
        v = str(value)
        if v != self._value:
            self._value = v
            self._value_changed()


class AbstractItem:
    pass


class AbstractItemModel:
    def __init__(self):
        self._item_changed_fns: dict[int, Callable] = {}

    def get_item_children(self, item=None) -> list:
        return []

    def get_item_value_model_count(self, item=None) -> int:
        return 1

    def get_item_value_model(self, item=None, column_id: int = 0):
        return None

    def add_item_changed_fn(self, fn: Callable[[AbstractItemModel, Any], None]) -> int:
        i = next(_ids)
        self._item_changed_fns[i] = fn
        return i

    def remove_item_changed_fn(self, id: int) -> None:
        self._item_changed_fns.pop(id, None)

    def subscribe_item_changed_fn(self, fn) -> _Subscription:
        i = self.add_item_changed_fn(fn)
        return _Subscription(lambda: self.remove_item_changed_fn(i))

    def _item_changed(self, item) -> None:
        for fn in list(self._item_changed_fns.values()):
            fn(self, item)


class _ListItem(AbstractItem):
    def __init__(self, text: str):
        super().__init__()
        self.model = SimpleStringModel(text)


class _ComboBoxModel(AbstractItemModel):
    """The model ``ComboBox(index, *labels)`` creates."""

    def __init__(self, current_index: int, labels):
        super().__init__()
        self._current = SimpleIntModel(current_index)
        self._current.add_value_changed_fn(lambda _m: self._item_changed(None))
        self._items = [_ListItem(str(t)) for t in labels]

    def get_item_children(self, item=None) -> list:
        return list(self._items) if item is None else []

    def get_item_value_model(self, item=None, column_id: int = 0):
        return self._current if item is None else item.model


# ---------------------------------------------------------------------------------------------
# widgets

_container_stack: list[Container] = []

_COMMON = {
    "width",
    "height",
    "name",
    "identifier",
    "tooltip",
    "tooltip_fn",
    "tooltip_offset_x",
    "tooltip_offset_y",
    "enabled",
    "visible",
    "style",
    "style_type_name_override",
    "checked",
    "selected",
    "skip_draw_when_clipped",
    "opaque_for_mouse_events",
    "mouse_pressed_fn",
    "mouse_released_fn",
    "mouse_double_clicked_fn",
    "mouse_hovered_fn",
    "mouse_moved_fn",
    "computed_content_size_changed_fn",
    "visible_min",
    "visible_max",
    "drag_fn",
    "accept_drop_fn",
    "drop_fn",
    "scroll_only_window_hovered",
}


class Widget:
    _extra_kwargs: frozenset = frozenset()

    def __init__(self, **kwargs):
        bad = set(kwargs) - _COMMON - self._extra_kwargs
        if bad:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword argument(s): {', '.join(sorted(bad))}")
        self.width = kwargs.pop("width", None)
        self.height = kwargs.pop("height", None)
        self.name = kwargs.pop("name", "")
        self.identifier = kwargs.pop("identifier", "")
        self.tooltip = kwargs.pop("tooltip", "")
        self.enabled = kwargs.pop("enabled", True)
        self.visible = kwargs.pop("visible", True)
        self.style = kwargs.pop("style", None)
        self.checked = kwargs.pop("checked", False)
        self.selected = kwargs.pop("selected", False)
        self._mouse_pressed_fn = kwargs.pop("mouse_pressed_fn", None)
        self._kwargs = kwargs
        self._parent: Container | None = None
        self.destroyed = False
        if _container_stack:
            _container_stack[-1]._add_child(self)

    def destroy(self) -> None:
        self.destroyed = True

    def set_mouse_pressed_fn(self, fn) -> None:
        self._mouse_pressed_fn = fn

    def call_mouse_pressed_fn(self, x: float, y: float, button: int, modifier: int) -> None:
        if self._mouse_pressed_fn:
            self._mouse_pressed_fn(x, y, button, modifier)

    def set_tooltip(self, text: str) -> None:
        self.tooltip = text

    def __repr__(self) -> str:
        ident = f" id={self.identifier!r}" if self.identifier else ""
        return f"<{type(self).__name__}{ident}>"


class Container(Widget):
    _extra_kwargs = frozenset({"spacing", "direction", "content_clipping"})

    def __init__(self, **kwargs):
        self._children: list[Widget] = []
        super().__init__(**kwargs)
        self.spacing = self._kwargs.get("spacing", 0)

    def _add_child(self, widget: Widget) -> None:
        if widget._parent is not None and widget in widget._parent._children:
            widget._parent._children.remove(widget)
        widget._parent = self
        self._children.append(widget)

    def add_child(self, widget: Widget) -> None:
        self._add_child(widget)

    def clear(self) -> None:
        for child in self._children:
            _destroy_tree(child)
        self._children = []

    def __enter__(self):
        _container_stack.append(self)
        return self

    def __exit__(self, *exc):
        _container_stack.pop()
        return False


def _destroy_tree(widget: Widget) -> None:
    for child in getattr(widget, "_children", []):
        _destroy_tree(child)
    widget.destroy()


class Stack(Container):
    pass


class VStack(Stack):
    pass


class HStack(Stack):
    pass


class ZStack(Stack):
    pass


class Frame(Container):
    _extra_kwargs = frozenset(
        {"build_fn", "horizontal_clipping", "vertical_clipping", "separate_window", "raster_policy", "frozen"}
    )

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._build_fn = self._kwargs.get("build_fn")
        self._dirty = self._build_fn is not None

    def _add_child(self, widget: Widget) -> None:
        for old in self._children:
            _destroy_tree(old)
        self._children = []
        super()._add_child(widget)

    def set_build_fn(self, fn) -> None:
        self._build_fn = fn
        self._dirty = fn is not None

    def rebuild(self) -> None:
        self._dirty = True

    def _build(self) -> None:
        self._dirty = False
        if self._build_fn is None:
            return
        self.clear()
        with self:
            self._build_fn()


class CollapsableFrame(Frame):
    _extra_kwargs = Frame._extra_kwargs | {"title", "collapsed", "build_header_fn", "alignment"}

    def __init__(self, title: str = "", **kwargs):
        super().__init__(**kwargs)
        self.title = self._kwargs.get("title", title)
        self._collapsed_changed_fn = None
        self._collapsed = bool(self._kwargs.get("collapsed", False))
        self._build_header_fn = self._kwargs.get("build_header_fn")

    @property
    def collapsed(self) -> bool:
        return self._collapsed

    @collapsed.setter
    def collapsed(self, value: bool) -> None:
        """A change (the user clicking the header, or code) calls the collapsed-changed fn with the new state
        (omni.ui ``CollapsableFrame.set_collapsed_changed_fn``; Kit's ``SimplePropertyWidget.build_impl`` hooks
        ``on_collapsed_changed`` to it)."""
        value = bool(value)
        changed = value != self._collapsed
        self._collapsed = value
        if changed and self._collapsed_changed_fn is not None:
            self._collapsed_changed_fn(value)

    def set_collapsed_changed_fn(self, fn) -> None:
        self._collapsed_changed_fn = fn

    def set_build_header_fn(self, fn) -> None:
        self._build_header_fn = fn


class ScrollingFrame(Frame):
    _extra_kwargs = Frame._extra_kwargs | {"horizontal_scrollbar_policy", "vertical_scrollbar_policy"}


class Spacer(Widget):
    pass


class Separator(Widget):
    pass


class Line(Widget):
    _extra_kwargs = frozenset({"alignment"})


class Triangle(Widget):
    _extra_kwargs = frozenset({"alignment"})


class Rectangle(Widget):
    pass


class Label(Widget):
    _extra_kwargs = frozenset({"alignment", "word_wrap", "elided_text", "elided_text_str", "hide_text_after_hash"})

    def __init__(self, text: str = "", **kwargs):
        super().__init__(**kwargs)
        self.text = str(text)


class Button(Widget):
    _extra_kwargs = frozenset(
        {"clicked_fn", "image_url", "image_width", "image_height", "spacing", "alignment", "text"}
    )

    def __init__(self, text: str = "", **kwargs):
        super().__init__(**kwargs)
        self.text = str(self._kwargs.get("text", text))
        self._clicked_fn = self._kwargs.get("clicked_fn")

    def set_clicked_fn(self, fn) -> None:
        self._clicked_fn = fn

    def has_clicked_fn(self) -> bool:
        return self._clicked_fn is not None

    def call_clicked_fn(self) -> None:
        if self.enabled and self._clicked_fn is not None:
            self._clicked_fn()


class _ValueWidget(Widget):
    _default_model = SimpleFloatModel

    def __init__(self, model: AbstractValueModel | None = None, **kwargs):
        super().__init__(**kwargs)
        self.model = model if model is not None else self._default_model()


class AbstractField(_ValueWidget):
    _extra_kwargs = frozenset({"read_only", "password_mode", "multiline", "allow_tab_input", "precision"})

    def focus_keyboard(self, focus: bool = True) -> None:
        pass


class StringField(AbstractField):
    _default_model = SimpleStringModel


class FloatField(AbstractField):
    _default_model = SimpleFloatModel


class IntField(AbstractField):
    _default_model = SimpleIntModel


class _Slider(_ValueWidget):
    _extra_kwargs = frozenset({"min", "max", "step", "precision", "format", "alignment"})


class FloatDrag(_Slider):
    _default_model = SimpleFloatModel


class FloatSlider(_Slider):
    _default_model = SimpleFloatModel


class IntDrag(_Slider):
    _default_model = SimpleIntModel


class IntSlider(_Slider):
    _default_model = SimpleIntModel


class ProgressBar(_ValueWidget):
    """``ui.ProgressBar(model=None, **kw)``: shows the model's float, 0..1 (omni.ui docs, ProgressBar)."""

    _default_model = SimpleFloatModel
    _extra_kwargs = frozenset({"alignment"})


class CheckBox(_ValueWidget):
    _default_model = SimpleBoolModel


class ComboBox(Widget):
    _extra_kwargs = frozenset({"arrow_only"})

    def __init__(self, *args, **kwargs):
        super().__init__(**kwargs)
        if args and isinstance(args[0], AbstractItemModel):
            self.model = args[0]
        else:
            index = int(args[0]) if args else 0
            self.model = _ComboBoxModel(index, args[1:])


# ---------------------------------------------------------------------------------------------
# windows

_windows: list[weakref.ref] = []


class Window:
    _KWARGS = {
        "width",
        "height",
        "visible",
        "flags",
        "padding_x",
        "padding_y",
        "position_x",
        "position_y",
        "dockPreference",
        "dock_preference",
        "noTabBar",
        "raster_policy",
        "auto_resize",
        "title",
    }

    def __init__(self, title: str = "", dockPreference: DockPreference = DockPreference.DISABLED, **kwargs):
        bad = set(kwargs) - self._KWARGS
        if bad:
            raise TypeError(f"Window() got unexpected keyword argument(s): {', '.join(sorted(bad))}")
        self.title = kwargs.pop("title", title)
        self.width = kwargs.get("width", 400)
        self.height = kwargs.get("height", 600)
        self.flags = kwargs.get("flags", WINDOW_FLAGS_NONE)
        self._visible = kwargs.get("visible", True)
        self._visibility_changed_fn = None
        self.frame = Frame()
        self.dock_order = 0
        _windows.append(weakref.ref(self))

    @property
    def visible(self) -> bool:
        return self._visible

    @visible.setter
    def visible(self, value: bool) -> None:
        value = bool(value)
        if value != self._visible:
            self._visible = value
            if self._visibility_changed_fn:
                self._visibility_changed_fn(value)

    def set_visibility_changed_fn(self, fn) -> None:
        self._visibility_changed_fn = fn

    def set_selected_in_dock_changed_fn(self, fn) -> None:
        pass

    def set_docked_changed_fn(self, fn) -> None:
        pass

    def deferred_dock_in(self, target: str, policy: DockPolicy = DockPolicy.DO_NOTHING) -> None:
        pass

    def focus(self) -> None:
        pass

    def destroy(self) -> None:
        self._visible = False
        _destroy_tree(self.frame)
        global _windows
        _windows = [r for r in _windows if r() is not None and r() is not self]

    def __repr__(self) -> str:
        return f"<Window {self.title!r}>"


def _draw(widget: Widget) -> None:
    if not widget.visible or widget.destroyed:
        return
    if isinstance(widget, Frame) and widget._dirty:
        widget._build()
    for child in list(getattr(widget, "_children", [])):
        _draw(child)


def _draw_all() -> None:
    """The draw pass of one frame: visible windows build their dirty frames."""
    for ref in list(_windows):
        window = ref()
        if window is not None and window.visible:
            _draw(window.frame)


omni.kit.app.get_app()._draw_fns.append(_draw_all)


class Inspector:
    @staticmethod
    def get_children(widget: Widget) -> list:
        return list(getattr(widget, "_children", []))


class Workspace:
    @staticmethod
    def get_window(title: str):
        for ref in _windows:
            window = ref()
            if window is not None and window.title == title:
                return window
        return None

    @staticmethod
    def get_windows() -> list:
        return [r() for r in _windows if r() is not None]
