"""The URDF we export loads in MuJoCo, Pinocchio and Newton as the robot we imported.

For every shared URDF/MJCF file and the built cases (tests/importer_cases.py): import, export
to URDF, then each tool loads the URDF and must agree with the imported USD on

- DOFs: the articulation's revolute/prismatic joints (plus 6 for a floating base); loop
  closures are not URDF and are left out (the exporter says so). Pinocchio counts a mimic
  follower outside ``nv``; its ``mimicking_joints`` are added back;
- relations: the same constraints (1e-6: USD float32 then the shortest decimal), compared
  whichever joint of a coupled set leads (``relation_sets``): Pinocchio needs each leader
  reached before its followers, so the export composes chains onto their roots and lets the
  first joint of an MJCF body lead when the second led (a leader below a joint it drives);
- masses (1%): Pinocchio's moving mass (what is welded to the world it merges into the
  universe); MuJoCo's per body, each the links it fuses (welded by fixed joints) where all of
  them have their mass (MuJoCo weighs a link without <inertial> by its geoms); Newton's per
  link where the USD has the mass (Newton weighs one without by its colliders);
- root pose: every body's world pose at q = 0 (1e-5 m / rad: float32 frames composed along
  the chain), which is where the file puts the robot (the Franka hand upside down, the
  2F-85 7 mm up).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from importer_cases import write_cases
from pxr import Usd, UsdGeom, UsdPhysics
from relation_sets import as_constraints

from mimic_ext.importers import export_urdf, import_robot
from mimic_ext.importers.usd_writer import CHAIN_LINK, GENERATED_KEY
from mimic_ext.math3d import quat_to_mat
from mimic_ext.schema import joints as J

ASSETS = Path(__file__).resolve().parents[1].parent / "shared" / "assets"
SHARED = (
    sorted(str(p.relative_to(ASSETS)) for p in [*ASSETS.rglob("*.urdf"), *ASSETS.rglob("*.xml")])
    if ASSETS.is_dir()
    else []
)
BUILT = ["built/rolling_finger.xml", "built/telescope.xml", "built/textured.urdf", "built/softfoot_like.xml"]
COEF = 1e-6  # float32 in the USD, then the shortest decimal that is the same float32
MASS_RTOL = 1e-2  # the 1%
POSE = 1e-5  # float32 joint frames composed over a chain of up to ~10 links


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """case -> (ImportResult, URDF path); each case imported and exported once."""
    folder = tmp_path_factory.mktemp("export")
    built = write_cases(folder / "built") or {}
    files = {f: ASSETS / f for f in SHARED}
    files.update({f"built/{n}": p for n, p in built.items()})
    cache = {}

    def get(case):
        if case not in files:
            pytest.skip(f"{case}: not available (shared assets, or trimesh for the built cases)")
        if case not in cache:
            result = import_robot(files[case])
            out = folder / (case.replace("/", "_").rsplit(".", 1)[0] + ".urdf")
            cache[case] = (result, out, export_urdf(result.stage, out))
        return cache[case]

    return get


class Expected:
    """What the imported USD says: DOFs, relations by joint name, moving mass, and each
    link's world pose (its body's pose, moved to the link frame the exporter chose)."""

    def __init__(self, result, export):
        stage = result.stage
        name_of = {p: n for n, p in result.joint_paths.items()}
        self.body_of = {p: n for n, p in result.body_paths.items()}
        robot = stage.GetPrimAtPath(result.robot_path)
        joints = [
            p
            for p in Usd.PrimRange(robot)
            if p.IsA(UsdPhysics.Joint) and not UsdPhysics.Joint(p).GetExcludeFromArticulationAttr().Get()
        ]
        self.floating = not any(not UsdPhysics.Joint(p).GetBody0Rel().GetTargets() for p in joints)
        one_dof = [p for p in joints if J.joint_kind(p) in (J.REVOLUTE, J.PRISMATIC)]
        self.dofs = len(one_dof) + (6 if self.floating else 0)
        self.relations = {
            name_of[r.follower]: (name_of[r.leader], r.multiplier, r.offset) for r in result.relations
        }  # one schema per follower
        cache = UsdGeom.XformCache()
        self.poses = {}
        self.masses = {}
        children = {}
        for p in joints:
            b0, b1 = J.joint_bodies(p)
            children.setdefault(b0, []).append((b1, J.joint_kind(p) != J.FIXED))
        moving = set()
        stack = [(b, m) for b, m in children.get(None, [])]
        if self.floating:
            root = next(
                p for p, n in self.body_of.items() if not any(p == b1 for kids in children.values() for b1, _ in kids)
            )
            stack.append((root, True))
        while stack:
            body, below = stack.pop()
            if below:
                moving.add(body)
            stack.extend((b, below or m) for b, m in children.get(body, []))
        offset_joints = [
            p for p in joints if any(r.follower == str(p.GetPath()) and r.offset != 0.0 for r in result.relations)
        ]
        self.offset_below = set()  # links a follower with an offset moves (Pinocchio's neutral q has it there)
        stack = [J.joint_bodies(p)[1] for p in offset_joints]
        while stack:
            body = stack.pop()
            self.offset_below.add(self.body_of.get(body))
            stack.extend(b for b, _ in children.get(body, []))
        for path, name in self.body_of.items():
            prim = stage.GetPrimAtPath(path)
            if prim.GetCustomDataByKey(GENERATED_KEY) == CHAIN_LINK or not path.startswith(result.robot_path + "/"):
                continue  # chain links are not URDF links; scene bodies are not the robot
            m = np.array(cache.GetLocalToWorldTransform(prim)).T
            frame = export.link_frames.get(name)  # the URDF link's frame in the body
            if frame is not None:
                G = np.eye(4)
                G[:3, :3], G[:3, 3] = frame.R, frame.p
                self.poses[name] = m @ G
            mass = UsdPhysics.MassAPI(prim).GetMassAttr().Get() if prim.HasAPI(UsdPhysics.MassAPI) else 0.0
            self.masses[name] = (float(mass or 0.0), path in moving)
        fixed_children: dict[str, list[str]] = {}
        for p in joints:
            b0, b1 = J.joint_bodies(p)
            if J.joint_kind(p) == J.FIXED and b0 is not None:
                fixed_children.setdefault(b0, []).append(b1)
        self.welded = {}  # link -> the links welded below it (itself included)
        for path, name in self.body_of.items():
            if name not in self.masses:
                continue
            group, stack = [], [path]
            while stack:
                b = stack.pop()
                if self.body_of[b] in self.masses:
                    group.append(self.body_of[b])
                stack.extend(fixed_children.get(b, []))
            self.welded[name] = group

    def link(self, label: str) -> str:
        """The link or joint name a Newton label ends with (names may hold '/')."""
        known = sorted(
            [*self.masses, *self.relations, *(l for l, *_ in self.relations.values())], key=len, reverse=True
        )
        return next((n for n in known if label == n or label.endswith("/" + n)), label.rsplit("/", 1)[-1])

    @property
    def moving_mass(self) -> float:
        return sum(m for m, moving in self.masses.values() if moving)


def _assert_relations(got: dict, want: dict, tool: str) -> None:
    """The same constraints (relation_sets), whichever joint of a coupled set leads."""
    got, want = as_constraints(got), as_constraints(want)
    assert set(got) == set(want), tool
    for follower, (leader, m, c) in want.items():
        assert got[follower][0] == leader, (tool, follower)
        assert got[follower][1] == pytest.approx(m, abs=COEF), (tool, follower)
        assert got[follower][2] == pytest.approx(c, abs=COEF), (tool, follower)


def _assert_pose(tool: str, body: str, got: np.ndarray, want: np.ndarray) -> None:
    assert np.allclose(got[:3, 3], want[:3, 3], atol=POSE), (tool, body, got[:3, 3], want[:3, 3])
    assert np.allclose(got[:3, :3], want[:3, :3], atol=POSE), (tool, body)


@pytest.mark.parametrize("case", SHARED + BUILT)
def test_mujoco_loads_the_export(case, exported):
    mujoco = pytest.importorskip("mujoco")
    result, urdf, export = exported(case)
    want = Expected(result, export)
    m = mujoco.MjModel.from_xml_path(str(urdf))
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    assert m.nv == want.dofs
    name = lambda kind, i: mujoco.mj_id2name(m, kind, i)  # noqa: E731
    got = {}
    for e in range(m.neq):
        if m.eq_type[e] == mujoco.mjtEq.mjEQ_JOINT:
            got[name(mujoco.mjtObj.mjOBJ_JOINT, m.eq_obj1id[e])] = (
                name(mujoco.mjtObj.mjOBJ_JOINT, m.eq_obj2id[e]),
                m.eq_data[e][1],
                m.eq_data[e][0],
            )
    _assert_relations(got, want.relations, "mujoco")
    masses = {name(mujoco.mjtObj.mjOBJ_BODY, b): m.body_mass[b] for b in range(1, m.nbody) if m.body_weldid[b] != 0}
    for body, group in want.welded.items():
        # MuJoCo fuses links welded by fixed joints into the first, and weighs a link without
        # <inertial> by its geoms (its own rule): compared where every link has its mass
        if body in masses and all(want.masses[g][0] > 0 for g in group):
            assert masses[body] == pytest.approx(sum(want.masses[g][0] for g in group), rel=MASS_RTOL), body
    for b in range(1, m.nbody):
        body = name(mujoco.mjtObj.mjOBJ_BODY, b)
        if body in want.poses:  # MuJoCo fuses static links into their parent
            pose = np.eye(4)
            pose[:3, :3], pose[:3, 3] = d.xmat[b].reshape(3, 3), d.xpos[b]
            _assert_pose("mujoco", body, pose, want.poses[body])


@pytest.mark.parametrize("case", SHARED + BUILT)
def test_pinocchio_loads_the_export(case, exported):
    pin = pytest.importorskip("pinocchio", reason="the pin extra (pip install 'mimic-ext[pin]')")
    result, urdf, export = exported(case)
    want = Expected(result, export)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = pin.buildModelFromUrdf(str(urdf), mimic=True)
    followers = list(model.mimicking_joints)
    assert model.nv + len(followers) == want.dofs
    got = {}
    for follower, leader in zip(model.mimicking_joints, model.mimicked_joints):
        joint = model.joints[follower].extract()
        got[model.names[follower]] = (model.names[leader], joint.scaling, joint.offset)
    _assert_relations(got, want.relations, "pinocchio")
    moving_mass = sum(model.inertias[i].mass for i in range(1, model.njoints))
    assert moving_mass == pytest.approx(want.moving_mass, rel=MASS_RTOL, abs=1e-9)
    data = model.createData()
    q = pin.neutral(model)
    pin.forwardKinematics(model, data, q)
    pin.updateFramePlacements(model, data)
    for body, pose in want.poses.items():
        if model.existFrame(body, pin.FrameType.BODY) and body not in want.offset_below:
            _assert_pose("pinocchio", body, data.oMf[model.getFrameId(body, pin.FrameType.BODY)].homogeneous, pose)


@pytest.mark.parametrize("case", SHARED + BUILT)
def test_newton_loads_the_export(case, exported):
    newton = pytest.importorskip("newton", reason="the newton extra (pip install 'mimic-ext[newton]')")
    result, urdf, export = exported(case)
    want = Expected(result, export)
    builder = newton.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        builder.add_urdf(str(urdf))
    assert builder.joint_dof_count == want.dofs
    last = [want.link(label) for label in builder.joint_label]
    got = {
        last[f]: (last[l], float(c[1]), float(c[0]))
        for f, (l, c) in enumerate(zip(builder.joint_mimic_joint, builder.joint_mimic_coeffs))
        if l != -1
    }
    _assert_relations(got, want.relations, "newton")
    model = builder.finalize(device="cpu")
    masses = {want.link(label): float(mass) for label, mass in zip(builder.body_label, builder.body_mass)}
    for body, (mass, _) in want.masses.items():
        if mass > 0:  # Newton weighs a link without <inertial> by its colliders, so those are its own
            assert masses[body] == pytest.approx(mass, rel=MASS_RTOL), body
    if want.floating:
        return  # Newton's add_urdf puts a floating base at the origin (its pose comes from xform=)
    state = model.state()
    newton.eval_fk(model, model.joint_q, model.joint_qd, state)
    body_q = state.body_q.numpy()
    for i, label in enumerate(builder.body_label):
        body = want.link(label)
        if body in want.poses:
            x, y, z, w = body_q[i][3:]
            pose = np.eye(4)
            pose[:3, :3], pose[:3, 3] = quat_to_mat([w, x, y, z]), body_q[i][:3]
            _assert_pose("newton", body, pose, want.poses[body])


def test_export_writes_unbounded_limits_not_zero_and_keeps_the_root_pose(exported):
    """A joint with no force or velocity limit in the USD gets effort/velocity 1e30 (URDF
    readers require both; 0 made Newton's MuJoCo solver refuse the model and gave Pinocchio
    zero limits), and our importer reads 1e30 back as "no limit"."""
    result, urdf, export = exported("menagerie_franka_hand/hand.xml")
    text = urdf.read_text()
    assert 'effort="0"' not in text and 'velocity="0"' not in text
    assert 'effort="1e30" velocity="1e30"' in text
    assert '<joint name="root_joint" type="fixed">' in text  # the hand hangs upside down from the world
    back = import_robot(urdf)
    prim = back.stage.GetPrimAtPath(back.joint_paths["finger_joint1"])
    assert not UsdPhysics.DriveAPI(prim, "linear").GetMaxForceAttr().HasAuthoredValue()  # unbounded again
    assert not prim.GetAttribute("physxJoint:maxJointVelocity")
    hand = np.array(UsdGeom.XformCache().GetLocalToWorldTransform(back.stage.GetPrimAtPath(back.body_paths["hand"]))).T
    want = Expected(result, export).poses["hand"]
    _assert_pose("re-import", "hand", hand, want)
    # quat="0 0 0 1": half a turn about z
    assert (hand[0, 0], hand[1, 1], hand[2, 2]) == pytest.approx((-1.0, -1.0, 1.0), abs=POSE)
