"""KitThreadCalls: the job thread's work on the open stage runs on Kit's thread, and a cancel still ends the job."""

from __future__ import annotations

import threading
import time

import pytest


def _kit():
    """(KitThreadCalls, Job, JobCancelled), imported once the stand-ins are on the path (conftest)."""
    from mimic_ext.kit.kit_thread import KitThreadCalls
    from mimic_ext.kit.worker import Job, JobCancelled

    return KitThreadCalls, Job, JobCancelled


def _pump_until(calls, done, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s  # generous: a loaded CI machine
    while not done() and time.monotonic() < deadline:
        calls.pump()
        time.sleep(0.001)
    assert done()


def test_a_call_from_a_job_runs_on_kits_thread_when_pumped_and_returns_its_value():
    KitThreadCalls, Job, _ = _kit()
    calls = KitThreadCalls()
    ran_on = []
    job = Job(lambda: calls.call(lambda x: ran_on.append(threading.get_ident()) or x * 2, 21)).start()
    time.sleep(0.05)
    assert not job.done() and calls.pending() == 1  # nothing runs until Kit's thread pumps
    _pump_until(calls, job.done)
    assert job.result() == 42 and ran_on == [threading.get_ident()]


def test_an_exception_on_kits_thread_is_raised_in_the_job():
    KitThreadCalls, Job, _ = _kit()
    calls = KitThreadCalls()

    def boom():
        raise ValueError("bad stage")

    job = Job(lambda: calls.call(boom)).start()
    _pump_until(calls, job.done)
    with pytest.raises(ValueError, match="bad stage"):
        job.result()


def test_on_kits_thread_a_call_runs_at_once_and_pump_refuses_other_threads():
    KitThreadCalls, _, _ = _kit()
    calls = KitThreadCalls()
    assert calls.call(threading.get_ident) == threading.get_ident() and calls.pending() == 0
    errors = []

    def pump_elsewhere():
        try:
            calls.pump()
        except RuntimeError as exc:
            errors.append(str(exc))

    t = threading.Thread(target=pump_elsewhere)
    t.start()
    t.join(10)
    assert errors == ["KitThreadCalls.pump runs on Kit's thread only"]


def test_cancel_ends_a_job_waiting_for_kits_thread_and_its_clean_up_still_runs_there():
    KitThreadCalls, Job, JobCancelled = _kit()
    calls = KitThreadCalls()
    cleaned = []

    def job_body():
        try:
            calls.call(lambda: None)  # never pumped before the cancel
            calls.call(lambda: None)
        finally:
            calls.call(lambda: cleaned.append(threading.get_ident()))  # posted after the cancel

    job = Job(job_body).start()
    time.sleep(0.05)
    assert job.cancel()
    _pump_until(calls, job.done)
    with pytest.raises(JobCancelled):
        job.result()
    assert cleaned == [threading.get_ident()]


def test_pump_stops_at_its_budget():
    KitThreadCalls, _, _ = _kit()
    calls = KitThreadCalls()
    done = []

    def post_three():
        for _ in range(3):
            threading.Thread(target=lambda: calls.call(lambda: (time.sleep(0.02), done.append(1)))).start()

    post_three()
    deadline = time.monotonic() + 10
    while calls.pending() < 3 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert calls.pump(budget_s=0.01) == 1  # the first call alone spends the budget
    _pump_until(calls, lambda: len(done) == 3)
