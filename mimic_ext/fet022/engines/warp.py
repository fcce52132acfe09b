"""The sweep on mimic_ext's own Warp articulation solver.

All swept joints of a stage run in one batched model (one environment each). The
temporary test drive goes through ``model.set_drive``, so the stage is only read.
Per step the cost is the solver step plus one small copy of the targets (uploaded a block
of steps at a time); positions are copied into a history buffer on the device and read
back once at the end; body positions for the bounding-box check come from the solver's
own forward kinematics (``solver.inspect.body_poses``) at the samples.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from typing import Sequence

import numpy as np

from ...errors import MimicInputError
from ...schema import joints
from ...schema.relation import MimicRelation
from .base import ReadRelation, Trace
from ..plan import SweepPlan


class WarpEngine:
    name = "warp"
    supported_kinds = (joints.REVOLUTE, joints.PRISMATIC)

    def __init__(self, device: str = "cpu", share_copies: bool = True):
        self.device = device
        self.share_copies = bool(share_copies)

    def versions(self) -> dict[str, str]:
        import warp as wp

        return {"warp": wp.config.version, "device": self.device}

    def simulate(self, stage, plan: SweepPlan, watch: Sequence[str], relations: Sequence[MimicRelation],
                 fix_base: bool = True) -> Trace:
        from ...warp_runtime import announce_cold_compile, init_warp

        init_warp()                     # quiet, without the CUDA-driver warning
        try:
            from ...solver import Solver
            from ...solver.model import build_model, contact_model, model_from_spec
            from ...solver.parts import copy_key, independent_parts, part_spec
            from ...solver.stage_reader import read_stage
        except ImportError as exc:   # the solver part is not installed in this checkout
            raise MimicInputError(f"the warp sweep engine needs mimic_ext.solver ({exc})") from None
        announce_cold_compile(self.device)

        trace = Trace()
        t0 = time.perf_counter()
        relations = list(relations)
        with warnings.catch_warnings():   # the model's notes are reported with the result instead
            warnings.simplefilter("ignore")
            whole = contact_model(stage, fix_base, relations, num_envs=max(len(plan.joints), 1), device=self.device)
            spec = whole.spec if whole is not None else read_stage(stage, fix_base=fix_base)
            split = None if whole is not None else independent_parts(spec, relations)
            if split is None:             # contacts may join any parts; or a relation on a joint no
                specs = [(spec, list(range(len(spec.links))))]   # link has: the whole model says why
            else:
                specs = [(part_spec(spec, links), links) for links in split]
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
        notes = list(spec.warnings)
        for k, (pspec, _) in enumerate(specs):
            envs = swept_in.get(k, []) + ([-1] if held else [])
            if not envs:
                continue
            rels = rels_of.get(k, [])
            swept = [e for e in envs if e >= 0]
            key = anchor = None
            if self.share_copies:
                order = {lk.joint.path: i for i, lk in enumerate(pspec.links) if lk.joint is not None}
                extra = tuple((order[plan.joints[e].path], round(plan.joints[e].lo, 12), round(plan.joints[e].hi, 12),
                               tuple(vars(plan.joints[e].drive).values())) for e in swept) + (held,)
                key, anchor = copy_key(pspec, rels, extra)
                if key in shared:            # a translated copy of a part already built: its joints move the same
                    runs.append(_PartRun.copy_of(shared[key], pspec, envs, swept, anchor))
                    continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if whole is not None and whole.num_envs == len(envs):   # the stage with its contacts
                    model = whole
                elif whole is not None:
                    model = build_model(stage, num_envs=len(envs), device=self.device, fix_base=fix_base,
                                        relations=rels)
                else:
                    model = model_from_spec(pspec, rels, num_envs=len(envs), device=self.device)
            notes.extend(getattr(model, "warnings", []))
            run = _PartRun(model, pspec, envs, swept, anchor)
            if key is not None and not model.warnings:      # a copy would not carry its own notes: build it
                shared[key] = run
            runs.append(run)
        trace.notes.extend(dict.fromkeys(notes))
        trace.relations = [ReadRelation(run.own(r["follower"]), run.own(r["leader"]), r["multiplier"], r["offset"],
                                        hard=r["status"] != "compliant", note="" if r["status"] == "active" else r["status"])
                           for run in runs for r in run.model.relations()]
        simulated = [run for run in runs if run.rep is None]
        for run in simulated:
            for env in run.swept:
                pj = plan.joints[env]
                if pj.drive.source == "test":
                    run.model.set_drive(pj.path, pj.drive.stiffness, pj.drive.damping, pj.drive.max_force)
        run_of = {path: run for run in runs for path in run.paths}
        located: dict[str, tuple[_PartRun, int]] = {}
        for path in dict.fromkeys([pj.path for pj in plan.joints] + list(watch)):
            try:
                run = run_of.get(path)
                if run is None:
                    if not runs:
                        raise MimicInputError(f"{path} is not a revolute or prismatic joint of this model")
                    runs[0].model.dof_index(path)        # raises, saying why
                located[path] = (run, run.col[path])
            except MimicInputError as exc:   # the solver's MimicParticipantError
                trace.missing[path] = f"not simulated by the warp solver ({exc})"
        swept_missing = [pj.path for pj in plan.joints if pj.path in trace.missing]
        if swept_missing:
            raise MimicInputError(f"swept joint(s) {', '.join(swept_missing)} are not degrees of freedom of the "
                                  f"warp model (only revolute and prismatic joints of an articulation are)")
        trace.timings["build_s"] = time.perf_counter() - t0

        t1 = time.perf_counter()
        bad_envs: dict[int, list[int]] = {}
        for run in simulated:
            run.own_q, bad_envs[id(run)] = _step_through(Solver(run.model), run.model, plan, run.envs)
        bad = [plan.joints[run.envs[i]].path if run.envs[i] >= 0 else f"(every joint held) {run.paths[0]}"
               for run in runs for i in bad_envs[id(run.rep or run)]]
        if bad:                          # NaN or inf in a state: an error, never a pass
            raise MimicInputError(f"the warp solver's state became NaN or infinite while sweeping {', '.join(bad)}")
        trace.timings["simulate_s"] = time.perf_counter() - t1
        trace.timings["steps"] = float(plan.total_steps)
        trace.timings["parts"] = float(len(runs))
        trace.timings["parts_simulated"] = float(len(simulated))
        n_samples = len(plan.sample_steps)
        for path, (run, i) in located.items():
            trace.positions[path] = _EnvRows(run, i, plan.num_envs)
        trace.body_samples = body_sample_indices(n_samples)
        trace.body_positions = _LazyBodyPositions(runs, plan.num_envs, trace.body_samples)
        return trace


class _PartRun:
    """One independent part of the stage, simulated in environments of its own: ``envs`` lists,
    per environment of its model, the plan's environment it stands for (-1: every swept joint
    held at the start of its range, as in any plan environment that sweeps another part).
    A translated copy of another part (``rep``) shares that part's model and results: its own
    joints are the model's columns in order, its bodies the model's, moved by ``shift``."""

    def __init__(self, model, part, envs: list[int], swept: list[int], anchor=None, rep: "_PartRun | None" = None):
        self.model, self.envs, self.swept, self.rep = model, envs, swept, rep
        self.local = {e: i for i, e in enumerate(envs)}
        self.paths = [lk.joint.path for lk in part.links if lk.joint is not None]
        self.col = {p: i for i, p in enumerate(self.paths)}
        self.bodies = [path for lk in part.links for path, _ in lk.bodies]
        self.anchor = anchor
        self.shift = np.zeros(3) if rep is None else np.asarray(anchor, float) - np.asarray(rep.anchor, float)
        self._names = None if rep is None else dict(zip(rep.paths, self.paths))
        self.own_q: np.ndarray | None = None         # (samples, environments, coordinates)

    @classmethod
    def copy_of(cls, rep: "_PartRun", part, envs: list[int], swept: list[int], anchor) -> "_PartRun":
        return cls(rep.model, part, envs, swept, anchor, rep)

    @property
    def q(self) -> np.ndarray:
        return self.rep.own_q if self.rep is not None else self.own_q

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


def _step_through(solver, model, plan: SweepPlan, envs: list[int]) -> tuple[np.ndarray, list[int]]:
    """Run the whole plan on one part's model (its environment ``i`` standing for the plan's
    ``envs[i]``) and return the recorded ``joint_q`` at the plan's samples, (samples,
    environments, coordinates), and the environments whose state became non-finite.

    The only place the warp engine steps: ``Solver.step_many`` takes a block of steps at a time
    in one launch per slice of environments, their targets from ``plan.target_block`` (only
    this part's environments and swept joints), positions recorded at the plan's samples.
    """
    n_q = model.coord_count
    base = model.control().joint_target_pos.numpy()            # (env, dof): the stage's own targets
    index = {pj.path: j for j, pj in enumerate(plan.joints)}
    mine = [index[p] for p in model.joint_paths if p in index]  # the swept joints of this part
    columns = [model.dof_index(plan.joints[j].path) for j in mine]
    sample_steps = np.asarray(plan.sample_steps, dtype=np.int64)
    q = np.empty((len(sample_steps), len(envs), n_q), dtype=np.float64)
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
            q[k:k + after.size] = history.numpy()
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
        self._values: dict[int, dict[str, np.ndarray]] = {}      # per run: path -> (run envs, samples, 3)
        self._held_box: tuple | None = None
        self._run_of_env = {e: k for k, run in enumerate(runs) for e in run.swept}
        self._held_bad: list | None = None          # per part: the held environment's first non-finite body

    def _of(self, run: _PartRun) -> dict[str, np.ndarray]:
        """This part's body path -> origins (its model's environments, samples, 3)."""
        key = id(run)
        if key not in self._values:
            if run.rep is not None:
                rep = self._of(run.rep)
                self._values[key] = {own: rep[path] + run.shift for own, path in zip(run.bodies, run.rep.bodies)}
                return self._values[key]
            from ...solver.inspect import body_poses

            out = {p: np.empty((len(run.envs), len(self._samples), 3)) for p in run.bodies}
            for e in range(len(run.envs)):
                for k, s in enumerate(self._samples):
                    for path, pose in body_poses(run.model, run.q[s, e]).items():
                        if path in out:
                            out[path][e, k] = pose[:3, 3]
            self._values[key] = out
        return self._values[key]

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
        pts = np.stack([vals[p][env] for p in vals], axis=1)                 # (samples, bodies, 3)
        r = np.array([radii.get(p, 0.0) for p in vals])[None, :, None]
        return np.stack([(pts - r).min(axis=1), (pts + r).max(axis=1)], axis=1)

    def extents(self, radii: dict[str, float], env: int) -> np.ndarray:
        """Box sides (samples, 3) of every body's sphere in plan environment ``env``."""
        if self._held_box is None:                  # the union of the held parts, leaving each one out
            held = [self._box(run, run.env(-1), radii) for run in self._runs]
            lo = np.stack([h[:, 0] for h in held])                           # (parts, samples, 3)
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
