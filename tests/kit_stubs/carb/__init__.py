"""Stand-in for ``carb`` (logging entry points).

Real signatures (typings for Kit 107 ``carb/__init__.pyi``): ``log_info/log_warn/log_error/log_verbose(msg: str)``
return None. Messages also go to Python's ``logging`` (logger ``carb``) so tests can use ``caplog``.
"""

import logging as _logging

from . import dictionary, events, settings  # noqa: F401  (real carb exposes these submodules)

_LOGGER = _logging.getLogger("carb")


def log_verbose(msg: str) -> None:
    _LOGGER.debug(str(msg))


def log_info(msg: str) -> None:
    _LOGGER.info(str(msg))


def log_warn(msg: str) -> None:
    _LOGGER.warning(str(msg))


def log_error(msg: str) -> None:
    _LOGGER.error(str(msg))


def log_fatal(msg: str) -> None:
    _LOGGER.critical(str(msg))
