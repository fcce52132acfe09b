"""Stand-in for ``omni.kit.undo`` (behaviour of Kit's ``omni/kit/undo/undo.py``).

- Undoable commands are pushed as entries ``(command, name, level)``; a top-level (level 0) execution outside
  a redo clears the redo stack.
- ``undo()`` pops entries until it has undone one level-0 entry (so a group, or a command with nested
  commands, is one step) and moves that entry to the redo stack; ``redo()`` re-executes it (``do()`` again on
  the same object). Both run as the built-in commands "Undo"/"Redo" and return ``success and result``:
  False on an empty stack.
- When ``do()`` raises, the entries it created (its own included) are undone and popped; a level-0 entry goes
  to the redo stack; the error is logged and ``execute`` returns ``(False, None)``.
- ``disabled()`` / ``begin_disabled()``: commands run ``do()`` only and are not recorded.
- The command history (``omni/kit/undo/history.py``: ``add_history``, ``change_history``, ``get_history``,
  ``get_history_item``, ``clear_history``; ``undo.py``: ``execute``, ``_execute``, ``begin_group``): every
  execution, recorded or not, nested ones and groups included, adds ``HistoryEntry(name, kwargs, level, error)``
  under a new integer key *before* ``do`` runs, and one that raises is changed to ``error=True`` (the open group's
  too); the history keeps the command's arguments (not the command), the undo entry
  ``Entry(command, name, level, history_key, time)`` points at it, and redo re-executes an entry with the
  arguments it finds there (``_execute_group_entries``).
- ``group()`` takes no arguments (``undo.py``: ``group``); nor do ``begin_group``/``end_group``.
"""

from __future__ import annotations

import traceback
from collections import OrderedDict, deque, namedtuple
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import carb
import omni.kit.commands as _commands

Entry = namedtuple("Entry", ["command", "name", "level", "history_key", "time"])
HistoryEntry = namedtuple("HistoryEntry", ["name", "kwargs", "level", "error"])

_history: OrderedDict = OrderedDict()
_history_index = 0


def add_history(name: str, kwargs: dict, level: int) -> int:
    global _history_index
    _history_index += 1
    _history[_history_index] = HistoryEntry(name, kwargs, level, False)
    return _history_index


def change_history(key: int, **kwargs) -> None:
    if key in _history:
        _history[key] = _history[key]._replace(**kwargs)


def get_history() -> OrderedDict:
    return _history


def get_history_item(history_key: int):
    return _history.get(history_key)


def clear_history() -> None:
    _history.clear()


_undo_stack: deque = deque()
_redo_stack: deque = deque()
_on_change: set = set()
_level = 0
_group_entry = None
_group_count = 0
_disabled_count = 0
_in_redo = False


def format_exception(e: Exception, remove_n_last_frames: int = 2) -> str:
    return "".join(traceback.format_exception(type(e), e, e.__traceback__))


def _dispatch_changed(cmd_names=()) -> None:
    for fn in list(_on_change):
        fn(list(cmd_names))


def subscribe_on_change(on_change) -> None:
    _on_change.add(on_change)


def unsubscribe_on_change(on_change) -> None:
    _on_change.discard(on_change)


def can_undo() -> bool:
    return len(_undo_stack) > 0


def can_redo() -> bool:
    return len(_redo_stack) > 0


def clear_stack() -> None:
    _undo_stack.clear()
    _redo_stack.clear()


def get_undo_stack():
    return _undo_stack


def get_redo_stack():
    return _redo_stack


def _create_entry(command, name, level, history_key) -> Entry:
    entry = Entry(command, name, level, history_key, datetime.now())
    if level == 0 and not _in_redo:
        _redo_stack.clear()
    _undo_stack.append(entry)
    return entry


def _execute_recorded(command, name, level, kwargs, history_key):
    entry = _create_entry(command, name, level, history_key)
    try:
        _commands._call_callbacks(command, name, kwargs, _commands.PRE_DO_CALLBACK)
        result = command.do()
        _commands._call_callbacks(command, name, kwargs, _commands.POST_DO_CALLBACK)
    except Exception:
        names = []
        while _undo_stack:
            last = _undo_stack.pop()
            try:
                last.command.undo()
                names.append(last.name)
            except Exception as exc:
                carb.log_error(f"Failed to undo a command: {last.name}.\n{format_exception(exc)}")
            if last is entry:
                if level == 0:
                    _redo_stack.append(entry)
                break
        _dispatch_changed(names)
        raise
    if name:
        _dispatch_changed([name])
    return result


def execute(command, name, kwargs) -> tuple[bool, Any]:
    global _level
    level = _level
    history_key = add_history(name, kwargs, level)
    _level += 1
    try:
        if _disabled_count == 0 and callable(getattr(command, "undo", None)):
            result = _execute_recorded(command, name, level, kwargs, history_key)
        else:
            _commands._call_callbacks(command, name, kwargs, _commands.PRE_DO_CALLBACK)
            result = command.do()
            _commands._call_callbacks(command, name, kwargs, _commands.POST_DO_CALLBACK)
    except Exception as exc:
        change_history(history_key, error=True)
        if _group_entry is not None:
            change_history(_group_entry.history_key, error=True)
        _commands._log_error(f"Failed to execute a command: {name}.\n{format_exception(exc)}")
        return (False, None)
    finally:
        _level -= 1
        _commands._dispatch_changed()
    return (True, result)


class Undo(_commands.Command):
    def __init__(self):
        pass

    def do(self):
        if not can_undo():
            return False
        names = []
        while _undo_stack:
            entry = _undo_stack.pop()
            if entry.level == 0:
                _redo_stack.append(entry)
            try:
                entry.command.undo()
                names.append(entry.name)
            except Exception as exc:
                carb.log_error(f"Failed to undo a command: {entry.name}.\n{format_exception(exc)}")
            if entry.level == 0:
                break
        _dispatch_changed(names)
        return True


class Redo(_commands.Command):
    def __init__(self):
        pass

    def do(self):
        global _level, _in_redo
        if not can_redo():
            return False
        _level -= 1  # the redone entry runs at the root level, not inside "Redo"
        try:
            entry = _redo_stack.pop()
            _in_redo = True
            ok, _ = execute(entry.command, entry.name, _kwargs_of(entry))
            if not ok:
                raise RuntimeError("Failed to redo or repeat commands")
            return True
        finally:
            _in_redo = False
            _level += 1


def undo() -> bool:
    ok, result = _commands.execute("Undo")
    return ok and result


def redo() -> bool:
    ok, result = _commands.execute("Redo")
    return ok and result


class _GroupCommand:
    def __init__(self):
        self.children = []

    def do(self):
        for entry in self.children:
            ok, _ = execute(entry.command, entry.name, _kwargs_of(entry))
            if not ok:
                raise RuntimeError("Failed to redo or repeat commands")
        return True

    def undo(self):
        pass


def begin_group() -> None:
    global _group_count, _group_entry, _level
    _group_count += 1
    if _group_count == 1:
        level = _level
        _level += 1
        _group_entry = _create_entry(_GroupCommand(), "Group", level, add_history("Group", {}, level))


def end_group() -> None:
    global _group_count, _group_entry, _level
    _group_count -= 1
    if _group_count == 0 and _group_entry is not None:
        _level -= 1
        index = list(_undo_stack).index(_group_entry)
        _group_entry.command.children = [e for e in list(_undo_stack)[index + 1 :] if e.level == 1]
        _dispatch_changed([_group_entry.name])
        _group_entry = None


def _kwargs_of(entry: Entry) -> dict:
    """What redo passes again: the arguments the history kept for this entry (``_execute_group_entries``)."""
    item = _history.get(entry.history_key)
    return item.kwargs if item is not None else {}


@contextmanager
def group():
    begin_group()
    try:
        yield
    finally:
        end_group()


def begin_disabled() -> None:
    global _disabled_count
    _disabled_count += 1


def end_disabled() -> None:
    global _disabled_count
    if _disabled_count > 0:
        _disabled_count -= 1
    else:
        carb.log_error("undo.end_disabled() called without matching prior call to undo.begin_disabled()")


@contextmanager
def disabled():
    begin_disabled()
    try:
        yield
    finally:
        end_disabled()


_commands.register(Undo)
_commands.register(Redo)
