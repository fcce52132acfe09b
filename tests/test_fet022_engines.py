"""Every sweep engine through the one interface (engines/base.py): the same plan, a Trace back.

One test per engine for what the runner relies on, and an asset that passes on all of them.
An engine whose peer is not installed is skipped here (its own module checks the one-line
error that names the extra).
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mimic_ext.solver", reason="the Warp solver (mimic_ext.solver) is not installed")

from fet022_engines_common import DATA, ROBOTIQ, Recording, shared

import mimic_ext.schema as schema
from mimic_ext.errors import MimicInputError
from mimic_ext.fet022 import ReadRelation, SweepEngine, get_engine, run
from mimic_ext.fet022.config import SweepConfig
from mimic_ext.fet022.discovery import discover
from mimic_ext.fet022.engines import check_engine, engine_names
from mimic_ext.fet022.plan import make_plan

ROOT = Path(__file__).resolve().parents[1]
PEERS = {"warp": "warp", "physx": "ovphysx", "newton": "newton", "mujoco": "mujoco"}


def _engine(name):
    pytest.importorskip(
        PEERS[name], reason=f"the {name} engine's peer is not installed: pip install 'mimic-ext[{name}]'"
    )
    return get_engine(name)


def test_the_four_engines_are_registered():
    assert set(PEERS) <= set(engine_names())


@pytest.mark.parametrize("name", ["physx", "newton", "mujoco"])
def test_a_missing_peer_is_one_line_naming_the_extra(name, monkeypatch):
    monkeypatch.setitem(sys.modules, PEERS[name], None)  # importing the peer now raises ImportError
    with pytest.raises(MimicInputError, match=rf"pip install 'mimic-ext\[{name}\]'") as err:
        get_engine(name)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("name", list(PEERS))
def test_each_engine_returns_the_trace_the_runner_reads(name):
    """chain3 has one swept joint and two followers (a chain: Newton refuses it), so the
    gripper is used for Newton and chain3 for the rest: positions (num_envs, n_samples) in SI
    for every watched joint, the relations read, notes and timings."""
    from pxr import Usd, UsdGeom, UsdPhysics

    engine = _engine(name)
    assert isinstance(engine, SweepEngine) and engine.name == name
    stage = Usd.Stage.Open(str(DATA / ("gripper_prismatic.usda" if name == "newton" else "chain3.usda")))
    relations = schema.read_relations(stage)
    found = discover(stage, relations)
    plan = make_plan(found.swept, SweepConfig())
    watch = sorted({p for c in found.cases for p in (c.follower, c.reference)})
    trace = engine.simulate(stage, plan, watch, relations)
    assert not trace.missing
    assert set(trace.positions) >= set(watch)
    for q in trace.positions.values():
        assert q.shape == (plan.num_envs, len(plan.sample_steps)) and np.isfinite(q).all()
    assert [r.follower for r in trace.relations] == [r.follower for r in relations]
    assert all(isinstance(r, ReadRelation) for r in trace.relations)
    assert all(isinstance(n, str) and "\n" not in n for n in trace.notes)
    assert trace.timings["simulate_s"] > 0 and "build_s" in trace.timings
    # the swept joint moved over most of its planned range on every engine (a real simulation)
    pj = plan.joints[0]
    moved = np.ptp(trace.positions[pj.path][0])
    assert moved > 0.5 * pj.excursion
    # body positions for the bounding-box check: ours from its forward kinematics, PhysX's link
    # poses, Newton's body_q; MuJoCo's URDF links are not the USD bodies, so it reports none
    if name == "mujoco":
        assert not trace.body_positions
        return
    samples = trace.body_samples  # indices into the joint samples, ascending, from 0
    assert samples[0] == 0 and samples == sorted(set(samples)) and samples[-1] < len(plan.sample_steps)
    bodies = {str(p.GetPath()) for p in stage.Traverse() if p.HasAPI(UsdPhysics.RigidBodyAPI)}
    assert set(trace.body_positions) <= bodies
    for xyz in trace.body_positions.values():
        xyz = np.asarray(xyz)
        assert xyz.shape == (plan.num_envs, len(samples), 3) and np.isfinite(xyz).all()
    if name == "warp":  # ours reports the moving links (a base welded to the world is not one)
        return
    assert set(trace.body_positions) == bodies
    # the welded base stays where the stage puts it (metres; float32 poses)
    base = "/Gripper/base" if name == "newton" else "/Chain/base"
    world = UsdGeom.Xformable(stage.GetPrimAtPath(base)).ComputeLocalToWorldTransform(0).ExtractTranslation()
    assert np.abs(trace.body_positions[base][0] - np.array(world)).max() < 1e-4


@pytest.mark.parametrize("name", list(PEERS))
def test_the_robotiq_usd_passes_on_every_engine(name):
    """The Isaac Robotiq 2F-85 (five followers of finger_joint, gearings +1/-1, offset 0): an
    asset whose relations every engine reads the same way, so it passes everywhere."""
    engine = Recording(_engine(name))
    result = run(shared(ROBOTIQ), engine=engine)
    assert result.status == "pass", [(f.name, f.messages) for f in result.followers]
    assert len(result.followers) == 5 and result.engine == name
    for f in result.followers:
        # hard on warp, PhysX and Newton's Featherstone; MuJoCo's soft equalities come within 1.1 %
        assert f.motion_ratio == pytest.approx(1.0, abs=0.02)
        assert f.direction == "match"
    assert {round(r.multiplier) for r in engine.trace.relations} == {1, -1}
    assert all(r.offset == pytest.approx(0.0, abs=1e-9) for r in engine.trace.relations)


@pytest.mark.parametrize("name", ["physx", "newton", "mujoco"])
def test_check_engine_names_a_missing_peer_in_one_line(name, monkeypatch):
    """Before a run: found or not, without importing it."""
    monkeypatch.setitem(sys.modules, PEERS[name], None)
    with pytest.raises(MimicInputError, match=rf"needs {PEERS[name]}, which is not installed: pip install") as err:
        check_engine(name)
    assert "\n" not in str(err.value)


def test_check_engine_looks_the_peers_up_without_importing_them():
    """Issue 43: the CLI checks every engine before the run, in the parent, while a physx, newton
    or mujoco sweep runs in a worker of its own; importing the peer there too cost seconds (Newton
    2.96 s), so the parent only looks it up (a broken one is named by the worker: the corpus)."""
    present = [n for n in ("physx", "newton", "mujoco") if find_spec(PEERS[n]) is not None]
    if not present:
        pytest.skip("no engine peer is installed")
    code = (
        "import sys\n"
        "from mimic_ext.fet022.engines import check_engine\n"
        f"for name in {present!r}:\n"
        "    check_engine(name)\n"
        "peers = ('ovphysx', 'ovstage', 'newton', 'mujoco', 'warp')\n"
        "print(sorted(p for p in peers if p in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
