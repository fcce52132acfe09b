"""Stand-in for ``omni.kit.app``: the application object and its frame loop.

Real behaviour (typings5 ``omni/kit/app/_impl/app_iface.pyi``, ``_app.pyi``; omni.kit.async_engine docs):
Kit runs Python's asyncio loop inside its update loop, spinning it once per frame, so coroutines
scheduled with ``asyncio.ensure_future`` advance a step per frame; ``await get_app().next_update_async()``
resolves on the next frame with the frame's delta time. A nested ``update()`` from inside the loop does not
spin asyncio again.

``update()`` here runs one frame: one asyncio iteration, the update event stream (stage event streams
are pumped from it), the ``next_update_async`` waiters, then a draw pass building dirty UI frames.
``post_quit(return_code)`` (``_app.pyi``) asks the app to end with that exit code: here it is kept in
``_stub_quit_code`` for whoever runs the frames (``tests/kit/kit_exec.py``, Kit's ``--exec`` stand-in);
``_stub_close`` is Kit's shutdown: the extensions enabled through the extension manager are disabled
(``on_shutdown``), then the loop is closed.
"""

from __future__ import annotations

import asyncio
import time

import carb.events
import omni.ext

_FRAME_DT = 1.0 / 60.0


class IApp:
    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._update_stream = carb.events.IEventStream("update")
        self._waiters: list[asyncio.Future] = []
        self._ext_manager = omni.ext.ExtensionManager()
        self._frame = 0
        self._draw_fns = []
        #: the return code of the first ``post_quit`` (None: no quit asked for)
        self._stub_quit_code: int | None = None

    # -- real API ---------------------------------------------------------------------------
    async def next_update_async(self, name: str = "omni.kit.app.next_update_async", order: int = 50) -> float:
        fut = self._loop.create_future()
        self._waiters.append(fut)
        return await fut

    def get_update_event_stream(self) -> carb.events.IEventStream:
        return self._update_stream

    def get_extension_manager(self) -> omni.ext.ExtensionManager:
        return self._ext_manager

    def is_running(self) -> bool:
        return not self._loop.is_closed()

    def post_quit(self, return_code: int = 0) -> None:
        if self._stub_quit_code is None:
            self._stub_quit_code = int(return_code)

    def get_update_number(self) -> int:
        return self._frame

    def update(self) -> None:
        """One frame of Kit."""
        self._frame += 1
        self._spin()
        self._update_stream.push(0, payload={"dt": _FRAME_DT})
        self._update_stream.pump()
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(_FRAME_DT)
        self._spin()
        for draw in list(self._draw_fns):
            draw()

    # -- stand-in helpers -------------------------------------------------------------------
    def _spin(self) -> None:
        if self._loop.is_running() or self._loop.is_closed():
            return
        self._loop.call_soon(self._loop.stop)
        self._loop.run_forever()

    def _stub_run_until(self, predicate, max_frames: int = 2000, sleep_s: float = 0.0005) -> int:
        """Run frames until ``predicate()`` is true; returns the frames used (test helper)."""
        for n in range(1, max_frames + 1):
            self.update()
            if predicate():
                return n
            time.sleep(sleep_s)
        raise TimeoutError(f"condition not met within {max_frames} frames")

    def _stub_run_coroutine(self, coro, timeout_s: float = 1800.0):
        """Drive ``coro`` to completion frame by frame, as Kit's test runner does."""
        task = self._loop.create_task(coro)
        deadline = time.monotonic() + timeout_s
        while not task.done():
            self.update()
            if time.monotonic() > deadline:
                task.cancel()
                self._spin()
                raise TimeoutError(f"coroutine did not finish within {timeout_s} s")
            if not task.done():
                time.sleep(0.0002)
        return task.result()

    def _stub_close(self) -> None:
        if not self._loop.is_closed():
            self._ext_manager._stub_shutdown_all()
            pending = [t for t in asyncio.all_tasks(self._loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self._loop.run_until_complete(self._loop.shutdown_default_executor())
            self._loop.close()
        asyncio.set_event_loop(None)


_APP: IApp | None = None


def get_app() -> IApp:
    global _APP
    if _APP is None:
        _APP = IApp()
    return _APP


get_app_interface = get_app
