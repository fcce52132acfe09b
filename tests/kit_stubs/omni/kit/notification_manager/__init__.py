"""Stand-in for ``omni.kit.notification_manager``.

Signatures from Kit's extension (``omni/kit/notification_manager/__init__.py`` and
``notification_info.py``): ``post_notification(text, hide_after_timeout=True, duration=3,
status=NotificationStatus.INFO, button_infos=[])``; ``NotificationStatus.WARNING = 0``,
``NotificationStatus.INFO = 1``; ``NotificationButtonInfo(text, on_complete=None)``;
``get_all_notifications()``, ``destroy_all_notifications()``.
"""

from __future__ import annotations

from collections.abc import Callable


class NotificationStatus:
    WARNING = 0
    INFO = 1


class NotificationButtonInfo:
    def __init__(self, text, on_complete: Callable[[], None] | None = None):
        self.text, self.handler = text, on_complete


class NotificationInfo:
    def __init__(self, text, hide_after_timeout, duration, status, button_infos):
        self.text, self.hide_after_timeout, self.duration = text, hide_after_timeout, duration
        self.status, self.button_infos = status, list(button_infos or [])


_posted: list[NotificationInfo] = []


def post_notification(text, hide_after_timeout=True, duration=3, status=NotificationStatus.INFO, button_infos=[]):  # noqa: B006 (Kit's signature)
    info = NotificationInfo(text, hide_after_timeout, duration, status, button_infos)
    _posted.append(info)
    return info


def get_all_notifications() -> list:
    return list(_posted)


def destroy_all_notifications() -> None:
    _posted.clear()
