"""Stand-in for ``omni.kit.async_engine``: ``run_coroutine`` schedules a coroutine on Kit's loop."""

import asyncio

import omni.kit.app


def run_coroutine(coroutine):
    return asyncio.ensure_future(coroutine, loop=omni.kit.app.get_app()._loop)
