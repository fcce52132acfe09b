"""Stand-in for ``carb.events``: event streams with push/pop subscriptions.

Faithful points: events pushed on a stream are delivered to *pop* subscribers when the stream is pumped
(once per frame for Kit's streams); ``dispatch`` delivers at once; a subscription lives only as long as the
object returned by ``create_subscription_to_pop`` is referenced (dropping it unsubscribes), so extensions
must keep it.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import Any


class IEvent:
    def __init__(self, event_type: int, sender: int = 0, payload: dict | None = None):
        self.type = int(event_type)
        self.sender = sender
        self.payload = dict(payload or {})
        self.consumed = False

    def consume(self) -> None:
        self.consumed = True


class ISubscription:
    def __init__(self, stream: IEventStream, fn: Callable[[IEvent], Any], order: int, name: str):
        self._stream = stream
        self._fn = fn
        self.order = order
        self.name = name

    def unsubscribe(self) -> None:
        if self._stream is not None:
            self._stream._remove(self)
            self._stream = None
            self._fn = None


_ids = itertools.count(1)


class IEventStream:
    def __init__(self, name: str = ""):
        self.name = name
        self._queue: list[IEvent] = []
        self._pop_subs: list[weakref.ref] = []
        self._push_subs: list[weakref.ref] = []

    def _live(self, refs: list[weakref.ref]) -> list[ISubscription]:
        subs = [r() for r in refs]
        subs = [s for s in subs if s is not None and s._fn is not None]
        return sorted(subs, key=lambda s: s.order)

    def _remove(self, sub: ISubscription) -> None:
        self._pop_subs = [r for r in self._pop_subs if r() is not None and r() is not sub]
        self._push_subs = [r for r in self._push_subs if r() is not None and r() is not sub]

    def create_subscription_to_pop(self, fn: Callable[[IEvent], Any], order: int = 0, name: str = "") -> ISubscription:
        sub = ISubscription(self, fn, order, name or f"sub{next(_ids)}")
        self._pop_subs.append(weakref.ref(sub))
        return sub

    def create_subscription_to_push(self, fn: Callable[[IEvent], Any], order: int = 0, name: str = "") -> ISubscription:
        sub = ISubscription(self, fn, order, name or f"sub{next(_ids)}")
        self._push_subs.append(weakref.ref(sub))
        return sub

    def create_subscription_to_pop_by_type(
        self, event_type: int, fn: Callable[[IEvent], Any], order: int = 0, name: str = ""
    ) -> ISubscription:
        return self.create_subscription_to_pop(lambda e: fn(e) if e.type == int(event_type) else None, order, name)

    def push(self, event_type: int = 0, sender: int = 0, payload: dict | None = None) -> None:
        event = IEvent(event_type, sender, payload)
        for sub in self._live(self._push_subs):
            sub._fn(event)
        self._queue.append(event)

    def dispatch(self, event_type: int = 0, sender: int = 0, payload: dict | None = None) -> None:
        self._deliver(IEvent(event_type, sender, payload))

    def _deliver(self, event: IEvent) -> None:
        for sub in self._live(self._pop_subs):
            if sub._fn is not None:
                sub._fn(event)

    def pop(self) -> IEvent | None:
        return self._queue.pop(0) if self._queue else None

    def pump(self) -> None:
        queue, self._queue = self._queue, []
        for event in queue:
            self._deliver(event)

    @property
    def event_count(self) -> int:
        return len(self._queue)

    def subscriber_count(self) -> int:
        return len(self._live(self._pop_subs))


def type_from_string(name: str) -> int:
    """Kit hashes event names to ints; any stable mapping will do here."""
    import zlib

    return zlib.crc32(name.encode())
