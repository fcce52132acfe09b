r"""Stand-in for ``omni.kit.commands`` (behaviour of Kit's ``omni/kit/commands/command.py``).

- ``Command`` is an ABC with an abstract ``do`` and no ``__init__`` or ``undo``; a command is undoable only
  when ``callable(getattr(cmd, "undo", None))``.
- ``register`` stores a class under its name minus a trailing "Command", keyed by ``__module__``; a class that
  is not a Command subclass is refused with a logged error.
- ``get_command_parameters(name)`` is what Kit's Commands window shows per parameter: the help of each
  ``__init__`` parameter read from the ``__init__`` docstring (else the class docstring) by ``_get_argument_doc``,
  which tries ``re.match(r"\s*(?P<param>\w+)(?P<type>.*): (?P<doc>.*)", line)`` on every non-empty line (the
  greedy ``type`` group leaves only the text after the *last* ": " as the help), appends a non-matching line to
  the previous parameter's help, and ends a parameter at an empty line (``command.py``:
  ``get_command_parameters``, ``_get_argument_doc``, ``CommandParameter``).
- ``execute(name, **kwargs)`` builds the command with ``cls(**kwargs)`` (an exception there propagates), logs
  an error and returns ``(False, None)`` for an unknown or ambiguous name, otherwise hands over to
  ``omni.kit.undo.execute`` which returns ``(True, do_result)`` or, when ``do`` raises, logs the error and
  returns ``(False, None)``.
- ``CommandExt`` (``omni/kit/commands/__init__.py``, ``CommandExt.on_startup``): the extension subscribes to the
  extension manager's change event stream and, on every ``omni.ext.EXTENSION_EVENT_SCRIPT_CHANGED``, registers
  ``Command`` itself and, recursively, every class ``__subclasses__()`` reaches (``register_subclasses``), with
  no other filter: a ``Command`` subclass still alive after its extension was disabled comes back on the next
  such event (the disable sends one). ``on_shutdown`` drops the subscription. It starts when the
  ``omni.kit.commands`` extension is enabled (a full app, or a required dependency), not on import.
"""

from __future__ import annotations

import inspect
import re
import sys
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import carb
import omni.ext

PRE_DO_CALLBACK = "pre_do"
POST_DO_CALLBACK = "post_do"
PRE_UNDO_CALLBACK = "pre_undo"
POST_UNDO_CALLBACK = "post_undo"

_commands: dict[str, dict[str, type]] = defaultdict(dict)
_callbacks: dict[tuple, dict[str, list[Callable]]] = defaultdict(lambda: defaultdict(list))
_on_change: set = set()
LOGGING_ENABLED = True


class Command(ABC):
    """Base class for all commands."""

    @abstractmethod
    def do(self):
        pass

    def modify_callback_info(self, cb_type: str, args: dict[str, Any]) -> dict[str, Any]:
        return args


def _log_error(message: str) -> None:
    if LOGGING_ENABLED:
        carb.log_error(message)


def set_logging_enabled(enabled: bool) -> None:
    global LOGGING_ENABLED
    LOGGING_ENABLED = enabled


def _strip(name: str) -> str:
    return name[:-7] if name.endswith("Command") else name


def _split(name: str) -> tuple[str, str]:
    module, _, cls = name.rpartition(".")
    return module, cls


def _dispatch_changed() -> None:
    for fn in list(_on_change):
        fn()


def subscribe_on_change(on_change) -> None:
    _on_change.add(on_change)


def unsubscribe_on_change(on_change) -> None:
    _on_change.discard(on_change)


def register(command_class: type[Command]) -> None:
    if not (isinstance(command_class, type) and issubclass(command_class, Command)):
        _log_error(f"Can't register command: {command_class} it is not a subclass of a Command.")
        return
    name = command_class.__name__
    if command_class.__module__ in _commands[_strip(name)]:
        carb.log_verbose(f'Command: "{name}" is already registered. Overwriting it.')
    _commands[_strip(name)][command_class.__module__] = command_class
    _dispatch_changed()


def unregister(command_class: type[Command]) -> None:
    if not (isinstance(command_class, type) and issubclass(command_class, Command)):
        _log_error(f"Can't unregister command: {command_class} it is not a subclass of a Command.")
        return
    name = _strip(command_class.__name__)
    _commands[name].pop(command_class.__module__, None)
    _callbacks.pop((name, command_class.__module__), None)
    _dispatch_changed()


def register_all_commands_in_module(module):
    """Register every Command subclass found by ``dir(module)``; returns an accessor object."""

    class CommandInterface:
        pass

    if isinstance(module, str) and module in sys.modules:
        module = sys.modules[module]
    for attr in dir(module):
        obj = getattr(module, attr)
        if isinstance(obj, type) and issubclass(obj, Command) and obj is not Command:
            register(obj)
            short = _strip(obj.__name__)

            def run(cls_self, _cmd=obj, **kwargs):
                return execute(_cmd.__name__, **kwargs)

            run.__name__ = short
            run.__doc__ = obj.__doc__
            setattr(CommandInterface, short, run)
    return CommandInterface()


def unregister_module_commands(command_interface) -> None:
    if command_interface is None:
        return
    for name in dir(command_interface):
        if name.startswith("__"):
            continue
        cls = get_command_class(name)
        if cls is not None:
            unregister(cls)


def get_command_class(name: str):
    module, cls = _split(name)
    cmds = _commands[cls]
    if not cmds:
        if not name.endswith("Command"):
            return None
        module, cls = _split(name[:-7])
        cmds = _commands[cls]
        if not cmds:
            return None
    if len(cmds) == 1:
        return next(iter(cmds.values()))
    if module == "":
        _log_error(f"There are multiple commands with {name}. Pass full command name including module name.")
        return None
    return cmds.get(module)


def get_command_class_signature(name: str):
    cls = get_command_class(name)
    return inspect.signature(cls.__init__) if cls else None


def get_command_doc(name: str) -> str:
    cls = get_command_class(name)
    return inspect.getdoc(cls) if cls else ""


#: Kit's pattern for one parameter line of a docstring (``command.py`` ``_get_argument_doc``).
_ARGUMENT_LINE = re.compile(r"\s*(?P<param>\w+)(?P<type>.*): (?P<doc>.*)")


def _get_argument_doc(doc: str | None) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    current = None
    for line in (doc or "").splitlines():
        text = line.strip()
        if not text:
            current = None
            continue
        match = _ARGUMENT_LINE.match(line)
        if match is not None:
            current = match.group("param")
            found[current] = {"doc": match.group("doc")}
        elif current is not None:
            found[current]["doc"] += " " + text
    return found


class CommandParameter:
    """One ``__init__`` parameter with the help Kit's Commands window shows for it."""

    def __init__(self, param: inspect.Parameter, doc: str):
        self._param, self._doc = param, doc

    @property
    def name(self) -> str:
        return self._param.name

    @property
    def default(self):
        return None if self._param.default is inspect.Parameter.empty else self._param.default

    @property
    def doc(self) -> str:
        return self._doc


def get_command_parameters(name: str) -> list[CommandParameter]:
    cls = get_command_class(name)
    if cls is None:
        return []
    helps = _get_argument_doc(cls.__init__.__doc__ or cls.__doc__)
    return [
        CommandParameter(p, helps.get(p.name, {}).get("doc", ""))
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.name != "self"
    ]


def get_commands():
    return _commands


def get_commands_list() -> list[type]:
    return [c for by_module in _commands.values() for c in by_module.values()]


def create(name, **kwargs):
    cls = get_command_class(name)
    if not cls:
        return None
    return cls(**kwargs)


class CallbackID:
    def __init__(self, key, cb_type, fn):
        self._key, self._cb_type, self._fn = key, cb_type, fn


def register_callback(name: str, cb_type: str, callback: Callable[[dict[str, Any]], None]) -> CallbackID:
    module, cls = _split(_strip(name))
    _callbacks[(cls, module)][cb_type].append(callback)
    return CallbackID((cls, module), cb_type, callback)


def unregister_callback(id: CallbackID) -> None:
    if not isinstance(id, CallbackID):
        carb.log_error("Invalid callback id")
        return
    try:
        _callbacks[id._key][id._cb_type].remove(id._fn)
    except ValueError:
        carb.log_error(f"Attempt to unregister a {id._cb_type} callback which was not registered.")


def _call_callbacks(command, name: str, kwargs: dict[str, Any], cb_type: str) -> None:
    module, cls = _split(_strip(name))
    callbacks = _callbacks[(cls, module)][cb_type]
    if callbacks:
        info = command.modify_callback_info(cb_type, dict(kwargs))
        for cb in list(callbacks):
            cb(info if isinstance(info, dict) else dict(kwargs))


def execute(name, **kwargs) -> tuple[bool, Any]:
    command = create(name, **kwargs)
    if not command:
        _log_error(f"Can't execute command: \"{name}\", it wasn't registered or ambigious.")
        return (False, None)
    if not callable(getattr(command, "do", None)):
        _log_error(f"Can't execute command: \"{name}\", it doesn't have do() method.")
        return (False, None)
    import omni.kit.undo

    return omni.kit.undo.execute(command, name, kwargs)


class CommandExt(omni.ext.IExt):
    """Re-registers every live Command subclass on each script change of the extension manager."""

    def on_startup(self, ext_id):
        import omni.kit.app

        manager = omni.kit.app.get_app().get_extension_manager()

        def on_change(e):
            if e.type == omni.ext.EXTENSION_EVENT_SCRIPT_CHANGED:

                def register_subclasses(cls):
                    register(cls)
                    for subcls in cls.__subclasses__():
                        register_subclasses(subcls)

                register_subclasses(Command)

        self._change_script_sub = manager.get_change_event_stream().create_subscription_to_pop(
            on_change, name="kit.commands ExtensionChange"
        )

    def on_shutdown(self):
        self._change_script_sub = None


# Kit registers the built-in Undo/Redo commands when omni.kit.undo loads.
import omni.kit.undo  # noqa: E402
