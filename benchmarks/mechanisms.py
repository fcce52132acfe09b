"""The benchmark's mechanisms, each defined once and handed to every engine from that one text.

A ``Mechanism`` is a geometry-free URDF (SI, radians, an ``<inertial>`` on every moving
link, ``<mimic>`` relations, joint limits, no effort or velocity limits) plus the drive on
each independent joint and the target schedule. Every engine reads that same URDF with
its own importer:

* ours and real PhysX: ``mimic_ext.importers.read_robot`` -> the drives set on the
  ``RobotModel`` (SI) -> ``write_stage`` (the importer's one writer: degrees, per-degree gains,
  ``PhysxMimicJointAPI``, fixed base, PhysicsScene) plus each joint's initial position as
  ``PhysicsJointStateAPI``; ``usd_stage``;
* MuJoCo: ``MjSpec.from_string`` (its URDF compiler turns ``<mimic>`` into joint equalities)
  plus a ``position`` actuator per driven joint; ``mujoco_model``;
* Newton: ``ModelBuilder.add_urdf`` (``<mimic>`` -> ``set_joint_mimic``) plus the same gains;
  ``newton_builder``.

Drives are PD position drives with the same SI gains everywhere: stiffness
``kp = GAIN * H / dt^2`` and damping ``kd = 2 sqrt(kp H)`` (critical), ``H`` the joint's
reduced inertia (``S^T M S`` over it and its followers, at the file's pose, from
``importers.mjcf.joint_space_inertia``), so that an explicit spring (MuJoCo's and Newton's)
stays well inside its stability bound. The targets are a 1 Hz sinusoid around the middle of
the range each driven joint (and its followers) can reach, with a per-environment phase,
faded in over the first quarter second from the initial pose at that middle.

Also here: the FET022 scale stages (``scale_stage``: P mimic pairs in one stage) for
``sweep_scale.py``. Mechanism sources: the Robotiq 2F-85 from the shared
``pybullet_ur5_robotiq/urdf/robotiq_85.urdf`` (its commented-out ``<inertial>`` blocks
restored), the shared Inspire hand, chains, and a humanoid-like tree with two Inspire hands
(or a G1-with-Inspire URDF when the shared assets hold one).
"""

from __future__ import annotations

import math
import re
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT.parent / "shared" / "assets"
ROBOTIQ_URDF = ASSETS / "pybullet_ur5_robotiq" / "urdf" / "robotiq_85.urdf"
INSPIRE_URDF = ASSETS / "dexurdf_inspire_hand_right" / "inspire_hand_right.urdf"

DT = 1.0 / 240.0
GRAVITY = (0.0, 0.0, -9.81)
#: Largest kp dt^2 / m of a drive (natural frequency sqrt(0.1)/dt = 76 rad/s: stiff against
#: gravity on light fingers, well below the explicit bound of 4).
GAIN = 0.1
#: dt^2 times the largest eigenvalue of H^-1 Kp over the drives (see ``_finish``): a lone
#: explicit spring under semi-implicit Euler is stable below 4; 0.1 keeps it far from that.
STIFFEST_MODE = 0.1
FREQUENCY_HZ = 1.0
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
RAMP_S = 0.25
#: Share of each driven joint's reachable half-range that the sinusoid spans (capped at 0.4 rad).
AMPLITUDE_SHARE = 0.3
MAX_AMPLITUDE = 0.4
#: Rotor inertia on each synthetic chain joint (kg m^2): a small geared servo's, about 20x
#: a 5 cm link's own; it keeps a leader's explicit drive stable where a soft relation
#: (MuJoCo's joint equality) lets the leader move apart from its follower.
CHAIN_ARMATURE = 1e-3
#: Rotor inertia of the synthetic humanoid's legs/waist and arms (kg m^2), of the G1's order.
LEG_ARMATURE, ARM_ARMATURE = 0.03, 0.01


@dataclass(frozen=True)
class Mimic:
    """``q_follower = multiplier * q_leader + offset`` (SI)."""

    follower: str
    leader: str
    multiplier: float
    offset: float


@dataclass
class Mechanism:
    """One mechanism as every engine gets it. Joint names are the URDF's."""

    name: str
    source: str
    urdf: str
    joints: tuple[str, ...]  # 1-DOF joints, URDF order
    mimics: tuple[Mimic, ...]
    lower: dict[str, float]
    upper: dict[str, float]
    masses: dict[str, float]  # link -> kg (every link of the URDF)
    kp: dict[str, float] = field(default_factory=dict)  # driven joint -> N m/rad (N/m)
    kd: dict[str, float] = field(default_factory=dict)
    centre: dict[str, float] = field(default_factory=dict)
    amplitude: dict[str, float] = field(default_factory=dict)
    prismatic: frozenset = frozenset()
    gravity: tuple[float, float, float] = GRAVITY
    armature: dict[str, float] = field(default_factory=dict)  # joint -> kg m^2 (kg): rotor inertia
    stiffness_scale: float = GAIN  # kp_i dt^2 / m_i of every drive (see _finish)
    limit_ke: dict[str, float] = field(default_factory=dict)  # Newton's limit springs, N m/rad

    @property
    def driven(self) -> tuple[str, ...]:
        """The independent joints (no mimic of their own): each has a drive."""
        followers = {m.follower for m in self.mimics}
        return tuple(j for j in self.joints if j not in followers)

    @property
    def dofs(self) -> int:
        return len(self.joints)

    def q0(self) -> dict[str, float]:
        """Initial positions (SI): driven joints at their centre, followers on their relation."""
        q = {j: self.centre[j] for j in self.driven}
        for m in self.mimics:  # leaders are independent joints (no chains here)
            q[m.follower] = m.multiplier * q[m.leader] + m.offset
        return {j: q[j] for j in self.joints}

    def targets(self, steps, num_envs: int) -> np.ndarray:
        """Position targets of the steps ``steps`` (indices), (len, num_envs, len(driven)).

        Step k is given the target at its end time (k + 1) dt: centre + amplitude * fade *
        sin(2 pi f t + phase), phase 2 pi frac(e g) for environment e (g the golden ratio's
        fraction: phases spread evenly, and environment e has the same one at any N).
        """
        k = np.asarray(steps, float)
        t = (k + 1.0) * DT
        fade = np.clip(t / RAMP_S, 0.0, 1.0)
        fade = fade * fade * (3.0 - 2.0 * fade)
        phase = 2.0 * math.pi * np.mod(np.arange(num_envs) * GOLDEN, 1.0)  # env e's phase whatever N
        s = fade[:, None] * np.sin(2.0 * math.pi * FREQUENCY_HZ * t[:, None] + phase[None, :])  # (T, N)
        c = np.array([self.centre[j] for j in self.driven])
        a = np.array([self.amplitude[j] for j in self.driven])
        return c[None, None, :] + s[:, :, None] * a[None, None, :]

    def describe(self) -> str:
        kps = [self.kp[j] for j in self.driven]
        kds = [self.kd[j] for j in self.driven]
        limited = sum(1 for j in self.joints if math.isfinite(self.lower[j]))
        return (
            f"{self.name}: {self.dofs} DOFs ({len(self.driven)} independent, driven), {len(self.mimics)} active "
            f"mimics, limits on {limited} joints (every motion stays inside them), gravity "
            f"{tuple(round(g, 3) for g in self.gravity)} m/s^2, {sum(self.masses.values()):.4g} kg in "
            f"{len(self.masses)} links, PD drives kp {min(kps):.3g}..{max(kps):.3g}, kd {min(kds):.3g}.."
            f"{max(kds):.3g} (SI, kp dt^2/m = {self.stiffness_scale:.3g}, critically damped), targets: "
            f"{FREQUENCY_HZ:g} Hz "
            f"sinusoid, per-env phase; source: {self.source}"
        )


# ---------------------------------------------------------------------------------- URDF text


def _fmt(v) -> str:
    return " ".join(f"{float(x):.10g}" for x in v)


def _clean_urdf(text: str) -> str:
    """Geometry-free: visuals, collisions, transmissions and gazebo tags out; effort and
    velocity limits out (every engine then applies none); comments are dropped by the parser."""
    root = ET.fromstring(text)
    for tag in ("transmission", "gazebo"):
        for el in root.findall(tag):
            root.remove(el)
    for link in root.findall("link"):
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                link.remove(el)
    for joint in root.findall("joint"):
        lim = joint.find("limit")
        if lim is not None:
            for attr in ("effort", "velocity"):
                lim.attrib.pop(attr, None)
        for el in joint.findall("dynamics") + joint.findall("safety_controller") + joint.findall("calibration"):
            joint.remove(el)
    return ET.tostring(root, encoding="unicode")


def restore_inertials(text: str) -> str:
    """Uncomment ``<!-- <inertial> ... </inertial> -->`` blocks (the pybullet Robotiq's masses)."""
    return re.sub(r"<!--\s*(<inertial>.*?</inertial>)\s*-->", r"\1", text, flags=re.S)


def _fill_massless(urdf: str) -> str:
    """An ``<inertial>`` for each link without one: the tiny mass ``engines.prepared`` gives a
    body welded to a massive one (the Robotiq's finger pads), so every engine has the same
    masses (ours would give 0.1 kg, MuJoCo and Newton nothing)."""
    from mimic_ext.fet022.engines.prepared import WELDED_MASS, WELDED_RADIUS

    root = ET.fromstring(urdf)
    i = 0.4 * WELDED_MASS * WELDED_RADIUS**2
    for link in root.findall("link"):
        if link.find("inertial") is None:
            link.append(
                ET.fromstring(
                    f'<inertial><origin xyz="0 0 0"/><mass value="{WELDED_MASS}"/>'
                    f'<inertia ixx="{i:.6g}" iyy="{i:.6g}" izz="{i:.6g}" ixy="0" ixz="0" iyz="0"/>'
                    f"</inertial>"
                )
            )
    return ET.tostring(root, encoding="unicode")


def _describe_urdf(name: str, source: str, urdf: str, armature: dict | None = None) -> Mechanism:
    """Joints, relations, limits and masses as the URDF states them (drives come later);
    ``armature`` per joint name (URDF cannot hold it)."""
    urdf = _fill_massless(urdf)
    root = ET.fromstring(urdf)
    joints, lower, upper, mimics, prismatic = [], {}, {}, [], set()
    for el in root.findall("joint"):
        kind = el.get("type")
        if kind not in ("revolute", "prismatic", "continuous"):
            continue
        j = el.get("name")
        joints.append(j)
        if kind == "prismatic":
            prismatic.add(j)
        lim = el.find("limit")
        if kind != "continuous" and lim is not None:
            lower[j], upper[j] = float(lim.get("lower", 0.0)), float(lim.get("upper", 0.0))
        else:
            lower[j], upper[j] = -math.inf, math.inf
        mm = el.find("mimic")
        if mm is not None:
            mimics.append(Mimic(j, mm.get("joint"), float(mm.get("multiplier", 1.0)), float(mm.get("offset", 0.0))))
    masses = {}
    for link in root.findall("link"):
        m = link.find("inertial/mass")
        masses[link.get("name")] = float(m.get("value")) if m is not None else 0.0
    return Mechanism(
        name=name,
        source=source,
        urdf=urdf,
        joints=tuple(joints),
        mimics=tuple(mimics),
        lower=lower,
        upper=upper,
        masses=masses,
        prismatic=frozenset(prismatic),
        armature=dict(armature or {}),
    )


@cache
def _folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="mimic_bench_"))


def urdf_file(mech: Mechanism) -> Path:
    """The mechanism's URDF on disk (importers read files), in this process's temporary folder."""
    path = _folder() / f"{mech.name}.urdf"
    if not path.is_file() or path.read_text() != mech.urdf:
        path.write_text(mech.urdf)
    return path


def robot_model(mech: Mechanism):
    """The importers' ``RobotModel`` of the mechanism's URDF, with its armature (URDF has none)."""
    from mimic_ext.importers import read_robot

    model = read_robot(urdf_file(mech))
    for j in model.joints:
        j.armature = float(mech.armature.get(j.name, 0.0))
    return model


def _finish(mech: Mechanism) -> Mechanism:
    """Centres, amplitudes and drive gains from the mechanism's limits and inertia.

    With ``S`` (DOFs x driven joints) the relations' map (a follower's entry is its
    multiplier) and ``H = S^T M S`` the reduced mass matrix at the file's pose, each driven
    joint sees the effective inertia ``m_i = 1 / (H^-1)_ii`` (its own, with the rest of the
    tree free). Gains: ``kp_i = s m_i / dt^2`` and ``kd_i = 2 sqrt(kp_i m_i)`` (critical),
    the one scale ``s <= GAIN`` chosen so that the stiffest mode of the drives,
    ``dt^2 * max eig(H^-1 Kp)``, is ``STIFFEST_MODE``: an explicit spring (MuJoCo's position
    actuator, Newton's drive) is then stable with a wide margin on every mechanism, where
    per-joint ratios alone are not (a chain's coupled modes see many times the stiffness of
    its diagonal).
    """
    from mimic_ext.importers.mjcf import joint_space_inertia

    M, index = joint_space_inertia(robot_model(mech), 0)
    follows = {m.follower: m for m in mech.mimics}
    if any(m.leader in follows for m in mech.mimics):
        raise ValueError(f"{mech.name}: mimic chains are not benchmarked (Newton refuses them)")
    driven = mech.driven
    S = np.zeros((M.shape[0], len(driven)))
    for c, j in enumerate(driven):
        lo, hi = mech.lower[j], mech.upper[j]
        S[index[j], c] = 1.0
        for m in mech.mimics:
            if m.leader != j:
                continue
            S[index[m.follower], c] = m.multiplier
            a, b = (
                (mech.lower[m.follower] - m.offset) / m.multiplier,
                (mech.upper[m.follower] - m.offset) / m.multiplier,
            )
            lo, hi = max(lo, min(a, b)), min(hi, max(a, b))
        if not (math.isfinite(lo) and math.isfinite(hi)):
            lo, hi = -1.0, 1.0
        if lo >= hi:
            raise ValueError(f"{mech.name}: {j} and its followers have no common range")
        mech.centre[j] = 0.5 * (lo + hi)
        mech.amplitude[j] = min(MAX_AMPLITUDE, AMPLITUDE_SHARE * 0.5 * (hi - lo))
    H = S.T @ M @ S
    Hinv = np.linalg.inv(H)
    m_eff = 1.0 / np.diag(Hinv)
    worst = float(np.max(np.linalg.eigvals(Hinv @ np.diag(m_eff)).real))
    mech.stiffness_scale = min(GAIN, STIFFEST_MODE / worst)
    for c, j in enumerate(driven):
        mech.kp[j] = mech.stiffness_scale * m_eff[c] / DT**2
        mech.kd[j] = 2.0 * math.sqrt(mech.kp[j] * m_eff[c])
    full = 1.0 / np.diag(np.linalg.inv(M))  # every joint, for Newton's limit springs
    mech.limit_ke = {j: mech.stiffness_scale * full[index[j]] / DT**2 for j in mech.joints}
    return mech


# ------------------------------------------------------------------------------- mechanisms


@cache
def robotiq() -> Mechanism:
    """The Robotiq 2F-85 (6 revolute joints, 5 followers of finger_joint), inertials restored."""
    if not ROBOTIQ_URDF.is_file():
        raise FileNotFoundError(f"shared asset not present: {ROBOTIQ_URDF}")
    urdf = _clean_urdf(restore_inertials(ROBOTIQ_URDF.read_text()))
    return _finish(
        _describe_urdf(
            "robotiq_2f85", f"{ROBOTIQ_URDF.relative_to(ASSETS)} (commented-out <inertial> blocks restored)", urdf
        )
    )


@cache
def inspire() -> Mechanism:
    """The Inspire hand (12 revolute joints, 6 followers, non-unit multipliers and an offset)."""
    if not INSPIRE_URDF.is_file():
        raise FileNotFoundError(f"shared asset not present: {INSPIRE_URDF}")
    urdf = _clean_urdf(INSPIRE_URDF.read_text())
    return _finish(_describe_urdf("inspire_hand", str(INSPIRE_URDF.relative_to(ASSETS)), urdf))


@dataclass
class _Part:
    """A link and the joint that carries it (URDF terms)."""

    name: str
    parent: str
    xyz: tuple
    axis: tuple = (0.0, 1.0, 0.0)
    kind: str = "revolute"
    lower: float = -1.5
    upper: float = 1.5
    mass: float = 0.05
    com: tuple = (0.0, 0.0, 0.0)
    diag: tuple = (1e-5, 1e-5, 1e-5)
    rpy: tuple = (0.0, 0.0, 0.0)
    mimic: tuple | None = None  # (leader, multiplier, offset)
    armature: float = 0.0


def _rod(mass: float, length: float, radius: float, along: int = 2) -> tuple:
    """Principal inertia of a solid cylinder of ``length`` along axis ``along``."""
    axial = 0.5 * mass * radius**2
    cross = mass * (3 * radius**2 + length**2) / 12.0
    return tuple(axial if k == along else cross for k in range(3))


def _urdf(name: str, base_mass: float, base_diag: tuple, parts: list[_Part], extra: str = "") -> str:
    out = [
        f'<robot name="{name}">',
        f'  <link name="base"><inertial><origin xyz="0 0 0"/><mass value="{base_mass:.10g}"/>'
        f'<inertia ixx="{base_diag[0]:.10g}" iyy="{base_diag[1]:.10g}" izz="{base_diag[2]:.10g}" '
        f'ixy="0" ixz="0" iyz="0"/></inertial></link>',
    ]
    for p in parts:
        out.append(
            f'  <link name="{p.name}"><inertial><origin xyz="{_fmt(p.com)}"/><mass value="{p.mass:.10g}"/>'
            f'<inertia ixx="{p.diag[0]:.10g}" iyy="{p.diag[1]:.10g}" izz="{p.diag[2]:.10g}" ixy="0" ixz="0" '
            f'iyz="0"/></inertial></link>'
        )
        body = (
            f'    <origin xyz="{_fmt(p.xyz)}" rpy="{_fmt(p.rpy)}"/><parent link="{p.parent}"/><child link="{p.name}"/>'
        )
        if p.kind == "continuous":
            body += f'<axis xyz="{_fmt(p.axis)}"/>'
        elif p.kind != "fixed":
            body += f'<axis xyz="{_fmt(p.axis)}"/><limit lower="{p.lower:.10g}" upper="{p.upper:.10g}"/>'
        if p.mimic:
            body += f'<mimic joint="{p.mimic[0]}" multiplier="{p.mimic[1]:.10g}" offset="{p.mimic[2]:.10g}"/>'
        out.append(f'  <joint name="j_{p.name}" type="{p.kind}">\n{body}\n  </joint>')
    out.append(extra)
    out.append("</robot>")
    return "\n".join(out)


@cache
def chain(
    joints: int, armature: float = CHAIN_ARMATURE, independent: int | None = None, limits: bool = True
) -> Mechanism:
    """A hanging chain of ``joints`` revolute joints; every other joint follows the one above it.

    Links: 5 cm, 50 g rods, each joint with ``armature`` (a small geared servo's rotor). Pairs
    alternate between the y and x axes (a 3-D motion); the follower of each pair turns at 0.5
    times its leader (``q_f = 0.5 q_l``), limits +-1.5 rad. ``independent`` (a divisor of
    ``joints``; default half) spreads that many leaders evenly, each followed by the joints
    below it up to the next leader (all at 0.5); ``limits=False`` makes every joint
    continuous (no limit rows). Both only for profiling our step (``step_profile.py``).
    """
    if joints < 2 or joints % 2:
        raise ValueError("a chain needs an even number of joints >= 2")
    k = joints // 2 if independent is None else int(independent)
    if k < 1 or joints % k:
        raise ValueError("independent must divide the number of joints")
    group = joints // k
    length, mass = 0.05, 0.05
    parts = []
    parent = "base"
    for i in range(joints):
        axis = (0.0, 1.0, 0.0) if (i // 2) % 2 == 0 else (1.0, 0.0, 0.0)
        name = f"l{i}"
        mimic = (f"j_l{i - i % group}", 0.5, 0.0) if i % group else None
        parts.append(
            _Part(
                name,
                parent,
                (0.0, 0.0, -length if i else 0.0),
                axis=axis,
                mass=mass,
                com=(0.0, 0.0, -length / 2),
                diag=_rod(mass, length, 0.01),
                mimic=mimic,
                armature=armature,
                kind="revolute" if limits else "continuous",
            )
        )
        parent = name
    label = f"chain{joints}" + ("" if independent is None else f"_k{k}") + ("" if limits else "_free")
    urdf = _urdf(label, 0.5, (1e-3, 1e-3, 1e-3), parts)
    what = "every other joint a follower" if independent is None else f"{k} independent joints"
    return _finish(
        _describe_urdf(
            label,
            f"synthetic hanging chain, {joints} joints, {what}, armature "
            f"{armature:g} kg m^2" + ("" if limits else ", no limits"),
            urdf,
            {f"j_{p.name}": p.armature for p in parts},
        )
    )


def _limb(
    prefix: str,
    parent: str,
    at: tuple,
    axes: str,
    lengths: list[float],
    masses: list[float],
    down: float = -1.0,
    armature: float = 0.0,
) -> list[_Part]:
    """A serial limb hanging along z (``down``): one joint per letter of ``axes`` (x, y, z)."""
    vec = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}
    parts, p, pos = [], parent, at
    for i, (ax, ln, m) in enumerate(zip(axes, lengths, masses)):
        name = f"{prefix}{i}"
        parts.append(
            _Part(
                name,
                p,
                pos,
                axis=vec[ax],
                mass=m,
                com=(0.0, 0.0, down * ln / 2),
                diag=_rod(m, max(ln, 0.02), 0.03),
                lower=-1.2,
                upper=1.2,
                armature=armature,
            )
        )
        p, pos = name, (0.0, 0.0, down * ln)
    return parts


def _graft(urdf: str, prefix: str, parent: str, xyz: tuple, rpy: tuple) -> tuple[str, str]:
    """Links and joints of another URDF renamed with ``prefix``, its root fixed to ``parent``."""
    root = ET.fromstring(urdf)
    names = {el.get("name") for el in root.findall("link")}
    children = {el.find("child").get("link") for el in root.findall("joint")}
    base = next(n for n in names if n not in children)
    for el in root.findall("link"):
        el.set("name", prefix + el.get("name"))
    for el in root.findall("joint"):
        el.set("name", prefix + el.get("name"))
        for tag in ("parent", "child"):
            e = el.find(tag)
            e.set("link", prefix + e.get("link"))
        mm = el.find("mimic")
        if mm is not None:
            mm.set("joint", prefix + mm.get("joint"))
    body = "".join(ET.tostring(el, encoding="unicode") for el in list(root))
    weld = (
        f'<joint name="{prefix}mount" type="fixed"><origin xyz="{_fmt(xyz)}" rpy="{_fmt(rpy)}"/>'
        f'<parent link="{parent}"/><child link="{prefix}{base}"/></joint>'
    )
    return body + weld, prefix + base


def _g1_with_inspire() -> Path | None:
    """A G1-with-Inspire-hands URDF in the shared assets, when there is one."""
    if not ASSETS.is_dir():
        return None
    found = sorted(p for p in ASSETS.rglob("*.urdf") if "g1" in p.name.lower() and "inspire" in str(p).lower())
    return found[0] if found else None


@cache
def humanoid() -> Mechanism:
    """53 DOFs, 12 mimics: the G1 with Inspire hands when its URDF is present, else a
    humanoid-like tree with the G1's joint layout and two shared Inspire hands.

    Synthetic body (fixed pelvis, limbs hanging): two 6-DOF legs (hip pitch/roll/yaw, knee,
    ankle pitch/roll), a 3-DOF waist, two 7-DOF arms (shoulder pitch/roll/yaw, elbow, wrist
    roll/pitch/yaw), G1-like masses (35 kg in all) and rotor inertias; on each wrist the shared Inspire hand
    (12 DOFs, 6 followers: 12 mimics in all).
    """
    g1 = _g1_with_inspire()
    if g1 is not None:
        urdf = _clean_urdf(g1.read_text())
        return _finish(_describe_urdf("g1_inspire", str(g1.relative_to(ASSETS)), urdf))
    if not INSPIRE_URDF.is_file():
        raise FileNotFoundError(f"shared asset not present: {INSPIRE_URDF}")
    parts = []
    for side, y in (("L", 0.09), ("R", -0.09)):
        parts += _limb(
            f"{side}leg",
            "base",
            (0.0, y, -0.05),
            "yxzyyx",
            [0.06, 0.06, 0.3, 0.3, 0.04, 0.05],
            [1.4, 1.4, 2.5, 1.8, 0.6, 0.5],
            armature=LEG_ARMATURE,
        )
    parts += _limb(
        "waist", "base", (0.0, 0.0, 0.05), "zxy", [0.03, 0.03, 0.35], [0.3, 0.3, 7.5], down=1.0, armature=LEG_ARMATURE
    )
    torso = "waist2"
    for side, y in (("L", 0.17), ("R", -0.17)):
        parts += _limb(
            f"{side}arm",
            torso,
            (0.0, y, 0.3),
            "yxzyxyz",
            [0.04, 0.04, 0.2, 0.2, 0.03, 0.03, 0.04],
            [0.7, 0.6, 0.7, 0.6, 0.3, 0.3, 0.3],
            armature=ARM_ARMATURE,
        )
    extra = []
    hand = _clean_urdf(INSPIRE_URDF.read_text())
    for side in ("L", "R"):
        text, _ = _graft(hand, f"{side}hand_", f"{side}arm6", (0.0, 0.0, -0.04), (0.0, 0.0, 0.0))
        extra.append(text)
    urdf = _urdf("humanoid53", 3.8, (0.05, 0.05, 0.05), parts, "\n".join(extra))
    return _finish(
        _describe_urdf(
            "humanoid53",
            f"synthetic G1-like tree (29 DOFs, armature {LEG_ARMATURE:g} / "
            f"{ARM_ARMATURE:g} kg m^2 legs+waist / arms) with two "
            f"{INSPIRE_URDF.relative_to(ASSETS)} hands (no armature)",
            urdf,
            {f"j_{p.name}": p.armature for p in parts},
        )
    )


#: Row name -> mechanism factory.
MECHANISMS = {
    "robotiq": robotiq,
    "inspire": inspire,
    "chain8": lambda: chain(8),
    "chain16": lambda: chain(16),
    "chain32": lambda: chain(32),
    "chain64": lambda: chain(64),
    "humanoid": humanoid,
}


# ------------------------------------------------------------------------ per-engine models


def usd_stage(mech: Mechanism):
    """(stage, joint name -> prim path): the stage ours and PhysX simulate.

    Through the importer's reader and writer, with the drives put on its ``RobotModel`` (SI)
    so that the writer converts their units, and each joint's initial position as
    ``PhysicsJointStateAPI`` (``state:angular:physics:position``, degrees).
    """
    from pxr import Sdf

    from mimic_ext.importers.usd_writer import write_stage

    model = robot_model(mech)
    q0 = mech.q0()
    for j in model.joints:
        if j.name in mech.kp:
            j.stiffness, j.damping, j.target = mech.kp[j.name], mech.kd[j.name], q0[j.name]
    stage, _, writer = write_stage(model, "physx")
    for name in mech.joints:
        prim = stage.GetPrimAtPath(writer.joint_paths[name])
        dof = "linear" if name in mech.prismatic else "angular"
        scale = 1.0 if name in mech.prismatic else 180.0 / math.pi
        prim.AddAppliedSchema(f"PhysicsJointStateAPI:{dof}")  # physx-usd-schemas' (codeless) API
        prim.CreateAttribute(f"state:{dof}:physics:position", Sdf.ValueTypeNames.Float).Set(float(q0[name] * scale))
        prim.CreateAttribute(f"state:{dof}:physics:velocity", Sdf.ValueTypeNames.Float).Set(0.0)
    return stage, dict(writer.joint_paths)


def mujoco_model(mech: Mechanism, equality_timeconst: float | None = None):
    """(MjModel, qpos address per joint, actuator per driven joint) from the same URDF.

    MuJoCo's URDF compiler makes each ``<mimic>`` a joint equality; its softness is set to
    ``solref = (2 dt, 1)``, the stiffest MuJoCo accepts at this time step (a time constant
    below 2 dt is raised to it). Integrator ``implicitfast`` (damping implicit, as MuJoCo
    recommends for position actuators). Geometry-free: no contacts, as ours.
    """
    import mujoco

    spec = mujoco.MjSpec.from_string(mech.urdf)
    spec.option.timestep = DT
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.gravity = list(mech.gravity)
    tc = 2.0 * DT if equality_timeconst is None else equality_timeconst
    for eq in spec.equalities:
        eq.solref = [tc, 1.0]
    for j, a in mech.armature.items():
        spec.joint(j).armature = float(a)
    for j in mech.driven:
        act = spec.add_actuator(name=f"drive_{j}", target=j, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_position(kp=float(mech.kp[j]), kv=float(mech.kd[j]))
    m = spec.compile()
    adr = [int(m.jnt_qposadr[m.joint(j).id]) for j in mech.joints]
    act = [m.actuator(f"drive_{j}").id for j in mech.driven]
    return m, adr, act


#: Newton's Featherstone and XPBD apply joint limits as explicit penalty springs (default
#: ke 1e4, which diverges at dt 1/240 on light links); the motions stay inside the limits,
#: and the springs get the drives' stiffness rule (``Mechanism.limit_ke``) in case one is touched.
def newton_builder(mech: Mechanism):
    """(ModelBuilder of one mechanism, Newton joint index per joint in ``mech.joints`` order)."""
    import newton

    b = newton.ModelBuilder(up_axis=newton.Axis.Z, gravity=tuple(float(g) for g in mech.gravity))
    b.add_urdf(mech.urdf, floating=False, collapse_fixed_joints=True)
    names = [lab.split("/")[-1] for lab in b.joint_label]
    index = [names.index(j) for j in mech.joints]
    for j, ji in zip(mech.joints, index):
        d = b.joint_qd_start[ji]
        b.joint_armature[d] = float(mech.armature.get(j, 0.0))
        kp, kd = mech.kp.get(j, 0.0), mech.kd.get(j, 0.0)
        b.joint_target_ke[d], b.joint_target_kd[d] = float(kp), float(kd)
        ke = mech.limit_ke[j]
        b.joint_limit_ke[d] = ke
        b.joint_limit_kd[d] = 2.0 * math.sqrt(ke * ke * DT**2 / mech.stiffness_scale)  # critical: 2 sqrt(ke m)
        b.joint_effort_limit[d] = 1e9
    q0 = mech.q0()
    for j, ji in zip(mech.joints, index):
        b.joint_q[b.joint_q_start[ji]] = q0[j]
        b.joint_target_q[b.joint_q_start[ji]] = q0[j]
    return b, index


# ------------------------------------------------------------------- FET022 scale stages


def _scale_body(stage, path: str, pos, mass: float) -> None:
    from pxr import Gf, UsdGeom, UsdPhysics

    xf = UsdGeom.Xform.Define(stage, path)
    xf.AddTranslateOp().Set(Gf.Vec3d(*pos))
    prim = xf.GetPrim()
    UsdPhysics.RigidBodyAPI.Apply(prim)
    mapi = UsdPhysics.MassAPI.Apply(prim)
    mapi.CreateMassAttr(mass)
    mapi.CreateDiagonalInertiaAttr(Gf.Vec3f(*[0.4 * mass * 0.02**2] * 3))  # a 2 cm solid sphere
    mapi.CreateCenterOfMassAttr(Gf.Vec3f(0, 0, 0))


def _scale_revolute(stage, path: str, b0: str, b1: str, p0, lo_deg: float, hi_deg: float):
    from pxr import Gf, Sdf, UsdPhysics

    j = UsdPhysics.RevoluteJoint.Define(stage, path)
    j.CreateBody0Rel().SetTargets([Sdf.Path(b0)])
    j.CreateBody1Rel().SetTargets([Sdf.Path(b1)])
    j.CreateLocalPos0Attr(Gf.Vec3f(*p0))
    j.CreateLocalPos1Attr(Gf.Vec3f(0, 0, 0))
    j.CreateAxisAttr("Y")
    j.CreateLowerLimitAttr(lo_deg)
    j.CreateUpperLimitAttr(hi_deg)
    return j


def scale_stage(pairs: int, per_articulation: int = 1, out: Path | None = None):
    """A USD stage with ``pairs`` mimic pairs (2 * pairs revolute joints): FET022's scale rows.

    ``per_articulation`` pairs share one fixed-base articulation (a fan of two-joint fingers
    on one palm); the articulations stand 0.5 m apart on a grid. Each pair: a leader with
    limits +-60 deg and a position drive, and a follower at multiplier 0.5 through
    ``PhysxMimicJointAPI``. Written to ``out`` (.usda, atomically) when given. Returns the stage.
    """
    from pxr import Gf, Sdf, Usd, UsdGeom, UsdPhysics

    from mimic_ext.schema import MimicRelation, set_relation

    stage = Usd.Stage.CreateInMemory("scale.usda")
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    scene = UsdPhysics.Scene.Define(stage, "/PhysicsScene")
    scene.CreateGravityDirectionAttr(Gf.Vec3f(0, 0, -1))
    scene.CreateGravityMagnitudeAttr(9.81)
    stage.SetDefaultPrim(UsdGeom.Xform.Define(stage, "/World").GetPrim())
    n_art = -(-pairs // per_articulation)
    side = max(1, int(math.ceil(math.sqrt(n_art))))
    made = 0
    for a in range(n_art):
        root = f"/World/mech{a}"
        x, y = 0.5 * (a % side), 0.5 * (a // side)
        UsdGeom.Xform.Define(stage, root)
        palm = f"{root}/palm"
        _scale_body(stage, palm, (x, y, 0.5), 0.2)
        UsdPhysics.ArticulationRootAPI.Apply(stage.GetPrimAtPath(root))
        fix = UsdPhysics.FixedJoint.Define(stage, f"{root}/fix")
        fix.CreateBody1Rel().SetTargets([Sdf.Path(palm)])
        fix.CreateLocalPos0Attr(Gf.Vec3f(x, y, 0.5))
        for p in range(min(per_articulation, pairs - made)):
            dx = 0.02 * (p - (per_articulation - 1) / 2)
            k1, k2 = f"{root}/f{p}a", f"{root}/f{p}b"
            _scale_body(stage, k1, (x + dx, y, 0.46), 0.02)
            _scale_body(stage, k2, (x + dx, y, 0.42), 0.02)
            lead = _scale_revolute(stage, f"{root}/lead{p}", palm, k1, (dx, 0, -0.04), -60.0, 60.0)
            follow = _scale_revolute(stage, f"{root}/follow{p}", k1, k2, (0, 0, -0.04), -60.0, 60.0)
            drive = UsdPhysics.DriveAPI.Apply(lead.GetPrim(), "angular")
            drive.CreateTypeAttr("force")
            drive.CreateStiffnessAttr(0.05)  # N m/deg
            drive.CreateDampingAttr(0.001)
            set_relation(
                stage,
                MimicRelation(
                    follower=str(follow.GetPath()),
                    leader=str(lead.GetPath()),
                    multiplier=0.5,
                    offset=0.0,
                    instance="rotX",
                    schema="physx",
                ),
            )
            made += 1
    if out is not None:
        from mimic_ext.schema.stage_io import save_layer_atomically

        save_layer_atomically(stage.GetRootLayer(), out)
    return stage
