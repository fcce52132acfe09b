"""Runs one coexistence scenario in a fresh process and prints what it saw as JSON (last line).

USD registers schema plugins and builds its schema registry once per process, so each
import order needs its own interpreter; ``tests/test_coexistence.py`` starts this script
once per scenario and asserts on the JSON. Scenarios:

- ``schemas ORDER``: the pip schema packages (physx-usd-schemas, newton-usd-schemas) and
  mimic_ext imported in ORDER, then a stage opened, read, written in both schemas, validated.
- ``kit PLUGIN_DIR STUBS_DIR ORDER``: a PhysxSchema declared the way Kit has it (the
  plugin at PLUGIN_DIR, registered first, as Kit does at startup), then ``mimic_ext.kit``
  started with the Kit stand-ins, then the same stage work (ORDER ``kit-no-newton``: an app
  without Newton's schema, every log line shown).
- ``newton ORDER OUT_DIR``: Newton's ``ModelBuilder.add_usd`` in one process with mimic_ext
  (imported first or last) on a stage whose NewtonMimicAPI relation mimic_ext wrote.
- ``converter ORDER OUT_DIR``: NVIDIA's urdf-usd-converter likewise, on a URDF with a mimic.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
SCHEMAS = ("PhysxMimicJointAPI", "NewtonMimicAPI")
PHYSX_TEMPLATE = "physxMimicJoint:__INSTANCE_NAME__:"


def _declared(schema: str) -> dict:
    """The schema's properties as USD's registry holds them: name -> [type, variability, fallback]."""
    from pxr import Usd

    definition = Usd.SchemaRegistry().FindAppliedAPIPrimDefinition(schema)
    if definition is None:
        return {}
    out = {}
    for name in definition.GetPropertyNames():
        key = name.replace(PHYSX_TEMPLATE, "")
        attr = definition.GetAttributeDefinition(name)
        out[key] = (
            [str(attr.GetTypeName()), str(attr.GetVariability()), attr.GetFallbackValue()]
            if attr
            else ["rel", None, None]
        )
    return out


def _ours() -> dict:
    """mimic_ext's tables in the same form (token attributes are written uniform)."""
    from pxr import Sdf

    from mimic_ext.schema.authoring import NEWTON_ATTRS, NEWTON_REL, PHYSX_ATTRS

    def form(table):
        return {
            n: [str(t), str(Sdf.VariabilityUniform if t == Sdf.ValueTypeNames.Token else Sdf.VariabilityVarying), fb]
            for n, (t, fb) in table.items()
        }

    return {
        "PhysxMimicJointAPI": {**form(PHYSX_ATTRS), "referenceJoint": ["rel", None, None]},
        "NewtonMimicAPI": {**form(NEWTON_ATTRS), NEWTON_REL: ["rel", None, None]},
    }


def exercise(physx_api_class=None) -> dict:
    """Open a sample, read its PhysX relation, write it in both schemas, validate, report."""
    from mimic_ext.schema import open_stage, read_relations, set_relation, validate
    from mimic_ext.schema.registration import schema_resolvable, schema_sources

    stage = open_stage(DATA / "geared_pair.usda").stage
    (rel,) = read_relations(stage)
    out = {"read": [rel.schema, rel.instance, rel.multiplier, rel.offset]}
    set_relation(stage, rel.replace(multiplier=1.5))
    set_relation(stage, rel.replace(multiplier=1.5, schema="newton", instance=None))
    out["written"] = sorted([r.schema, r.multiplier, r.offset] for r in read_relations(stage))
    out["findings"] = [str(f) for f in validate(stage)]
    prim = stage.GetPrimAtPath(rel.follower)
    out["has_api"] = [bool(prim.HasAPI("PhysxMimicJointAPI", "rotX")), bool(prim.HasAPI("NewtonMimicAPI"))]
    out["applied"] = [str(s) for s in prim.GetAppliedSchemas()]
    out["follower_gearing"] = prim.GetAttribute("physxMimicJoint:rotX:gearing").Get()
    if physx_api_class is not None:  # the real API class reads what we wrote
        api = physx_api_class(prim, "rotX")
        targets = [str(t) for t in api.GetReferenceJointRel().GetTargets()]
        out["api_class"] = [bool(api), api.GetGearingAttr().Get(), targets]
    out["declared"] = {s: _declared(s) for s in SCHEMAS}
    out["ours"] = _ours()
    out["sources"] = {k: list(v) for k, v in schema_sources().items()}
    out["resolvable"] = schema_resolvable()
    return out


def _plugins_under(folder: Path) -> list[str]:
    from pxr import Plug

    return [p.name for p in Plug.Registry().GetAllPlugins() if Path(p.path).resolve().is_relative_to(folder)]


def scenario_schemas(order: str) -> dict:
    def packages():
        import newton_usd_schemas  # noqa: F401
        import physx_usd_schemas  # noqa: F401

    if order == "packages-first":
        packages()
        import mimic_ext.schema
    elif order == "mimic-first":
        import mimic_ext.schema

        packages()
    elif order == "interleaved":
        import newton_usd_schemas  # noqa: F401
        import physx_usd_schemas  # noqa: F401

        import mimic_ext.schema  # noqa: F401
    elif order == "mimic-never":
        packages()
        from physx_usd_schemas import PhysxSchema
        from pxr import Usd, UsdPhysics

        stage = Usd.Stage.Open(str(DATA / "geared_pair.usda"))
        leader = stage.GetPrimAtPath("/Gears/Joints/gear_leader")
        j = UsdPhysics.RevoluteJoint.Define(stage, "/Gears/Joints/extra").GetPrim()
        api = PhysxSchema.PhysxMimicJointAPI.Apply(j, "rotZ")
        api.CreateGearingAttr(-3.0)
        api.CreateReferenceJointRel().SetTargets([leader.GetPath()])
        j.ApplyAPI("NewtonMimicAPI")
        return {
            "mimic_ext_imported": any(m == "mimic_ext" or m.startswith("mimic_ext.") for m in sys.modules),
            "has_api": [bool(j.HasAPI("PhysxMimicJointAPI", "rotZ")), bool(j.HasAPI("NewtonMimicAPI"))],
            "gearing": api.GetGearingAttr().Get(),
            "declared": {s: _declared(s) for s in SCHEMAS},
        }
    else:
        raise SystemExit(f"unknown order {order}")
    from physx_usd_schemas import PhysxSchema

    return exercise(PhysxSchema.PhysxMimicJointAPI)


def scenario_kit(plugin_dir: str, stubs: str, order: str) -> dict:
    from pxr import Plug

    Plug.Registry().RegisterPlugins(plugin_dir)  # Kit registers its compiled PhysxSchema at startup
    if order == "kit-newton-first":
        import newton_usd_schemas  # noqa: F401
    elif order == "kit-no-newton":  # Isaac Sim 4.x/5.x, USD Composer: no Newton schema in the app
        import logging

        sys.modules["newton_usd_schemas"] = None  # makes its import raise ImportError
        logging.basicConfig(level=logging.INFO)  # show every line mimic_ext logs
    sys.path.insert(0, stubs)
    import omni.kit.app

    import mimic_ext.kit

    ext = mimic_ext.kit.MimicExtension()
    ext.on_startup("mimic_ext-0.1.0")
    try:
        out = exercise()
    finally:
        ext.on_shutdown()
        omni.kit.app.get_app()._stub_close()
    return out


def _physx_usd_schemas_state(out: dict) -> dict:
    import importlib.util

    spec = importlib.util.find_spec("physx_usd_schemas")
    folder = Path(spec.origin).parent.resolve() if spec and spec.origin else None
    out["physx_usd_schemas_imported"] = "physx_usd_schemas" in sys.modules
    out["physx_usd_schemas_plugins"] = _plugins_under(folder) if folder else []
    return out


def scenario_newton(order: str, out_dir: str) -> dict:
    if order == "mimic-first":
        import newton

        import mimic_ext.schema
    else:
        import newton

        import mimic_ext.schema  # noqa: F401
    from mimic_ext.schema import open_stage, read_relations, save_stage_atomically, set_relation

    stage = open_stage(DATA / "geared_pair.usda").stage
    (physx,) = read_relations(stage)
    ours = set_relation(stage, physx.replace(schema="newton", instance=None, multiplier=1.5, offset=0.1))
    path = save_stage_atomically(stage, Path(out_dir) / "geared_newton.usda")
    builder = newton.ModelBuilder()
    result = builder.add_usd(str(path))
    joints = result["path_joint_map"]
    fi, li = joints[ours.follower], joints[ours.leader]
    return {
        "ours": [ours.multiplier, ours.offset],
        "follower_mimics": int(builder.joint_mimic_joint[fi]),
        "leader_index": int(li),
        "newton_coeffs": [float(c) for c in builder.joint_mimic_coeffs[fi]],
    }


URDF = """<?xml version="1.0"?>
<robot name="pair">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="a"><inertial><mass value="0.1"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="0.1"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="leader" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-0.5" upper="0.5" effort="1" velocity="1"/></joint>
  <joint name="follower" type="revolute"><parent link="base"/><child link="b"/><origin xyz="0.1 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-1.2" upper="1.2" effort="1" velocity="1"/><mimic joint="leader" multiplier="2" offset="0.1"/></joint>
</robot>
"""


def scenario_converter(order: str, out_dir: str) -> dict:
    if order == "mimic-first":
        import urdf_usd_converter

        import mimic_ext.schema
    else:
        import urdf_usd_converter

        import mimic_ext.schema  # noqa: F401
    from pxr import Usd

    from mimic_ext.schema import read_relations, validate

    src = Path(out_dir) / "pair.urdf"
    src.write_text(URDF)
    asset = urdf_usd_converter.Converter().convert(str(src), str(Path(out_dir) / "converted"))
    stage = Usd.Stage.Open(asset.path)  # an Sdf.AssetPath
    rels = read_relations(stage)
    return {
        "relations": [
            [r.schema, r.follower.rsplit("/", 1)[-1], r.leader.rsplit("/", 1)[-1], r.multiplier, r.offset] for r in rels
        ],
        "errors": [str(f) for f in validate(stage) if f.severity == "error"],
    }


def main(argv: list[str]) -> None:
    name, *args = argv
    if name == "kit":
        out = _physx_usd_schemas_state(scenario_kit(*args))
    else:
        out = {"schemas": scenario_schemas, "newton": scenario_newton, "converter": scenario_converter}[name](*args)
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main(sys.argv[1:])
