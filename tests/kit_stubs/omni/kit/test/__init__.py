"""Stand-in for ``omni.kit.test``: ``AsyncTestCase`` runs async tests on Kit's frame loop.

Real behaviour (typings5 ``omni/kit/test/async_unittest.pyi``; omni.kit.test docs and usage page):
``AsyncTestCase(unittest.TestCase)`` (not IsolatedAsyncioTestCase); ``setUp``/``tearDown``/``test_*`` may be
coroutines, run on Kit's loop while Kit keeps updating; ``await self.wait_n_updates(n)``; retry helpers are
coroutines; ``fail_on_log_error`` fails a test that logged an error.
"""

from __future__ import annotations

import inspect
import logging
import unittest

import omni.kit.app


class _ErrorCounter(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


class AsyncTestCase(unittest.TestCase):
    fail_on_log_error = False

    def _drive(self, method):
        result = method()
        if inspect.isawaitable(result):
            return omni.kit.app.get_app()._stub_run_coroutine(result)
        return result

    def _callSetUp(self):
        self._errors_seen = _ErrorCounter()
        logging.getLogger("carb").addHandler(self._errors_seen)
        self._drive(self.setUp)

    def _callTestMethod(self, method):
        self._drive(method)
        if self.fail_on_log_error and self._errors_seen.messages:
            self.fail("errors were logged: " + " | ".join(self._errors_seen.messages))

    def _callTearDown(self):
        try:
            self._drive(self.tearDown)
        finally:
            logging.getLogger("carb").removeHandler(self._errors_seen)

    def _callCleanup(self, function, /, *args, **kwargs):
        result = function(*args, **kwargs)
        if inspect.isawaitable(result):
            omni.kit.app.get_app()._stub_run_coroutine(result)

    async def wait_n_updates(self, n_frames: int = 3) -> None:
        for _ in range(n_frames):
            await omni.kit.app.get_app().next_update_async()

    async def retry_until_success(self, operation, wait_frames: int = 2, max_retries: int = 50):
        for _ in range(max_retries):
            value = operation()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return value
            await self.wait_n_updates(wait_frames)
        return False

    async def assertTrueWithRetry(self, operation, wait_frames: int = 2, max_retries: int = 50, msg=None):
        self.assertTrue(await self.retry_until_success(operation, wait_frames, max_retries), msg)

    async def assertEqualWithRetry(self, operation, expected, wait_frames: int = 2, max_retries: int = 50, msg=None):
        value = None

        async def same():
            nonlocal value
            value = operation()
            if inspect.isawaitable(value):
                value = await value
            return value == expected

        await self.retry_until_success(same, wait_frames, max_retries)
        self.assertEqual(value, expected, msg)


class AsyncTestCaseFailOnLogError(AsyncTestCase):
    fail_on_log_error = True
