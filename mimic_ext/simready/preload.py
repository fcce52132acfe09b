"""Imported once by a sweep pool's forkserver when its units run NVIDIA's phase
(``verdicts.UnitPhase.preload``): NVIDIA's run context and phase and our adapter, so that each
worker forked from it does not import them again (about 0.3 s each here).

Never raises: a forkserver whose preload failed would take the pool down with it; a worker then
imports what it needs itself, and a unit that cannot run the phase says why in its verdict.
"""

try:
    import simready_benchmark.runner.test_context  # noqa: F401
    import simready_benchmark_kit_suite.articulation_phases.mimic_joint  # noqa: F401

    from . import backends, context, phase  # noqa: F401
except Exception:  # absent, or broken in a way the unit will report
    pass
