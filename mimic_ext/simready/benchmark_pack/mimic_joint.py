"""NVIDIA's FET022 ``mimic_joint`` test, declared for mimic_ext's headless engines.

simready-benchmark routes a test to an engine whose tags include every tag the test requires
(``runner/work_pool.claim_asset``); NVIDIA's declaration requires ``["kit"]``, which only Kit (Isaac
Sim) provides, and the planner has no way to send it elsewhere. This declaration carries the same
name, version and features as NVIDIA's (read from the installed suite: ``fet022.identity``) and
its defaults (the phase's ``get_defaults()``), with the tag ``mimic_ext``: a
``[mimic_ext.<name>]`` engine of engines.toml runs it, by running NVIDIA's own phase
(``mimic_ext.simready.run_nvidia_mimic``). Where NVIDIA's Kit suite is also on the test path the
two declarations collide and simready-benchmark keeps one (it warns which); give a run one of them.
"""

from simready_benchmark.core.decorator import test
from simready_benchmark_kit_suite.articulation_phases import mimic_joint as mim_phase

from mimic_ext.fet022.identity import identity

ENGINE_TAG = "mimic_ext"

_ID = identity()


@test(
    features=[{"id": f, "version": ">=0.1.0"} for f in _ID.features],
    name=_ID.name,
    description=(
        "NVIDIA's FET022 mimic_joint phase (simready_benchmark_kit_suite, run unmodified) on a "
        "mimic_ext headless engine (its own Warp solver, or PhysX through ovphysx): each mimic "
        "pair's reference is swept through its range and the follower's motion magnitude must "
        "match |gear| x the reference's within gear_ratio_tolerance."
    ),
    expected_video="None: headless engines render nothing (no frames, no video).",
    version=_ID.version,
    engine={"tags": [ENGINE_TAG]},
    config_defaults=mim_phase.get_defaults(),
    max_duration=300,
)
async def test_mimic_joint(ctx):
    """Run by mimic_ext's engine session (``engine_plugin``), which calls NVIDIA's phase itself;
    any other engine that claims this test has nothing to run it on."""
    ctx.fail("mimic_joint (mimic_ext): runs only on a mimic_ext engine of engines.toml ([mimic_ext.<name>])")
