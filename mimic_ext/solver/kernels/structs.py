"""Model data and per-environment scratch as Warp structs of one scalar type.

Model data is in arrays of small structs (links, joints, relations, loop closures, the
impulse read-out's steps); every per-environment scalar and small matrix shares one row
of one work array (``Scratch.ws[e, o_X + ...]``, offsets ``ModelData.o_X`` named from the work
space's table, ``workspace.FIELDS``, and laid out by ``Model._build_data``): each Warp array an
environment touches costs address set-up.
"""

# no `from __future__ import annotations`: Warp reads these annotations as live types
import warp as wp

from ..workspace import offset_names

#: ``ModelData.float_bases``: no floating base; floating bases, none restoring its momentum (a
#: contact model's: contacts exchange momentum with the world); a floating tree's momentum
#: restored each step (its float64 bookkeeping runs, ``dynamics.momentum64``)
NO_FLOAT = wp.constant(0)
FLOAT_FREE = wp.constant(1)
FLOAT_RESTORED = wp.constant(2)


def build(ns) -> None:
    T, V3, M33, SV = ns.T, ns.vec3, ns.mat33, ns.spatial

    @wp.struct
    class LinkData:
        """One link and the joint to its parent, in the parent's joint-motion frame. Each joint
        frame is turned so that the joint axis is its x axis; the link's COM and inertia are in
        its own such frame. ``restore``: a floating root whose tree's momentum is restored."""

        parent: int
        jtype: int
        qs: int
        us: int
        nd: int
        root: int
        restore: int
        Rp: M33
        pp: V3
        mass: T
        com: V3
        I: M33

    @wp.struct
    class JointData:
        """A 1-DOF joint's limits, drive and place in the reduced space (u_j = gain v_col + u0_j)."""

        flags: int
        col: int
        rootdof: int
        gain: T
        beta: T
        lower: T
        upper: T
        vmax: T
        friction: T
        armature: T
        damping: T
        kp: T
        kd: T
        fmax: T

    @wp.struct
    class Correction:
        """An eliminated DOF j and its root: ``q_j - (gain q_root + beta)`` is corrected at erp,
        bounded by ``ucap``; ``cont``: either is a continuous joint (its turns count)."""

        j: int
        root: int
        cont: int
        gain64: wp.float64
        beta64: wp.float64
        ucap: T

    @wp.struct
    class RelData:
        """A relation q_f = m q_l + c between DOFs f and l; kind ACTIVE/REDUNDANT/SOFT_ROW; a soft
        one's natural frequency w and damping ratio z; ``slot``: the entry of H its coupling adds to."""

        f: int
        l: int
        kind: int
        m: T
        c: T
        w: T
        z: T
        m64: wp.float64
        c64: wp.float64
        cont: int
        slot: int

    @wp.struct
    class ElimStep:
        """Read relation ``rel``'s impulse from the residual at DOF ``node`` (where its impulse has
        coefficient ``coef``), less the already solved relations ``terms[start:end]`` there."""

        rel: int
        node: int
        start: int
        end: int
        coef: T

    @wp.struct
    class ElimTerm:
        rel: int
        coef: T

    @wp.struct
    class LoopData:
        """A loop-closing joint: its frame on side a (link ``la``, -1 the world) and side b, in the
        links' joint-motion frames (world for -1), turned so that a free rotation axis is x;
        ``mask`` bit d locks translation (d < 3) or rotation (d >= 3) along the frame's axis
        d % 3; ``angmode`` 1: x turns freely (revolute), 0: all rotations locked; its rows
        are ``row0 .. row1 - 1``, row r locking direction ``ModelData.loop_dir[r]``."""

        la: int
        lb: int
        Ra: M33
        pa: V3
        Rb: M33
        pb: V3
        mask: int
        angmode: int
        row0: int
        row1: int

    @wp.struct
    class ConeData:
        """A spherical joint's cone limit: link ``link``'s child joint-frame axis ``axis`` kept within
        ``limit`` (rad) of the parent joint frame's (``rows.cone_rows``); elliptical where ``limit1``
        (coneAngle1Limit) differs from ``limit`` (coneAngle0Limit): ``e0``, ``e1`` the axes after
        ``axis``, ``w0 = 1 / tan(limit / 4)^2`` and ``w1 = 1 / tan(limit1 / 4)^2`` the weights of the
        swing axis's parts along them (``rows.cone_setup``). A loop-closing joint's cone: ``loop``
        its closure (side b's frame the child's, side a's the parent's; -1: a tree joint's, at
        ``link``), ``row`` its general row's place in the work space (``rows.loop_cone_row``)."""

        link: int
        loop: int
        row: int
        limit: T
        axis: V3
        limit1: T
        e0: V3
        e1: V3
        w0: T
        w1: T

    @wp.struct
    class FactorPattern:
        """The reduced system's LDL^T pattern (``sparsity.Sparsity``: colptr, row, upd, ubase), apart
        from ModelData so that the factorisation's functions are handed these four arrays, not the
        whole model (Warp passes a struct by value)."""

        k: int
        colptr: wp.array(dtype=int)
        row: wp.array(dtype=int)
        upd: wp.array(dtype=int)
        ubase: wp.array(dtype=int)

    class ModelData:
        n_links: int
        n_u: int
        n1: int
        k: int
        n_rel: int
        n_elim: int
        n_soft: int
        n_loops: int
        m: int
        loop_c0: int  # the loops' columns: their groups' range (C is block diagonal)
        loop_c1: int
        float_bases: int  # NO_FLOAT, FLOAT_FREE or FLOAT_RESTORED (below; model.py)
        has_rows: int
        has_cont: int  # 1: a continuous joint (its turn count is checked with the state)
        n_cones: int  # spherical joints with a cone limit (0: no cone row runs; rows.cone_rows)
        drive_exact: int  # 1: drives discretised exactly for their effective inertia (model.py)
        coupling_in_step: int  # 1: the coupling impulses are computed in every step (else on demand)
        iterations: int
        erp: T
        max_speed: T  # a speed past this (rad/s or m/s, any DOF) flags the environment as run away
        rank_tol: T
        gravity: V3
        links: wp.array(dtype=LinkData)
        link_parent: wp.array(dtype=int)
        link_us: wp.array(dtype=int)
        link_nd: wp.array(dtype=int)
        joints: wp.array(dtype=JointData)
        dof_col: wp.array(dtype=int)
        dof_gain: wp.array(dtype=T)
        link_cap: wp.array(dtype=T)  # per link: authored velocity caps (rad/s, m/s of its COM), else NO_CAP
        nnz: int
        n_rslots: int
        lp: FactorPattern
        pairs: wp.array(dtype=wp.vec3i)
        dof_up: wp.array(dtype=int)
        n_pairs: int
        tree_mass: int
        pair_slot: wp.array(dtype=int)
        pair_coef: wp.array(dtype=T)
        grp_lo: wp.array(dtype=int)
        grp_hi: wp.array(dtype=int)
        rels: wp.array(dtype=RelData)
        cors: wp.array(dtype=Correction)
        n_cor: int
        elims: wp.array(dtype=ElimStep)
        terms: wp.array(dtype=ElimTerm)
        loops: wp.array(dtype=LoopData)
        loop_dir: wp.array(dtype=int)
        cones: wp.array(dtype=ConeData)
        # the work space's offsets o_<field> are added after these fields, below, from the table
        # (workspace.offset_names: one per FIELDS entry, and CONTACT_FIELDS in a contact model)
        if ns.contacts:  # contact models only (``contact_rows``)
            c_cap: int  # contacts that get rows, per environment
            c_block: int  # work-space entries per contact
            c_iter: int  # the most passes of the joint and contact rows
            c_bmax: int  # rows of the active block at most

    ModelData.__annotations__.update(dict.fromkeys(offset_names(ns.contacts), int))
    ModelData = wp.struct(ModelData)  # the class above with its offsets, made a Warp struct

    @wp.struct
    class Scratch:
        R: wp.array2d(dtype=M33)
        pos: wp.array2d(dtype=V3)
        V: wp.array2d(dtype=SV)
        Acc: wp.array2d(dtype=SV)
        G: wp.array2d(dtype=SV)
        Ic_m: wp.array2d(dtype=T)
        Ic_h: wp.array2d(dtype=V3)
        Ic_I: wp.array2d(dtype=M33)
        S: wp.array2d(dtype=SV)
        Q: wp.array2d(dtype=SV)  # a deep tree's run sums of gain-weighted axes (composite_pass)
        ws: wp.array2d(dtype=T)
        rel_imp: wp.array2d(dtype=T)  # per relation: impulse of the last step, error at its start
        rel_err: wp.array2d(dtype=T)
        nonfinite: wp.array(dtype=wp.int32)  # per environment: 1 state not finite, 2 a speed past max_speed (bits)
        # floating bases: momentum bookkeeping in float64 (see dynamics.momentum64)
        Rd: wp.array2d(dtype=wp.mat33d)
        pd: wp.array2d(dtype=wp.vec3d)
        Vd: wp.array2d(dtype=wp.spatial_vectord)
        Pd: wp.array2d(dtype=wp.spatial_vectord)
        Td: wp.array2d(dtype=wp.spatial_vectord)
        Pm: wp.array2d(dtype=wp.spatial_vectord)  # the start momentum, kept for base_midpoint
        cm: wp.array2d(dtype=wp.vec3d)  # a free tree's centre of mass at the step's start (world)
        Imd: wp.array2d(dtype=wp.float64)
        Ihd: wp.array2d(dtype=wp.vec3d)
        IId: wp.array2d(dtype=wp.mat33d)
        if ns.contacts:
            cx: ns.ContactCtx  # detection and contact read-out (``contact_rows``)

    ns.LinkData, ns.JointData, ns.RelData, ns.Correction = LinkData, JointData, RelData, Correction
    ns.ElimStep, ns.ElimTerm, ns.LoopData, ns.ConeData = ElimStep, ElimTerm, LoopData, ConeData
    ns.ModelData, ns.Scratch, ns.FactorPattern = ModelData, Scratch, FactorPattern
