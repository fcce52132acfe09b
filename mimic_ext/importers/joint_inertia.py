"""A robot file's joint-space inertia at the file's configuration, one tree at a time.

MuJoCo's ``dampratio`` needs the whole matrix (``mjcf_actuators``); Isaac Sim's default drive
gains need the inertia each joint moves (``drive_gains``), which is the matrix's diagonal without
armature: the bodies beyond the joint taken as one rigid body, about its axis (revolute) or
their mass (prismatic). Both start from one walk of the tree's joints (``tree_dofs``); the
diagonal alone is built by merging bodies leaves first, so a large URDF costs one pass per
tree, not one subtree walk per joint (nor the dense matrix, cubic in a chain's length).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from .model import PRISMATIC, REVOLUTE, SPHERICAL, Body, RobotModel
from .transforms import AXES, Transform


@dataclass
class TreeDofs:
    """One tree's degrees of freedom: ``dofs`` (kind "hinge" or "slide", world axis, point on the
    axis), each 1-DOF joint's column (``index``), the columns that move each body, and armature."""

    dofs: list[tuple[str, np.ndarray, np.ndarray | None]] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    body_dofs: dict[str, list[int]] = field(default_factory=dict)
    armature: dict[int, float] = field(default_factory=dict)


def tree_dofs(model: RobotModel, tree: int) -> TreeDofs:
    """The tree's DOFs at the file's configuration; a floating root adds six free ones first."""
    out = TreeDofs()
    root = model.roots[tree]
    if model.floating.get(tree):
        origin = model.bodies[root].world.p
        for k in range(3):
            out.dofs.append(("slide", np.eye(3)[k], None))
        for k in range(3):
            out.dofs.append(("hinge", np.eye(3)[k], origin))
    out.body_dofs[root] = list(range(len(out.dofs)))
    # model.joints lists every joint after the one that reaches its parent body
    for j in model.joints:
        if j.child not in model.bodies or model.bodies[j.child].tree != tree:
            continue
        cols = list(out.body_dofs.get(j.parent, [])) if j.parent else []
        parent_world = model.bodies[j.parent].world if j.parent else Transform.identity()
        f0 = parent_world * j.frame0
        if j.kind in (REVOLUTE, PRISMATIC):
            out.index[j.name] = len(out.dofs)
            cols.append(len(out.dofs))
            out.armature[len(out.dofs)] = j.armature
            out.dofs.append(("hinge" if j.kind == REVOLUTE else "slide", f0.R @ AXES[j.axis], f0.p))
        elif j.kind == SPHERICAL:
            for k in range(3):
                cols.append(len(out.dofs))
                out.dofs.append(("hinge", np.eye(3)[k], f0.p))
        out.body_dofs[j.child] = cols
    return out


def _body_jacobians(
    model: RobotModel, tree: int, t: TreeDofs
) -> Iterator[tuple[Body, list[int], np.ndarray, np.ndarray, np.ndarray]]:
    """Per moving body with mass: (body, its columns, J_v and J_w at its centre of mass, its
    world inertia tensor)."""
    for b in model.bodies.values():
        if b.tree != tree or b.inertia is None or b.name not in t.body_dofs:
            continue
        c = b.world.apply(b.inertia.com)
        tensor = b.world.R @ b.inertia.tensor @ b.world.R.T
        ids = t.body_dofs[b.name]
        Jv = np.zeros((3, len(ids)))
        Jw = np.zeros((3, len(ids)))
        for col, k in enumerate(ids):
            kind, axis, point = t.dofs[k]
            if kind == "slide":
                Jv[:, col] = axis
            else:
                Jw[:, col] = axis
                Jv[:, col] = np.cross(axis, c - point)
        yield b, ids, Jv, Jw, tensor


def joint_space_inertia(model: RobotModel, tree: int) -> tuple[np.ndarray, dict[str, int]]:
    """Joint-space mass matrix (with armature) of one tree at the file's configuration.

    From body Jacobians, ``M = sum_b m J_v^T J_v + J_w^T I J_w``; a floating root adds six
    free DOFs. Only used for MuJoCo's ``dampratio``, so a plain dense build is enough.
    """
    t = tree_dofs(model, tree)
    n = len(t.dofs)
    M = np.zeros((n, n))
    for b, ids, Jv, Jw, tensor in _body_jacobians(model, tree, t):
        assert b.inertia is not None
        M[np.ix_(ids, ids)] += b.inertia.mass * Jv.T @ Jv + Jw.T @ tensor @ Jw
    for k, arm in t.armature.items():
        M[k, k] += arm
    return M, t.index


def _composite(
    a: tuple[float, np.ndarray, np.ndarray], b: tuple[float, np.ndarray, np.ndarray]
) -> tuple[float, np.ndarray, np.ndarray]:
    """Two rigid bodies (mass, centre of mass, world inertia tensor about it) as one."""
    (ma, ca, Ia), (mb, cb, Ib) = a, b
    m = ma + mb
    if m <= 0:
        return m, ca, Ia + Ib
    c = (ma * ca + mb * cb) / m
    da, db = ca - c, cb - c
    eye = np.eye(3)
    shift = ma * (da @ da * eye - np.outer(da, da)) + mb * (db @ db * eye - np.outer(db, db))
    return m, c, Ia + Ib + shift


def moved_inertias(model: RobotModel, tree: int) -> dict[str, float]:
    """Per 1-DOF joint of ``tree``, the inertia it moves (SI: kg m^2 about a revolute joint's
    axis, kg along a prismatic one's; the joint-space diagonal without armature); 0 where nothing
    beyond it has mass. The bodies beyond each joint are merged into one composite body, leaves
    first (the composite-rigid-body recursion), so a tree costs one pass whatever its depth."""
    t = tree_dofs(model, tree)
    none = (0.0, np.zeros(3), np.zeros((3, 3)))
    comp: dict[str, tuple[float, np.ndarray, np.ndarray]] = {}
    for name in t.body_dofs:
        b = model.bodies[name]
        if b.inertia is None:
            comp[name] = none
        else:
            comp[name] = (b.inertia.mass, b.world.apply(b.inertia.com), b.world.R @ b.inertia.tensor @ b.world.R.T)
    out: dict[str, float] = {}
    # model.joints lists a joint before those below its child: backwards, a child is complete
    # (everything beyond it merged) before it merges into its parent
    for j in reversed(model.joints):
        if j.child not in comp:
            continue
        m, c, tensor = comp[j.child]
        k = t.index.get(j.name)
        if k is not None:
            kind, axis, point = t.dofs[k]
            if kind == "slide":
                out[j.name] = m
            else:
                assert point is not None
                arm = np.cross(axis, c - point)
                out[j.name] = float(axis @ tensor @ axis) + m * float(arm @ arm)
        if j.parent in comp:
            comp[j.parent] = _composite(comp[j.parent], comp[j.child])
    return out


__all__ = ["TreeDofs", "joint_space_inertia", "moved_inertias", "tree_dofs"]
