"""Model of the mimic solver: static, built once from a stage (``state.py``: State and Control;
``packing.py``: its device structs).

DOF order (``layout.DofLayout``, ``Model.layout``: each link's ``q_start`` / ``qd_start``):
every revolute/prismatic joint first, in topological order (``joint_paths``), then each
multi-DOF link in link order: a floating base's six velocity DOFs (its angular velocity, then
the linear velocity of the base frame's origin, both in world axes) and seven coordinates
(position in m, orientation quaternion x, y, z, w); a spherical joint's three (angular
velocity in its child's joint frame) and four (the quaternion of the child's joint frame in
the parent's). ``dof_index(path)`` of a 1-DOF joint is valid for ``joint_q``, ``joint_qd``
and every control array alike. A continuous joint (revolute, no limits) keeps its angle in
[-pi, pi) and its whole turns in ``joint_turns``: the angle stays precise however far it
turns, and relations, drives and position errors use the unwrapped angle.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import warp as wp
from pxr import Usd

from ..schema import read_relations
from . import packing
from .devices import resolve_device
from .errors import MimicInputError, MimicParticipantError
from .kernels import PRECISIONS, kernels
from .kernels.contact_rows import active_rows, active_size, block_size, path_size
from .kernels.dynamics import F_CONT, F_DSAT, F_FRICTION, F_LOWER, F_UPPER, F_VMAX, NO_CAP
from .kernels.structs import FLOAT_FREE, FLOAT_RESTORED, NO_FLOAT
from .layout import DofLayout
from .loops import LoopSpace
from .projection import SOFT_ROW, STATUS, Projection, RelationRow
from .sparsity import reduced_sparsity
from .stage_reader import FREE, REVOLUTE, SPHERICAL, LinkSpec, StageSpec, mat_to_quat_xyzw, read_stage
from .state import Control, State
from .workspace import Dims, guards_requested
from .workspace import layout as workspace_layout

if TYPE_CHECKING:  # the collision package loads when a model has colliders (its kernels cost an import)
    from .collision.shapes import CollisionSpec

#: contacts that get rows, per environment and collider, unless ``contact_capacity`` is given
CONTACTS_PER_SHAPE = 4

#: How many columns' responses the joint rows keep per step (each k values; more are recomputed).
_RESPONSE_SLOTS = 16
#: Above this many composite-pass pairs per DOF (the tree's mean depth), M x is formed in O(n).
_PAIRS_PER_DOF = 8

#: The options each ``Solver`` holds for itself (its keyword arguments and ``set_options``'s;
#: the first four were attributes of the shared Model in 0.1).
SOLVER_OPTIONS = (
    "erp",
    "iterations",
    "contact_iterations",
    "coupling_every_step",
    "drive_discretisation",
    "max_speed",
)

#: Build-time loop analysis tolerances per precision: (relative rank, closure error in m or rad).
_LOOP_TOL = {"float32": (1e-5, 2e-6), "float64": (1e-10, 1e-11)}


class Model:
    """Articulation trees of a stage, their joints' limits and drives, loop closures and the
    mimic relations, in float32 or float64 (``precision``)."""

    def __init__(
        self,
        spec: StageSpec,
        num_envs: int = 1,
        device: str | None = None,
        precision: str = "float32",
        collision: CollisionSpec | None = None,
        contact_capacity: int | None = None,
    ):
        if precision not in PRECISIONS:
            raise MimicInputError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
        self.precision = precision
        self.spec = spec
        self.num_envs = int(num_envs)
        self.device = resolve_device(device)
        self.links: list[LinkSpec] = spec.links
        self.warnings: list[str] = list(spec.warnings)
        self.gravity = np.array(spec.gravity, float)
        self.joints = [lk.joint for lk in self.links if lk.joint is not None]
        self.joint_paths: list[str] = [j.path for j in self.joints]
        self.joint_kind: list[str] = [j.kind for j in self.joints]
        self._index = {p: i for i, p in enumerate(self.joint_paths)}
        n1 = len(self.joints)
        self.base_bodies = [lk.body for lk in self.links if lk.jtype == FREE]
        #: each link's first coordinate and DOF (``joint_q_start`` / ``joint_qd_start``)
        self.layout = DofLayout.of([lk.jtype for lk in self.links])
        self.dof_count = self.layout.dof_count
        self.coord_count = self.layout.coord_count
        self.closures = list(spec.closures)
        self.closure_paths: list[str] = [c.path for c in self.closures]
        self.loop_row_count = sum(c.rows for c in self.closures)
        # SI joint properties, editable before or between steps (call ``sync()`` after editing arrays)
        self.lower = np.array([j.lower for j in self.joints], float)
        self.upper = np.array([j.upper for j in self.joints], float)
        self.max_velocity = np.array([j.max_velocity for j in self.joints], float)
        self.friction = np.array([j.friction for j in self.joints], float)
        self.armature = np.array([j.armature for j in self.joints], float)
        self.damping = np.zeros(n1)
        self.stiffness = np.array([j.stiffness for j in self.joints], float)
        self.drive_damping = np.array([j.damping for j in self.joints], float)
        self.max_force = np.array([j.max_force for j in self.joints], float)
        self.has_drive = np.array([j.has_drive for j in self.joints], bool)
        self.drive_target_pos = np.array([j.target_pos for j in self.joints], float)
        self.drive_target_vel = np.array([j.target_vel for j in self.joints], float)
        #: contact models: the colliders against the links (``collision.CollisionModel``)
        self.collision = None
        #: a sentinel entry after each work-space field, checked after every solver call
        #: (``workspace.py``; MIMIC_EXT_DEBUG_WORKSPACE=1 turns it on; set it, then ``sync()``)
        self.workspace_guards = guards_requested()
        #: the work space keeps the mass-only factor for exact drives (set by the first solver that
        #: asks for them; a model whose solvers all use the implicit drive does not carry it)
        self.mass_factor_kept = False
        if collision is not None:
            n_shapes = len(collision.shapes)
            cap = int(contact_capacity) if contact_capacity is not None else max(16, CONTACTS_PER_SHAPE * n_shapes)
            self.contact_capacity = cap
            from .collision.frames import FrameLayout
            from .collision.pipeline import CollisionModel

            # detection keeps its own (larger) buffer: speculative pairs that get no rows must
            # not crowd out the ones that do
            self.collision = CollisionModel(
                collision,
                FrameLayout.from_model(self),
                num_envs=self.num_envs,
                device=self.device,
                capacity=max(cap, 2 * CONTACTS_PER_SHAPE * n_shapes),
            )
            self.warnings += [w for w in collision.warnings if w not in self.warnings]
            if self.collision.live_pairs == 0:  # nothing can touch: the plain kernels, no detection
                self.collision = None
                self.warnings.append(
                    f"contacts: none of the {n_shapes} collider(s) can touch another (same body, "
                    f"filtered pairs, collision groups or self-collision off), so the step "
                    f"simulates no contacts"
                )
        self.kernels = kernels(
            precision, contacts=self.collision is not None, **kernel_features(self.links, self.closures)
        )
        self.dtype = self.kernels.T
        self._relation_count = 0
        self.data = None
        self.version = 0
        self.loop_space = self._loop_space() if self.closures else None
        self.projection = Projection(self.dof_count, loops=self.loop_space)

    def __getattr__(self, name: str):
        if name in SOLVER_OPTIONS:  # the 0.1 attributes, now each solver's own
            raise AttributeError(
                f"Model.{name} is a solver option: give it to the solver, "
                f"Solver(model, {name}=...), or set solver.set_options({name}=...); a Model "
                f"is shared by its solvers and holds none of their options"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value) -> None:
        if name in SOLVER_OPTIONS:
            self.__getattr__(name)
        object.__setattr__(self, name, value)

    # ---- metadata -------------------------------------------------------------------------
    def dof_index(self, path: str) -> int:
        try:
            return self._index[str(path)]
        except KeyError:
            raise MimicParticipantError(f"{path} is not a revolute or prismatic joint of this model") from None

    def limits(self, path: str) -> tuple[float, float]:
        i = self.dof_index(path)
        return float(self.lower[i]), float(self.upper[i])

    def continuous(self) -> np.ndarray:
        """Per 1-DOF joint: True for a continuous joint (revolute without limits), whose angle wraps."""
        return (
            np.array([lk.jtype == REVOLUTE for lk in self.links if lk.joint is not None], bool)
            & ~np.isfinite(self.lower)
            & ~np.isfinite(self.upper)
        )

    def drive(self, path: str) -> dict:
        i = self.dof_index(path)
        return {
            "stiffness": float(self.stiffness[i]),
            "damping": float(self.drive_damping[i]),
            "max_force": float(self.max_force[i]),
            "enabled": bool(self.has_drive[i]),
            "target_pos": float(self.drive_target_pos[i]),
            "target_vel": float(self.drive_target_vel[i]),
        }

    def set_drive(
        self,
        path: str,
        stiffness: float,
        damping: float,
        max_force: float = math.inf,
        target_pos: float | None = None,
        target_vel: float | None = None,
    ) -> None:
        """Add or override the PD drive of one joint (SI: N m/rad or N/m, N m s/rad or N s/m)."""
        i = self.dof_index(path)
        for name, value, inf_ok in (
            ("stiffness", stiffness, False),
            ("damping", damping, False),
            ("max_force", max_force, True),
        ):
            v = float(value)
            if math.isnan(v) or v < 0 or (math.isinf(v) and not inf_ok):
                raise MimicInputError(f"{path}: drive {name} {v} must be a number >= 0")
        self.stiffness[i], self.drive_damping[i], self.max_force[i] = stiffness, damping, max_force
        self.has_drive[i] = True
        if target_pos is not None:
            self.drive_target_pos[i] = target_pos
        if target_vel is not None:
            self.drive_target_vel[i] = target_vel
        if self.data is not None:
            self.sync()

    def unwrapped_q(self, state: State) -> np.ndarray:
        """``joint_q`` (numpy, float64) with every continuous joint's whole turns added back."""
        q = state.joint_q.numpy().astype(np.float64)
        if state.joint_turns is not None and self.joints:
            n1 = len(self.joints)
            q[:, :n1] += 2.0 * math.pi * state.joint_turns.numpy()[:, :n1]
        return q

    # ---- relations ------------------------------------------------------------------------
    def _participant(self, path: str, role: str) -> int:
        if path in self._index:
            return self._index[path]
        kind = self.spec.joint_kinds.get(str(path))
        if kind is None and str(path) in self.base_bodies:
            kind = "floating base"
        if kind is None:
            raise MimicParticipantError(f"mimic {role} {path} is not a joint of {self.spec.source}")
        if path in self.spec.excluded:
            raise MimicParticipantError(
                f"mimic {role} {path} is excluded from the articulation (a loop "
                f"closure); only tree joints can take part"
            )
        if path in self.spec.unmoved:
            raise MimicParticipantError(
                f"mimic {role} {path} moves no body: it {self.spec.unmoved[path]}; "
                f"connect it to the bodies it should move"
            )
        raise MimicParticipantError(
            f"mimic {role} {path} is a {kind} joint; only revolute and prismatic joints can take part"
        )

    def make_row(
        self,
        follower: str,
        leader: str | None,
        multiplier: float,
        offset: float,
        natural_frequency: float = 0.0,
        damping_ratio: float = 0.0,
        label: str | None = None,
    ) -> RelationRow:
        follower = str(follower)
        if leader is None:
            raise MimicParticipantError(f"mimic relation on {follower} has no reference joint")
        leader = str(leader)
        if follower == leader:
            raise MimicParticipantError(f"{follower}: a joint cannot follow itself")
        if not (math.isfinite(multiplier) and math.isfinite(offset)) or multiplier == 0.0:
            raise MimicParticipantError(
                f"mimic relation {follower} -> {leader}: multiplier must be finite "
                f"and nonzero, offset finite (got {multiplier}, {offset})"
            )
        if (
            not (math.isfinite(natural_frequency) and math.isfinite(damping_ratio))
            or natural_frequency < 0
            or damping_ratio < 0
        ):
            raise MimicParticipantError(
                f"mimic relation {follower} -> {leader}: naturalFrequency and dampingRatio "
                f"must be finite and >= 0 (got {natural_frequency}, {damping_ratio})"
            )
        fi = self._participant(follower, "follower")
        li = self._participant(leader, "reference joint")
        self._relation_count += 1
        key = label or f"{follower} -> {leader}"
        if key in self._row_keys():
            key = f"{key} #{self._relation_count}"
        return RelationRow(
            key=key,
            follower=follower,
            leader=leader,
            fi=fi,
            li=li,
            multiplier=float(multiplier),
            offset=float(offset),
            natural_frequency=float(natural_frequency),
            damping_ratio=float(damping_ratio),
        )

    def _row_keys(self) -> set[str]:
        """The keys of the projection's rows (kept up to date as rows are appended; rebuilt for a
        new projection), so that naming a row is not a scan of every row."""
        rows = self.projection.rows
        seen = getattr(self, "_keys", None)
        if seen is None or seen[0] is not rows or seen[1] > len(rows):
            seen = (rows, 0, set[str]())
        seen[2].update(r.key for r in rows[seen[1] :])
        self._keys: tuple[list, int, set[str]] = (rows, len(rows), seen[2])
        return seen[2]

    def add_relation(self, row: RelationRow) -> str:
        """Add a relation (atomically: a conflict leaves the model unchanged)."""
        trial = Projection(self.dof_count, self.projection.rows + [row], loops=self.loop_space)
        self.projection = trial
        if self.data is not None:
            self.sync()
        return STATUS[trial.kinds[-1]]

    def relations(self) -> list[dict]:
        return [
            {
                "key": r.key,
                "follower": r.follower,
                "leader": r.leader,
                "multiplier": r.multiplier,
                "offset": r.offset,
                "status": STATUS[k],
            }
            for r, k in zip(self.projection.rows, self.projection.kinds)
        ]

    # ---- arrays ---------------------------------------------------------------------------
    def _initial_q(self) -> np.ndarray:
        q = np.zeros(self.coord_count)
        for i, link in enumerate(self.links):
            qs = self.layout.q_start[i]
            if link.joint is not None:
                q[qs] = link.joint.q0
            elif link.jtype == FREE:
                q[qs : qs + 3] = link.pose0[:3, 3]
                q[qs + 3 : qs + 7] = mat_to_quat_xyzw(link.pose0[:3, :3])
            elif link.jtype == SPHERICAL:  # pose0: the joint's initial rotation
                q[qs : qs + 4] = mat_to_quat_xyzw(link.pose0[:3, :3])
        return q

    def _rows(self, a: np.ndarray, dtype=None) -> wp.array:
        return wp.array(np.tile(a, (self.num_envs, 1)), dtype=dtype or self.dtype, device=self.device)

    def state(self) -> State:
        """The stage's initial state (joint state positions/velocities, base poses) in every environment."""
        q, u, turns = self._initial_state()
        return State(joint_q=self._rows(q), joint_qd=self._rows(u), joint_turns=self._rows(turns, wp.int32))

    def reset_envs(self, state: State, envs) -> None:
        """Put environments ``envs`` (indices) of ``state`` back at the stage's initial state: positions,
        velocities and the continuous joints' whole turns together (an environment whose state went
        NaN left its turns as they were; resetting q and qd alone would keep a stale turn count, so
        its relations and drives would act on the wrong unwrapped angle). The other environments
        are untouched; ``Solver.nonfinite_envs()`` reports the next step's state."""
        idx = np.asarray(envs, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < -self.num_envs or idx.max() >= self.num_envs):
            raise MimicInputError(
                f"Model.reset_envs: environments {idx.tolist()} are not all in 0 .. {self.num_envs - 1}"
            )
        q0, u0, t0 = self._initial_state()
        if state.joint_turns is None:
            state.joint_turns = wp.zeros((self.num_envs, t0.size), dtype=wp.int32, device=self.device)
        for arr, row in ((state.joint_q, q0), (state.joint_qd, u0), (state.joint_turns, t0)):
            a = arr.numpy()
            a[idx] = row
            arr.assign(a)

    def _initial_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, qd, turns) of one environment at the stage's initial state."""
        q = self._initial_q()
        u = np.zeros(self.dof_count)
        for i, link in enumerate(self.links):
            us = self.layout.qd_start[i]
            if link.joint is not None:
                u[us] = link.joint.u0
            elif link.jtype == FREE and link.base_velocity is not None:
                u[us : us + 6] = link.base_velocity
        turns = np.zeros(max(len(self.joints), 1), np.int32)
        cont = self.continuous()
        if cont.any():  # a stage's initial angle past +-pi: the angle wrapped, the turns kept
            n1 = len(self.joints)
            k = np.where(cont, np.floor((q[:n1] + math.pi) / (2 * math.pi)), 0.0)
            q[:n1] -= 2 * math.pi * k
            turns[:n1] = k.astype(np.int32)
        return q, u, turns

    def control(self) -> Control:
        """Drive targets from the stage's drives, zero efforts."""
        tp = np.zeros(self.dof_count)
        tv = np.zeros(self.dof_count)
        n1 = len(self.joints)
        tp[:n1], tv[:n1] = self.drive_target_pos, self.drive_target_vel
        return Control(
            joint_target_q=self._rows(tp), joint_target_qd=self._rows(tv), joint_f=self._rows(np.zeros(self.dof_count))
        )

    def sync(self) -> None:
        """Upload the model (joint properties, relations) to the device; arrays keep their identity.
        Nothing changed since the last upload: nothing is replaced, so the solvers sharing this
        model keep their state between steps (warm starts, caches) as if it had not been called."""
        data, size = self._build_data(self.projection)
        if self.data is not None and size == self.work_size and _same_struct(self.data, data):
            return
        self.data, self.work_size = data, size
        self.version += 1

    # ---- loop closures --------------------------------------------------------------------
    def _loop_space(self) -> LoopSpace:
        """The loops' build-time analysis, on the kernel's own loop rows (one environment)."""
        K = self.kernels
        md, size = self._build_data(Projection(self.dof_count))
        sc = _scratch(K, self, 1, size)
        n, m = self.dof_count, self.loop_row_count
        J = wp.zeros((1, m * n), dtype=self.dtype, device=self.device)
        err = wp.zeros((1, m), dtype=self.dtype, device=self.device)

        def evaluate(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            qa: wp.array = wp.array(np.asarray(q, float)[None], dtype=self.dtype, device=self.device)
            wp.launch(K.loop_eval_kernel, dim=1, inputs=[md, sc, qa, J, err], device=self.device)
            return err.numpy()[0].astype(float), J.numpy()[0].reshape(m, n).astype(float)

        owners = [c.path for c in self.closures for _ in range(c.rows)]
        rank_tol, close_tol = _LOOP_TOL[self.precision]
        space = LoopSpace(evaluate, self._initial_q(), len(self.joints), owners, rank_tol, close_tol)
        if not space.closed:
            e0, _ = evaluate(space.q_closed)
            self.warnings.append(
                f"the loop closures {', '.join(self.closure_paths)} do not close near the stage's "
                f"initial state (largest error {np.abs(e0).max():.3g} m or rad); relations are "
                f"checked against them there anyway"
            )
        return space

    # ---- device data ----------------------------------------------------------------------
    def _build_data(self, projection: Projection):
        """The device model (``ModelData``, packed struct by struct: ``packing.py``) and the size
        of one environment's work space, for the relations of ``projection``."""
        K = self.kernels
        d = self.device
        links = self.links
        md = K.ModelData()
        n1 = len(self.joints)
        md.n_links, md.n_u, md.n1 = len(links), self.dof_count, n1
        u_of, nd_of = list(self.layout.qd_start), list(self.layout.dofs)

        def arr(a, t=None) -> wp.array:
            return wp.array(np.asarray(a), dtype=t or self.dtype, device=d)

        to_link = packing.motion_frames(links)  # link-frame coordinates -> joint-motion frame
        data = packing.pack_links(K, links, self.layout, to_link)
        md.links = wp.array(data or [K.LinkData()], dtype=K.LinkData, device=d)
        cols, gains, betas, roots, k = projection.columns()
        # the reduced system's sparsity: columns renumbered into groups, leaves first
        soft_pairs = [(r.fi, r.li) for r, kd in zip(projection.rows, projection.kinds) if kd == SOFT_ROW]
        sp = reduced_sparsity(
            [lk.parent for lk in links],
            u_of,
            nd_of,
            cols,
            gains,
            k,
            soft_pairs,
            [(c.link_a, c.link_b) for c in self.closures],
        )
        cols = [sp.new_col[c] for c in cols]
        self.sparsity = sp
        flags = packing.joint_flags(self, cols, k, sp, soft_pairs, u_of)
        md.k = k
        md.dof_col, md.dof_gain = arr(cols, int), arr(gains)
        md.nnz = sp.nnz
        # M x from the composite pass's pairs on a shallow tree, in O(n) from the composite
        # inertias on a deep one (the pairs are O(n d); measured: pairs win up to a mean depth of ~8)
        md.tree_mass = int(len(sp.pairs) > _PAIRS_PER_DOF * max(self.dof_count, 1))
        # a deep tree's composite pass takes each run of one column's ancestors as one product
        pairs, pslot, pcoef = (
            (sp.runs, sp.run_slot, sp.run_coef) if md.tree_mass else (sp.pairs, sp.pair_slot, sp.pair_coef)
        )
        md.n_pairs = len(pairs)
        md.pairs = wp.array(
            pairs.astype(np.int32) if len(pairs) else np.zeros((1, 3), np.int32), dtype=wp.vec3i, device=d
        )
        md.dof_up = arr(sp.dof_up if len(sp.dof_up) else [-1], int)
        md.lp = packing.pack_factor_pattern(K, sp, k, arr)
        md.link_parent = arr([lk.parent for lk in links] or [0], int)
        md.link_us = arr(u_of or [0], int)
        md.link_nd = arr(nd_of or [0], int)
        caps = packing.link_caps(links)
        md.link_cap = arr(caps)
        md.pair_slot = arr(pslot if len(pairs) else [0], int)
        md.pair_coef = arr(pcoef if len(pairs) else [0.0])
        md.grp_lo, md.grp_hi = arr(sp.group_lo if k else [0], int), arr(sp.group_hi if k else [0], int)
        joints, cors, col_rows = packing.pack_joints(K, self, flags, cols, gains, betas, roots, k)
        md.joints = wp.array(joints or [K.JointData()], dtype=K.JointData, device=d)
        md.cors = wp.array(cors or [K.Correction()], dtype=K.Correction, device=d)
        md.n_cor = len(cors)
        # columns whose response the joint rows keep for the step once asked for (O(k) each)
        md.n_rslots = int(min(int(col_rows.sum()), _RESPONSE_SLOTS))
        rows, kinds = projection.rows, projection.kinds
        md.n_rel = len(rows)
        md.n_soft = sum(1 for kd in kinds if kd == SOFT_ROW)
        rels = packing.pack_relations(K, projection, flags, cols, sp, n1)
        md.rels = wp.array(rels or [K.RelData()], dtype=K.RelData, device=d)
        steps, terms = packing.pack_eliminations(K, projection)
        md.n_elim = len(steps)
        md.elims = wp.array(steps or [K.ElimStep()], dtype=K.ElimStep, device=d)
        md.terms = wp.array(terms or [K.ElimTerm()], dtype=K.ElimTerm, device=d)
        loops, dirs, row0 = packing.pack_loops(K, self.closures, to_link)
        md.n_loops, md.m = len(loops), row0
        # the loops' rows, their responses and their Schur complement live in the groups the
        # closures join (H^-1 is block diagonal by group): the loop work skips the other columns
        # (a free body's, a second robot's), so it does not grow with them
        spans = [
            (sp.group_lo[cols[u_of[la]]], sp.group_hi[cols[u_of[la]]])
            for c in self.closures
            for la in (c.link_a, c.link_b)
            if la >= 0
        ]
        md.loop_c0 = int(min((a for a, _ in spans), default=0))
        md.loop_c1 = int(max((b for _, b in spans), default=0))
        md.loops = wp.array(loops or [K.LoopData()], dtype=K.LoopData, device=d)
        md.loop_dir = arr(dirs or [0], int)
        cones = packing.pack_cones(K, links, self.closures)
        md.n_cones = len(cones)
        md.cones = wp.array(cones or [K.ConeData()], dtype=K.ConeData, device=d)
        # one row of per-environment scalar work space, laid out by its declared table (workspace.py)
        n, m = self.dof_count, row0
        md.has_rows = int(
            bool((flags & (F_LOWER | F_UPPER | F_VMAX | F_FRICTION | F_DSAT)).any()) or K.contacts or md.n_cones > 0
        )
        dims = Dims(
            n=n,
            n1=n1,
            links=len(links),
            midpoint=m > 0,  # kernels.dynamics.midpoint_bias runs (every loop model)
            k=k,
            m=m,
            nnz=sp.nnz,
            pairs=0 if md.tree_mass else len(sp.pairs),
            slots=md.n_rslots,
            rel_rows=max(len(rows), 1),
            cones=md.n_cones,
            loop_cones=sum(cd.loop >= 0 for cd in cones),
            contacts=bool(K.contacts),
            # the mass-only factor HM: compliant relations' inertia, and exact drives once a
            # solver on this model asked for them (``Solver(drive_discretisation='exact')``)
            soft=md.n_soft > 0 or (self.mass_factor_kept and bool(self.has_drive.any())),
        )
        if K.contacts:  # contact rows (``kernels.contact_rows``) and their generalized impulse
            cap = self.contact_capacity
            md.c_cap, md.c_block = cap, block_size(n, k)  # c_iter: the solver's option
            md.c_bmax = active_rows(cap, n1)
            dims = replace(
                dims,
                contact_cap=cap,
                contact_block=md.c_block,
                active_size=active_size(cap, n1),
                path_size=path_size(k),
            )
        ws = workspace_layout(dims, guards=self.workspace_guards)
        for name, (offset, _size) in ws.fields.items():
            setattr(md, "o_" + name, offset)
        self.workspace = ws
        # whether floating bases step, and whether one's momentum is restored (kernels.structs)
        md.float_bases = (int(FLOAT_RESTORED) if K.momentum else int(FLOAT_FREE)) if self.base_bodies else int(NO_FLOAT)
        # the impulses are the residual of the step's own equations (rows.coupling_impulses), read
        # from its work space; a loop projection, a momentum restoration or the contact state
        # rewrite some of it after the velocity solve, so there they are computed in the step
        # (a solver asked for them every step sets it in its own copy: ``Solver.coupling_every_step``)
        md.coupling_in_step = int(bool(row0 > 0 or md.float_bases or K.contacts))
        md.has_cont = int(bool((flags & F_CONT).any()))
        # the solver options (erp, iterations, c_iter, drive_exact) are not the model's: each Solver writes its
        # own into its copy of this struct (``Solver._data``); these are placeholders
        md.iterations, md.erp, md.drive_exact = 0, 0.0, 0
        md.max_speed = math.inf  # the solver sets its own (Solver(max_speed=...))
        md.rank_tol = float(K.rank_tol)
        md.gravity = K.vec3(*self.gravity)
        return md, ws.size


def kernel_features(links: Iterable[LinkSpec], closures: Iterable = ()) -> dict[str, bool]:
    """The optional code a model's kernels compile in (``kernels(balls=, caps=, momentum=)``):
    spherical joints' where a link has one or a loop-closing one has a cone (its row is a cone
    row), velocity caps where a link has one authored, momentum restoration where a free tree's
    momentum is restored (``LinkSpec.restore``)."""
    links = list(links)
    return {
        "balls": any(lk.jtype == SPHERICAL for lk in links) or any(c.cone < math.pi for c in closures),
        "caps": min(packing.link_caps(links)) < NO_CAP,
        "momentum": any(lk.jtype == FREE and lk.restore for lk in links),
    }


def _same_struct(a, b) -> bool:
    """Two Warp struct instances of one type hold the same values (arrays compared by content)."""
    for name in a._cls.vars:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, wp.array):
            if (
                not isinstance(y, wp.array)
                or x.shape != y.shape
                or x.dtype != y.dtype
                or x.numpy().tobytes() != y.numpy().tobytes()
            ):
                return False
        elif hasattr(x, "_cls"):  # a nested struct
            if not _same_struct(x, y):
                return False
        elif np.asarray(x).tobytes() != np.asarray(y).tobytes():
            return False
    return True


def _scratch(K, model: Model, num_envs: int, work_size: int, n_rel: int = 1, deep: bool = True):
    """Per-environment scratch arrays of the step for ``num_envs`` environments; ``deep``: the
    model's tree is deep (``ModelData.tree_mass``), whose composite pass keeps summed axes ``Q``
    per DOF (a shallow tree's never reads them: one column)."""
    d = model.device
    n, L = model.dof_count, max(len(model.links), 1)
    z = lambda cols, t=None: wp.zeros((num_envs, max(cols, 1)), dtype=t or model.dtype, device=d)  # noqa: E731
    sc = K.Scratch()
    sc.R, sc.pos = z(L, K.mat33), z(L, K.vec3)
    sc.V, sc.Acc, sc.G = (z(L, K.spatial) for _ in range(3))
    sc.Ic_m, sc.Ic_h, sc.Ic_I = z(L), z(L, K.vec3), z(L, K.mat33)
    unused = lambda t: wp.zeros((1, 1), dtype=t, device=d)  # noqa: E731  (a part this model's step never runs)
    sc.S, sc.Q = z(n, K.spatial), (z(n, K.spatial) if deep else unused(K.spatial))
    sc.ws = z(work_size)
    # float64 momentum bookkeeping of floating bases
    f64 = z if model.base_bodies else (lambda cols, t: unused(t))
    sc.Rd, sc.pd = f64(L, wp.mat33d), f64(L, wp.vec3d)
    sc.Vd, sc.Pd, sc.Td, sc.Pm = (f64(L, wp.spatial_vectord) for _ in range(4))
    sc.Imd, sc.Ihd, sc.IId = f64(L, wp.float64), f64(L, wp.vec3d), f64(L, wp.mat33d)
    sc.cm = f64(L, wp.vec3d)
    sc.rel_imp, sc.rel_err = z(n_rel), z(n_rel)
    sc.nonfinite = wp.zeros(num_envs, dtype=wp.int32, device=d)
    if K.contacts:
        sc.cx = _contact_ctx(K, model, num_envs)
    return sc


def _contact_ctx(K, model: Model, num_envs: int):
    """A contact model's detection arrays (the collision model's, for its environments) and
    the per-environment contact state of the step."""
    cm, d = model.collision, model.device
    assert cm is not None, "a contact context is made only for a model with contacts"
    if num_envs > cm.num_envs:
        raise ValueError(f"{num_envs} environments, but the collision model has {cm.num_envs}")
    C, R, L = cm.capacity, model.contact_capacity, max(len(model.links), 1)
    cx = K.ContactCtx()
    cx.cd, cx.csc, cx.buf = cm.data, cm.scratch, cm.buffer
    cx.frame_R = wp.zeros((num_envs, L), dtype=wp.mat33, device=d)
    cx.frame_p = wp.zeros((num_envs, L), dtype=wp.vec3, device=d)
    cx.frame_move = wp.zeros((num_envs, L), dtype=wp.vec2, device=d)
    cx.nc, cx.prev_n = wp.zeros(num_envs, dtype=int, device=d), wp.zeros(num_envs, dtype=int, device=d)
    cx.cmap = wp.zeros((num_envs, R), dtype=int, device=d)
    cx.imp, cx.prev_imp = (
        wp.zeros((num_envs, C), dtype=wp.vec3, device=d),
        wp.zeros((num_envs, R), dtype=wp.vec3, device=d),
    )
    cx.prev_point = wp.zeros((num_envs, R), dtype=wp.vec3, device=d)
    cx.prev_shapes = wp.zeros((num_envs, R), dtype=wp.vec2i, device=d)
    cx.prev_vin = wp.zeros((num_envs, R), dtype=wp.float32, device=d)
    return cx


def _relations_from_stage(model: Model, stage: Usd.Stage) -> None:
    for rel in read_relations(stage, strict=True):  # a wrongly typed relation is refused, naming it
        if not rel.enabled:
            model.warnings.append(f"{rel.follower}: disabled Newton mimic relation skipped")
            continue
        label = f"{rel.follower} [{rel.instance or rel.schema}] -> {rel.leader}"
        row = model.make_row(
            rel.follower, rel.leader, rel.multiplier, rel.offset, rel.natural_frequency, rel.damping_ratio, label=label
        )
        model.projection.add(row)


def _has_colliders(stage: Usd.Stage) -> bool:
    """Whether any prim carries an enabled ``CollisionAPI``."""
    from pxr import UsdPhysics

    for prim in stage.Traverse(Usd.TraverseInstanceProxies(Usd.PrimDefaultPredicate)):
        if (
            prim.HasAPI(UsdPhysics.CollisionAPI)
            and UsdPhysics.CollisionAPI(prim).GetCollisionEnabledAttr().Get() is not False
        ):
            return True
    return False


def _read(
    stage: Usd.Stage, fix_base: bool, contacts: bool, ground_plane: float | None = None
) -> tuple[StageSpec, CollisionSpec | None]:
    """The stage as the solver reads it: its articulations (free rigid bodies as floating links
    where ``contacts``) and, with contacts, its colliders (None where it has none)."""
    spec = read_stage(stage, fix_base=fix_base, free_bodies=contacts)
    if not contacts:
        return spec, None
    from .collision.usd_colliders import read_colliders

    cspec = read_colliders(
        stage, dynamic_bodies=[b for lk in spec.links for b, _ in lk.bodies], ground_plane=ground_plane
    )
    return spec, cspec if cspec.shapes else None


def build_model(
    stage: Usd.Stage,
    num_envs: int = 1,
    device: str | None = None,
    fix_base: bool = False,
    relations: Iterable | None = None,
    precision: str = "float32",
    contacts: bool | None = None,
    ground_plane: float | None = None,
    contact_capacity: int | None = None,
) -> Model:
    """Model of every articulation tree on ``stage`` with its loop closures and mimic relations.

    ``device``: the Warp device of its arrays and kernels ("cpu", "cuda:0"); None is
    ``default_device()``, "cpu" unless ``set_default_device`` moved it.
    ``fix_base`` welds floating roots to the world where they stand (grippers on a bench).
    ``relations`` (MimicRelation objects) replaces the stage's relations when given.
    ``precision`` "float32" (default) or "float64": the scalar type of every array and kernel.
    ``contacts``: simulate contacts between the stage's colliders (None: when it has any, or
    when ``ground_plane`` is given); free rigid bodies then become floating links.
    ``ground_plane``: add an infinite plane at this height (m) along the up axis.
    ``contact_capacity``: contacts per environment that get rows (default 4 per collider).
    Errors the user can fix (contradicting relations, unsupported joints, unusable physics
    values) raise ``MimicInputError`` subclasses naming the prims.
    """
    from ..warp_runtime import init_warp

    init_warp()  # quiet, as the CLI: no Warp banner, no CUDA-driver warning where none was asked for
    if precision not in PRECISIONS:
        raise MimicInputError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    if contacts is None:
        contacts = ground_plane is not None or _has_colliders(stage)
    spec, cspec = _read(stage, fix_base, bool(contacts), ground_plane)
    return model_from_spec(
        spec, relations, num_envs, device, precision, stage=stage, collision=cspec, contact_capacity=contact_capacity
    )


def contact_model(
    stage: Usd.Stage,
    fix_base: bool = False,
    relations: Iterable | None = None,
    num_envs: int = 1,
    device: str | None = None,
) -> Model | None:
    """The stage's model when two of its colliders can touch (contacts join what would
    otherwise be independent parts), else None (cheap without colliders). Whether any pair
    can touch is counted on the colliders as read (``collision.pair_filter``), before a model is
    built: ``build_model``'s reading, without the detection package's import or a model
    built only to be dropped (issue 43)."""
    if not _has_colliders(stage):
        return None
    from ..warp_runtime import init_warp
    from .collision.pair_filter import pair_filter

    init_warp()
    spec, cspec = _read(stage, fix_base, True)
    body_frame = {body: i for i, lk in enumerate(spec.links) for body, _ in lk.bodies}
    if cspec is None or pair_filter(cspec, body_frame, len(spec.links)).live_pairs() == 0:
        return None
    return model_from_spec(spec, relations, num_envs, device, stage=stage, collision=cspec)


def model_from_spec(
    spec: StageSpec,
    relations: Iterable | None,
    num_envs: int = 1,
    device: str | None = None,
    precision: str = "float32",
    stage: Usd.Stage | None = None,
    collision: CollisionSpec | None = None,
    contact_capacity: int | None = None,
    drives: Mapping[str, tuple] | None = None,
    upload: bool = True,
) -> Model:
    """``build_model`` on a stage already read (``read_stage``), or on a part of one
    (``solver.parts``); ``relations`` None reads them from ``stage``. ``drives``: joint path ->
    ``Model.set_drive``'s (stiffness, damping, max_force), applied before the one upload.
    ``upload`` False leaves the upload (``Model.sync``) to the ``Solver`` the model is given to,
    which makes its own: a model stepped at once is then uploaded once."""
    model = Model(
        spec,
        num_envs=num_envs,
        device=device,
        precision=precision,
        collision=collision,
        contact_capacity=contact_capacity,
    )
    for path, gains in (drives or {}).items():
        model.set_drive(path, *gains)
    if relations is None:
        _relations_from_stage(model, stage)
    else:
        for rel in relations:
            model.projection.add(
                model.make_row(
                    rel.follower, rel.leader, rel.multiplier, rel.offset, rel.natural_frequency, rel.damping_ratio
                )
            )
    if upload:
        model.sync()
    return model


__all__ = ["Control", "Model", "State", "build_model", "contact_model", "model_from_spec"]
