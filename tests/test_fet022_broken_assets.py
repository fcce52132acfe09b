"""Broken assets fail on every engine that reads them.

The geared pair (``q_f = 2 q_l + 0.1 rad``) with the relation in both schemas (what the
importer wrote by default before one schema per follower, and what older assets carry),
broken three ways: the Newton relation's offset 0.5 rad off the PhysX one, its multiplier's sign
flipped (both: ``MIMIC_SCHEMAS_DISAGREE``, two constraints PhysX would apply together), and
(PhysX alone) ``physxMimicJoint:rotX:gearing`` misspelled ``gear``, which no engine reads (PhysX
would use its default gearing). The intact stage passes
on all four engines, so each failure is the break's.
"""

from __future__ import annotations

import dataclasses

import pytest
from fet022_engines_common import DATA
from pxr import Sdf, Usd

from mimic_ext.fet022 import run
from mimic_ext.schema import read_relations, set_relation

PEERS = {"warp": None, "physx": "ovphysx", "newton": "newton", "mujoco": "mujoco"}


def _stage(break_kind: str | None) -> Usd.Stage:
    stage = Usd.Stage.Open(Usd.Stage.Open(str(DATA / "geared_pair.usda")).Flatten())
    (physx,) = read_relations(stage)
    if break_kind == "typo":
        prim = stage.GetPrimAtPath(physx.follower)
        gearing = prim.GetAttribute("physxMimicJoint:rotX:gearing")
        prim.CreateAttribute("physxMimicJoint:rotX:gear", Sdf.ValueTypeNames.Float).Set(gearing.Get())
        prim.RemoveProperty(gearing.GetName())
        return stage
    newton = dataclasses.replace(physx, schema="newton", instance=None)
    if break_kind == "offset":
        newton = dataclasses.replace(newton, offset=newton.offset + 0.5)
    elif break_kind == "sign":
        newton = dataclasses.replace(newton, multiplier=-newton.multiplier)
    set_relation(stage, newton)
    return stage


@pytest.fixture(params=list(PEERS))
def engine(request):
    if PEERS[request.param]:
        pytest.importorskip(PEERS[request.param], reason=f"the {request.param} engine's peer is not installed")
    return request.param


def test_the_intact_pair_passes(engine):
    result = run(_stage(None), engine=engine)
    assert result.status == "pass", [(f.label, f.messages) for f in result.followers]
    assert len(result.followers) == 2  # one relation said for both engines


@pytest.mark.parametrize(
    "kind,code",
    [
        ("offset", "MIMIC_SCHEMAS_DISAGREE"),
        ("sign", "MIMIC_SCHEMAS_DISAGREE"),
        ("typo", "is not a property of PhysxMimicJointAPI:rotX"),
    ],
)
def test_a_broken_pair_fails(engine, kind, code):
    result = run(_stage(kind), engine=engine)
    assert result.status == "fail" and result.exit_code == 1
    for f in result.followers:
        assert f.status == "fail" and code in " ".join(f.messages), (f.label, f.messages)


def test_a_misspelled_property_is_checked_and_said_once(monkeypatch):
    """Review of 43: the sweep ran the unknown-property check twice per relation (the validator's
    MIMIC_UNKNOWN_PROPERTY, then its own) and dropped the second message by substring. Counted at
    the check itself (``declared_properties.undeclared_properties``, whoever asks)."""
    from mimic_ext.schema import declared_properties

    calls = []
    real = declared_properties.undeclared_properties
    monkeypatch.setattr(
        declared_properties, "undeclared_properties", lambda prim, rel: calls.append(rel.key) or real(prim, rel)
    )
    result = run(_stage("typo"), engine="warp")
    (follower,) = result.followers
    assert len(calls) == 1
    assert sum("is not a property of PhysxMimicJointAPI:rotX" in m for m in follower.messages) == 1
    assert follower.status == "fail"
