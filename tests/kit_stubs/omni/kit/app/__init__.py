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
``_stub_close`` is Kit's shutdown: the shutdown event stream's events (type 0, then 1, as the real kernel
6.2 sends them; a ``post_quit`` from a subscriber sets the exit code), then the extensions enabled through the
extension manager are disabled (``on_shutdown``; the async engine's closes the loop).

What an app starts with (``_stub_start``), as the real kernel 6.2 showed it with ``--exec`` probes:
- a full app (Isaac Sim, ``omni.app.full.kit``: the default here) has a run loop and starts
  ``omni.kit.async_engine`` and ``omni.kit.commands`` before ``--exec`` runs;
- ``omni.app.empty.kit`` starts neither and has **no run loop**: Kit runs the ``--exec`` file, logs "No run loop
  was found, quitting..." (``libomni.kit.app.plugin.so``, ``App::_fallbackUpdateMainRunLoop``) and shuts down
  with exit code 0 unless a ``post_quit`` (also one from a shutdown-stream subscriber) set another, unless
  ``--/app/runWithoutRunloop=true`` is given, which makes the kernel update the app itself;
- there is no asyncio loop until ``omni.kit.async_engine`` starts (``omni/kit/async_engine``); ``update()``
  spins the loop only once it has been set.
"""

from __future__ import annotations

import asyncio
import time

import carb.events
import omni.ext

_FRAME_DT = 1.0 / 60.0


class IApp:
    def __init__(self, run_loop: bool = True) -> None:
        #: set by the omni.kit.async_engine stand-in when it starts (None: no Kit loop yet)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._run_loop = run_loop
        self._closed = False
        self._update_stream = carb.events.IEventStream("update")
        self._shutdown_stream = carb.events.IEventStream("shutdown")
        self._waiters: list[asyncio.Future] = []
        self._ext_manager = omni.ext.ExtensionManager()
        self._frame = 0
        self._draw_fns = []
        #: the return code of the first ``post_quit`` (None: no quit asked for)
        self._stub_quit_code: int | None = None

    # -- real API ---------------------------------------------------------------------------
    async def next_update_async(self, name: str = "omni.kit.app.next_update_async", order: int = 50) -> float:
        fut = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        return await fut

    def get_update_event_stream(self) -> carb.events.IEventStream:
        return self._update_stream

    def get_extension_manager(self) -> omni.ext.ExtensionManager:
        return self._ext_manager

    def get_shutdown_event_stream(self) -> carb.events.IEventStream:
        return self._shutdown_stream

    def is_running(self) -> bool:
        return not self._closed

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
        self._ext_manager._stub_pump_changes()
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(_FRAME_DT)
        self._spin()
        for draw in list(self._draw_fns):
            draw()

    # -- stand-in helpers -------------------------------------------------------------------
    def _stub_has_run_loop(self) -> bool:
        """Does anything update this app after ``--exec``? (a run loop, or ``/app/runWithoutRunloop``)"""
        import carb.settings

        return self._run_loop or bool(carb.settings.get_settings().get("/app/runWithoutRunloop"))

    def _spin(self) -> None:
        if self._loop is None or self._loop.is_running() or self._loop.is_closed():
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

    def _stub_close(self) -> int:
        """Kit's shutdown; returns the exit code (the first ``post_quit``'s, else 0)."""
        if not self._closed:
            self._closed = True
            for event_type in (0, 1):  # what the real kernel's shutdown stream delivered, in this order
                self._shutdown_stream.dispatch(event_type)
            self._ext_manager._stub_shutdown_all()
            loop = self._loop
            if loop is not None and not loop.is_closed():  # a loop the async engine did not close
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for t in pending:
                    t.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_default_executor())
                loop.close()
        asyncio.set_event_loop(None)
        return self._stub_quit_code or 0


_APP: IApp | None = None


#: what a full app (Isaac Sim, omni.app.full.kit) has started before ``--exec`` runs
FULL_APP_EXTENSIONS = ("omni.kit.async_engine", "omni.kit.commands")


def _stub_start(
    run_loop: bool = True, enable: tuple[str, ...] = FULL_APP_EXTENSIONS, settings: dict | None = None
) -> IApp:
    """Start the app: settings first (Kit's command line), then the extensions its config enables."""
    global _APP
    import carb.settings

    for path, value in (settings or {}).items():
        carb.settings.get_settings().set(path, value)
    _APP = IApp(run_loop=run_loop)
    for name in enable:
        _APP._ext_manager.set_extension_enabled_immediate(name, True)
    return _APP


def get_app() -> IApp:
    if _APP is None:
        return _stub_start()
    return _APP


get_app_interface = get_app
