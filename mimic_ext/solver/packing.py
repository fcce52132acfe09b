"""The model's device structs, one packer per struct (``Model._build_data`` calls them in order).

Each packer turns one part of the host model (links, joints, relations, their elimination,
loop closures) into the Warp structs of ``kernels.structs``, so a new joint property or a new
struct is one function to read, not a 250-line method. They run once per ``Model.sync``;
all values are SI, already converted by the stage reader.
"""

from __future__ import annotations

import math

import numpy as np

from .collision.frames import link_to_motion_frame
from .kernels.dynamics import F_CONT, F_DEXACT, F_DRIVE, F_DSAT, F_FRICTION, F_LOWER, F_UPPER, F_VMAX, NO_CAP
from .projection import SOFT_ROW, Projection
from .stage_reader import FREE, SPHERICAL, axis_frame

_BIG = 3.0e38
#: A link's constant joint-frame rotation entry smaller than this is rounding (``sin(pi)`` of a half
#: turn: 1.2e-16) and is stored as 0: kept, it seeded products that fell below float32's normal
#: range (1.2e-38), whose slow arithmetic cost the Robotiq step 5 % (issue 40).
_ROTATION_ROUNDING = 1.0e-12


def motion_frames(links) -> list[np.ndarray]:
    """Per link: link-frame coordinates -> its joint-motion frame. The kernel works in each
    link's joint frame turned so that the joint axis is x, after the joint motion; the link frame
    X_c is folded into the children's joint frames and into the link's own COM and inertia (one
    transform per link less per step)."""
    return [link_to_motion_frame(lk) for lk in links]


def root_links(links) -> list[int]:
    """Per link: the root link of its tree (parents come before their children)."""
    root_of: list[int] = []
    for i, lk in enumerate(links):
        root_of.append(i if lk.parent < 0 else root_of[lk.parent])
    return root_of


def link_caps(links) -> list[float]:
    """Per link its authored (angular rad/s, linear m/s) velocity caps, in one flat list
    (``ModelData.link_cap``); none authored is the kernel's ``NO_CAP``, which no speed reaches."""
    return [min(c, NO_CAP) for lk in links for c in (lk.max_angular, lk.max_linear)] or [NO_CAP, NO_CAP]


def pack_cones(K, links, closures=()) -> list:
    """``ConeData`` per spherical joint with a cone limit (``ModelData.cones``): its link, the
    half-angles (rad) and the axis in its joint frame (the link's motion frame: no turn); then the
    loop-closing spherical joints' (``ClosureSpec.cone``), each with its closure and its general
    row's index (the closure's frames are the joint's, no turn either)."""
    data = [
        _cone(K, lk.cone, lk.cone1, lk.cone_axis, (i, -1, -1))
        for i, lk in enumerate(links)
        if lk.jtype == SPHERICAL and lk.cone < math.pi
    ]
    coned = [cl for cl, c in enumerate(closures) if c.cone < math.pi]
    for row, cl in enumerate(coned):
        c = closures[cl]
        data.append(_cone(K, c.cone, c.cone1, c.cone_axis, (-1, cl, row)))
    return data


def _cone(K, limit0: float, limit1: float, axis, place: tuple[int, int, int]):
    """A ``ConeData``: its ``place`` (link, loop, row), half-angles, axis and elliptical terms."""
    cd = K.ConeData()
    a = np.asarray(axis, float)
    cd.link, cd.loop, cd.row = place
    cd.limit, cd.axis = float(limit0), K.vec3(*a)
    # the elliptical cone's terms: the next axes after ``a`` (X -> Y -> Z -> X); as PhysX
    # reads them (its yAngle, zAngle about the joint frame's y, z), coneAngle0 bounds the
    # swing about e0, coneAngle1 the swing about e1 (measured on ovphysx: test_pendulum_rests_on_its_elliptical_cone_as_on_physx)
    cd.limit1, cd.e0, cd.e1 = float(limit1), K.vec3(*np.roll(a, 1)), K.vec3(*np.roll(a, 2))
    cd.w0, cd.w1 = 1.0 / math.tan(limit0 / 4.0) ** 2, 1.0 / math.tan(limit1 / 4.0) ** 2
    return cd


def pack_links(K, links, layout, to_link: list[np.ndarray]) -> list:
    """``LinkData`` per link: tree, joint code, coordinate/DOF starts (``layout``), joint frame in
    the parent's motion frame, mass, COM and inertia in its own motion frame."""
    V3, M33 = K.vec3, K.mat33
    root_of = root_links(links)
    data = []
    for i, lk in enumerate(links):
        ld = K.LinkData()
        ld.parent, ld.jtype, ld.qs, ld.us, ld.root = (
            lk.parent,
            lk.jtype,
            layout.q_start[i],
            layout.qd_start[i],
            root_of[i],
        )
        ld.nd = layout.dofs[i]
        ld.restore = int(lk.restore)
        xp = lk.X_p if lk.parent < 0 else to_link[lk.parent] @ lk.X_p
        if lk.jtype != FREE:
            turn = np.eye(4)
            turn[:3, :3] = axis_frame(lk.axis)
            xp = xp @ turn
        rp = np.where(np.abs(xp[:3, :3]) < _ROTATION_ROUNDING, 0.0, xp[:3, :3])
        ld.Rp, ld.pp = M33(*rp.flatten()), V3(*xp[:3, 3])
        rot = to_link[i][:3, :3]
        ld.mass = float(lk.mass)
        ld.com = V3(*(rot @ np.asarray(lk.com, float) + to_link[i][:3, 3]))
        ld.I = M33(*(rot @ lk.inertia @ rot.T).flatten())
        data.append(ld)
    return data


def pack_factor_pattern(K, sp, k: int, arr):
    """``FactorPattern``: the reduced system's LDL^T pattern (``sparsity.reduced_sparsity``);
    ``arr`` makes a device array of a given dtype."""
    lp = K.FactorPattern()
    lp.k, lp.colptr, lp.row = k, arr(sp.colptr, int), arr(sp.row if k else [0], int)
    lp.upd, lp.ubase = arr(sp.upd if len(sp.upd) else [0], int), arr(sp.ubase, int)
    return lp


def joint_flags(model, cols: list[int], k: int, sp, soft_pairs: list, u_of: list[int]) -> np.ndarray:
    """Per 1-DOF joint: its ``F_*`` flags (limits, cap, friction, drive, continuous, exact drive)."""
    n1 = len(model.joints)
    flags = np.zeros(n1, int)
    flags[np.isfinite(model.lower)] |= F_LOWER
    flags[np.isfinite(model.upper)] |= F_UPPER
    flags[np.isfinite(model.max_velocity)] |= F_VMAX
    flags[model.friction > 0] |= F_FRICTION
    driven = model.has_drive & ((model.stiffness > 0) | (model.drive_damping > 0))  # zero gains: no drive
    flags[driven] |= F_DRIVE
    flags[driven & np.isfinite(model.max_force)] |= F_DSAT
    flags[model.continuous()] |= F_CONT
    # the drives an exact discretisation samples the continuous response of (its position term):
    # a spring (kp > 0) alone in its column, in a group of columns without loop closures or
    # compliant relations (the others' maps only match the response's eigenvalues: with loops
    # the position term, moved along the mass-only response, went unstable on the compliant
    # Isaac 2F-85; two drives on one column each assume the other constant)
    col_drives = np.bincount(np.asarray(cols[:n1], int)[driven], minlength=max(k, 1)) if n1 else np.zeros(1, int)
    busy = {sp.group_lo[cols[d]] for pair in soft_pairs for d in pair} | {
        sp.group_lo[cols[u_of[la]]] for c in model.closures for la in (c.link_a, c.link_b) if la >= 0
    }
    for jj in np.flatnonzero(driven & (model.stiffness > 0)):
        if col_drives[cols[jj]] == 1 and sp.group_lo[cols[jj]] not in busy:
            flags[jj] |= F_DEXACT
    return flags


def _finite_or_big(a: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(a), a, _BIG)


def pack_joints(K, model, flags: np.ndarray, cols: list[int], gains, betas, roots, k: int):
    """(``JointData`` per 1-DOF joint, a ``Correction`` per eliminated joint, per column 1 where a
    joint row acts on it)."""
    n1 = len(model.joints)
    lower, upper = np.where(np.isfinite(model.lower), model.lower, -_BIG), _finite_or_big(model.upper)
    vmax, fmax = _finite_or_big(model.max_velocity), _finite_or_big(model.max_force)
    # the cap a relation tree puts on each member's relation-consistent velocity: |u_j| <= |a_j| min_i vmax_i / |a_i|
    per_root: dict[int, float] = {}
    for jj in range(n1):
        per_root[roots[jj]] = min(per_root.get(roots[jj], _BIG), vmax[jj] / abs(gains[jj]))
    col_rows = np.zeros(max(k, 1), int)
    joints, cors = [], []
    for jj in range(n1):
        jd = K.JointData()
        jd.flags, jd.col, jd.rootdof = int(flags[jj]), int(cols[jj]), int(roots[jj])
        jd.gain, jd.beta = float(gains[jj]), float(betas[jj])
        jd.lower, jd.upper, jd.vmax = float(lower[jj]), float(upper[jj]), float(vmax[jj])
        if roots[jj] != jj:
            cr = K.Correction()
            cr.j, cr.root = jj, int(roots[jj])
            cr.cont = int(bool(flags[jj] & F_CONT or flags[roots[jj]] & F_CONT))
            cr.gain64, cr.beta64 = float(gains[jj]), float(betas[jj])
            cr.ucap = float(min(_BIG, abs(gains[jj]) * per_root[roots[jj]]))
            cors.append(cr)
        jd.friction, jd.armature = float(model.friction[jj]), float(model.armature[jj])
        jd.damping = float(model.damping[jj])
        jd.kp, jd.kd, jd.fmax = float(model.stiffness[jj]), float(model.drive_damping[jj]), float(fmax[jj])
        if flags[jj] & (F_LOWER | F_UPPER | F_VMAX | F_FRICTION | F_DSAT):
            col_rows[cols[jj]] = 1
        joints.append(jd)
    return joints, cors, col_rows


def pack_relations(K, projection: Projection, flags: np.ndarray, cols: list[int], sp, n1: int) -> list:
    """``RelData`` per relation row: its joints, kind, gain and offset (and float64 copies), and
    the reduced-system slot of a compliant one."""
    rels = []
    for r, kd in zip(projection.rows, projection.kinds):
        rd = K.RelData()
        rd.f, rd.l, rd.kind = r.fi, r.li, int(kd)
        rd.m, rd.c, rd.w, rd.z = r.multiplier, r.offset, r.natural_frequency, r.damping_ratio
        rd.m64, rd.c64 = r.multiplier, r.offset
        rd.cont = int(bool(flags[r.fi] & F_CONT or flags[r.li] & F_CONT)) if max(r.fi, r.li) < n1 else 0
        rd.slot = sp.slot(cols[r.fi], cols[r.li]) if kd == SOFT_ROW else 0
        rels.append(rd)
    return rels


def pack_eliminations(K, projection: Projection) -> tuple[list, list]:
    """(``ElimStep`` per eliminated relation, in order, and their ``ElimTerm`` list)."""
    rows = projection.rows
    elim = projection.elimination()
    steps: list = []
    terms: list = []
    for (g, node), extra in zip(elim, projection.elimination_terms(elim)):
        st = K.ElimStep()
        st.rel, st.node, st.start = g, node, len(terms)
        st.coef = 1.0 if rows[g].fi == node else -rows[g].multiplier
        for other, coef in extra:
            tm = K.ElimTerm()
            tm.rel, tm.coef = other, float(coef)
            terms.append(tm)
        st.end = len(terms)
        steps.append(st)
    return steps, terms


def pack_loops(K, closures, to_link: list[np.ndarray]) -> tuple[list, list[int], int]:
    """(``LoopData`` per loop closure, its locked directions row by row, the row count): each
    side's frame in its link's motion frame (the world's for link -1)."""
    V3, M33 = K.vec3, K.mat33
    loops, row0, dirs = [], 0, []
    for c in closures:
        lp = K.LoopData()
        lp.la, lp.lb, lp.mask, lp.angmode, lp.row0 = c.link_a, c.link_b, c.mask, c.angmode, row0
        lp.row1 = row0 + c.rows
        dirs += [dd for dd in range(6) if c.mask >> dd & 1]
        fa = c.frame_a if c.link_a < 0 else to_link[c.link_a] @ c.frame_a
        fb = c.frame_b if c.link_b < 0 else to_link[c.link_b] @ c.frame_b
        lp.Ra, lp.pa = M33(*fa[:3, :3].flatten()), V3(*fa[:3, 3])
        lp.Rb, lp.pb = M33(*fb[:3, :3].flatten()), V3(*fb[:3, 3])
        loops.append(lp)
        row0 += c.rows
    return loops, dirs, row0
