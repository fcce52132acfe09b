"""Kit's test runner imports this module and collects the AsyncTestCase classes visible here."""

from .test_stage_sweep import *  # noqa: F403
