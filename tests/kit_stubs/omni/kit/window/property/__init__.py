"""Stand-in for ``omni.kit.window.property``.

``get_window()`` returns the PropertyWindow singleton (held weakly in Kit, so it is None while the extension
is not running; the stand-in extension is running as soon as it is imported).
"""

from .property_filter import PropertyFilter  # noqa: F401
from .property_widget import PropertyWidget  # noqa: F401
from .window import PropertyWindow

_window = PropertyWindow()


def get_window():
    return _window


def _stub_set_window(window) -> None:
    """Simulate the extension being disabled (None) or restarted (tests only)."""
    global _window
    _window = window
