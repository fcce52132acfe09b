"""The sweep on MuJoCo, built from the stage through our URDF export and MuJoCo's URDF compiler.

Path: a private flattened copy of the stage (``prepared``: rejects hidden, massless bodies
given our solver's default) -> ``mimic_ext.importers.export_urdf`` (SI; ``<mimic>`` in rad or
m; a joint written child-to-parent has its coordinate negated, ``joint_signs``) ->
``mujoco.MjSpec.from_string``: MuJoCo's URDF compiler turns each ``<mimic>`` into a joint
equality ``q_f = polycoef[0] + polycoef[1] q_ref``. The URDF root link is welded to the
world, fixed links are fused into their parents (``fusestatic``), ``effort`` becomes the
joint's actuator force range.

How each relation is enforced, as a MuJoCo user models a mimic joint that must hold: the
joint equality with ``solref`` (2 h, 1), ``h`` MuJoCo's own time step, the stiffest time
constant MuJoCo accepts (``refsafe`` raises shorter ones to 2 h), and ``solimp`` (0.999, 0.999,
0.001): the impedance near 1, a constraint that keeps 99.9% of the force needed to hold it (MuJoCo's
default 0.9-0.95 lets a follower lag its reference: motion ratios up to 0.021 off our solver's on
the Inspire hand, 0.012 on the WX250s, measured). Integrator ``discrete`` (MuJoCo >= 3.13, the
integrator MuJoCo adds for stiff drives and constraints): the constraints, the actuators' damping
``kv`` and stiffness ``kp`` in one implicit solve in the metric ``M + hD + h^2 K``. Under
``implicitfast`` the constraint is solved against ``M`` alone and the drive's damping applied after
it, so a reference whose damping dominates its inertia (the sweep's test drive, 50 N m s/rad, on
the Inspire hand's 4 g fingers: h kv / M ~ 3e3) moves one way in the constraint solve and another
in the integration, and its follower is thrown around (measured at one step per plan step: 9 of
the 12 shared robots fail, motion ratios off by 0.05 to 1e4). ``solref=(timeconst, dampratio)``
replaces the stiff default (``solref=(0.02, 1)`` is MuJoCo's own); every choice is a note.

Drives: URDF has none, so every joint with a position drive (the plan's drive on swept
joints, the authored one elsewhere; without a plan, NVIDIA's phase, the import-default gains
too) gets a MuJoCo ``position`` actuator with the same
stiffness (``kp``), damping (``kv``; the exported joint damping, which held it, is cleared) and
force range (the drive's max force). MuJoCo's geoms collide unless bodies are parent and child;
an articulation that turns ``physxArticulation:enabledSelfCollisions`` off gets its geoms kept
apart (contype/conaffinity). One MuJoCo step per plan step under ``discrete`` (measured enough:
every shared robot within 4e-4 of our solver's motion ratios); only a MuJoCo without it
(``implicitfast``, where the position gain is explicit) splits each plan step into ``substeps``
(auto: ``kp h^2 <= 0.25 M_jj`` for every driven joint, the rule that keeps an explicit gain
stable). An inertia MuJoCo refuses (principal moments breaking A + B >= C, which URDFs
exported from CAD often carry) is compiled with MuJoCo's ``balanceinertia``, with a note naming
the body. No body positions are reported (the URDF's link frames are not the USD bodies' frames in
general, and fixed links are fused), so the bounding-box check does not run on MuJoCo.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Sequence

import numpy as np

from ...errors import MimicInputError
from ...native_stderr import quiet_native_stderr
from ...schema import joints
from ...schema.relation import MimicRelation
from ..discovery import authored_drive
from ..plan import SweepPlan
from . import prepared
from .base import ReadRelation, Trace

EXTRA = "pip install 'mimic-ext[mujoco]'"
#: Largest kp h^2 / M_jj allowed for an explicit position gain (stable below 4 for a lone
#: spring with semi-implicit Euler; 0.25 keeps the sampled motion within a few 1e-3 of the
#: continuous one).
STABLE_GAIN = 0.25
#: The joint equalities' impedance (solimp dmin, dmax, width): near 1, a nearly hard constraint.
STIFF_SOLIMP = (0.999, 0.999, 0.001)
#: Plan steps whose targets are taken at a time (long runs never hold them all).
BLOCK = 2048


def import_mujoco():
    try:
        import mujoco
    except ImportError:
        raise MimicInputError(f"the mujoco engine needs MuJoCo (mujoco is not installed): {EXTRA}") from None
    return mujoco


def _solref(value) -> tuple[float, float] | None:
    if value is None:
        return None
    try:
        t, d = (float(v) for v in value)
    except (TypeError, ValueError):
        raise MimicInputError(
            f"mujoco engine: solref must be two numbers (timeconst, dampratio), got {value!r}"
        ) from None
    if not (math.isfinite(t) and math.isfinite(d) and t > 0 and d > 0):
        raise MimicInputError(f"mujoco engine: solref timeconst and dampratio must be > 0, got {value!r}")
    return t, d


class MujocoEngine:
    name = "mujoco"
    supported_kinds = (joints.REVOLUTE, joints.PRISMATIC)

    def __init__(self, solref=None, substeps: int | None = None, default_masses: bool = True, device: str = "cpu"):
        if device != "cpu":
            raise MimicInputError(f"mujoco engine: MuJoCo's C library runs on the CPU only, not '{device}'")
        self.mujoco = import_mujoco()
        self.solref = _solref(solref)
        if substeps is not None and (not isinstance(substeps, int) or substeps < 1):
            raise MimicInputError(f"mujoco engine: substeps must be a whole number >= 1, got {substeps!r}")
        self.substeps = substeps
        self.default_masses = bool(default_masses)

    def versions(self) -> dict[str, str]:
        return {
            "mujoco": self.mujoco.__version__,
            "mujoco_solref": "default" if self.solref is None else f"{self.solref[0]:g} {self.solref[1]:g}",
        }

    # ------------------------------------------------------------------ build
    def build(self, stage, plan: SweepPlan, relations: Sequence[MimicRelation], fix_base: bool = True):
        """(compiled MjModel, USD joint path -> (MuJoCo joint id, sign), actuator per swept joint, notes)."""
        tests = {pj.path: (pj.drive.stiffness, pj.drive.damping, pj.drive.max_force, pj.lo) for pj in plan.joints}
        return self.build_model(stage, plan.dt, relations, tests, fix_base)

    def build_model(
        self,
        stage,
        dt: float,
        relations: Sequence[MimicRelation],
        test_drives: dict[str, tuple[float, float, float, float]] | None = None,
        fix_base: bool = True,
    ):
        """``build`` without a plan: time step ``dt``; ``test_drives`` (joint path -> stiffness,
        damping, max force, target; SI, USD sign) replace or add drives (the sweep's test drives),
        the other joints keep the asset's own. NVIDIA's phase on MuJoCo (``simready.backends``)
        builds with none: then every authored drive with gains is an actuator, the import
        defaults the sweep counts as none included, as Kit applies them."""
        from ...importers import export_urdf

        as_authored = test_drives is None  # NVIDIA's phase: the asset's drives, nothing replaced
        test_drives = dict(test_drives or {})

        mujoco = self.mujoco
        prep = prepared.private_copy(stage, prepared.hidden_relations(stage, relations))
        if self.default_masses:
            prepared.default_masses(prep, "instead of MuJoCo's own")
        notes = list(prep.notes)
        floating = []
        with contextlib.suppress(MimicInputError):
            floating = prepared.floating_roots(prep.stage)
        # the prim holding every body and joint: an articulation root on a body would export that body alone
        exported = export_urdf(prep.stage, robot_path=prepared.common_root(prepared.physics_prims(prep.stage)))
        notes.append(
            "built through mimic_ext's URDF export and MuJoCo's URDF compiler"
            + (f" (export: {'; '.join(exported.warnings)})" if exported.warnings else "")
        )
        if floating:
            notes.append(
                f"MuJoCo's URDF compiler welds the URDF root to the world: floating root(s) "
                f"{', '.join(floating)} fixed" + ("" if fix_base else " although fix_base is false")
            )
        try:
            with quiet_native_stderr():  # MuJoCo's URDF compiler warns on stderr (duplicate geom names)
                spec = mujoco.MjSpec.from_string(exported.text)
        except ValueError as exc:
            raise MimicInputError(f"MuJoCo cannot compile the exported URDF: {' '.join(str(exc).split())}") from None
        spec.option.timestep = dt
        spec.option.integrator = integrator(mujoco)
        spec.option.gravity = prepared_gravity(prep.stage)
        joint_of = {}
        for path, name in exported.joint_paths.items():
            j = spec.joint(name)
            if j is not None:
                joint_of[path] = (name, exported.joint_signs.get(path, 1.0))
        drives = {}  # path -> (stiffness, damping, max force, target) SI, USD sign
        for path in joint_of:
            prim = prep.stage.GetPrimAtPath(path)
            d = authored_drive(prim, import_defaults=as_authored)
            if d is not None:
                target = _drive_target(prim)
                drives[path] = (d.stiffness, d.damping, d.max_force, target)
        drives.update(test_drives)
        missing = [path for path in test_drives if path not in joint_of]
        if missing:
            raise MimicInputError(
                f"swept joint(s) {', '.join(missing)} are not joints of the exported URDF "
                f"(MuJoCo simulates only the articulation under the default prim)"
            )
        actuator: dict[str, int] = {}  # joint path -> its actuator's index in ctrl
        for path, (kp, kv, fmax, _) in drives.items():
            name, _ = joint_of[path]
            joint = spec.joint(name)
            joint.damping = np.zeros_like(np.atleast_1d(joint.damping))  # the actuator's kv carries it
            act = spec.add_actuator(name=f"fet022_{name}", target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
            act.set_to_position(kp=float(kp), kv=float(kv))
            if math.isfinite(fmax):
                act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
                act.forcerange = [-float(fmax), float(fmax)]
            actuator[path] = len(actuator)
        excluded = _filtered_pairs(prep.stage, exported.link_paths)
        for a, b in excluded:
            spec.add_exclude(bodyname1=a, bodyname2=b)
        if excluded:
            notes.append(
                f"UsdPhysics filtered pairs carried over as MuJoCo contact excludes: "
                f"{', '.join(f'{a}-{b}' for a, b in excluded)}"
            )
        roots = prepared.articulation_roots(prep.stage)
        if roots and all(prepared.self_collisions(r) is False for r in roots):
            for geom in spec.geoms:  # robot geoms still meet the world (contype 2 vs conaffinity 1)
                geom.contype, geom.conaffinity = 2, 1
            notes.append(
                "physxArticulation:enabledSelfCollisions = false carried over: the robot's geoms do not "
                "collide with each other in MuJoCo"
            )
        if self.solref is not None:
            for eq in spec.equalities:
                eq.solref = list(self.solref)
            notes.append(
                f"mimic equalities use solref ({self.solref[0]:g} s, {self.solref[1]:g}) instead of "
                f"the stiff default (2 h, 1)"
            )
        model = self._compile(spec, notes)
        ids = {p: (model.joint(n).id, s) for p, (n, s) in joint_of.items()}
        return model, ids, actuator, drives, notes

    def _compile(self, spec, notes: list[str]):
        """``spec.compile()``; an inertia MuJoCo refuses (A + B >= C broken) compiled again with
        ``balanceinertia``, as MuJoCo's message asks, with a note naming the body."""
        try:
            with quiet_native_stderr():  # MuJoCo's URDF compiler warns on stderr (duplicate geom names)
                return spec.compile()
        except ValueError as exc:
            said = " ".join(str(exc).split())
            if "balanceinertia" not in said or spec.compiler.balanceinertia:
                raise MimicInputError(f"MuJoCo cannot compile the exported URDF: {said}") from None
        bad = refused_inertias(spec)
        spec.compiler.balanceinertia = True
        try:
            with quiet_native_stderr():
                model = spec.compile()
        except ValueError as exc:
            raise MimicInputError(
                f"MuJoCo cannot compile the exported URDF, even with balanceinertia: {' '.join(str(exc).split())}"
            ) from None
        notes.append(
            f"compiled with MuJoCo's balanceinertia: the inertia of {', '.join(bad) or 'a body'} breaks "
            f"A + B >= C (its principal moments cannot belong to a rigid body), which MuJoCo refuses; "
            f"balanceinertia raises the offending moments to the nearest valid ones, so those links "
            f"are slightly heavier to turn in MuJoCo than in the asset"
        )
        return model

    def relations_read(self, model, ids) -> list[ReadRelation]:
        """The compiled joint equalities: q_f - q0_f = a0 + a1 (q_ref - q0_ref), back in USD signs."""
        mujoco = self.mujoco
        path_of = {jid: (p, s) for p, (jid, s) in ids.items()}
        out = []
        for e in range(model.neq):
            if model.eq_type[e] != mujoco.mjtEq.mjEQ_JOINT:
                continue
            f, l = int(model.eq_obj1id[e]), int(model.eq_obj2id[e])
            if f not in path_of or l not in path_of:
                continue
            (pf, sf), (pl, sl) = path_of[f], path_of[l]
            a0, a1 = float(model.eq_data[e][0]), float(model.eq_data[e][1])
            q0f, q0l = float(model.qpos0[model.jnt_qposadr[f]]), float(model.qpos0[model.jnt_qposadr[l]])
            offset = a0 + q0f - a1 * q0l
            tc, dr = (float(v) for v in model.eq_solref[e])
            out.append(
                ReadRelation(
                    pf, pl, sf * sl * a1, sf * offset, hard=False, note=f"a joint equality, solref ({tc:g} s, {dr:g})"
                )
            )
        return out

    def substeps_for(self, model, ids, drives) -> int:
        """Sub-steps per plan step: 1 under ``discrete`` (the gains are implicit), else as many as
        make every explicit position gain stable."""
        mujoco = self.mujoco
        if self.substeps is not None:
            return self.substeps
        if int(model.opt.integrator) == int(getattr(mujoco.mjtIntegrator, "mjINT_DISCRETE", -1)):
            return 1
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        full = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, full)
        n = 1
        for path, (kp, _, _, _) in drives.items():
            jid, _ = ids[path]
            m = full[model.jnt_dofadr[jid], model.jnt_dofadr[jid]] + 1e-12
            n = max(n, math.ceil(model.opt.timestep * math.sqrt(kp / (STABLE_GAIN * m))))
        return n

    # --------------------------------------------------------------- simulate
    def simulate(
        self, stage, plan: SweepPlan, watch: Sequence[str], relations: Sequence[MimicRelation], fix_base: bool = True
    ) -> Trace:
        """MuJoCo's warnings (an unstable step, say) become notes instead of a MUJOCO_LOG.TXT in the cwd."""
        mujoco = self.mujoco
        said: list[str] = []
        previous = mujoco.get_mju_user_warning()
        mujoco.set_mju_user_warning(lambda msg: said.append(" ".join(str(msg).split())))
        try:
            trace = self._simulate(stage, plan, watch, relations, fix_base)
        finally:
            mujoco.set_mju_user_warning(previous)
        trace.notes.extend(f"MuJoCo: {m}" for m in dict.fromkeys(said))
        return trace

    def _simulate(self, stage, plan, watch, relations, fix_base) -> Trace:
        mujoco = self.mujoco
        t0 = time.perf_counter()
        model, ids, actuator, drives, notes = self.build(stage, plan, relations, fix_base)
        trace = Trace(notes=notes)
        n_sub = self.substeps_for(model, ids, drives)
        if n_sub > 1:
            model.opt.timestep = plan.dt / n_sub
            trace.notes.append(
                f"each {plan.dt:.4g} s step taken as {n_sub} MuJoCo steps of {plan.dt / n_sub:.3g} s: "
                f"the stiffest drive needs kp h^2 <= {STABLE_GAIN:g} M_jj (a force-limited actuator "
                f"is clamped outside the implicit integration)"
            )
        if self.solref is None:
            stiff_equalities(mujoco, model)
            trace.notes.append(
                f"mimic joint equalities use solref ({2 * model.opt.timestep:.3g} s, 1), twice MuJoCo's time "
                f"step, the stiffest it accepts, and solimp ({', '.join(f'{v:g}' for v in STIFF_SOLIMP)})"
            )
        trace.notes.append(integrator_note(mujoco, model))
        trace.relations = self.relations_read(model, ids)
        record = list(dict.fromkeys([pj.path for pj in plan.joints] + list(watch)))
        for p in record:
            if p not in ids:
                trace.missing[p] = "not a joint of the URDF MuJoCo was built from"
        live = [p for p in record if p in ids]
        adr = {p: int(model.jnt_qposadr[ids[p][0]]) for p in live}
        sign = {p: ids[p][1] for p in live}
        base_ctrl = np.zeros(model.nu)
        for path, a in actuator.items():
            base_ctrl[a] = sign_of(ids, path) * drives[path][3]
        samples = [int(s) for s in plan.sample_steps]
        pos = {p: np.zeros((plan.num_envs, len(samples))) for p in live}
        trace.timings["build_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        data = mujoco.MjData(model)
        for env in range(plan.num_envs):
            mujoco.mj_resetData(model, data)
            data.ctrl[:] = base_ctrl
            k = 0
            if samples and samples[0] == 0:
                for p in live:
                    pos[p][env, 0] = sign[p] * data.qpos[adr[p]]
                k = 1
            for start in range(0, plan.total_steps, BLOCK):
                stop = min(plan.total_steps, start + BLOCK)
                table = plan.target_block(start, stop)[:, env, :]
                for i in range(stop - start):
                    for j, pj in enumerate(plan.joints):
                        data.ctrl[actuator[pj.path]] = sign[pj.path] * table[i, j]
                    mujoco.mj_step(model, data, nstep=n_sub)
                    while k < len(samples) and samples[k] == start + i + 1:
                        for p in live:
                            pos[p][env, k] = sign[p] * data.qpos[adr[p]]
                        k += 1
        trace.timings["simulate_s"] = time.perf_counter() - t1
        trace.timings["steps"] = float(plan.total_steps)
        trace.timings["substeps"] = float(n_sub)
        trace.positions = pos
        return trace


def integrator(mujoco):
    """``discrete`` where this MuJoCo has it (3.13+: constraints solved with the implicit damping and
    stiffness), else ``implicitfast``."""
    kinds = mujoco.mjtIntegrator
    return getattr(kinds, "mjINT_DISCRETE", kinds.mjINT_IMPLICITFAST)


def integrator_note(mujoco, model) -> str:
    if int(model.opt.integrator) == int(getattr(mujoco.mjtIntegrator, "mjINT_DISCRETE", -1)):
        return "integrator discrete: the joint equalities are solved with the drives' damping and stiffness"
    return (
        f"integrator implicitfast (MuJoCo {mujoco.__version__} has no discrete integrator, 3.13+): the "
        f"equalities are solved before the drives' damping is applied, so a heavily damped light reference "
        f"can throw its followers off"
    )


def stiff_equalities(mujoco, model) -> None:
    """Every joint equality at solref (2 h, 1), the shortest time constant MuJoCo's refsafe keeps, and
    the impedance ``STIFF_SOLIMP``."""
    for e in range(model.neq):
        if model.eq_type[e] == mujoco.mjtEq.mjEQ_JOINT:
            model.eq_solref[e] = (2.0 * model.opt.timestep, 1.0)
            model.eq_solimp[e][:3] = STIFF_SOLIMP


def _filtered_pairs(stage, link_of: dict[str, str]) -> list[tuple[str, str]]:
    """The stage's ``physics:filteredPairs`` between bodies of the exported URDF, as link-name pairs:
    MuJoCo keeps a body's geoms apart from its parent's only below the world body, so a link welded
    to the world (fused into it) would collide with its children, which the asset filtered."""
    from pxr import UsdPhysics

    out = []
    for path, link in link_of.items():
        prim = stage.GetPrimAtPath(path)
        if not prim or not prim.HasAPI(UsdPhysics.FilteredPairsAPI):
            continue
        for target in UsdPhysics.FilteredPairsAPI(prim).GetFilteredPairsRel().GetTargets():
            other = link_of.get(str(target))
            if other and other != link and (other, link) not in out:
                out.append((link, other))
    return out


def refused_inertias(spec) -> list[str]:
    """The bodies whose principal moments break A + B >= C (MuJoCo's rule, with its 1e-15 slack)."""
    bad = []
    for body in spec.bodies:
        full = np.asarray(body.fullinertia, float)  # (xx, yy, zz, xy, xz, yz), the URDF's <inertia>
        if body.mass <= 0 or not np.all(np.isfinite(full)):
            continue
        xx, yy, zz, xy, xz, yz = full
        a, b, c = np.linalg.eigvalsh(np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))
        if a + b < c * (1 - 1e-9):
            bad.append(body.name or "(unnamed body)")
    return bad


def sign_of(ids, path: str) -> float:
    return ids[path][1]


def _drive_target(prim) -> float:
    """The authored drive target in SI (degrees or stage units in USD)."""
    from pxr import UsdPhysics

    api = UsdPhysics.DriveAPI(prim, prepared.drive_name(prim))
    t = api.GetTargetPositionAttr().Get()
    return float(t or 0.0) * (joints.unit_scale(prim) or 1.0)


def prepared_gravity(stage) -> list[float]:
    """The stage's gravity in m/s^2, as our solver reads it."""
    from ...solver.stage_reader import _gravity

    return [float(g) for g in _gravity(stage, joints.meters_per_unit(stage))]
