"""Limits in the verdict, and the disagreement section's causes.

A relation that drives its follower past the follower's limits is a finding on every engine (the
same verdict: fail), whether the engine holds the follower at its limit (ours, PhysX) or lets it run
through (MuJoCo, Newton); an engine that lets a follower leave its limits gets a warning, and the
disagreement section names it ("limit enforced by A, not by B"). On main the warp engine passed such a stage (the relation holds at the limit: the
ratio is right) and no check looked at limits.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
from fet022_records import follower_record

pytest.importorskip("mimic_ext.solver", reason="the Warp solver (mimic_ext.solver) is not installed")

from mimic_ext.fet022 import run
from mimic_ext.fet022.disagreement import (
    BLOCKED,
    COMPILE,
    CRASH,
    ENGINE_ERROR,
    LEGACY,
    LIMITS,
    UNKNOWN,
    UNREAD,
    disagreements,
)
from mimic_ext.fet022.result import ERROR, FAIL, PASS, FollowerResult, SweepResult

ROOT = Path(__file__).resolve().parents[1]
GEARED = ROOT / "data" / "geared_pair.usda"
#: the engines whose peers are installed here (each needs its extra; warp always)
ENGINES = ["warp"] + [
    e
    for e, peers in (("physx", ("ovphysx", "ovstage")), ("newton", ("newton",)), ("mujoco", ("mujoco",)))
    if all(importlib.util.find_spec(p) for p in peers)
]


def _into_limit(tmp_path: Path) -> Path:
    """geared_pair (q_f = 2 q_l + 0.1 rad, leader swept over [-48, 48] deg) with the follower's lower
    limit raised from -120 to -30 deg: the relation asks it for -90.3 deg at the sweep's low end."""
    text = GEARED.read_text()
    assert "float physics:lowerLimit = -120" in text
    stage = tmp_path / "into_limit.usda"
    stage.write_text(text.replace("float physics:lowerLimit = -120", "float physics:lowerLimit = -30"))
    return stage


def test_a_relation_past_the_followers_limit_fails_on_warp(tmp_path):
    """Our solver holds the follower at -30 deg and, through the relation, its leader: the ratio is 2
    (passed on main); the finding names the relation and the limit."""
    (f,) = run(_into_limit(tmp_path), engine="warp").followers
    assert f.status == FAIL
    assert abs(f.motion_ratio - 2.0) < 0.01  # the ratio alone would pass (0.01: the agreement bar)
    why = " ".join(f.messages)
    assert "drives the follower past its limits" in why and "-90.27 deg" in why and "[-30, 130] deg" in why
    assert not any("left its limits" in w for w in f.warnings)  # warp held it (within 0.01 rad, the tolerance)


def test_the_untouched_stage_has_no_limit_finding():
    (f,) = run(GEARED, engine="warp").followers
    assert f.status == PASS and not any("limit" in m for m in f.messages)


@pytest.mark.slow
def test_a_relation_past_the_followers_limit_fails_on_every_engine(tmp_path):
    """The same verdict (fail, with the relation's limit finding) on every engine installed; an engine
    that lets the follower through its limit says so, and the disagreement section names it."""
    stage = _into_limit(tmp_path)
    per_engine = {e: run(stage, engine=e, label=e) for e in ENGINES}
    for e, result in per_engine.items():
        (f,) = result.followers
        assert f.status == FAIL, (e, f.messages)
        assert any("drives the follower past its limits" in m for m in f.messages), (e, f.messages)
    left = [e for e, r in per_engine.items() if any("left its limits" in w for w in r.followers[0].warnings)]
    assert "warp" not in left
    found = disagreements(per_engine)
    for e in left:
        named = [d for d in found if e in d.engines]
        assert named, e
        assert all(d.cause != UNKNOWN for d in named), [d.text() for d in named]
    if "mujoco" in left:  # measured: MuJoCo's soft limit lets it 17.7 deg through, the ratios agree
        assert any(d.cause == LIMITS and "mujoco" in d.engines for d in found), [d.text() for d in found]


# ------------------------------------------------------------------ causes, from plain records
def _follower(engine: str, status: str = PASS, ratio: float = 2.0, messages=(), note: str = "") -> FollowerResult:
    f = follower_record(
        "f",
        joints="/R/J",
        leader="l",
        gearing=-2.0,
        engine=engine,
        status=status,
        motion_ratio=ratio if status in (PASS, FAIL) else math.nan,
        messages=list(messages),
    )
    f.read_relation = {"follower": "/R/J/f", "leader": "/R/J/l", "multiplier": 2.0, "offset": 0.0, "note": note}
    return f


def _stage(engine: str, *followers: FollowerResult, status: str = PASS, reason: str = "") -> SweepResult:
    return SweepResult(asset="a.usda", status=status, reason=reason, engine=engine, followers=list(followers))


def _only(per_engine) -> tuple[str, str]:
    (d,) = disagreements(per_engine)
    return d.cause, d.explanation


def test_a_crashed_engine_is_a_verdict_disagreement_named_crash():
    """A crash leaves no follower records: the engine takes part with its stage's reason."""
    crash = "the physx engine crashed sweeping a.usda: its worker process died (SIGBUS (7))"
    cause, why = _only(
        {"warp": _stage("warp", _follower("warp")), "physx": _stage("physx", status=ERROR, reason=crash)}
    )
    assert cause == CRASH and "SIGBUS" in why


def test_compile_refusal_and_engine_errors_are_named_never_unexplained():
    refused = "cannot simulate a.usda: MuJoCo cannot compile the exported URDF: Error: ..."
    per = {
        "warp": _stage("warp", _follower("warp")),
        "mujoco": _stage("mujoco", _follower("mujoco", ERROR, messages=[refused])),
    }
    assert _only(per)[0] == COMPILE
    per["mujoco"] = _stage("mujoco", _follower("mujoco", ERROR, messages=["swept joint x is not a joint of the model"]))
    assert _only(per)[0] == ENGINE_ERROR


def test_unread_and_legacy_relations_are_named():
    per = {
        "warp": _stage("warp", _follower("warp")),
        "newton": _stage("newton", _follower("newton", FAIL, ratio=0.0, note="dropped: no mimic for this follower")),
    }
    assert _only(per)[0] == UNREAD
    legacy = "legacy relation: add_usd stored it as constraint_mimic (MjcEqualityJointAPI), set as a joint mimic"
    per["newton"] = _stage("newton", _follower("newton", PASS, ratio=1.9, note=legacy))
    assert _only(per)[0] == LEGACY


def test_limit_enforced_by_one_engine_not_by_the_other():
    left = "limit: the follower f left its limits [-30, 130] deg by 17.71 deg (t = 0 s; tolerance 0.573 deg)"
    mujoco = _follower("mujoco", FAIL)
    mujoco.warnings.append(left)
    per = {"warp": _stage("warp", _follower("warp", FAIL)), "mujoco": _stage("mujoco", mujoco)}
    cause, why = _only(per)
    assert cause == LIMITS and why.startswith("limit enforced by warp, not by mujoco")


def test_a_blocked_reference_is_named_not_soft_lag():
    """As mujoco-usd-converter's Franka hand was on MuJoCo before its filtered pairs were carried over
    (the swept finger moved 5e-5 of 0.032 m): its soft equality is not why the verdicts differ."""
    blocked = "the swept joint moved only 4.714e-05 of the planned 0.032 (SI): its drive is too weak"
    mujoco = _follower("mujoco", FAIL, ratio=0.83, messages=[blocked])
    mujoco.read_relation["hard"] = False
    mujoco.relation_max_error, warp = 8e-6, _follower("warp")
    warp.relation_max_error = 0.0
    cause, why = _only({"warp": _stage("warp", warp), "mujoco": _stage("mujoco", mujoco)})
    assert cause == BLOCKED and "moved only" in why
