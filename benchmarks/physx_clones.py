"""Do PhysX's clones step like environment 0? Real PhysX (ovphysx, CPU), no timings.

Two tables, each the largest |q - q_ref| (rad, or m for a prismatic joint) over every joint and
sample of a schedule:

* **moved**: one environment, the robot (and the grasp's box) moved by 1 m or 1 mm along X, Y
  or Z with its world-anchored joint frames, against the same stage where it stands. Nothing
  is cloned: this is what a clone at that place inherits.
* **cloned**: 3 environments (the robot cloned 1 m and 2 m out; the grasp: +1 and -1 m), the same
  targets in each, clones against environment 0, with the layout forced along X, Y or Z, and as
  ``run_physx`` / ``PhysxGrasp`` lay them out by default now (``auto``; "one by one": the
  environments were run one after another, not cloned).

Stages: the FET022 sweep's PhysX copy (``engines.physx.PhysxEngine.prepare``) of the shared Isaac
2F-85 (compliant: two revolute loop joints; parallel grip: none), the shared Newton 2F-85 (two
spherical loop joints), data/robotiq_style_linkage.usda (a tree, no loops), each on its FET022
schedule (the swept joint's 720 steps at 240 Hz, the sweep's 49 samples); the grasp scene's
stage (``grasp_scene.PhysxGrasp``: the Menagerie 2F-85, two spherical loops) on its schedule,
``--grasp-steps`` steps, every one sampled, and without its loops; and a small stage whose
articulation root API sits on a body welded to the world.

    python benchmarks/physx_clones.py [--grasp-steps 100] [--only grasp,newton,...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHARED = ROOT.parent / "shared" / "assets" / "robotiq_isaacsim_usd_2f85"
FET022_STAGES = {
    "compliant": SHARED / "Gripper_2F85/configuration/Robotiq_2F_85_config_physics_compliant.usda",
    "parallel": SHARED / "Gripper_2F85/configuration/Robotiq_2F_85_config_physics_parallel_grip.usda",
    "newton": SHARED / "Gripper_2F85_newton/Robotiq_2F85_newton.usda",
    "linkage": ROOT / "data" / "robotiq_style_linkage.usda",
}
AXES = "XYZ"


def offsets():
    """The moved table's columns: 1 m then 1 mm along X, Y and Z."""
    for dist in (1.0, 1e-3):
        for axis in AXES:
            offset = [0.0, 0.0, 0.0]
            offset[AXES.index(axis)] = dist
            yield offset


def _worst(q: dict, ref: dict) -> float:
    """Largest |q - ref| over joints and samples; inf where either is not finite (NaN)."""
    d = [np.abs(np.asarray(q[p]) - np.asarray(ref[p])) for p in ref]
    d = np.concatenate([x.ravel() for x in d])
    return float(np.inf) if not np.isfinite(d).all() else float(d.max())


def _fmt(x: float) -> str:
    return "NaN" if not np.isfinite(x) else ("0" if x == 0 else f"{x:.2g}")


def move(stage, paths, offset) -> None:
    """Move the prims ``paths`` (and every joint frame anchored to the world) by ``offset``."""
    from pxr import Gf, UsdGeom, UsdPhysics

    off = Gf.Vec3d(*offset)
    for path in paths:
        xf = UsdGeom.Xformable(stage.GetPrimAtPath(path))
        ops = xf.GetOrderedXformOps()
        op = xf.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble, "moved")
        op.Set(off)
        xf.SetXformOpOrder([op, *ops])
    for prim in stage.Traverse():
        joint = UsdPhysics.Joint(prim)
        if prim.IsA(UsdPhysics.Joint) and not joint.GetBody0Rel().GetTargets():
            attr = joint.GetLocalPos0Attr()
            attr.Set(Gf.Vec3f(Gf.Vec3d(attr.Get() or Gf.Vec3f(0, 0, 0)) + off))


# ------------------------------------------------------------------------- FET022 stages
def sweep_copy(path: Path):
    """The FET022 PhysX engine's prepared copy of a stage: (stage, clone source, plan)."""
    import mimic_ext.schema as schema
    from mimic_ext.fet022 import get_engine
    from mimic_ext.fet022.config import SweepConfig
    from mimic_ext.fet022.discovery import discover
    from mimic_ext.fet022.plan import make_plan
    from mimic_ext.schema.stage_io import open_stage

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stage = open_stage(str(path)).stage
    rels = schema.read_relations(stage)
    plan = make_plan(discover(stage, rels).swept, SweepConfig())
    prep, source = get_engine("physx").prepare(stage, plan, rels)
    return prep.stage, source, plan


def fet022_rows(name: str, path: Path) -> tuple[list[str], list[str]]:
    from mimic_ext.fet022.engines.physx_session import joint_names, run_physx

    # run_physx reads the stage (a flattened export) and leaves it as it was: this copy is the reference
    stage, source, plan = sweep_copy(path)
    block = plan.target_block(0, plan.total_steps)
    targets = {pj.path: block[:, 0, j] for j, pj in enumerate(plan.joints)}

    def run(stage, source, num_envs=1, along=None):
        record = list(joint_names(stage, source)[0].values())
        out = run_physx(
            stage,
            plan.total_steps,
            plan.dt,
            targets,
            record=record,
            num_envs=num_envs,
            sample_steps=plan.sample_steps,
            clone_source=source,
            along=along,
        )
        return out

    ref = {p: v[0] for p, v in run(stage, source).positions.items()}
    moved = []
    for offset in offsets():
        st, src, _ = sweep_copy(path)
        move(st, [src], offset)
        q = {p: v[0] for p, v in run(st, src).positions.items()}
        moved.append(_fmt(_worst(q, ref)))
    cloned = []
    for along in (*AXES, None):
        st, src, _ = sweep_copy(path)
        out = run(st, src, num_envs=3, along=along)
        diff = max(
            _worst({p: v[e] for p, v in out.positions.items()}, {p: v[0] for p, v in out.positions.items()})
            for e in (1, 2)
        )
        tag = " (one by one)" if any("one after another" in n for n in out.notes) else ""
        cloned.append(_fmt(diff) + tag)
    return moved, cloned


# ---------------------------------------------------------------------------- the grasp
def grasp_rows(steps: int, loops: bool = True) -> tuple[list[str], list[str]]:
    from benchmarks import grasp_scene as G
    from mimic_ext.fet022.engines import prepared
    from mimic_ext.fet022.engines.physx_layout import layout
    from mimic_ext.fet022.engines.physx_session import PhysxSession, joint_names
    from mimic_ext.importers import import_robot

    xml = G.scene_xml(Path(tempfile.mkdtemp()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = import_robot(xml)
    box = result.body_paths["box"]
    lift = result.joint_paths["lift"]

    def stage_of():
        st = G.physx_stage(result).stage
        if not loops:
            for prim in list(st.Traverse()):
                if prim.GetName().startswith("connect_"):
                    prim.SetActive(False)
        return st

    def run(st, num_envs=1, along=None) -> np.ndarray:
        """Every DOF of the gripper, (steps, envs, dofs)."""
        by_name, _, prismatic = joint_names(st, result.robot_path)
        env = layout(st, result.robot_path, num_envs, 1.0, along=along, centred=True, companions=[box])
        roots = [str(p.GetPath()) for p in prepared.articulation_roots(st)]
        session = PhysxSession(st.GetRootLayer().ExportToString(), roots, by_name, env, prismatic=prismatic)
        rows = []
        try:
            for i in range(steps):
                session.set_targets({lift: np.full(num_envs, G.lift_target(i))})
                session.step(G.DT)
                rows.append(session.dof_rows(0))
        finally:
            session.close()
        return np.array(rows)

    ref = run(stage_of())[:, 0]
    moved = []
    for offset in offsets():
        st = stage_of()
        move(st, [result.robot_path, box], offset)
        q = run(st)[:, 0]
        moved.append(_fmt(np.inf if not np.isfinite(q).all() else float(np.abs(q - ref).max())))
    cloned = []
    for along in (*AXES, None):
        q = run(stage_of(), 3, along)
        d = np.abs(q[:, 1:] - q[:, :1])
        cloned.append(_fmt(np.inf if not np.isfinite(d).all() else float(d.max())))
    return moved, cloned


# ------------------------------------------------- an articulation root body welded to the world
def rooted_body_rows() -> tuple[list[str], list[str]]:
    """A base carrying PhysicsArticulationRootAPI itself, welded to the world, and one driven
    pendulum: ``run_physx`` 720 steps at 240 Hz."""
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

    from mimic_ext.fet022.engines.physx_session import run_physx

    def stage_of():
        st = Usd.Stage.CreateInMemory()
        UsdGeom.SetStageUpAxis(st, UsdGeom.Tokens.z)
        UsdGeom.SetStageMetersPerUnit(st, 1.0)
        UsdPhysics.Scene.Define(st, "/physicsScene")
        UsdGeom.Xform.Define(st, "/Robot")
        for name, at in (("base", (0, 0, 0)), ("arm", (0.1, 0, 0))):
            xf = UsdGeom.Xform.Define(st, f"/Robot/{name}")
            xf.AddTranslateOp().Set(Gf.Vec3d(*at))
            UsdPhysics.RigidBodyAPI.Apply(xf.GetPrim())
            mass = UsdPhysics.MassAPI.Apply(xf.GetPrim())
            mass.CreateMassAttr(0.5)
            mass.CreateDiagonalInertiaAttr(Gf.Vec3f(1e-3, 1e-3, 1e-3))
        UsdPhysics.ArticulationRootAPI.Apply(st.GetPrimAtPath("/Robot/base"))
        weld = UsdPhysics.FixedJoint.Define(st, "/Robot/weld")
        weld.CreateBody1Rel().SetTargets([Sdf.Path("/Robot/base")])
        hinge = UsdPhysics.RevoluteJoint.Define(st, "/Robot/hinge")
        hinge.CreateBody0Rel().SetTargets([Sdf.Path("/Robot/base")])
        hinge.CreateBody1Rel().SetTargets([Sdf.Path("/Robot/arm")])
        hinge.CreateAxisAttr("Y")
        hinge.CreateLocalPos1Attr(Gf.Vec3f(-0.1, 0, 0))
        drive = UsdPhysics.DriveAPI.Apply(hinge.GetPrim(), "angular")
        drive.CreateStiffnessAttr(0.05)
        drive.CreateDampingAttr(0.005)
        return st

    steps, target = 720, {"/Robot/hinge": np.linspace(0.0, 0.5, 720)}
    positions = run_physx(stage_of(), steps, 1 / 240, target, sample_steps=range(0, steps + 1, 15)).positions
    ref = {p: v[0] for p, v in positions.items()}
    moved = []
    for offset in offsets():
        st = stage_of()
        move(st, ["/Robot"], offset)
        q = run_physx(st, steps, 1 / 240, target, sample_steps=range(0, steps + 1, 15)).positions
        moved.append(_fmt(_worst({p: v[0] for p, v in q.items()}, ref)))
    cloned = []
    for along in (*AXES, None):
        out = run_physx(
            stage_of(), steps, 1 / 240, target, num_envs=3, sample_steps=range(0, steps + 1, 15), along=along
        )
        diff = max(
            _worst({p: v[e] for p, v in out.positions.items()}, {p: v[0] for p, v in out.positions.items()})
            for e in (1, 2)
        )
        cloned.append(_fmt(diff) + (" (one by one)" if any("one after another" in n for n in out.notes) else ""))
    return moved, cloned


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grasp-steps", type=int, default=100, help="steps of the grasp's schedule (every one compared)")
    ap.add_argument(
        "--only", default="", help="comma-separated cases: compliant,parallel,newton,linkage,grasp,grasp-noloops,rooted"
    )
    args = ap.parse_args(argv)
    only = set(filter(None, args.only.split(",")))
    cases = []
    for name, path in FET022_STAGES.items():
        if path.is_file():
            cases.append((f"FET022 {name}", lambda name=name, path=path: fet022_rows(name, path)))
        else:
            print(f"(skipped FET022 {name}: {path} absent)")
    from benchmarks import grasp_scene as G

    if (G.MENAGERIE / "2f85.xml").is_file():
        cases.append(("grasp", lambda: grasp_rows(args.grasp_steps)))
        cases.append(("grasp-noloops", lambda: grasp_rows(args.grasp_steps, loops=False)))
    cases.append(("rooted", rooted_body_rows))
    heads = [f"{d}{a}" for d in ("1m ", "1mm ") for a in AXES]
    print("moved (one environment), max |q - q where it stands|:")
    print(f"  {'stage':22s}" + "".join(f"{h:>10s}" for h in heads))
    rows = {}
    for name, fn in cases:
        if only and name.removeprefix("FET022 ") not in only:
            continue
        rows[name] = fn()
        print(f"  {name:22s}" + "".join(f"{x:>10s}" for x in rows[name][0]), flush=True)
    print("cloned (3 environments), max |q_clone - q_env0|:")
    print(f"  {'stage':22s}" + "".join(f"{h:>10s}" for h in ("X", "Y", "Z")) + "   auto (the default now)")
    for name, (_, cloned) in rows.items():
        print(f"  {name:22s}" + "".join(f"{x:>10s}" for x in cloned[:3]) + f"   {cloned[3]}")


if __name__ == "__main__":
    main()
