"""Model (static, built once from a stage), State and Control of the mimic solver.

DOF order: every revolute/prismatic joint first, in topological order (``joint_paths``),
then six velocity DOFs per floating base (angular velocity, then the linear velocity of the
body point at the world origin, both in world axes). ``joint_q`` has the same columns for the
1-DOF joints, then per floating base its position (m) and orientation quaternion (x, y, z, w),
so ``dof_index(path)`` is valid for ``joint_q``, ``joint_qd`` and every control array alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import warp as wp
from pxr import Usd

from ..schema import read_relations
from . import kernels as K
from .errors import MimicParticipantError
from .projection import STATUS, Projection, RelationRow
from .stage_reader import FREE, LinkSpec, StageSpec, mat_to_quat_xyzw, read_stage


@dataclass
class State:
    """Generalized positions and velocities, one row per environment (SI units)."""

    joint_q: wp.array
    joint_qd: wp.array


@dataclass
class Control:
    """Per environment and DOF: drive targets (rad or m, rad/s or m/s) and efforts (N m or N)."""

    joint_target_pos: wp.array
    joint_target_vel: wp.array
    joint_effort: wp.array


def _axis_frame(axis) -> np.ndarray:
    """A rotation whose x column is the unit joint axis (the identity for +x)."""
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    helper = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    c2 = helper - (helper @ a) * a
    c2 /= np.linalg.norm(c2)
    return np.column_stack([a, c2, np.cross(a, c2)])


class Model:
    """Articulation trees of a stage, their joints' limits and drives, and the mimic relations."""

    def __init__(self, spec: StageSpec, num_envs: int = 1, device: str | None = "cpu"):
        self.spec = spec
        self.num_envs = int(num_envs)
        self.device = wp.get_device(device)
        self.links: list[LinkSpec] = spec.links
        self.warnings: list[str] = list(spec.warnings)
        self.gravity = np.array(spec.gravity, float)
        self.joints = [lk.joint for lk in self.links if lk.joint is not None]
        self.joint_paths: list[str] = [j.path for j in self.joints]
        self.joint_kind: list[str] = [j.kind for j in self.joints]
        self._index = {p: i for i, p in enumerate(self.joint_paths)}
        n1 = len(self.joints)
        self.base_bodies = [lk.body for lk in self.links if lk.jtype == FREE]
        self.dof_count = n1 + 6 * len(self.base_bodies)
        self.coord_count = n1 + 7 * len(self.base_bodies)
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
        self.projection = Projection(self.dof_count)
        self.erp = 0.3
        self.iterations = 8
        self._relation_count = 0
        self.data = None
        self.version = 0

    # ---- metadata -------------------------------------------------------------------------
    def dof_index(self, path: str) -> int:
        try:
            return self._index[str(path)]
        except KeyError:
            raise MimicParticipantError(f"{path} is not a revolute or prismatic joint of this model") from None

    def limits(self, path: str) -> tuple[float, float]:
        i = self.dof_index(path)
        return float(self.lower[i]), float(self.upper[i])

    def drive(self, path: str) -> dict:
        i = self.dof_index(path)
        return {"stiffness": float(self.stiffness[i]), "damping": float(self.drive_damping[i]),
                "max_force": float(self.max_force[i]), "enabled": bool(self.has_drive[i]),
                "target_pos": float(self.drive_target_pos[i]), "target_vel": float(self.drive_target_vel[i])}

    def set_drive(self, path: str, stiffness: float, damping: float, max_force: float = math.inf,
                  target_pos: float | None = None, target_vel: float | None = None) -> None:
        """Add or override the PD drive of one joint (SI: N m/rad or N/m, N m s/rad or N s/m)."""
        i = self.dof_index(path)
        self.stiffness[i], self.drive_damping[i], self.max_force[i] = stiffness, damping, max_force
        self.has_drive[i] = True
        if target_pos is not None:
            self.drive_target_pos[i] = target_pos
        if target_vel is not None:
            self.drive_target_vel[i] = target_vel
        if self.data is not None:
            self.sync()

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
            raise MimicParticipantError(f"mimic {role} {path} is excluded from the articulation; "
                                        f"only tree joints can take part")
        raise MimicParticipantError(f"mimic {role} {path} is a {kind} joint; only revolute and "
                                    f"prismatic joints can take part")

    def make_row(self, follower: str, leader: str | None, multiplier: float, offset: float,
                 natural_frequency: float = 0.0, damping_ratio: float = 0.0, label: str | None = None) -> RelationRow:
        follower = str(follower)
        if leader is None:
            raise MimicParticipantError(f"mimic relation on {follower} has no reference joint")
        leader = str(leader)
        if follower == leader:
            raise MimicParticipantError(f"{follower}: a joint cannot follow itself")
        if not (math.isfinite(multiplier) and math.isfinite(offset)) or multiplier == 0.0:
            raise MimicParticipantError(f"mimic relation {follower} -> {leader}: multiplier must be finite "
                                        f"and nonzero, offset finite (got {multiplier}, {offset})")
        fi = self._participant(follower, "follower")
        li = self._participant(leader, "reference joint")
        self._relation_count += 1
        key = label or f"{follower} -> {leader}"
        if any(r.key == key for r in self.projection.rows):
            key = f"{key} #{self._relation_count}"
        return RelationRow(key=key, follower=follower, leader=leader, fi=fi, li=li,
                           multiplier=float(multiplier), offset=float(offset),
                           natural_frequency=float(natural_frequency), damping_ratio=float(damping_ratio))

    def add_relation(self, row: RelationRow) -> str:
        """Add a relation (atomically: a conflict leaves the model unchanged)."""
        trial = Projection(self.dof_count, self.projection.rows + [row])
        self.projection = trial
        if self.data is not None:
            self.sync()
        return STATUS[trial.kinds[-1]]

    def relations(self) -> list[dict]:
        return [{"key": r.key, "follower": r.follower, "leader": r.leader, "multiplier": r.multiplier,
                 "offset": r.offset, "status": STATUS[k]} for r, k in zip(self.projection.rows, self.projection.kinds)]

    # ---- arrays ---------------------------------------------------------------------------
    def state(self) -> State:
        """The stage's initial state (joint state positions/velocities, base poses) in every environment."""
        q = np.zeros(self.coord_count)
        u = np.zeros(self.dof_count)
        for i, j in enumerate(self.joints):
            q[i], u[i] = j.q0, j.u0
        n1 = len(self.joints)
        for b, link in enumerate(lk for lk in self.links if lk.jtype == FREE):
            q[n1 + 7 * b:n1 + 7 * b + 3] = link.pose0[:3, 3]
            q[n1 + 7 * b + 3:n1 + 7 * b + 7] = mat_to_quat_xyzw(link.pose0[:3, :3])
        return State(joint_q=wp.array(np.tile(q, (self.num_envs, 1)), dtype=float, device=self.device),
                     joint_qd=wp.array(np.tile(u, (self.num_envs, 1)), dtype=float, device=self.device))

    def control(self) -> Control:
        """Drive targets from the stage's drives, zero efforts."""
        tp = np.zeros(self.dof_count)
        tv = np.zeros(self.dof_count)
        n1 = len(self.joints)
        tp[:n1], tv[:n1] = self.drive_target_pos, self.drive_target_vel
        mk = lambda a: wp.array(np.tile(a, (self.num_envs, 1)), dtype=float, device=self.device)  # noqa: E731
        return Control(joint_target_pos=mk(tp), joint_target_vel=mk(tv), joint_effort=mk(np.zeros(self.dof_count)))

    def sync(self) -> None:
        """Upload the model (joint properties, relations) to the device; arrays keep their identity."""
        self.data = self._build_data()
        self.version += 1

    def _build_data(self) -> K.ModelData:
        d = self.device
        links = self.links
        md = K.ModelData()
        n1 = len(self.joints)
        md.n_links, md.n_u, md.n1 = len(links), self.dof_count, n1
        q_of, u_of, root_of = [], [], []
        j, b = 0, 0
        for i, lk in enumerate(links):
            if lk.jtype == FREE:
                q_of.append(n1 + 7 * b)
                u_of.append(n1 + 6 * b)
                b += 1
            else:
                q_of.append(j)
                u_of.append(j)
                j += 1
            root_of.append(i if lk.parent < 0 else root_of[lk.parent])
        arr = lambda a, t=float: wp.array(np.asarray(a), dtype=t, device=d)  # noqa: E731
        # The kernel works in each link's joint frame turned so that the joint axis is x, after
        # the joint motion; the link frame X_c is folded into the children's joint frames and
        # into the link's own COM and inertia (one transform per link less per step).
        to_link = []                            # joint-motion frame -> link frame
        for lk in links:
            t = np.eye(4)
            if lk.jtype != FREE:
                t[:3, :3] = _axis_frame(lk.axis).T
                t = t @ np.linalg.inv(lk.X_c)
            to_link.append(t)
        data = []
        for i, lk in enumerate(links):
            ld = K.LinkData()
            ld.parent, ld.jtype, ld.qs, ld.us, ld.root = lk.parent, lk.jtype, q_of[i], u_of[i], root_of[i]
            ld.nd = 6 if lk.jtype == FREE else 1
            xp = lk.X_p if lk.parent < 0 else to_link[lk.parent] @ lk.X_p
            if lk.jtype != FREE:
                turn = np.eye(4)
                turn[:3, :3] = _axis_frame(lk.axis)
                xp = xp @ turn
            ld.Rp, ld.pp = wp.mat33(*xp[:3, :3].flatten()), wp.vec3(*xp[:3, 3])
            rot = to_link[i][:3, :3]
            ld.mass = float(lk.mass)
            ld.com = wp.vec3(*(rot @ np.asarray(lk.com, float) + to_link[i][:3, 3]))
            ld.I = wp.mat33(*(rot @ lk.inertia @ rot.T).flatten())
            data.append(ld)
        md.links = wp.array(data or [K.LinkData()], dtype=K.LinkData, device=d)
        flags = np.zeros(n1, int)
        flags[np.isfinite(self.lower)] |= 1
        flags[np.isfinite(self.upper)] |= 2
        flags[np.isfinite(self.max_velocity)] |= 4
        flags[self.friction > 0] |= 8
        flags[self.has_drive] |= 16
        big = 3.0e38
        fin = lambda a: np.where(np.isfinite(a), a, big)  # noqa: E731
        lower, upper = np.where(np.isfinite(self.lower), self.lower, -big), fin(self.upper)
        vmax, fmax = fin(self.max_velocity), fin(self.max_force)
        cols, gains, betas, roots, k = self.projection.columns()
        md.k = k
        md.dof_col, md.dof_gain = arr(cols, int), arr(gains)
        joints = []
        for j in range(n1):
            jd = K.JointData()
            jd.flags, jd.col, jd.rootdof = int(flags[j]), int(cols[j]), int(roots[j])
            jd.gain, jd.beta = float(gains[j]), float(betas[j])
            jd.lower, jd.upper, jd.vmax = float(lower[j]), float(upper[j]), float(vmax[j])
            jd.friction, jd.armature = float(self.friction[j]), float(self.armature[j])
            jd.damping = float(self.damping[j])
            jd.kp, jd.kd, jd.fmax = float(self.stiffness[j]), float(self.drive_damping[j]), float(fmax[j])
            joints.append(jd)
        md.joints = wp.array(joints or [K.JointData()], dtype=K.JointData, device=d)
        rows, kinds = self.projection.rows, self.projection.kinds
        md.n_rel = len(rows)
        md.n_soft = sum(1 for kd in kinds if kd == 2)
        rels = []
        for r, kd in zip(rows, kinds):
            rd = K.RelData()
            rd.f, rd.l, rd.kind = r.fi, r.li, int(kd)
            rd.m, rd.c, rd.w, rd.z = r.multiplier, r.offset, r.natural_frequency, r.damping_ratio
            rels.append(rd)
        md.rels = wp.array(rels or [K.RelData()], dtype=K.RelData, device=d)
        elim = self.projection.elimination()
        md.n_elim = len(elim)
        steps, terms = [], []
        for (g, node), extra in zip(elim, self.projection.elimination_terms(elim)):
            st = K.ElimStep()
            st.rel, st.node, st.start = g, node, len(terms)
            st.coef = 1.0 if rows[g].fi == node else -rows[g].multiplier
            for other, coef in extra:
                tm = K.ElimTerm()
                tm.rel, tm.coef = other, float(coef)
                terms.append(tm)
            st.end = len(terms)
            steps.append(st)
        md.elims = wp.array(steps or [K.ElimStep()], dtype=K.ElimStep, device=d)
        md.terms = wp.array(terms or [K.ElimTerm()], dtype=K.ElimTerm, device=d)
        # one row of per-environment scalar work space, in the order the step uses it
        n, nr = self.dof_count, max(len(rows), 1)
        off = 0
        for name, size in (("u0", n), ("f", n), ("AS", n * k), ("H", k * k), ("Hinv", k * k), ("bh", k),
                           ("v", k), ("tmp", k), ("rowW", 2 * n1), ("lam", 5 * n1), ("res", n),
                           ("H0", k * k), ("soft", 2 * nr)):
            setattr(md, "o_" + name, off)
            off += size
        self.work_size = max(off, 1)
        md.has_float = int(bool(self.base_bodies))
        md.has_rows = int(bool((flags & 15).any()))
        md.iterations, md.erp = int(self.iterations), float(self.erp)
        md.gravity = wp.vec3(*self.gravity)
        return md


def _relations_from_stage(model: Model, stage: Usd.Stage) -> None:
    for rel in read_relations(stage, strict=True):  # a wrongly typed relation is refused, naming it
        if not rel.enabled:
            model.warnings.append(f"{rel.follower}: disabled Newton mimic relation skipped")
            continue
        label = f"{rel.follower} [{rel.instance or rel.schema}] -> {rel.leader}"
        row = model.make_row(rel.follower, rel.leader, rel.multiplier, rel.offset,
                             rel.natural_frequency, rel.damping_ratio, label=label)
        model.projection.add(row)


def build_model(stage: Usd.Stage, num_envs: int = 1, device: str | None = "cpu", fix_base: bool = False,
                relations: Iterable | None = None) -> Model:
    """Model of every articulation tree on ``stage`` with its mimic relations.

    ``fix_base`` welds floating roots to the world where they stand (grippers on a bench).
    ``relations`` (MimicRelation objects) replaces the stage's relations when given.
    Errors the user can fix (contradicting relations, unsupported joints) raise
    ``MimicInputError`` subclasses naming the prims.
    """
    spec = read_stage(stage, fix_base=fix_base)
    model = Model(spec, num_envs=num_envs, device=device)
    if relations is None:
        _relations_from_stage(model, stage)
    else:
        for rel in relations:
            model.projection.add(model.make_row(rel.follower, rel.leader, rel.multiplier, rel.offset,
                                                rel.natural_frequency, rel.damping_ratio))
    model.sync()
    return model


__all__ = ["Model", "State", "Control", "build_model"]
