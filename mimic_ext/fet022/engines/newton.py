"""The sweep on Newton 1.8, which reads the stage with its own ``ModelBuilder.add_usd``.

Engine names: ``newton`` (= ``newton:featherstone``), ``newton:xpbd``, ``newton:mujoco``
(``SolverMuJoCo`` on MuJoCo's C library, ``use_mujoco_cpu``; it imports ``mujoco_warp``
all the same, which is not installed here, so it is refused with one line); from Python
``get_engine("newton", solver="xpbd")``. Featherstone and XPBD run on the CPU here
(``device="cuda:0"`` where there is a GPU). XPBD moves bodies in maximal coordinates, so the
joint positions are recovered with ``newton.eval_ik`` at each sample.

What Newton reads (``newton/_src/utils/import_usd.py``, ``parse_usd``): ``PhysxMimicJointAPI``
as ``set_joint_mimic(coeffs=(-offset, -gearing))`` with the authored numbers unconverted, so
a revolute follower's offset, authored in degrees, is taken as radians, and a gearing
between a revolute and a prismatic joint (m per degree) as m per radian;
``naturalFrequency``/``dampingRatio`` are not read (every relation is hard).
``NewtonMimicAPI`` takes precedence and its ``coef0`` *is* converted from degrees. Mimic
chains are refused (a reference must be independent). What the model holds
(``joint_mimic_joint``, ``joint_mimic_coeffs``) is reported as the relations read, with a
note wherever it differs from the authored relation.

The stage Newton reads is our private flattened copy (``prepared``): Newton refuses a stage
with composition errors, and gives NaN for bodies without mass, so those get our solver's
documented default. Newton's Featherstone and XPBD apply drives and joint limits as explicit
springs: the sweep's test drive (1000 N m/rad) and Newton's default limit stiffness (1e4)
diverge at 240 Hz on light links, so both are capped per joint at ``0.25 H_jj / dt^2``
(damping ``0.5 H_jj / dt``) with ``H`` Newton's own joint-space inertia
(``newton.eval_mass_matrix``) at the start pose. Every such change is a note. The run has
no collision pipeline (no contacts), as our solver.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence

import numpy as np

from ...errors import MimicInputError
from ...schema import joints, read_relations
from ...schema.relation import PHYSX, MimicRelation
from ...warp_runtime import init_warp
from ..plan import SweepPlan
from . import prepared
from .base import EngineNotApplicable, ReadRelation, Trace

EXTRA = "pip install 'mimic-ext[newton]'"
SOLVERS = ("featherstone", "xpbd", "mujoco")
#: Explicit spring stability: k dt^2 / H below this (4 is the bound of a lone spring under
#: semi-implicit Euler; a quarter of that keeps the sampled motion close to the continuous one).
STABLE_STIFFNESS = 0.25
STABLE_DAMPING = 0.5
#: A relation read back differs from the authored one when a coefficient moved by more than
#: float32 round-off of USD's numbers.
SAME = 1e-5
#: Plan steps whose targets are taken at a time (long runs never hold them all).
BLOCK = 2048


def import_newton():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import newton
    except ImportError:
        raise MimicInputError(f"the newton engine needs Newton (newton is not installed): {EXTRA}") from None
    if not hasattr(newton.ModelBuilder, "set_joint_mimic"):
        raise MimicInputError(
            f"the newton engine needs Newton >= 1.8 (joint mimics), found {newton.__version__}: {EXTRA}"
        )
    return newton


def newton_reading(
    authored: MimicRelation, model_coeffs: tuple[float, ...] | None, leader: str | None, stage
) -> ReadRelation:
    """What Newton's model holds for one authored relation, and how it differs."""
    if model_coeffs is None:
        return ReadRelation(
            authored.follower,
            authored.leader or "",
            authored.multiplier,
            authored.offset,
            note="dropped: Newton's model holds no mimic for this follower",
        )
    c0, c1 = model_coeffs
    notes = []
    if authored.schema == PHYSX and abs(c0 - authored.offset) > SAME * max(1.0, abs(authored.offset)):
        raw = float(authored.authored.get("offset", 0.0)) if authored.authored else float("nan")
        if abs(c0 + raw) <= SAME * max(1.0, abs(raw)):
            unit = (
                "degrees"
                if joints.joint_kind(stage.GetPrimAtPath(authored.follower)) == joints.REVOLUTE
                else "stage units"
            )
            notes.append(
                f"offset read as {c0:.6g} rad: PhysX's offset ({raw:g}) is in {unit}, Newton uses the number "
                f"as radians (the authored relation means {authored.offset:.6g})"
            )
        else:
            notes.append(f"offset {c0:.6g} differs from the authored {authored.offset:.6g}")
    if abs(c1 - authored.multiplier) > SAME * max(1.0, abs(authored.multiplier)):
        notes.append(
            f"multiplier read as {c1:.6g}, authored {authored.multiplier:.6g} (PhysX's gearing is per USD "
            f"unit of each joint; Newton takes it unconverted)"
        )
    if authored.compliant:
        notes.append(
            f"compliance ignored: naturalFrequency {authored.natural_frequency:g} and dampingRatio "
            f"{authored.damping_ratio:g} are not read, the relation is hard"
        )
    if leader and authored.leader and leader != authored.leader:
        notes.append(f"leader read as {leader}")
    return ReadRelation(authored.follower, leader or authored.leader or "", c1, c0, hard=True, note="; ".join(notes))


#: the read relation's note on a follower whose relation Newton stored only as a legacy entry
LEGACY_NOTE = "legacy relation: add_usd stored it as constraint_mimic (MjcEqualityJointAPI), set as a joint mimic"


def adopt_legacy_mimics(builder) -> list[str]:
    """Move the relations ``add_usd`` stored only as legacy ``constraint_mimic_*`` entries into the
    joint-owned arrays (``set_joint_mimic``) that Newton's Featherstone and XPBD solvers read.

    Newton 1.8 reads a follower with ``MjcEqualityJointAPI`` beside ``NewtonMimicAPI`` (every
    mujoco-usd-converter output) as a MuJoCo joint equality: a legacy constraint for SolverMuJoCo,
    nothing in ``joint_mimic_joint``, so the follower never moves. The legacy entries stay (its
    SolverMuJoCo keeps them). A relation Newton cannot hold per joint (a chain) raises
    ``EngineNotApplicable`` with Newton's reason. Returns one note naming the adopted followers.
    """
    adopted = []
    labels = list(builder.joint_label)
    for i, (j0, j1) in enumerate(zip(builder.constraint_mimic_joint0, builder.constraint_mimic_joint1, strict=True)):
        if not builder.constraint_mimic_enabled[i] or builder.joint_mimic_joint[j0] >= 0:
            continue
        coeffs = (float(builder.constraint_mimic_coef0[i]), float(builder.constraint_mimic_coef1[i]))
        try:
            builder.set_joint_mimic(j0, j1, coeffs=coeffs)
        except ValueError as exc:
            raise EngineNotApplicable(
                f"Newton stored the relation of {labels[j0]} only as a legacy constraint_mimic entry (a "
                f"MuJoCo joint equality, MjcEqualityJointAPI) that its Featherstone and XPBD solvers do not "
                f"read, and cannot hold it per joint: {' '.join(str(exc).split())}"
            ) from None
        adopted.append(labels[j0].rsplit("/", 1)[-1])
    if not adopted:
        return []
    return [
        f"Newton's add_usd stored the relation of {', '.join(adopted)} only as legacy constraint_mimic "
        f"entries (MjcEqualityJointAPI beside NewtonMimicAPI: a MuJoCo joint equality), which its "
        f"Featherstone and XPBD solvers do not read: set as joint mimics (set_joint_mimic) with the same "
        f"coefficients"
    ]


class NewtonEngine:
    name = "newton"
    supported_kinds = (joints.REVOLUTE, joints.PRISMATIC)

    def __init__(
        self,
        device: str | None = None,
        solver: str = "featherstone",
        default_masses: bool = True,
        stable_gains: bool = True,
    ):
        if device in SOLVERS:  # "newton:xpbd" arrives as device="xpbd"
            solver, device = device, None
        if solver not in SOLVERS:
            raise MimicInputError(f"newton engine: unknown solver '{solver}' (use one of {', '.join(SOLVERS)})")
        self.newton = import_newton()
        if solver == "mujoco":
            try:
                import mujoco_warp  # noqa: F401  (SolverMuJoCo imports it even for the C backend)
            except ImportError:
                raise MimicInputError(
                    "newton:mujoco needs mujoco-warp, which Newton's SolverMuJoCo imports even with "
                    "use_mujoco_cpu (not installed): pip install mujoco-warp"
                ) from None
        self.solver = solver
        self.device = device or "cpu"
        self.default_masses = bool(default_masses)
        self.stable_gains = bool(stable_gains)

    def versions(self) -> dict[str, str]:
        import warp as wp

        return {
            "newton": self.newton.__version__,
            "newton_solver": self.solver,
            "warp": wp.config.version,
            "newton_device": self.device,
        }

    # ------------------------------------------------------------------ build
    def prepare(self, stage, plan: SweepPlan, relations: Sequence[MimicRelation], fix_base: bool = True):
        return prepared.simulator_copy(stage, plan, relations, "Newton would give NaN", self.default_masses, fix_base)

    def _builder(self, prep):
        newton = self.newton
        builder = newton.ModelBuilder()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                builder.add_usd(prep.stage, floating=None, collapse_fixed_joints=False)
            except (ValueError, RuntimeError) as exc:  # Newton's reader refuses it: no verdict from Newton
                raise EngineNotApplicable(f"Newton cannot read the stage: {' '.join(str(exc).split())}") from None
        said = []
        for w in caught:
            msg = " ".join(str(w.message).split())
            if issubclass(w.category, DeprecationWarning) or msg in said:
                continue
            said.append(msg)
        return builder, [f"Newton: {m}" for m in said] + adopt_legacy_mimics(builder)

    @staticmethod
    def _read(builder, stage) -> list[ReadRelation]:
        labels = list(builder.joint_label)
        mimic_of = {
            labels[f]: (labels[r], tuple(float(c) for c in builder.joint_mimic_coeffs[f]))
            for f, r in enumerate(builder.joint_mimic_joint)
            if r >= 0
        }
        legacy = {labels[j] for j in builder.constraint_mimic_joint0}
        out = []
        for r in read_relations(stage):
            if not r.enabled:
                continue
            read = newton_reading(
                r, mimic_of.get(r.follower, (None, None))[1], mimic_of.get(r.follower, (None, None))[0], stage
            )
            if r.follower in legacy and r.follower in mimic_of:
                read.note = "; ".join(
                    n for n in (LEGACY_NOTE, read.note) if n
                )  # the cause a disagreement names: a legacy relation
            out.append(read)
        return out

    def relations_read(self, stage) -> list[ReadRelation]:
        """The stage's relations as Newton's ``add_usd`` reads them, without simulating anything."""
        prep = prepared.private_copy(stage)
        if self.default_masses:
            prepared.default_masses(prep, "Newton would give NaN")
        builder, _ = self._builder(prep)
        return self._read(builder, prep.stage)

    def _cap_gains(self, model, plan: SweepPlan, index: dict[str, int], notes: list[str]) -> None:
        """Lower explicit drive and limit springs to what Newton's integrator keeps stable at dt."""
        newton = self.newton
        state = model.state()
        newton.eval_fk(model, state.joint_q, state.joint_qd, state)
        H = newton.eval_mass_matrix(model, state).numpy()
        art_start = model.articulation_start.numpy()
        qd_start = model.joint_qd_start.numpy()
        dt2 = plan.dt**2
        diag = np.full(model.joint_dof_count, np.inf)  # a DOF outside every articulation: not capped
        for a in range(model.articulation_count):
            d0 = qd_start[art_start[a]]
            n = min(qd_start[art_start[a + 1]] - d0, H.shape[1])
            diag[d0 : d0 + n] = np.diagonal(H[a])[:n]
        ke, kd = model.joint_target_ke.numpy(), model.joint_target_kd.numpy()
        lke, lkd = model.joint_limit_ke.numpy(), model.joint_limit_kd.numpy()
        k_max = STABLE_STIFFNESS * diag / dt2
        d_max = STABLE_DAMPING * diag / plan.dt
        lowered = []
        n_j = model.joint_count // plan.num_envs
        for pj in plan.joints:
            if pj.drive.source != "test" or pj.path not in index:
                continue
            d = qd_start[[e * n_j + index[pj.path] for e in range(plan.num_envs)]]
            if np.any(ke[d] > k_max[d]) or np.any(kd[d] > d_max[d]):
                lowered.append(f"{pj.path.rsplit('/', 1)[-1]} {ke[d[0]]:.3g}->{min(ke[d[0]], k_max[d[0]]):.3g}")
                ke[d], kd[d] = np.minimum(ke[d], k_max[d]), np.minimum(kd[d], d_max[d])
        limits = int(np.count_nonzero((lke > k_max) | (lkd > d_max)))
        lke, lkd = np.minimum(lke, k_max), np.minimum(lkd, d_max)
        model.joint_target_ke.assign(ke)
        model.joint_target_kd.assign(kd)
        model.joint_limit_ke.assign(lke)
        model.joint_limit_kd.assign(lkd)
        if lowered:
            notes.append(
                f"test drive stiffness lowered for Newton's explicit PD at dt {plan.dt:.4g} s (capped at "
                f"{STABLE_STIFFNESS} H_jj/dt^2): {', '.join(lowered)}"
            )
        if limits:
            notes.append(
                f"Newton's joint-limit springs (default 1e4) capped at {STABLE_STIFFNESS} H_jj/dt^2 on "
                f"{limits} DOF(s): stiffer ones diverge at this dt"
            )

    def _solver(self, model):
        s = self.newton.solvers
        if self.solver == "featherstone":
            return s.SolverFeatherstone(model)
        if self.solver == "xpbd":
            return s.SolverXPBD(model)
        return s.SolverMuJoCo(model, use_mujoco_cpu=self.device == "cpu", disable_contacts=True)

    # --------------------------------------------------------------- simulate
    def simulate(
        self, stage, plan: SweepPlan, watch: Sequence[str], relations: Sequence[MimicRelation], fix_base: bool = True
    ) -> Trace:
        init_warp()  # quiet, and no CUDA-driver warning on a CPU machine
        newton = self.newton
        t0 = time.perf_counter()
        leader_of = {r.follower: r.leader for r in relations if r.enabled and r.leader}
        for follower, leader in leader_of.items():
            if leader in leader_of:
                raise EngineNotApplicable(
                    f"Newton refuses mimic chains (ModelBuilder.set_joint_mimic: a reference "
                    f"joint must be independent): {follower} follows {leader}, which follows "
                    f"{leader_of[leader]}"
                )
        prep = self.prepare(stage, plan, relations, fix_base)
        single, newton_notes = self._builder(prep)
        trace = Trace(notes=list(prep.notes) + newton_notes)
        trace.notes.append(f"Newton {self.solver} solver, no contacts (no collision pipeline)")
        labels = list(single.joint_label)
        index = {lab: j for j, lab in enumerate(labels)}
        trace.relations = self._read(single, prep.stage)
        missing = [pj.path for pj in plan.joints if pj.path not in index]
        if missing:
            raise MimicInputError(f"swept joint(s) {', '.join(missing)} are not joints of Newton's model")
        builder = newton.ModelBuilder()
        builder.replicate(single, plan.num_envs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                model = builder.finalize(device=self.device)
            except ValueError as exc:
                raise MimicInputError(f"Newton cannot build the model: {' '.join(str(exc).split())}") from None
        if self.stable_gains and self.solver != "mujoco":
            self._cap_gains(model, plan, index, trace.notes)
        solver = self._solver(model)
        s0, s1, control = model.state(), model.state(), model.control()
        newton.eval_fk(model, s0.joint_q, s0.joint_qd, s0)
        n_j = single.joint_count
        q_start = model.joint_q_start.numpy()
        record = list(dict.fromkeys([pj.path for pj in plan.joints] + list(watch)))
        for p in record:
            if p not in index:
                trace.missing[p] = "not a joint of Newton's model"
        live = [p for p in record if p in index]
        # Newton's coordinates: radians, and stage units for a prismatic joint
        scale = {
            p: prep.meters_per_unit if joints.joint_kind(prep.stage.GetPrimAtPath(p)) == joints.PRISMATIC else 1.0
            for p in live
        }
        cols = {p: np.array([q_start[e * n_j + index[p]] for e in range(plan.num_envs)]) for p in live}
        # targets follow joint_q's layout (``joint_target_q_start`` aliases ``joint_q_start``), not the
        # DOFs': a ball or free joint before a swept joint makes the two differ
        aims = [cols[pj.path] for pj in plan.joints]
        target = control.joint_target_q.numpy()
        samples = [int(s) for s in plan.sample_steps]
        pos = {p: np.zeros((plan.num_envs, len(samples))) for p in live}
        # bodies: prim path -> their index in every world (Newton's body labels are the prim paths)
        n_b = single.body_count
        body_rows = {
            lab: np.array([e * n_b + i for e in range(plan.num_envs)])
            for i, lab in enumerate(single.body_label)
            if prep.stage.GetPrimAtPath(lab)
        }
        trace.body_positions = {b: np.zeros((plan.num_envs, len(samples), 3)) for b in body_rows}
        trace.body_samples = list(range(len(samples)))
        trace.timings["build_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()

        maximal = self.solver == "xpbd"  # XPBD moves bodies; joint coordinates come from them

        def sample(k: int) -> None:
            if maximal:
                newton.eval_ik(model, s0, s0.joint_q, s0.joint_qd)
            q = s0.joint_q.numpy()
            for p in live:
                pos[p][:, k] = q[cols[p]] * scale[p]
            body_q = s0.body_q.numpy()
            for b, rows in body_rows.items():
                trace.body_positions[b][:, k] = body_q[rows, :3] * prep.meters_per_unit

        k = 0
        if samples and samples[0] == 0:
            sample(0)
            k = 1
        for start in range(0, plan.total_steps, BLOCK):
            stop = min(plan.total_steps, start + BLOCK)
            table = plan.target_block(start, stop)
            for i in range(stop - start):
                for j, pj in enumerate(plan.joints):
                    target[aims[j]] = table[i, :, j] / scale[pj.path]
                control.joint_target_q.assign(target)
                solver.step(s0, s1, control, None, plan.dt)
                s0, s1 = s1, s0
                while k < len(samples) and samples[k] == start + i + 1:
                    sample(k)
                    k += 1
        trace.timings["simulate_s"] = time.perf_counter() - t1
        trace.timings["steps"] = float(plan.total_steps)
        trace.positions = pos
        return trace
