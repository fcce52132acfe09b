"""``PropertyWidget``: base of every widget shown in the Property window (typings5 ``property_widget.pyi``)."""

from __future__ import annotations

from abc import ABC, abstractmethod

from .property_filter import PropertyFilter


class PropertyWidget(ABC):
    def __init__(self, title: str):
        self._title = title
        self._filter = PropertyFilter()

    def clean(self) -> None:
        """Called when the widget is unregistered: release everything."""

    def reset(self) -> None:
        """Called when the widget is no longer shown for the current payload."""

    @abstractmethod
    def build_impl(self) -> None:
        """Build the widget's UI inside the current container."""

    def build(self, filter: PropertyFilter | None = None) -> None:
        if filter is not None:
            self._filter = filter
        self.build_impl()

    @abstractmethod
    def on_new_payload(self, payload) -> bool:
        """Return True to be built for ``payload``."""
