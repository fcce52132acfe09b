"""The grasp scene, one definition for ``tests/test_grasp.py``, ``tests/test_grasp_physx_peer.py``
and ``grasp_throughput.py``.

The shared Menagerie Robotiq 2F-85 (``2f85.xml`` as it is: its pads, collision meshes, the
two connect loops, the driver equality, its joint classes) hangs upside down from a vertical
slide (``lift``) above a 5 cm box resting on a floor. One MJCF file holds the scene; MuJoCo
loads it, and our importer turns it into the USD stage our solver reads (colliders and
frictions from the geoms, the loops as excluded joints, the box as a free rigid body), which
real PhysX reads too (``PhysxGrasp``, with the edits ``physx_stage`` notes). All engines then
run the same schedule at MuJoCo's time step:

- 0 .. T_CLOSE: the fingers close on the box with Menagerie's actuator (PD kp = 100,
  kd = 10 on the drivers' mean angle, force bounded to 5 N m, target 0.8 rad fully closed);
- T_CLOSE .. + T_LIFT: the slide lifts the gripper by LIFT (a smooth ramp, PD drive);
- then HOLD seconds still.

The box's slip is its displacement relative to the gripper from the start of the lift.
"""

from __future__ import annotations

import importlib
import math
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MENAGERIE = ROOT.parent / "shared" / "assets" / "menagerie_robotiq_2f85"

DT = 0.002  # s, MuJoCo's default time step (the Menagerie model keeps it)
T_CLOSE, T_LIFT, HOLD = 0.8, 1.0, 5.0
LIFT = 0.10  # m
BOX, BOX_MASS, BOX_MU = 0.05, 0.1, 0.5  # edge (m), kg, friction (MuJoCo's own scene's object)
HEIGHT = 0.2  # m: the slide's origin; the pads then reach 1.7 .. 5.4 cm above the floor
LIFT_KP, LIFT_KD = 5000.0, 200.0  # N/m, N s/m
GRIP_KP, GRIP_KD, GRIP_FMAX, GRIP_TARGET = 100.0, 10.0, 5.0, 0.8  # Menagerie's fingers_actuator
LEADER, FOLLOWER = "left_driver_joint", "right_driver_joint"  # our importer's relation


def position_targets(control):
    """A Control's position targets under either version's name (``ab_kernels.py`` runs a git
    ref's package beside the tree's: ``joint_target_q`` since 0.2, ``joint_target_pos`` before)."""
    targets = getattr(control, "joint_target_q", None)
    return control.joint_target_pos if targets is None else targets


def steps(hold: float = HOLD) -> int:
    return int(round((T_CLOSE + T_LIFT + hold) / DT))


def lift_target(i: int) -> float:
    """The slide's target (m) at step i: 0, a cosine ramp to LIFT, then LIFT."""
    s = min(max((i * DT - T_CLOSE) / T_LIFT, 0.0), 1.0)
    return LIFT * 0.5 * (1.0 - math.cos(math.pi * s))


def lift_start() -> int:
    """The step at which the lift begins (slip is measured from here)."""
    return int(round(T_CLOSE / DT))


def scene_xml(directory: Path) -> Path:
    """Write the scene's MJCF into ``directory`` (meshes read from the shared assets)."""
    src = (MENAGERIE / "2f85.xml").read_text()
    src = src.replace('meshdir="assets"', f'meshdir="{MENAGERIE / "assets"}"')
    mount = '<body name="base_mount" pos="0 0 0.007" childclass="2f85">'
    assert mount in src, "the Menagerie 2F-85 changed: base_mount not found"
    src = src.replace(
        mount,
        f'<body name="lift" pos="0 0 {HEIGHT}" quat="0 1 0 0">'
        '<joint name="lift" type="slide" axis="0 0 -1"/>'
        '<inertial mass="1" pos="0 0 0" diaginertia="0.01 0.01 0.01"/>\n' + mount,
    )
    h = 0.5 * BOX
    src = src.replace(
        "  </worldbody>",
        "  </body>\n"
        '    <geom name="floor" size="0 0 0.05" type="plane"/>\n'
        f'    <body name="box" pos="0 0 {h}"><freejoint name="box"/>'
        f'<geom name="box" type="box" size="{h} {h} {h}" mass="{BOX_MASS}" friction="{BOX_MU}"/></body>\n'
        "  </worldbody>",
    )
    src = src.replace(
        "  <actuator>",
        '  <actuator>\n    <general name="lift" joint="lift" biastype="affine" '
        f'gainprm="{LIFT_KP}" biasprm="0 -{LIFT_KP} -{LIFT_KD}"/>',
    )
    out = Path(directory) / "grasp_scene.xml"
    out.write_text(src)
    return out


class OursGrasp:
    """The scene in our solver: ``num_envs`` copies, every one on the same schedule."""

    def __init__(
        self, xml: Path, num_envs: int = 1, device: str = "cpu", package: str = "mimic_ext", threads: int | None = None
    ):
        """``package``: the package to import the importer and solver from (``ab_kernels.py``
        runs a copy of another version as ``mimic_base``); ``threads``: the solver's."""
        import_robot = importlib.import_module(package + ".importers").import_robot
        solver = importlib.import_module(package + ".solver")
        Solver, build_model = solver.Solver, solver.build_model

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # hull vertex caps, defaulted masses: noted in the model
            self.result = import_robot(xml)
            self.model = build_model(self.result.stage, num_envs=num_envs, device=device)
        m, jp = self.model, self.result.joint_paths
        self.lift, self.leader, self.follower = (m.dof_index(jp[n]) for n in ("lift", LEADER, FOLLOWER))
        m.set_drive(jp["lift"], LIFT_KP, LIFT_KD, target_pos=0.0)
        # Menagerie's actuator: kp, kd and the 5 N m bound on the drivers together (the leader
        # carries the drive; the relation shares it), plus the leader's own joint damping 0.1
        m.set_drive(
            jp[LEADER], GRIP_KP, GRIP_KD + m.drive(jp[LEADER])["damping"], max_force=GRIP_FMAX, target_pos=GRIP_TARGET
        )
        self.solver = Solver(m, threads=threads)
        self.box_q = len(m.joints) + 7 * m.base_bodies.index(self.result.body_paths["box"])
        self.a, self.b, self.control = m.state(), m.state(), m.control()
        self.targets = position_targets(self.control).numpy()  # (N, dofs): the last step's position targets

    def step(self, i: int) -> None:
        self.targets[:, self.lift] = lift_target(i)
        position_targets(self.control).assign(self.targets)
        self.solver.step(self.a, self.b, self.control, DT)
        self.a, self.b = self.b, self.a

    def q(self) -> np.ndarray:
        return self.a.joint_q.numpy().astype(np.float64)

    def box_in_gripper(self, q: np.ndarray) -> np.ndarray:
        """(N, 3): the box's position relative to the slide (the gripper does not turn)."""
        p = q[:, self.box_q : self.box_q + 3].copy()
        p[:, 2] -= q[:, self.lift]
        return p

    def residual(self, q: np.ndarray) -> np.ndarray:
        return q[:, self.follower] - q[:, self.leader]


class MujocoGrasp:
    """The scene in MuJoCo (the Menagerie model, its own actuator at ctrl 255 = 0.8 rad)."""

    def __init__(self, xml: Path):
        import mujoco as mj

        self.mj = mj
        self.m = mj.MjModel.from_xml_path(str(xml))
        self.d = mj.MjData(self.m)
        jid = lambda n: mj.mj_name2id(self.m, mj.mjtObj.mjOBJ_JOINT, n)  # noqa: E731
        self.lift, self.leader, self.follower = (self.m.jnt_qposadr[jid(n)] for n in ("lift", LEADER, FOLLOWER))
        self.box_q = self.m.jnt_qposadr[jid("box")]
        act = lambda n: mj.mj_name2id(self.m, mj.mjtObj.mjOBJ_ACTUATOR, n)  # noqa: E731
        self.a_lift, self.a_grip = act("lift"), act("fingers_actuator")

    def step(self, i: int) -> None:
        self.d.ctrl[self.a_lift] = lift_target(i)
        self.d.ctrl[self.a_grip] = 255.0
        self.mj.mj_step(self.m, self.d)

    def box_in_gripper(self) -> np.ndarray:
        p = self.d.qpos[self.box_q : self.box_q + 3].copy()
        p[2] -= self.d.qpos[self.lift]
        return p

    def residual(self) -> float:
        return float(self.d.qpos[self.follower] - self.d.qpos[self.leader])


#: The rail the slide runs on in PhysX's copy (see ``physx_stage``).
RAIL = "lift_rail"


def physx_stage(result, solver: str = "TGS", position_iterations: int | None = None):
    """The importer's stage as PhysX is given it: a private flattened copy (``fet022.engines
    .prepared``) with the drives our solver gets from ``OursGrasp`` and one change of how the
    mechanism is rooted, each a line in the returned ``notes``.

    PhysX roots an articulation at a body jointed to the world (fixed base) and simulates the
    other joints to the world outside it: the slide (a prismatic joint from the world) would not
    be a DOF whose target could be set. So the slide runs on a rail, a body welded to the world
    at the origin inside the robot's prim (cloned with it), which the articulation is rooted at:
    the same mechanism. ``solver``: ``physxScene:solverType`` (TGS is PhysX's default, authored
    here to say so); ``position_iterations``: ``physxArticulation:solverPositionIterationCount``
    on the gripper and ``physxRigidBody:`` on the box, None to leave them as the USD says (not
    authored: PhysX's defaults)."""
    from pxr import Gf, Sdf, UsdGeom, UsdPhysics

    from mimic_ext.fet022.engines import prepared
    from mimic_ext.schema import joints

    prep = prepared.private_copy(result.stage)
    st, jp = prep.stage, result.joint_paths
    rail = f"{result.robot_path}/{RAIL}"
    prim = UsdGeom.Xform.Define(st, rail).GetPrim()
    UsdPhysics.RigidBodyAPI.Apply(prim)
    mass = UsdPhysics.MassAPI.Apply(prim)
    mass.CreateMassAttr(1.0)
    mass.CreateDiagonalInertiaAttr(Gf.Vec3f(0.01, 0.01, 0.01))
    weld = UsdPhysics.FixedJoint.Define(st, f"{result.robot_path}/Joints/{RAIL}_weld")
    weld.CreateBody1Rel().SetTargets([Sdf.Path(rail)])
    lift = st.GetPrimAtPath(jp["lift"])
    UsdPhysics.Joint(lift).CreateBody0Rel().SetTargets([Sdf.Path(rail)])  # its frame 0 was the world's
    prep.notes.append(
        f"the slide runs on {rail}, a body welded to the world at the origin, as PhysX roots a "
        "fixed-base articulation at a body jointed to the world (the slide from the world would not be a DOF)"
    )
    prepared.write_drive(lift, LIFT_KP, LIFT_KD, math.inf, 0.0)
    lead = st.GetPrimAtPath(jp[LEADER])
    damping = UsdPhysics.DriveAPI(lead, "angular").GetDampingAttr().Get() or 0.0
    prepared.write_drive(lead, GRIP_KP, GRIP_KD + damping / (joints.unit_scale(lead) or 1.0), GRIP_FMAX, GRIP_TARGET)
    prep.notes.append(
        f"Menagerie's finger actuator as a drive on {LEADER} (kp {GRIP_KP:g}, kd {GRIP_KD:g} plus the joint's "
        f"damping, {GRIP_FMAX:g} N m, target {GRIP_TARGET} rad), as OursGrasp sets it on our model"
    )
    scene = st.GetPrimAtPath(prepared.ensure_scene(prep))
    scene.AddAppliedSchema("PhysxSceneAPI")
    scene.CreateAttribute("physxScene:solverType", Sdf.ValueTypeNames.Token).Set(solver)
    prep.notes.append(f"physxScene:solverType = {solver} on {scene.GetPath()}")
    if position_iterations is not None:
        root = st.GetPrimAtPath(result.robot_path)
        root.AddAppliedSchema("PhysxArticulationAPI")
        root.CreateAttribute("physxArticulation:solverPositionIterationCount", Sdf.ValueTypeNames.Int).Set(
            int(position_iterations)
        )
        box = st.GetPrimAtPath(result.body_paths["box"])
        box.AddAppliedSchema("PhysxRigidBodyAPI")
        box.CreateAttribute("physxRigidBody:solverPositionIterationCount", Sdf.ValueTypeNames.Int).Set(
            int(position_iterations)
        )
        prep.notes.append(f"{position_iterations} position iterations on the gripper and the box")
    return prep


class PhysxGrasp:
    """The scene on real PhysX (ovphysx, CPU): ``num_envs`` copies of the gripper and its box,
    cloned ``spacing`` m apart along ``along`` on both sides of the source (CPU clones are kept
    apart only by distance), every one on the same schedule. ``threads``: PhysX's CPU worker
    threads (0: the calling thread). ``result``: the importer's result to reuse (else the MJCF
    is imported again).

    ``along`` None: the layout's choice, Y here, the axis every finger joint turns about (the
    lift's turn and the base's orientation put the Menagerie hinges' X on the world's Y). A
    clone is the gripper moved: PhysX's motion of this linkage with its two loop-closing
    joints (the connect constraints) depends on where it stands in the plane of the linkage
    (XZ), even without cloning: the gripper moved 1 m along X in one environment snaps its
    fingers about 0.4 rad within 3 steps, moved along Y it steps within 0.01 rad of the origin's
    run over 100 steps (``benchmarks/physx_clones.py``; ``fet022.engines.physx_layout``).
    ``along="X"`` shows it, with a line in ``notes``."""

    def __init__(
        self,
        xml: Path,
        num_envs: int = 1,
        threads: int = 0,
        result=None,
        spacing: float = 1.0,
        along: str | None = None,
        solver: str = "TGS",
        position_iterations: int | None = None,
    ):
        from mimic_ext.fet022.engines import prepared
        from mimic_ext.fet022.engines.physx_layout import layout
        from mimic_ext.fet022.engines.physx_session import PhysxSession, joint_names
        from mimic_ext.native_stderr import quiet_native_stderr

        if result is None:
            from mimic_ext.importers import import_robot

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # hull vertex caps, defaulted masses
                result = import_robot(xml)
        prep = physx_stage(result, solver, position_iterations)
        self.notes = prep.notes
        st, jp = prep.stage, result.joint_paths
        self.box = result.body_paths["box"]
        by_name, _, prismatic = joint_names(st, result.robot_path)
        env = layout(st, result.robot_path, num_envs, spacing, along=along, centred=True, companions=[self.box])
        if env.note:
            self.notes.append(env.note)
        with quiet_native_stderr():
            usda = st.GetRootLayer().ExportToString()
        roots = [str(p.GetPath()) for p in prepared.articulation_roots(st)]
        self.session = PhysxSession(
            usda, roots, by_name, env, prismatic=prismatic, threads=threads, rigid_bodies=[self.box]
        )
        self.lift, self.leader, self.follower = (jp[n] for n in ("lift", LEADER, FOLLOWER))
        self.num_envs = num_envs

    def step(self, i: int) -> None:
        self.session.set_targets({self.lift: np.full(self.num_envs, lift_target(i))})
        self.session.step(DT)

    def box_pose(self) -> np.ndarray:
        """(N, 7): the box's world pose, position (m) and quaternion (x, y, z, w)."""
        return self.session.rigid_poses()[self.box]

    def box_in_gripper(self) -> np.ndarray:
        """(N, 3): the box's position relative to the slide, in its environment's place."""
        q = self.session.positions([self.lift])[self.lift]
        p = self.box_pose()[:, :3]
        p[:, 2] -= q
        return p

    def residual(self) -> np.ndarray:
        q = self.session.positions([self.leader, self.follower])
        return q[self.follower] - q[self.leader]

    def close(self) -> None:
        self.session.close()


def slip(track: np.ndarray) -> float:
    """Largest displacement (m) of the box relative to the gripper from the first row on."""
    return float(np.linalg.norm(track - track[0], axis=-1).max())
