"""Newton loads our import of every shared URDF/MJCF file (and the built cases) as it loads
the source file itself, and simulates it with every follower on its relation.

For each file: ``import_robot`` (default schema ``newton``) -> ``newton.ModelBuilder().add_usd``,
against Newton's own ``add_urdf`` / ``add_mjcf`` of the same file, in this process:

- the same DOF count; every body of the source with the same mass (1%, the issue's
  tolerance; USD stores float32, 1e-7); our extra bodies are only the massless links of
  MJCF bodies with several joints (Newton merges such joints into one D6 instead), and
  Newton's ``add_urdf`` adds the URDF ``world`` link as a massless body, which is the world;
- the same mimic relations as constraints, whoever leads (``relation_sets``: Newton refuses
  chains from USD, so NewtonMimicAPI holds them composed; from MJCF it keeps the
  equalities, and those between two joints of one body stay MuJoCo equality rows),
  coefficients within 1e-5 (float32 in the USD);
- 1 s of ``SolverFeatherstone`` at 250 Hz (Newton's reduced-coordinate solver, which reduces
  every mimic follower onto its leader) with each leader set moving: every follower within
  1e-3 rad (or m) of ``coef0 + coef1 * leader`` at every step, nothing NaN.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from importer_cases import write_cases
from relation_sets import as_constraints

from mimic_ext.importers import import_robot
from mimic_ext.schema import joints

newton = pytest.importorskip("newton", reason="the newton extra (pip install 'mimic-ext[newton]')")
pytest.importorskip("scipy", reason="Newton's convexHull colliders need scipy (the newton extra)")
wp = pytest.importorskip("warp")

ASSETS = Path(__file__).resolve().parents[1].parent / "shared" / "assets"
SHARED = (
    sorted(str(p.relative_to(ASSETS)) for p in [*ASSETS.rglob("*.urdf"), *ASSETS.rglob("*.xml")])
    if ASSETS.is_dir()
    else []
)
BUILT = ["built/rolling_finger.xml", "built/telescope.xml", "built/textured.urdf", "built/softfoot_like.xml"]
MASS_RTOL = 1e-2  # the 1%; the import itself agrees to float32 (1e-7)
COEF_ATOL = 1e-5  # relations pass through float32 USD attributes (6e-8 relative) and a deg/rad factor
TRACK_ATOL = 1e-3  # the follower tracking bound, rad or m
DT = 1.0 / 250.0
#: Featherstone rebuilds the joint-space mass matrix every this many steps (its own option):
#: a 100-DOF foot like iit_softfoot spends 90% of a step there, and every 5th step (20 ms)
#: keeps it to seconds on one core. Followers are placed from their leaders at every step.
MASS_MATRIX_INTERVAL = 5
#: Featherstone integrates drives, passive damping and joint limits as explicit springs;
#: gains past the stability bound of a lone spring-damper (k dt^2/H <= 0.25, c dt/H <= 0.5,
#: H Newton's own joint-space inertia diagonal) are capped for the run, as no simulator
#: would run them at this step. The mimic relations are not touched.
STIFF, DAMP = 0.25, 0.5


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("built")
    built = write_cases(folder)
    out = {f: ASSETS / f for f in SHARED}
    if built:
        out.update({f"built/{name}": path for name, path in built.items()})
    return out


@pytest.fixture(scope="module")
def imported(files, tmp_path_factory):
    """case -> (USD file written by our importer, its ImportResult); each case imported once."""
    folder = tmp_path_factory.mktemp("usd")
    cache: dict[str, tuple] = {}

    def get(case: str):
        if case not in files:
            pytest.skip(f"{case}: not available (shared assets, or trimesh for the built cases)")
        if case not in cache:
            out = folder / (case.replace("/", "_").rsplit(".", 1)[0] + ".usda")
            cache[case] = (out, import_robot(files[case], out=out))
        return cache[case]

    return get


def _builder(load, source) -> newton.ModelBuilder:
    builder = newton.ModelBuilder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Newton's notes on what it approximates
        getattr(builder, load)(str(source))
    return builder


class _Names:
    """Source names of Newton's labels. From USD, a label is our prim path (the importer's
    ``body_paths``/``joint_paths`` say whose); from URDF/MJCF it ends with the source name,
    which may itself hold '/' (Menagerie's "wx250s/base_link") and which Newton may have
    made an identifier, so the longest known name that fits wins."""

    def __init__(self, result):
        self.paths = {p: n for n, p in {**result.body_paths, **result.joint_paths}.items()}
        known = list(result.body_paths) + list(result.joint_paths)
        self.known = sorted({k for n in known for k in (n, _identifier(n))}, key=len, reverse=True)
        self.original = {_identifier(n): n for n in known}
        self.original.update({n: n for n in known})

    def __call__(self, label: str) -> str:
        if label in self.paths:
            return self.paths[label]
        for name in self.known:
            if label == name or label.endswith("/" + name):
                return self.original[name]
        return label.rsplit("/", 1)[-1]  # Newton's own: the URDF world link, a free joint


def _identifier(name: str) -> str:
    from pxr import Tf

    return Tf.MakeValidIdentifier(name)


def _dof_names(builder, source: Path, name) -> list[list[str]]:
    """Names of each Newton joint's DOFs (as many as it has): the joint's own name from USD
    or URDF; for an MJCF body with several joints (one Newton D6), the body's joints in
    Newton's DOF order (slides, then hinges)."""
    counts = np.diff(np.append(builder.joint_qd_start, builder.joint_dof_count))
    if source.suffix != ".xml":
        return [[name(label)] * n for label, n in zip(builder.joint_label, counts)]
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_path(str(source))
    names = []
    for j, child in enumerate(builder.joint_child):
        body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name(builder.body_label[child]))
        joints = [k for k in range(m.njnt) if m.jnt_bodyid[k] == body]
        if len(joints) <= 1:
            names.append([name(builder.joint_label[j])] * counts[j])
            continue
        slide = int(mujoco.mjtJoint.mjJNT_SLIDE)
        ordered = [k for k in joints if m.jnt_type[k] == slide] + [k for k in joints if m.jnt_type[k] != slide]
        names.append([mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, k) for k in ordered])
    return names


def _refs(source: Path) -> dict[str, float]:
    """MuJoCo's qpos0 per hinge/slide joint: Newton's MJCF coordinates are q - ref."""
    if source.suffix != ".xml":
        return {}
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_path(str(source))
    return {
        mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, k): float(m.qpos0[m.jnt_qposadr[k]])
        for k in range(m.njnt)
        if m.jnt_type[k] in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
    }


def _relations(builder, names: list[list[str]], refs: dict[str, float]) -> dict[str, tuple[str, float, float]]:
    """follower -> (leader, multiplier, offset) in joint coordinates (SI, MuJoCo's q for
    MJCF), from every place Newton keeps a coupling: joint mimics, the deprecated mimic
    constraints (its MJCF path) and MuJoCo joint-equality rows."""
    out = {}

    def add(f: str, l: str, c0: float, c1: float) -> None:
        # Newton's MJCF coordinates are q - ref: q_f - ref_f = c0 + c1 (q_l - ref_l)
        out[f] = (l, c1, c0 + refs.get(f, 0.0) - c1 * refs.get(l, 0.0))

    for f, (l, c) in enumerate(zip(builder.joint_mimic_joint, builder.joint_mimic_coeffs)):
        if l != -1:  # a mimic couples two whole 1-DOF joints
            add(names[f][0], names[l][0], float(c[0]), float(c[1]))
    for f, l, c0, c1, on in zip(
        builder.constraint_mimic_joint0,
        builder.constraint_mimic_joint1,
        builder.constraint_mimic_coef0,
        builder.constraint_mimic_coef1,
        builder.constraint_mimic_enabled,
    ):
        if on:
            add(names[f][0], names[l][0], float(c0), float(c1))
    try:
        rows = zip(
            *(
                builder._eq_list(f"equality_constraint_{k}")  # Newton keeps them as custom attributes
                for k in ("type", "joint1", "joint2", "joint1_dof", "joint2_dof", "polycoef", "enabled")
            )
        )
        joint_type = int(newton.EqType.JOINT) if hasattr(newton, "EqType") else 2
    except KeyError:  # a builder that never registered MuJoCo's equality attributes
        rows = []
    dofs = [n for joint in names for n in joint]  # Newton's DOFs in order, joint by joint
    for kind, j1, j2, d1, d2, poly, on in rows:
        if int(kind) != joint_type or not on or j2 < 0:
            continue
        # a row on a multi-DOF joint names the DOF by its global index
        f = dofs[d1] if d1 >= 0 else names[j1][0]
        l = dofs[d2] if d2 >= 0 else names[j2][0]
        if f not in out:  # a mimic constraint's authoritative MuJoCo row says the same
            add(f, l, float(poly[0]), float(poly[1]))
    return out


def _masses(builder, name) -> dict[str, float]:
    return {name(label): float(mass) for label, mass in zip(builder.body_label, builder.body_mass)}


@pytest.mark.slow
@pytest.mark.parametrize("case", SHARED + BUILT)
def test_newton_loads_the_import_as_it_loads_the_source(case, files, imported):
    out, result = imported(case)
    source = files[case]
    name = _Names(result)
    ours = _builder("add_usd", out)
    theirs = _builder("add_urdf" if source.suffix == ".urdf" else "add_mjcf", source)
    assert ours.joint_dof_count == theirs.joint_dof_count

    mine, src = _masses(ours, name), _masses(theirs, name)
    chain = {name(p) for p in _chain_links(out)}
    # the links without <inertial> on fixed joints that the URDF import folds into their parent's
    # body (frames keeping their shapes, docs/importers.md): that body carries what Newton's
    # add_urdf gives them (0, or their colliders' density mass)
    host = {
        link: next(b for b, bp in result.body_paths.items() if fp.startswith(bp + "/"))
        for link, fp in result.frame_paths.items()
    }
    assert set(src) - set(mine) <= {"world"} | set(host) and src.get("world", 0.0) == 0.0
    assert set(mine) - set(src) == chain and all(mine[b] == 0.0 for b in chain)
    for body, mass in src.items():
        if body != "world" and body not in host:
            mass += sum(src[link] for link, b in host.items() if b == body)
            assert mine[body] == pytest.approx(mass, rel=MASS_RTOL, abs=1e-9), body

    got = as_constraints(_relations(ours, _dof_names(ours, out, name), {}))
    want = as_constraints(_relations(theirs, _dof_names(theirs, source, name), _refs(source)))
    assert set(got) == set(want)
    # a revolute-prismatic relation is imported as PhysxMimicJointAPI (PhysX reads a Newton coef1
    # per degree): Newton reads that gearing, m per degree, as per radian (import_usd's PhysX path
    # converts no unit), so between such joints its multiplier is m * DEG where the (reoriented)
    # follower is prismatic, m / DEG where it is revolute
    kind_of = {name(p): joints.joint_kind(result.stage.GetPrimAtPath(p)) for p in result.joint_paths.values()}
    mixed = {
        name(r.follower)
        for r in result.relations
        if r.schema == "physx" and kind_of[name(r.follower)] != kind_of[name(r.leader)]
    }
    for joint, (ref, m, c) in want.items():
        assert got[joint][0] == ref, joint
        if mixed and kind_of.get(joint) != kind_of.get(ref):
            scale = math.pi / 180 if kind_of[joint] == joints.PRISMATIC else 180 / math.pi
            assert got[joint][1] == pytest.approx(m * scale, rel=1e-6), joint
            continue
        assert got[joint][1:] == pytest.approx((m, c), abs=COEF_ATOL), joint


def _chain_links(usd: Path) -> list[str]:
    from pxr import Usd

    from mimic_ext.importers.usd_writer import CHAIN_LINK, GENERATED_KEY

    stage = Usd.Stage.Open(str(usd))
    return [str(p.GetPath()) for p in stage.Traverse() if p.GetCustomDataByKey(GENERATED_KEY) == CHAIN_LINK]


def _stable(model, state) -> None:
    """Cap explicit gains at the lone spring-damper's stability bound (see STIFF, DAMP);
    returns Newton's joint-space inertia diagonal (inf for DOFs outside articulations)."""
    H = newton.eval_mass_matrix(model, state).numpy()
    diag = np.full(model.joint_dof_count, np.inf)  # DOFs of no articulation (loop joints): left as they are
    qd_start = np.append(model.joint_qd_start.numpy(), model.joint_dof_count)
    owner = model.joint_articulation.numpy()
    for a in range(model.articulation_count):
        dofs = [d for j in np.flatnonzero(owner == a) for d in range(qd_start[j], qd_start[j + 1])]
        diag[dofs] = np.diag(H[a])[: len(dofs)]
    for name, bound in (
        ("joint_target_ke", STIFF / DT**2),
        ("joint_limit_ke", STIFF / DT**2),
        ("joint_target_kd", DAMP / DT),
        ("joint_limit_kd", DAMP / DT),
    ):
        gains = getattr(model, name).numpy()
        getattr(model, name).assign(np.minimum(gains, bound * np.maximum(diag, 0.0)).astype(gains.dtype))
    return diag


@pytest.mark.slow
@pytest.mark.parametrize("case", SHARED + BUILT)
def test_newton_simulates_the_import_with_followers_on_their_relations(case, imported):
    from mimic_ext.solver.stage_reader import DEFAULT_MASS, DEFAULT_RADIUS

    out, _ = imported(case)
    builder = _builder("add_usd", out)
    chain = set(_chain_links(out))
    for i, label in enumerate(builder.body_label):
        # a body the file gives no mass gets our solver's documented default (Newton's own
        # import of such a file gives NaN); the massless links of a joint chain stay so
        if builder.body_mass[i] == 0.0 and label not in chain:
            inertia = np.eye(3) * 0.4 * DEFAULT_MASS * DEFAULT_RADIUS**2
            builder.body_mass[i], builder.body_inv_mass[i] = DEFAULT_MASS, 1.0 / DEFAULT_MASS
            builder.body_inertia[i], builder.body_inv_inertia[i] = wp.mat33(inertia), wp.mat33(np.linalg.inv(inertia))
    model = builder.finalize(device="cpu")
    state0, state1, control = model.state(), model.state(), model.control()
    newton.eval_fk(model, model.joint_q, model.joint_qd, state0)
    diag = _stable(model, state0)
    pairs = [
        (f, l, float(c[0]), float(c[1]))
        for f, (l, c) in enumerate(zip(builder.joint_mimic_joint, builder.joint_mimic_coeffs))
        if l != -1
    ]
    assert pairs, f"{case}: Newton read no mimic relation"
    q_start, qd_start = model.joint_q_start.numpy(), model.joint_qd_start.numpy()
    qd = state0.joint_qd.numpy()
    types = model.joint_type.numpy()
    lower, upper = model.joint_limit_lower.numpy(), model.joint_limit_upper.numpy()
    target = control.joint_target_q.numpy() if control.joint_target_q is not None else None
    effort = control.joint_f.numpy()
    for _, l, _, _ in pairs:
        # every leader is set moving: 3 rad/s (or 0.2 m/s) to start, a push of 10 rad/s^2 (m/s^2)
        # times its inertia, and its servo (if any) aimed at 70% of its range
        d = qd_start[l]
        qd[d] = 0.2 if types[l] == int(newton.JointType.PRISMATIC) else 3.0
        effort[d] = 10.0 * diag[d]
        if target is not None and np.isfinite(lower[d]) and np.isfinite(upper[d]) and upper[d] - lower[d] < 1e3:
            target[d] = lower[d] + 0.7 * (upper[d] - lower[d])
    state0.joint_qd.assign(qd)
    control.joint_f.assign(effort)
    if target is not None:
        control.joint_target_q.assign(target)
    solver = newton.solvers.SolverFeatherstone(model, update_mass_matrix_interval=MASS_MATRIX_INTERVAL)
    start = state0.joint_q.numpy().copy()
    worst, moved = 0.0, 0.0
    for _ in range(int(round(1.0 / DT))):
        solver.step(state0, state1, control, None, DT)
        state0, state1 = state1, state0
        q = state0.joint_q.numpy()
        assert np.all(np.isfinite(q)), f"{case}: NaN in Newton's state"
        for f, l, c0, c1 in pairs:
            worst = max(worst, abs(q[q_start[f]] - (c0 + c1 * q[q_start[l]])))
            moved = max(moved, abs(q[q_start[l]] - start[q_start[l]]))
    assert worst <= TRACK_ATOL, f"{case}: a follower left its relation by {worst:.3g}"
    assert moved > TRACK_ATOL, f"{case}: the leaders did not move ({moved:.3g}), so tracking shows nothing"
