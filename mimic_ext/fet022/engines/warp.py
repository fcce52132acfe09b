"""The sweep on mimic_ext's own Warp articulation solver.

Each independent part of a stage runs in environments of its own (one per swept joint of
the part, one with all held); translated copies of a part run once; parts of one shape
(``solver.parts.structure_key``) share one model, side by side, so a stage of thousands of
distinct parts builds and steps a few models, not thousands. The
temporary test drive goes through the model's drives, so the stage is only read.
Per step the cost is the solver step plus one small copy of the targets (uploaded a block
of steps at a time); positions are copied into a history buffer on the device and read
back once at the end; body positions for the bounding-box check come from the solver's
own forward kinematics (``solver.inspect.body_poses``) at the samples.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...errors import MimicInputError
from ...schema import joints
from ...schema.relation import MimicRelation
from ..plan import SweepPlan
from .base import ReadRelation, Trace


class WarpEngine:
    name = "warp"
    supported_kinds = (joints.REVOLUTE, joints.PRISMATIC)

    def __init__(
        self,
        device: str = "cpu",
        share_copies: bool = True,
        batch_parts: int | None = None,
        drive_discretisation: str = "implicit",
    ):
        """``share_copies``: simulate a translated copy of a part once; ``batch_parts``: the most
        parts of one shape built into one model (default ``BATCH_PARTS``; 1: a model per part);
        ``drive_discretisation``: the solvers' (``Solver(drive_discretisation=...)``)."""
        self.device = device
        self.drive_discretisation = drive_discretisation
        self.share_copies = bool(share_copies)
        self.batch_parts = BATCH_PARTS if batch_parts is None else max(1, int(batch_parts))

    def versions(self) -> dict[str, str]:
        import warp as wp

        return {"warp": wp.config.version, "device": self.device}

    def simulate(
        self, stage, plan: SweepPlan, watch: Sequence[str], relations: Sequence[MimicRelation], fix_base: bool = True
    ) -> Trace:
        from ...warp_runtime import announce_cold_compile, init_warp

        t_setup = time.perf_counter()
        init_warp()  # quiet, without the CUDA-driver warning
        try:
            from ...solver.model import build_model, contact_model, kernel_features
            from ...solver.parts import copy_key, independent_parts, part_spec, structure_key
            from ...solver.stage_reader import read_stage
        except ImportError as exc:  # the solver part is not installed in this checkout
            raise MimicInputError(f"the warp sweep engine needs mimic_ext.solver ({exc})") from None

        trace = Trace()
        t0 = time.perf_counter()
        trace.timings["setup_s"] = t0 - t_setup  # Warp's start and the solver's import
        relations = list(relations)
        with warnings.catch_warnings():  # the model's notes are reported with the result instead
            warnings.simplefilter("ignore")
            whole = contact_model(stage, fix_base, relations, num_envs=max(len(plan.joints), 1), device=self.device)
            spec = whole.spec if whole is not None else read_stage(stage, fix_base=fix_base)
            # the variant this stage's models compile (contacts, spherical joints, velocity caps)
            announce_cold_compile(
                self.device, "float32", contacts=whole is not None, **kernel_features(spec.links, spec.closures)
            )
            split = None if whole is not None else independent_parts(spec, relations)
            if split is None:  # contacts may join any parts; or a relation on a joint no
                specs = [(spec, list(range(len(spec.links))))]  # link has: the whole model says why
            else:
                specs = [(part_spec(spec, links), links) for links in split]
        trace.timings["read_s"] = time.perf_counter() - t0
        part_of_link = {i: k for k, (_, links) in enumerate(specs) for i in links}
        part_of_joint = {lk.joint.path: part_of_link[i] for i, lk in enumerate(spec.links) if lk.joint is not None}
        swept_in: dict[int, list[int]] = {}
        for env, pj in enumerate(plan.joints):
            if pj.path in part_of_joint:
                swept_in.setdefault(part_of_joint[pj.path], []).append(env)
        # a part whose joints no environment sweeps still moves under its own drives and gravity
        # in every environment (and bounds its bodies' box): it runs once, held, like the rest
        held = len(specs) > 1
        rels_of: dict[int, list[MimicRelation]] = {}
        for r in relations:
            rels_of.setdefault(part_of_joint.get(str(r.follower), -1), []).append(r)
        runs: list[_PartRun] = []
        shared: dict[tuple, _PartRun] = {}
        batches: dict[tuple, list[_PartRun]] = {}  # parts of one shape, to be built into one model
        notes = list(spec.warnings)
        for k, (pspec, _) in enumerate(specs):
            envs = swept_in.get(k, []) + ([-1] if held else [])
            if not envs:
                continue
            rels = rels_of.get(k, [])
            swept = [e for e in envs if e >= 0]
            order = {lk.joint.path: i for i, lk in enumerate(pspec.links) if lk.joint is not None}
            key = anchor = None
            if self.share_copies:
                extra = tuple(
                    (
                        order[plan.joints[e].path],
                        round(plan.joints[e].lo, 12),
                        round(plan.joints[e].hi, 12),
                        tuple(vars(plan.joints[e].drive).values()),
                    )
                    for e in swept
                ) + (held,)
                key, anchor = copy_key(pspec, rels, extra)
                if key in shared:  # a translated copy of a part already built: its joints move the same
                    runs.append(_PartRun(pspec, envs, swept, rels, anchor, rep=shared[key]))
                    continue
            run = _PartRun(pspec, envs, swept, rels, anchor)
            runs.append(run)
            shape = None
            if split is not None and held:
                drives = tuple(
                    (
                        order[plan.joints[e].path],
                        plan.joints[e].drive.source == "test",
                        math.isfinite(plan.joints[e].drive.max_force),
                    )
                    for e in swept
                )
                shape = structure_key(pspec, rels, drives)
            if shape is not None:  # no notes of its own (no closures, contacts or base): built later
                batches.setdefault(shape, []).append(run)
                if key is not None:
                    shared[key] = run
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if whole is not None and whole.num_envs == len(envs):  # the stage with its contacts
                    model = whole
                elif whole is not None:
                    model = build_model(
                        stage, num_envs=len(envs), device=self.device, fix_base=fix_base, relations=rels
                    )
                else:
                    model = _part_model(pspec, rels, len(envs), swept, plan, self.device)
            if whole is not None:  # built from the stage: its test drives set on it
                for path, gains in _test_drives(plan, swept).items():
                    model.set_drive(path, *gains)
            notes.extend(getattr(model, "warnings", []))
            run.attach(model)
            if key is not None and not model.warnings:  # a copy would not carry its own notes: build it
                shared[key] = run
        units = [[run] for run in runs if run.rep is None and run.model is not None]
        for group in batches.values():
            for first in range(0, len(group), self.batch_parts):
                units.append(_batch(group[first : first + self.batch_parts], plan, self.device))
        for run in runs:
            if run.rep is not None:
                run.follow()
        trace.notes.extend(dict.fromkeys(notes))
        read: dict[int, list[dict]] = {}
        trace.relations = [
            ReadRelation(
                run.own(r["follower"]),
                run.own(r["leader"]),
                r["multiplier"],
                r["offset"],
                hard=r["status"] != "compliant",
                note="" if r["status"] == "active" else r["status"],
            )
            for run in runs
            for r in run.relations(read)
        ]
        simulated = [run for run in runs if run.rep is None]
        run_of = {path: run for run in runs for path in run.paths}
        located: dict[str, tuple[_PartRun, int]] = {}
        for path in dict.fromkeys([pj.path for pj in plan.joints] + list(watch)):
            try:
                found = run_of.get(path)
                if found is None:
                    if not runs:
                        raise MimicInputError(f"{path} is not a revolute or prismatic joint of this model")
                    runs[0].model.dof_index(path)  # raises, saying why
                assert found is not None  # dof_index raised for a joint no part holds
                located[path] = (found, found.col[path])
            except MimicInputError as exc:  # the solver's MimicParticipantError
                trace.missing[path] = f"not simulated by the warp solver ({exc})"
        swept_missing = [pj.path for pj in plan.joints if pj.path in trace.missing]
        if swept_missing:
            raise MimicInputError(
                f"swept joint(s) {', '.join(swept_missing)} are not degrees of freedom of the "
                f"warp model (only revolute and prismatic joints of an articulation are)"
            )
        trace.timings["build_s"] = time.perf_counter() - t0 - trace.timings["read_s"]

        t1 = time.perf_counter()
        index = {pj.path: j for j, pj in enumerate(plan.joints)}
        bad_envs: dict[int, list[int]] = {}
        rebuilt = False
        for unit in units:
            bad_envs[id(unit[0])] = _simulate_unit(unit, plan, index, self.drive_discretisation)
            if bad_envs[id(unit[0])] and len(unit) > 1:  # which part diverged: each on a model of its own
                rebuilt = True
                for run in unit:
                    run.attach(_part_model(run.part, run.rels, len(run.envs), run.swept, plan, self.device))
                    bad_envs[id(run)] = _simulate_unit([run], plan, index, self.drive_discretisation)
        if rebuilt:  # the copies follow their reps onto the new models
            for run in runs:
                if run.rep is not None:
                    run.follow()
            located = {path: (run, run.col[path]) for path, (run, _) in located.items()}
        bad = [run.label(plan, i) for run in runs for i in bad_envs.get(id(run.rep or run), [])]
        if bad:  # NaN or inf in a state: an error, never a pass
            raise MimicInputError(f"the warp solver's state became NaN or infinite while sweeping {', '.join(bad)}")
        trace.timings["simulate_s"] = time.perf_counter() - t1
        trace.timings["steps"] = float(plan.total_steps)
        trace.timings["parts"] = float(len(runs))
        trace.timings["parts_simulated"] = float(len(simulated))
        trace.timings["models"] = float(len(units))
        n_samples = len(plan.sample_steps)
        for path, (run, i) in located.items():
            trace.positions[path] = _EnvRows(run, i, plan.num_envs)
        trace.body_samples = body_sample_indices(n_samples)
        trace.body_positions = _LazyBodyPositions(runs, plan.num_envs, trace.body_samples)
        return trace


#: Parts of one shape built into one model together, at most: bounds a model's target table
#: (steps x environments x DOFs, float64, 8 MB for 256 two-joint parts) and the rerun of a
#: batch that diverged, while a model's fixed costs (its Solver, its launches) stay small.
BATCH_PARTS = 256


def _test_drives(plan: SweepPlan, swept: list[int]) -> dict[str, tuple]:
    """The temporary test drives of the swept joints ``swept`` (plan environments): joint path ->
    ``Model.set_drive``'s (stiffness, damping, max_force)."""
    return {
        plan.joints[e].path: (
            plan.joints[e].drive.stiffness,
            plan.joints[e].drive.damping,
            plan.joints[e].drive.max_force,
        )
        for e in swept
        if plan.joints[e].drive.source == "test"
    }


def _part_model(part, rels, num_envs: int, swept: list[int], plan: SweepPlan, device):
    """One part's model with its test drives (uploaded once, by the Solver that steps it)."""
    from ...solver.model import model_from_spec

    return model_from_spec(part, rels, num_envs=num_envs, device=device, drives=_test_drives(plan, swept), upload=False)


def _batch(runs: list[_PartRun], plan: SweepPlan, device) -> list[_PartRun]:
    """One model of several parts of one shape: each part moved so that its first joint frame
    is at the world origin (every part then computes as near the origin as the first would),
    independent trees side by side, its environment ``i`` showing each part's environment ``i``."""
    from ...solver.model import model_from_spec
    from ...solver.parts import joined, translated

    if len(runs) == 1:
        run = runs[0]
        run.attach(_part_model(run.part, run.rels, len(run.envs), run.swept, plan, device))
        return runs
    anchors = [np.array(run.part.links[0].X_p[:3, 3], dtype=float) for run in runs]
    spec = joined([translated(run.part, a) for run, a in zip(runs, anchors)])
    drives: dict[str, tuple] = {}
    rels = []
    for run in runs:
        drives.update(_test_drives(plan, run.swept))
        rels += run.rels
    model = model_from_spec(spec, rels, num_envs=len(runs[0].envs), device=device, drives=drives, upload=False)
    first = 0
    for run, a in zip(runs, anchors):
        run.attach(model, shift=a, rows=range(first, first + len(run.rels)))
        first += len(run.rels)
    return runs


def _simulate_unit(
    unit: list[_PartRun], plan: SweepPlan, index: dict[str, int], drive_discretisation: str = "implicit"
) -> list[int]:
    """Step the model of ``unit`` (parts sharing one model) through the plan; records each
    part's positions; returns the model environments whose state became non-finite."""
    from ...solver import Solver

    model = unit[0].model
    run_of = {p: run for run in unit for p in run.paths}
    mine = [p for p in model.joint_paths if p in index]  # the swept joints of these parts
    envs = np.array([run_of[p].envs for p in mine], dtype=int).T.reshape(len(unit[0].envs), len(mine))
    q, bad = _step_through(
        Solver(model, drive_discretisation=drive_discretisation), model, plan, envs, [index[p] for p in mine]
    )
    for run in unit:
        run.own_q = q
    return bad


class _PartRun:
    """One independent part of the stage, simulated in environments of its own: ``envs`` lists,
    per environment of its model, the plan's environment it stands for (-1: every swept joint
    held at the start of its range, as in any plan environment that sweeps another part).
    Its model is its own or one it shares with other parts of its shape (``attach``), its
    bodies there moved by ``-shift``. A translated copy of another part (``rep``) shares that
    part's model and results (``follow``): its joints are the rep's columns in order, its
    bodies the rep's, moved by the distance between them."""

    def __init__(self, part, envs: list[int], swept: list[int], rels: list, anchor=None, rep: _PartRun | None = None):
        self.part, self.envs, self.swept, self.rels, self.rep = part, envs, swept, rels, rep
        self.local = {e: i for i, e in enumerate(envs)}
        self.paths = [lk.joint.path for lk in part.links if lk.joint is not None]
        self.bodies = [path for lk in part.links for path, _ in lk.bodies]
        self.body_src = self.bodies  # the model's name of each of its bodies
        self.anchor = anchor
        self.model: Any = None  # the solver Model it runs on (``attach``)
        self.col: dict[str, int] = {}
        self.shift: np.ndarray | None = None
        self.rows: range | None = None
        self._names: dict[str, str] | None = None
        self.own_q: np.ndarray | None = None  # (samples, environments, coordinates)

    def attach(self, model, shift=None, rows: range | None = None) -> None:
        """Run on ``model``, whose relation rows ``rows`` are this part's (None: all)."""
        self.model, self.rows = model, rows
        self.col = {p: model.dof_index(p) for p in self.paths}
        self.shift = None if shift is None else np.asarray(shift, dtype=float)

    def follow(self) -> None:
        """Take the rep's model and results (once the rep is attached)."""
        rep = self.rep
        assert rep is not None  # only a copy of another part follows one
        self.model, self.rows, self.body_src = rep.model, rep.rows, rep.body_src
        self.col = {own: rep.col[p] for p, own in zip(rep.paths, self.paths)}
        moved = np.asarray(self.anchor, dtype=np.float64) - np.asarray(rep.anchor, dtype=np.float64)
        self.shift = moved if rep.shift is None else rep.shift + moved
        self._names = dict(zip(rep.paths, self.paths))

    def relations(self, cache: dict) -> list[dict]:
        """Its relations as its model read them (``cache``: per model, ``Model.relations()``)."""
        every = cache.get(id(self.model))
        if every is None:
            every = cache[id(self.model)] = self.model.relations()
        return every if self.rows is None else every[self.rows.start : self.rows.stop]

    def label(self, plan: SweepPlan, i: int) -> str:
        """The plan joint its model environment ``i`` sweeps, for a message."""
        return plan.joints[self.envs[i]].path if self.envs[i] >= 0 else f"(every joint held) {self.paths[0]}"

    @property
    def q(self) -> np.ndarray:
        q = self.rep.own_q if self.rep is not None else self.own_q
        assert q is not None, "read after the part was simulated"
        return q

    def own(self, path: str) -> str:
        """This part's joint for a joint path of the model it runs on."""
        return path if self._names is None else self._names.get(path, path)

    def env(self, plan_env: int) -> int:
        """The model environment that shows ``plan_env``."""
        return self.local.get(plan_env, self.local.get(-1, 0))


class _EnvRows:
    """One joint's recorded positions, ``[env]`` -> (samples,) float64 for a plan environment,
    read from its part's run; ``np.asarray`` gives the whole (num_envs, samples) table."""

    def __init__(self, run: _PartRun, col: int, num_envs: int):
        self._run, self._col, self._n = run, col, num_envs

    @property
    def shape(self) -> tuple[int, int]:
        return (self._n, self._run.q.shape[0])

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, env):
        if isinstance(env, (int, np.integer)):
            if not -self._n <= env < self._n:
                raise IndexError(env)
            return np.ascontiguousarray(self._run.q[:, self._run.env(int(env) % self._n), self._col], dtype=float)
        return np.asarray(self)[env]

    def __array__(self, dtype=None, copy=None):
        rows = [self._run.env(e) for e in range(self._n)]
        out = np.ascontiguousarray(self._run.q[:, rows, self._col].T, dtype=float)
        return out if dtype is None else out.astype(dtype)


#: Steps whose targets are on the device at once: long runs stream in blocks of this many.
BLOCK_STEPS = 1024


def _step_through(solver, model, plan: SweepPlan, envs: np.ndarray, mine: list[int]) -> tuple[np.ndarray, list[int]]:
    """Run the whole plan on one model and return the recorded ``joint_q`` at the plan's samples,
    (samples, environments, coordinates), and the environments whose state became non-finite.
    ``mine``: the plan joints (indices) the model drives, in its column order; ``envs``
    (environments, len(mine)): the plan environment each model environment stands for in
    each of those joints' columns (``plan.target_block``).

    The only place the warp engine steps: ``Solver.step_many`` takes a block of steps at a time
    in one launch per slice of environments, their targets from ``plan.target_block`` (only
    this model's environments and swept joints), positions recorded at the plan's samples.
    """
    n_q = model.coord_count
    base = model.control().joint_target_q.numpy()  # (env, dof): the stage's own targets
    columns = [model.dof_index(plan.joints[j].path) for j in mine]
    sample_steps = np.asarray(plan.sample_steps, dtype=np.int64)
    q = np.empty((len(sample_steps), envs.shape[0], n_q), dtype=np.float64)
    state = model.state()
    k = 0
    if sample_steps.size and sample_steps[0] == 0:
        q[0] = state.joint_q.numpy()
        k = 1
    for start in range(0, plan.total_steps, BLOCK_STEPS):
        stop = min(start + BLOCK_STEPS, plan.total_steps)
        table = np.repeat(base[None], stop - start, axis=0)
        if mine:
            table[:, :, columns] = plan.target_block(start, stop, envs=envs, joints=mine)
        after = sample_steps[(sample_steps > start) & (sample_steps <= stop)] - start
        history = solver.step_many(state, table, plan.dt, sample_after=after if after.size else None)
        if history is not None:
            q[k : k + after.size] = history.numpy()
            k += after.size
    return q, solver.nonfinite_envs()


#: Body positions are computed at about this many samples per environment (the harness
#: checks its bounding box every 20 steps: every second sample of the default sweep).
BODY_CHECKS = 25


def body_sample_indices(n_samples: int) -> list[int]:
    """Every second sample (the harness's cadence), thinned to about ``BODY_CHECKS`` on long runs,
    always with the first (the baseline) and the last."""
    stride = max(2, -(-n_samples // BODY_CHECKS))
    idx = list(range(0, n_samples, stride))
    if n_samples and idx[-1] != n_samples - 1:
        idx.append(n_samples - 1)
    return idx


class _LazyBodyPositions(Mapping):
    """Body path -> world origins (m), (num_envs, len(samples), 3), computed on first use per
    part (``solver.inspect.body_poses``, about as costly as the sweep itself, runs only when a
    check reads a position). ``extents(radii, env)`` and ``first_nonfinite(env)`` answer the
    bounding-box check for one environment from each part's own environments, without
    forming the (bodies x environments) table: in a plan environment every part but the one it
    sweeps is held."""

    def __init__(self, runs: list[_PartRun], num_envs: int, samples: list[int]):
        self._runs, self._n, self._samples = runs, num_envs, samples
        self._part = {path: run for run in runs for path in run.bodies}
        self._values: dict[int, dict[str, np.ndarray]] = {}  # per run: path -> (run envs, samples, 3)
        self._model_values: dict[int, dict[str, np.ndarray]] = {}  # per model: its body paths -> the same
        self._held_box: tuple | None = None
        self._run_of_env = {e: k for k, run in enumerate(runs) for e in run.swept}
        self._held_bad: list | None = None  # per part: the held environment's first non-finite body

    def _of(self, run: _PartRun) -> dict[str, np.ndarray]:
        """This part's body path -> origins (its model's environments, samples, 3)."""
        key = id(run)
        if key not in self._values:
            vals = self._of_model(run)
            if run.shift is None:
                self._values[key] = {own: vals[src] for own, src in zip(run.bodies, run.body_src)}
            else:
                self._values[key] = {own: vals[src] + run.shift for own, src in zip(run.bodies, run.body_src)}
        return self._values[key]

    def _of_model(self, run: _PartRun) -> dict[str, np.ndarray]:
        """Every body of ``run``'s model -> origins in that model (computed once per model)."""
        key = id(run.model)
        if key not in self._model_values:
            from ...solver.inspect import body_poses

            q = run.q
            moving = {p for lk in run.model.links for p, _ in lk.bodies}
            out = {p: np.empty((q.shape[1], len(self._samples), 3)) for p in moving}
            for e in range(q.shape[1]):
                for k, s in enumerate(self._samples):
                    for path, pose in body_poses(run.model, q[s, e]).items():
                        if path in out:
                            out[path][e, k] = pose[:3, 3]
            self._model_values[key] = out
        return self._model_values[key]

    def __getitem__(self, path: str) -> np.ndarray:
        run = self._part[path]
        rows = [run.env(e) for e in range(self._n)]
        return self._of(run)[path][rows]

    def __iter__(self):
        return iter(self._part)

    def __len__(self) -> int:
        return len(self._part)

    def _box(self, run: _PartRun, env: int, radii: dict[str, float]) -> np.ndarray:
        """(samples, 2, 3): lower and upper corners of the spheres of ``run``'s bodies in its environment ``env``."""
        vals = self._of(run)
        pts = np.stack([vals[p][env] for p in vals], axis=1)  # (samples, bodies, 3)
        r = np.array([radii.get(p, 0.0) for p in vals])[None, :, None]
        return np.stack([(pts - r).min(axis=1), (pts + r).max(axis=1)], axis=1)

    def extents(self, radii: dict[str, float], env: int) -> np.ndarray:
        """Box sides (samples, 3) of every body's sphere in plan environment ``env``."""
        if self._held_box is None:  # the union of the held parts, leaving each one out
            held = [self._box(run, run.env(-1), radii) for run in self._runs]
            lo = np.stack([h[:, 0] for h in held])  # (parts, samples, 3)
            hi = np.stack([h[:, 1] for h in held])
            inf = np.full_like(lo[:1], np.inf)
            pre_lo = np.concatenate([inf, np.minimum.accumulate(lo, axis=0)])[:-1]
            suf_lo = np.concatenate([np.minimum.accumulate(lo[::-1], axis=0)[::-1][1:], inf])
            pre_hi = np.concatenate([-inf, np.maximum.accumulate(hi, axis=0)])[:-1]
            suf_hi = np.concatenate([np.maximum.accumulate(hi[::-1], axis=0)[::-1][1:], -inf])
            self._held_box = (np.minimum(pre_lo, suf_lo), np.maximum(pre_hi, suf_hi))
        others_lo, others_hi = self._held_box
        k = self._run_of_env[env]
        run = self._runs[k]
        own = self._box(run, run.local[env], radii)
        lo, hi = np.minimum(own[:, 0], others_lo[k]), np.maximum(own[:, 1], others_hi[k])
        return np.maximum(hi - lo, 0.0)

    def _scan(self, run: _PartRun, e: int) -> tuple[str, int] | None:
        for path, xyz in self._of(run).items():
            bad = ~np.isfinite(xyz[e])
            if bad.any():
                return path, int(np.argwhere(bad)[0][0])
        return None

    def first_nonfinite(self, env: int) -> tuple[str, int] | None:
        """(body, sample) of the first non-finite position in plan environment ``env``, or None:
        its own part in its environment, then the held parts (the same in every environment)."""
        k = self._run_of_env[env]
        own = self._scan(self._runs[k], self._runs[k].local[env])
        if own is not None:
            return own
        if self._held_bad is None:
            self._held_bad = [self._scan(run, run.env(-1)) for run in self._runs]
        return next((b for i, b in enumerate(self._held_bad) if i != k and b is not None), None)
