"""Job: a Cancel really stops the work (between two Python steps), and a finished job is never hit."""

from __future__ import annotations

import threading
import time

import pytest


def test_cancel_stops_a_running_python_loop_and_reports_it():
    from mimic_ext.kit.worker import Job, JobCancelled

    entered, steps = threading.Event(), []

    def work():
        entered.set()
        while True:  # a sweep's step loop: Python between native calls
            steps.append(1)
            time.sleep(0.001)

    job = Job(work).start()
    assert entered.wait(10)
    assert job.cancel() is True
    assert job.join(timeout=10)  # generous for a loaded machine; it ends within one step
    assert job.done()
    with pytest.raises(JobCancelled):
        job.result()
    n = len(steps)
    time.sleep(0.05)
    assert len(steps) == n  # nothing runs after the cancel


def test_a_finished_job_keeps_its_result_and_ignores_cancel():
    from mimic_ext.kit.worker import Job

    job = Job(lambda: 42).start()
    assert job.join(timeout=10)
    assert job.cancel() is False
    assert job.result() == 42 and job.error is None


def test_an_error_in_the_job_is_handed_over():
    from mimic_ext.kit.worker import Job

    def boom():
        raise ValueError("bad stage")

    job = Job(boom).start()
    job.join(timeout=10)
    with pytest.raises(ValueError, match="bad stage"):
        job.result()


def test_cancel_before_start_never_runs_the_job():
    from mimic_ext.kit.worker import Job, JobCancelled

    ran = []
    job = Job(lambda: ran.append(1))
    assert job.cancel() is True
    job.start()
    job.join(timeout=10)
    assert ran == [] and isinstance(job.error, JobCancelled)
