"""Stand-in for ``omni.kit.async_engine``: the extension that gives Kit its asyncio loop.

What the real one does (``omni.kit.async_engine`` 0.0.5 in ``isaacsim-kernel`` 6.2.0.0,
``omni/kit/async_engine/async_engine.py``):
- ``_AsyncEngineDriver.on_startup`` (an ``omni.ext.IExt``, so it runs only when the extension is
  enabled) creates the loop, ``asyncio.set_event_loop(loop)``, runs one iteration of it at the end of
  every update (``observe_event(event_name=GLOBAL_EVENT_UPDATE, on_event=lambda _: loop.run_once())``)
  and stores it in ``MainEventLoopWrapper.g_main_event_loop``. Before that there is no Kit loop:
  ``asyncio.ensure_future`` at that point lands on a loop nobody runs (the real kernel 6.2 hangs there).
- ``on_shutdown`` cancels every task of the loop, runs them to their end, then closes the loop.
- ``run_coroutine(coroutine)``: ``TypeError`` for a non-coroutine; on the main thread
  ``MainEventLoopWrapper.g_main_event_loop.create_task(coroutine)``, from another thread
  ``asyncio.run_coroutine_threadsafe`` (so without a started driver it fails on ``None``).

Here the loop is handed to the stand-in app (``IApp._loop``), whose ``update()`` spins it.
"""

from __future__ import annotations

import asyncio
import threading

import omni.ext
import omni.kit.app


class MainEventLoopWrapper:
    """``omni/kit/main_event_loop_wrapper/main_event_loop_wrapper.py``: the loop, once the driver started."""

    g_main_event_loop: asyncio.AbstractEventLoop | None = None


def run_coroutine(coroutine):
    if not asyncio.iscoroutine(coroutine):
        raise TypeError("run_coroutine only accepts coroutine object.")
    loop = MainEventLoopWrapper.g_main_event_loop
    if threading.current_thread() is threading.main_thread():
        return loop.create_task(coroutine)  # AttributeError on None, as the real one, when not started
    return asyncio.run_coroutine_threadsafe(coroutine, loop)


class _AsyncEngineDriver(omni.ext.IExt):
    def on_startup(self):
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        MainEventLoopWrapper.g_main_event_loop = self._loop
        omni.kit.app.get_app()._loop = self._loop

    def on_shutdown(self):
        loop = self._loop
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
        app = omni.kit.app.get_app()
        if app._loop is loop:
            app._loop = None
        MainEventLoopWrapper.g_main_event_loop = None
        asyncio.set_event_loop(None)
