"""Canonical relation, PhysX/Newton conversions and authoring round trips."""

import math
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from pxr import Usd, UsdGeom, UsdPhysics

import mimic_ext
from mimic_ext.errors import MimicInputError
from mimic_ext.schema import (
    MimicRelation,
    edit_relation,
    find_relation,
    read_relations,
    remove_relation,
    set_relation,
)
from mimic_ext.schema.relation import (
    canonical_to_newton,
    canonical_to_physx,
    newton_to_canonical,
    physx_to_canonical,
)

ROOT = Path(__file__).resolve().parents[1]
DEG = math.pi / 180
# USD stores gearing/offset/coefficients as 32-bit floats: 2**-24 ~ 6e-8 relative round-off,
# so values read back agree to 1e-6 relative (a safety factor of ~16 over the round-off).
F32 = 1e-6


def _stage(kind_f="revolute", kind_l="revolute", mpu=1.0):
    stage = Usd.Stage.CreateInMemory()
    UsdGeom.SetStageMetersPerUnit(stage, mpu)
    make = {"revolute": UsdPhysics.RevoluteJoint, "prismatic": UsdPhysics.PrismaticJoint}
    make[kind_f].Define(stage, "/R/follower")
    make[kind_l].Define(stage, "/R/leader")
    return stage


def test_physx_conversion_is_exact_inverse():
    # Pure float64 arithmetic: 1e-12 covers a few ulps.
    for s_f, s_l in [(DEG, DEG), (DEG, 0.01), (0.01, DEG), (1.0, 1.0)]:
        g, o = canonical_to_physx(2.5, -0.3, s_f, s_l)
        m, c = physx_to_canonical(g, o, s_f, s_l)
        assert m == pytest.approx(2.5, rel=1e-12) and c == pytest.approx(-0.3, rel=1e-12)
        c0, c1 = canonical_to_newton(2.5, -0.3, s_f, s_l)
        assert newton_to_canonical(c0, c1, s_f, s_l) == pytest.approx((2.5, -0.3), rel=1e-12)


def test_revolute_relation_authored_as_documented_in_both_schemas():
    """q_f = 2 q_l + 0.1 rad is gearing -2, offset -5.729578 deg (PhysX); coef1 2, coef0 5.729578 (Newton)."""
    stage = _stage()
    rel = set_relation(stage, MimicRelation("/R/follower", "/R/leader", 2.0, 0.1))
    prim = stage.GetPrimAtPath("/R/follower")
    assert prim.GetAttribute("physxMimicJoint:rotX:gearing").Get() == pytest.approx(-2.0, rel=F32)
    assert prim.GetAttribute("physxMimicJoint:rotX:offset").Get() == pytest.approx(-5.729578, rel=F32)
    assert [str(t) for t in prim.GetRelationship("physxMimicJoint:rotX:referenceJoint").GetTargets()] == ["/R/leader"]
    assert rel.multiplier == pytest.approx(2.0, rel=F32) and rel.offset == pytest.approx(0.1, rel=F32)

    set_relation(stage, MimicRelation("/R/follower", "/R/leader", 2.0, 0.1, instance=None, schema="newton"))
    assert prim.GetAttribute("newton:mimicCoef1").Get() == pytest.approx(2.0, rel=F32)
    assert prim.GetAttribute("newton:mimicCoef0").Get() == pytest.approx(5.729578, rel=F32)
    assert prim.HasAPI("NewtonMimicAPI")


@pytest.mark.parametrize("schema", ["physx", "newton"])
@pytest.mark.parametrize(
    "kinds",
    [("revolute", "revolute"), ("prismatic", "prismatic"), ("prismatic", "revolute"), ("revolute", "prismatic")],
)
def test_round_trip_every_field(schema, kinds):
    stage = _stage(*kinds, mpu=0.01)  # centimetre stage: prismatic values in stage units
    written = MimicRelation(
        "/R/follower",
        "/R/leader",
        multiplier=-0.75,
        offset=0.0125,
        instance="rotZ" if schema == "physx" else None,
        reference_axis="rotY",
        natural_frequency=12.5 if schema == "physx" else 0.0,
        damping_ratio=0.3 if schema == "physx" else 0.0,
        schema=schema,
    )
    set_relation(stage, written)
    (back,) = read_relations(stage)
    assert back.follower == written.follower and back.leader == written.leader
    assert back.schema == schema and back.instance == written.instance and back.enabled
    assert back.multiplier == pytest.approx(written.multiplier, rel=F32)
    assert back.offset == pytest.approx(written.offset, rel=F32)
    if schema == "physx":
        assert back.reference_axis == "rotY"
        assert back.natural_frequency == pytest.approx(12.5, rel=F32)
        assert back.damping_ratio == pytest.approx(0.3, rel=F32)
        assert back.compliant


def test_mixed_units_multiplier_carries_the_degree_factor():
    # Prismatic follower (m, stage in metres) following a revolute leader: 0.01 m per rad is
    # authored as gearing -0.01 * pi/180 m per degree.
    stage = _stage("prismatic", "revolute")
    set_relation(stage, MimicRelation("/R/follower", "/R/leader", 0.01, 0.0))
    g = stage.GetPrimAtPath("/R/follower").GetAttribute("physxMimicJoint:rotX:gearing").Get()
    assert g == pytest.approx(-0.01 * DEG, rel=F32)


def test_unauthored_attributes_read_as_fallbacks():
    stage = _stage()
    prim = stage.GetPrimAtPath("/R/follower")
    prim.AddAppliedSchema("PhysxMimicJointAPI:rotZ")
    prim.CreateRelationship("physxMimicJoint:rotZ:referenceJoint").SetTargets(["/R/leader"])
    (rel,) = read_relations(stage)
    # fallbacks: gearing 1 -> multiplier -1; offset 0; axis rotX; compliance 0
    assert (rel.multiplier, rel.offset, rel.reference_axis, rel.natural_frequency, rel.damping_ratio) == (
        -1.0,
        0.0,
        "rotX",
        0.0,
        0.0,
    )
    assert prim.GetAttribute("physxMimicJoint:rotZ:gearing").Get() == 1.0  # registry fallback
    assert not prim.GetAttribute("physxMimicJoint:rotZ:gearing").HasAuthoredValue()


def test_edit_and_remove():
    stage = _stage()
    set_relation(stage, MimicRelation("/R/follower", "/R/leader", 1.0, 0.0))
    edited = edit_relation(stage, "/R/follower", multiplier=3.0)
    assert edited.multiplier == pytest.approx(3.0, rel=F32)
    assert find_relation(stage, "/R/follower").multiplier == pytest.approx(3.0, rel=F32)
    with pytest.raises(MimicInputError, match="cannot edit"):
        edit_relation(stage, "/R/follower", schema_name="/x")
    removed = remove_relation(stage, "/R/follower")
    assert len(removed) == 1 and read_relations(stage) == []
    prim = stage.GetPrimAtPath("/R/follower")
    assert not [p for p in prim.GetAuthoredPropertyNames() if p.startswith("physxMimicJoint")]
    with pytest.raises(MimicInputError, match="no mimic relation"):
        remove_relation(stage, "/R/follower")


def test_set_relation_rejects_unknown_prims():
    stage = _stage()
    with pytest.raises(MimicInputError, match="no prim at /R/nothing"):
        set_relation(stage, MimicRelation("/R/nothing", "/R/leader"))


@pytest.mark.parametrize("instance", ["bad name", "a:b", "1x", "gearing"])
def test_set_relation_refuses_instance_names_usd_cannot_hold(instance):
    stage = _stage()
    with pytest.raises(MimicInputError, match=f"/R/follower: '{instance}' cannot name a PhysxMimicJointAPI instance"):
        set_relation(stage, MimicRelation("/R/follower", "/R/leader", 1.0, instance=instance))
    assert read_relations(stage) == []  # nothing written


# (schema, change to the canonical relation, the named value, the reason)
UNSTORABLE = [
    ("physx", {"multiplier": -1e39}, "physxMimicJoint:rotX:gearing", "overflows"),  # > float32 max 3.4e38: inf
    ("physx", {"offset": 1e-50}, "physxMimicJoint:rotX:offset", "below the smallest normal"),  # stored as 0
    ("physx", {"multiplier": 1e-50}, "physxMimicJoint:rotX:gearing", "below the smallest normal"),
    ("physx", {"natural_frequency": 1e39}, "physxMimicJoint:rotX:naturalFrequency", "overflows"),
    ("physx", {"multiplier": math.inf}, "multiplier", "finite"),
    ("physx", {"offset": math.nan}, "offset", "finite"),
    ("physx", {"damping_ratio": "0.5"}, "damping_ratio", "finite"),
    ("newton", {"multiplier": 1e39}, "newton:mimicCoef1", "overflows"),
    ("newton", {"offset": -1e-50}, "newton:mimicCoef0", "below the smallest normal"),
    ("newton", {"multiplier": math.nan}, "multiplier", "finite"),
]


@pytest.mark.parametrize("schema, changes, name, why", UNSTORABLE)
def test_set_relation_refuses_values_a_usd_float_cannot_hold(schema, changes, name, why):
    stage = _stage()
    rel = MimicRelation(
        "/R/follower", "/R/leader", 2.0, 0.1, schema=schema, instance="rotX" if schema == "physx" else None
    ).replace(**changes)
    with pytest.raises(MimicInputError, match=why) as err:
        set_relation(stage, rel)
    assert str(err.value).startswith("/R/follower: ") and name in str(err.value) and "\n" not in str(err.value)
    assert read_relations(stage) == []  # refused before anything was written


def test_the_float32_bounds_themselves_are_accepted():
    # 3e38 and 1.2e-38 are storable: they must round-trip (float32 relative rounding 6e-8 < F32)
    stage = _stage()
    back = set_relation(stage, MimicRelation("/R/follower", "/R/leader", multiplier=-3e38, offset=1.2e-38 * DEG))
    assert back.multiplier == pytest.approx(-3e38, rel=F32) and back.offset == pytest.approx(1.2e-38 * DEG, rel=F32)


@pytest.mark.parametrize("mpu", [0.0, -0.01, math.inf, math.nan])
def test_bad_meters_per_unit_is_a_clear_error_naming_the_stage(mpu):
    stage = Usd.Stage.CreateInMemory("bad_units.usda")
    UsdGeom.SetStageMetersPerUnit(stage, mpu)
    UsdPhysics.PrismaticJoint.Define(stage, "/R/follower")
    UsdPhysics.PrismaticJoint.Define(stage, "/R/leader")
    with pytest.raises(MimicInputError, match=r"bad_units\.usda: metersPerUnit is .*must be a positive number"):
        set_relation(stage, MimicRelation("/R/follower", "/R/leader", 1.0))


def test_solver_refuses_a_wrongly_typed_relation_naming_it():
    """``list`` and ``validate`` read a string gearing (``invalid`` set); the solver must not simulate it."""
    from pxr import Sdf

    from mimic_ext.solver.model import build_model

    text = (ROOT / "data" / "geared_pair.usda").read_text()
    broken = re.sub(r"float physxMimicJoint:rotX:gearing = \S+", 'string physxMimicJoint:rotX:gearing = "two"', text)
    assert broken != text
    layer = Sdf.Layer.CreateAnonymous(".usda")
    layer.ImportFromString(broken)
    stage = Usd.Stage.Open(layer)
    (rel,) = read_relations(stage)
    assert rel.invalid and math.isnan(rel.multiplier)
    with pytest.raises(
        MimicInputError,
        match=r"/Gears/Joints/gear_follower: physxMimicJoint:rotX:gearing is "
        r"authored as string \('two'\), not float",
    ):
        build_model(stage)


SCHEMA_PROBE = textwrap.dedent("""
    import sys
    from pxr import Usd, UsdPhysics
    if sys.argv[1] == "stage-first":
        # builds USD's schema registry before any mimic schema plugin is registered
        Usd.Stage.Open(sys.argv[2]).Traverse()
        UsdPhysics.RevoluteJoint.Define(Usd.Stage.CreateInMemory(), "/x")
    import mimic_ext.schema
    from mimic_ext.schema import MimicRelation, read_relations, set_relation
    stage = Usd.Stage.CreateInMemory()
    for name in ("/l", "/j"):
        UsdPhysics.RevoluteJoint.Define(stage, name)
    prim = stage.GetPrimAtPath("/j")
    if mimic_ext.schema.schema_resolvable():
        assert prim.ApplyAPI("PhysxMimicJointAPI", "rotZ")
        attr = prim.GetAttribute("physxMimicJoint:rotZ:gearing")
        assert not attr.HasAuthoredValue()
        print("resolvable", attr.Get(), prim.GetAttribute("physxMimicJoint:rotZ:referenceJointAxis").Get())
    else:
        print("by-name - -")
    set_relation(stage, MimicRelation("/j", "/l", multiplier=2.0, instance="rotZ"))
    (rel,) = read_relations(stage)
    print(rel.multiplier, rel.instance)
""")


@pytest.mark.parametrize("order", ["import-first", "stage-first"])
def test_relations_work_whatever_was_opened_first(order, tmp_path):
    """Imported first, ApplyAPI('PhysxMimicJointAPI', 'rotZ') resolves (gearing 1.0 unauthored,
    from the real PhysX schema); opened after a stage built USD's registry, it cannot (USD
    builds it once), and our own set/read still give the relation."""
    layer = tmp_path / "j.usda"
    layer.write_text('#usda 1.0\ndef PhysicsRevoluteJoint "j" {}\n')
    out = subprocess.run(
        [sys.executable, "-c", SCHEMA_PROBE, order, str(layer)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    first = ["resolvable", "1.0", "rotX"] if order == "import-first" else ["by-name", "-", "-"]
    assert out.stdout.split() == first + ["2.0", "rotZ"]


def test_versions_agree():
    """One version source (mimic_ext/__init__.py): the wheel reads it from there, Kit's manifest
    repeats it (Kit reads only the manifest) and must agree."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    manifest = tomllib.loads((ROOT / "extension.toml").read_text())
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["hatch"]["version"]["path"] == "mimic_ext/__init__.py"
    assert manifest["package"]["version"] == mimic_ext.__version__
    assert {"name": "mimic_ext"} in manifest["python"]["module"]
