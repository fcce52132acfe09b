"""Contact rows in the step's velocity-level solve (compiled only into contact models).

After forward kinematics the step detects the environment's contacts on its own link frames
(``collision.kernels.collide_env``) and turns each contact into three rows in joint-velocity
space: the normal ``n`` (from shape b to shape a) and two tangents, each ``J u`` = the
velocity of shape a relative to shape b at the contact point along that direction. Each row
goes to the solve space (``row_to_solve_space``: ``J S``) and, once its contact first pushes
(a warm start, a violated bound: ``contact_response``), gets its response through the
constrained inverse (``constrained_response``: ``C (J S)^T``), so every impulse a contact
applies moves only velocities that keep every hard mimic relation and loop closure exactly;
an impulse on a follower's link reaches its leader through the coupling.

- Normal row: ``lambda_n >= 0`` and ``n . v_rel >= -gap / dt`` while the surfaces are apart
  (``gap = separation - rest offset``: a speculative contact, it closes at most the gap in
  one step) and ``>= -erp gap / dt`` once they overlap (position correction at erp), less a
  compliance of ``CFM`` times the row's own response.
- Restitution (PhysX's rule, ``DyContactPrepShared.h`` ``constructContactConstraint``): a contact
  bounces when the pair's combined restitution ``e > 0``, its approach speed at the step's start
  ``va = -vn0`` exceeds the scene's bounce threshold, and its surfaces meet this step; the
  normal row's target then becomes ``max(target, e va)`` (PhysX drops the position bias there;
  the max keeps the erp correction only where it asks more). PhysX also bounces a speculative
  contact that would close within the step (``gap < va dt``) at once, so its surfaces turn back
  up to the contact offset before they meet; here a bounce needs the surfaces touching at the
  step's start (``gap <= LANDED``): the speculative row keeps ``-gap / dt`` (``-gap / dt`` lands
  the surfaces exactly at the step's end; a target above it while the gap is open would turn
  back in mid-air), and the contact carries its approach speed into the next step (``_S_LND``,
  then ``prev_vin`` of the previous step's contact it warm-starts from), where the landed
  contact bounces with ``max(-vn0, carried)`` instead of the slow landing speed the speculative
  row left. So a bounce keeps the impact's speed; the turn comes at most one step late (the
  rebound lower by at most ``e va dt``).
- Friction: an elliptic (circular) cone per contact, ``|lambda_t| <= mu lambda_n``. Each
  tangent row steps on its own response with a compliance of ``CFM_T`` about its warm start
  (``v_ti = -CFM_T W_titi (lambda_ti - lambda_ti0)``, as in the active block); when the pair then lies within ``mu_static
  lambda_n`` the contact sticks. Otherwise it slides: the pair steps
  as one, ``lambda_t -= v_t / max(W_t1t1, W_t2t2)``, along the slip velocity, and is scaled
  onto ``mu_dynamic lambda_n`` (PhysX's pair material, ``pairs.py``), so a contact that
  slides has its friction exactly opposite its slip (a 2 x 2 block step would turn it by
  the response's anisotropy: a sliding box yaws).
- Rows only for the contacts that can close within the step (``SPECULATIVE_SPEED``), at
  most ``c_cap`` per environment.
- Warm start: a contact of the same shape pair within ``WARM_DIST`` of one of the previous
  step starts from that contact's world impulse (projected on the new normal and tangents).
- Projected Gauss-Seidel in the same loop as the joint rows (``rows.joint_rows``: a joint
  pass, a contact pass, until neither changes, at most ``c_iter`` passes). Each contact pass
  first solves every row that acts together (``active_block``): the normal rows that push or
  should (``lambda_n > 0`` or the bound violated), the friction rows of those contacts that
  stick (inside the static cone and not slid yet in this solve) and the joints whose rows are
  limits alone and push, at once on their block of ``D = (J S) C (J S)^T`` (a joint's row is
  ``a e_col``; factored with rank selection: a face's four corners repeat rows); bounded
  impulses that would change sign are dropped and the block solved again (at most
  ``ACTIVE_SET_ROUNDS`` times); a pass whose block has the rows of the one factored last
  reuses that factor; a contact whose friction the block would put outside its static cone
  slides, and its friction leaves the block for the rest of the step. Row by row, a light
  body squeezed between two heavy ones (a box between two pads driven by a stiff drive, both
  sides one DOF through the mimic relation) converges at ``(1 - W_pads / W_box)^2`` a pass,
  the pads' sticking friction at 3-10% a pass and the linkage's couplers on their limits at
  0.45 a pass: the grasp ran all 16 passes; with the block it converges in two. Then every
  contact row by Gauss-Seidel (normal, then friction: the sliding contacts' on the dynamic
  cone along their slip).
- A contact without impulses whose normal row's bound held by a slack ``s`` when last
  evaluated is not evaluated again while ``|J S|`` times the path length of the solve's
  velocity since then (every row change adds ``|C (J S)^T| |dl|``, the joint passes their
  measured change) stays below ``s``: its bound provably still holds, so the pass would
  leave it as it is (``provably_apart``).

Work space per contact (``ModelData.c_block`` entries at ``o_crow + c * c_block``): three rows
of ``J`` (n), ``J S`` (k), ``C (J S)^T`` (k), then the scalars listed at ``_S_*``.
"""

# no `from __future__ import annotations`: Warp reads these annotations as live types
import warp as wp

from .dynamics import F_DSAT, F_FRICTION, F_LOWER, F_UPPER, F_VMAX

#: The scalars after a contact's three rows, declared once (name, entries, meaning); their
#: offsets ``_S_<name>`` are generated from this table in order, ``N_SCALARS`` in all.
SLOTS = (
    ("LAM", 3, "the impulses of the normal and the two friction rows"),
    ("CST", 3, "each row's J u0"),
    ("TGT", 1, "the normal row's velocity bound"),
    ("IWN", 1, "1 / W_nn"),
    ("IWT", 1, "1 / max(W_t1t1, W_t2t2)"),
    ("MUS", 1, "static friction coefficient"),
    ("MUD", 1, "dynamic friction coefficient"),
    ("WN", 1, "W_nn"),
    ("WT", 1, "W_t1t1 + W_t2t2"),
    ("IW1", 2, "1 / W_t1t1, 1 / W_t2t2"),
    ("INB", 1, "the normal row in the block factored last: 1 in, 0 out, -1 no factor yet this step"),
    ("RSP", 1, "whether its responses are computed (contact_response)"),
    ("JN", 1, "the norm of the normal row's J S (provably_apart)"),
    ("RN", 3, "the norm of each row's response (provably_apart)"),
    ("LEV", 1, "the solve's velocity path length when last evaluated (-1: unknown)"),
    ("SLK", 1, "the normal row's slack J u - bound when last evaluated"),
    ("LND", 1, "the approach speed a speculative contact that lands this step carries into the next (0: none)"),
    ("SLD", 1, "its friction has slid in this solve (1: it stays out of the active block)"),
    ("LT0", 2, "the friction impulses it started the step with (the warm start: the friction compliance's rest)"),
)


def _slot_offsets(slots) -> dict[str, int]:
    out, off = {}, 0
    for name, size, _meaning in slots:
        out[name] = off
        off += size
    out[""] = off
    return out


_S = _slot_offsets(SLOTS)
_S_LAM, _S_CST, _S_TGT, _S_IWN, _S_IWT = _S["LAM"], _S["CST"], _S["TGT"], _S["IWN"], _S["IWT"]
_S_MUS, _S_MUD, _S_WN, _S_WT, _S_IW1 = _S["MUS"], _S["MUD"], _S["WN"], _S["WT"], _S["IW1"]
_S_INB, _S_RSP, _S_JN, _S_RN, _S_LEV = _S["INB"], _S["RSP"], _S["JN"], _S["RN"], _S["LEV"]
_S_SLK, _S_LND, _S_SLD, _S_LT0 = _S["SLK"], _S["LND"], _S["SLD"], _S["LT0"]
N_SCALARS = _S[""]


#: work-space entries per environment after the normal block's (``model.py``): the velocity path
#: length of this solve and a snapshot of the solve-space velocity (k entries)
def path_size(k: int) -> int:
    return 1 + k


#: metres: a new contact takes the impulse of the previous step's nearest contact of the same
#: shape pair within this distance (a resting box's corners are centimetres apart; a contact
#: moves by v dt per step)
WARM_DIST = wp.constant(0.005)
#: m/s: a pass in which no row changes its own velocity by more than this has converged. A row's
#: velocity is a sum of terms of 0.1-1 m/s, which float32 rounds to about 1e-6 m/s: at 1e-6 the
#: grasp's passes kept moving its friction rows by 1.0-1.4e-6 m/s every pass without shrinking
#: and ran all 16; at 1e-5 most of its steps converge in two
V_TOL = wp.constant(1.0e-5)
#: m/s: a contact gets rows when its gap could close within the step at this speed plus twice
#: its approach speed at the step's start; the others (detection reports every pair within
#: the contact offsets, PhysX's 60 Hz default of 5 mm and more) cost nothing
SPECULATIVE_SPEED = wp.constant(1.0)
#: active-set rounds of the normal block per pass
ACTIVE_SET_ROUNDS = wp.constant(4)
#: metres: a contact this close counts as touching for a bounce (a speculative row lands its
#: surfaces within the rows' compliance and float32 rounding of each other, far below this)
LANDED = wp.constant(1.0e-5)
#: the normal rows' compliance, relative to each row's own response: the rows hold
#: ``n . v_rel - bound = -CFM W_nn lambda_n``, which makes the solution unique (a pad's four
#: corners share its load instead of one corner taking it all) at a steady overlap of
#: ``CFM W_nn lambda_n dt / erp`` (under a micrometre at a grasp's 50 N)
CFM = wp.constant(1.0e-3)
#: the sticking friction rows' compliance, relative to each row's own response, about the
#: impulse the row started the step with (its warm start ``lambda_t0``): the rows hold
#: ``v_t = -CFM_T W_tt (lambda_t - lambda_t0)``, which makes the active block's friction unique
#: (a pad's four corners share the tangential load instead of the rows rank selection keeps
#: taking all of it, past their cones) and, about the warm start, costs no creep once the load
#: holds still (about 0: a box on a slope creeps at ``CFM_T`` times the velocity its friction
#: undoes each step); above float32's rank tolerance (1e-4), so no friction row is dropped
CFM_T = wp.constant(3.0e-4)


def block_size(n: int, k: int) -> int:
    """Work-space entries per contact for n DOFs and k solve-space columns."""
    return 3 * (n + 2 * k) + N_SCALARS


#: rows the active block solves together at most (the rest wait for the Gauss-Seidel rows): a
#: grasp's pushing contacts (three rows each) and its joints at their limits fit many times over
BLOCK_MAX = 48


def active_rows(cap: int, n1: int) -> int:
    """Rows of the active block for ``cap`` contacts and ``n1`` joints."""
    return min(3 * cap + n1, BLOCK_MAX)


def active_size(cap: int, n1: int) -> int:
    """Work-space entries from ``o_cD`` to ``o_cpath``: the active block of D (B x B) with its
    right-hand side, keep flags, row ids, rows' offsets and gains (``active_block``), the
    contacts' and joints' out-of-block flags and the joints' in-block flags."""
    b = active_rows(cap, n1)
    return b * b + 5 * b + cap + 2 * n1


def build_structs(ns) -> None:
    # imported here, not above: a model without colliders (the plain kernels) never loads detection
    from ..collision.wp_types import CollisionData, CollisionScratch, ContactBuffer

    @wp.struct
    class ContactCtx:
        """A contact model's detection data (``collision``) and per-environment contact state:
        the frames handed to detection (float32) and their motion bounds, the contacts that got rows, each contact's
        world impulse on shape a (read-out) and the previous step's contacts (warm start)."""

        cd: CollisionData
        csc: CollisionScratch
        buf: ContactBuffer
        frame_R: wp.array2d(dtype=wp.mat33)
        frame_p: wp.array2d(dtype=wp.vec3)
        frame_move: wp.array2d(dtype=wp.vec2)  # how far each frame moves and turns in the step (x 2)
        nc: wp.array(dtype=int)
        cmap: wp.array2d(dtype=int)  # per row block: its contact in the buffer
        imp: wp.array2d(dtype=wp.vec3)
        prev_n: wp.array(dtype=int)
        prev_shapes: wp.array2d(dtype=wp.vec2i)
        prev_point: wp.array2d(dtype=wp.vec3)
        prev_imp: wp.array2d(dtype=wp.vec3)
        prev_vin: wp.array2d(dtype=float)  # the approach speed a landed contact bounces with (restitution)

    ns.ContactCtx = ContactCtx
    ns.contact_v_tol = V_TOL  # the joint passes' convergence test in a contact model (``rows.joint_block``)


def build(ns) -> None:
    from ..collision.kernels import collide_env
    from ..collision.pairs import pair_frames, pair_material, pair_rest

    T, V3 = ns.T, ns.vec3
    A2 = wp.array2d(dtype=T)
    MD, SC = ns.ModelData, ns.Scratch
    sv = ns.sv

    @wp.func
    def tangents(n: V3):
        """Two unit tangents with (n, t1, t2) right-handed, a fixed function of n (so a warm
        start sees the same axes for the same normal)."""
        h = V3(T(1.0), T(0.0), T(0.0))
        if wp.abs(n[0]) > T(0.8):
            h = V3(T(0.0), T(1.0), T(0.0))
        t1 = wp.normalize(wp.cross(n, h))
        return t1, wp.cross(n, t1)

    @wp.func
    def v3t(x: wp.vec3):
        return V3(T(x[0]), T(x[1]), T(x[2]))

    @wp.func
    def v32(x: V3):
        return wp.vec3(wp.float32(x[0]), wp.float32(x[1]), wp.float32(x[2]))

    @wp.func
    def row_dir(n: V3, t1: V3, t2: V3, d: int):
        r = n
        if d == 1:
            r = t1
        elif d == 2:
            r = t2
        return r

    @wp.func(inline=False)
    def contact_detect(md: MD, sc: SC, e: int, o: V3, dt: T):
        """Detect on the links' frames of this step, then each contact's three rows (J, J S,
        J u0), its normal velocity bound, friction and warm-start impulses."""
        cx = sc.cx
        ws = sc.ws
        for l in range(md.n_links):
            R = sc.R[e, l]
            cx.frame_R[e, l] = wp.mat33(
                wp.float32(R[0, 0]),
                wp.float32(R[0, 1]),
                wp.float32(R[0, 2]),
                wp.float32(R[1, 0]),
                wp.float32(R[1, 1]),
                wp.float32(R[1, 2]),
                wp.float32(R[2, 0]),
                wp.float32(R[2, 1]),
                wp.float32(R[2, 2]),
            )
            cx.frame_p[e, l] = v32(sc.pos[e, l])
            # twice the distance and angle the frame moves in the step at its start velocity: a
            # contact gets rows within dt (SPECULATIVE_SPEED + twice its approach speed), so
            # detection looks no farther (``collision.kernels.pair_margin``)
            V = sc.V[e, l]
            w = ns.top(V)
            cx.frame_move[e, l] = wp.vec2(
                wp.float32(T(2.0) * dt * wp.length(ns.bot(V) + wp.cross(w, sc.pos[e, l] - o))),
                wp.float32(T(2.0) * dt * wp.length(w)),
            )
        collide_env(
            cx.cd, cx.frame_R, cx.frame_p, cx.frame_move, wp.float32(dt * T(SPECULATIVE_SPEED)), cx.csc, cx.buf, e
        )
        n = md.n_u
        k = md.k
        rs = n + 2 * k
        c = int(0)
        for bi in range(cx.buf.count[e]):
            sh = cx.buf.shapes[e, bi]
            fr = pair_frames(cx.cd, sh[0], sh[1])
            gap = T(cx.buf.sep[e, bi] - pair_rest(cx.cd, sh[0], sh[1]))
            nn = v3t(cx.buf.normal[e, bi])
            p = v3t(cx.buf.point[e, bi])
            # the normal velocity at the start of the step (links' spatial velocities about o)
            vn0 = T(0.0)
            if fr[0] >= 0:
                V = sc.V[e, fr[0]]
                vn0 = vn0 + wp.dot(nn, ns.bot(V) + wp.cross(ns.top(V), p - o))
            if fr[1] >= 0:
                V = sc.V[e, fr[1]]
                vn0 = vn0 - wp.dot(nn, ns.bot(V) + wp.cross(ns.top(V), p - o))
            if c >= md.c_cap or gap > dt * (T(2.0) * wp.max(-vn0, T(0.0)) + T(SPECULATIVE_SPEED)):
                continue  # too far to close this step: no row
            cx.cmap[e, c] = bi
            mat = pair_material(cx.cd, sh[0], sh[1])
            t1, t2 = tangents(nn)
            base = md.o_crow + c * md.c_block
            sb = base + 3 * rs
            for d in range(3):
                dv = row_dir(nn, t1, t2, d)
                oj = base + d * rs
                for j in range(n):
                    ws[e, oj + j] = T(0.0)
                wr = sv(wp.cross(p - o, dv), dv)
                if fr[0] >= 0:
                    ns.chain_add(md.links, sc.S, ws, e, fr[0], wr, oj, T(1.0))
                if fr[1] >= 0:
                    ns.chain_add(md.links, sc.S, ws, e, fr[1], wr, oj, T(-1.0))
                ws[e, sb + _S_CST + d] = ns.row_to_solve_space(md, ws, e, oj, oj + n)
            nrm = T(0.0)
            for i in range(k):
                nrm = nrm + ws[e, base + n + i] * ws[e, base + n + i]
            ws[e, sb + _S_JN] = wp.sqrt(nrm)
            tgt = -gap / dt
            if gap < T(0.0):
                tgt = md.erp * tgt
            ws[e, sb + _S_TGT] = tgt
            ws[e, sb + _S_MUS] = T(mat[0])
            ws[e, sb + _S_MUD] = T(mat[1])
            # warm start from the nearest previous contact of the same pair
            P = wp.vec3(0.0)
            vin = float(0.0)
            best = WARM_DIST * WARM_DIST
            for i in range(cx.prev_n[e]):
                if cx.prev_shapes[e, i] == sh:
                    d2 = wp.length_sq(cx.prev_point[e, i] - cx.buf.point[e, bi])
                    if d2 < best:
                        best = d2
                        P = cx.prev_imp[e, i]
                        vin = cx.prev_vin[e, i]
            # restitution: a touching contact bounces; a speculative one that PhysX would bounce
            # lands first and carries its approach speed (module docstring)
            ws[e, sb + _S_LND] = T(0.0)
            rst = T(mat[2])
            if rst > T(0.0):
                thr = T(cx.cd.bounce_threshold)
                if gap <= T(LANDED):
                    va = wp.max(-vn0, T(vin))
                    if va > thr:
                        ws[e, sb + _S_TGT] = wp.max(tgt, rst * va)
                elif -vn0 > thr and gap < -vn0 * dt:
                    ws[e, sb + _S_LND] = -vn0
            Pt = v3t(P)
            ln = wp.max(wp.dot(Pt, nn), T(0.0))
            l1 = wp.dot(Pt, t1)
            l2 = wp.dot(Pt, t2)
            r = wp.sqrt(l1 * l1 + l2 * l2)
            lim = T(mat[0]) * ln
            if r > lim:
                s = lim / r
                l1 = l1 * s
                l2 = l2 * s
            ws[e, sb + _S_LAM] = ln
            ws[e, sb + _S_LAM + 1] = l1
            ws[e, sb + _S_LAM + 2] = l2
            ws[e, sb + _S_LT0] = l1
            ws[e, sb + _S_LT0 + 1] = l2
            c = c + 1
        cx.nc[e] = c

    # Helpers called per row and pass take offsets, not the model struct: Warp passes structs
    # by value, and the model's is large.
    @wp.func
    def apply_row_at(ws: A2, e: int, ov: int, ojr: int, k: int, dl: T):
        """v += C (J S)^T dl (the rows' solve-space impulse sum gets the contacts' final
        impulses once, in ``contact_finish``)."""
        ors = ojr + k
        for i in range(k):
            ws[e, ov + i] = ws[e, ov + i] + ws[e, ors + i] * dl

    @wp.func
    def apply_tracked(ws: A2, e: int, ov: int, ojr: int, k: int, dl: T, sb: int, d: int, oL: int):
        """``apply_row_at``, and the solve's velocity path length grown by this change's bound
        ``|C (J S)^T| |dl|``."""
        apply_row_at(ws, e, ov, ojr, k, dl)
        ws[e, oL] = ws[e, oL] + ws[e, sb + _S_RN + d] * wp.abs(dl)

    @wp.func
    def provably_apart(ws: A2, e: int, sb: int, oL: int):
        """Whether the normal row's bound still holds without evaluating it: its velocity moved
        at most ``|J S|`` times the path length since it was last evaluated, less than its slack
        then (with 1e-5 m/s and 1e-5 of the bound to spare for rounding)."""
        slk = ws[e, sb + _S_SLK]
        if slk <= T(0.0):  # not evaluated yet in this solve, or not apart
            return False
        moved = (ws[e, oL] - ws[e, sb + _S_LEV]) * ws[e, sb + _S_JN]
        return moved + T(1.0e-5) * (T(1.0) + wp.abs(ws[e, sb + _S_TGT])) < slk

    @wp.func
    def dot_at(ws: A2, e: int, oa: int, ob: int, k: int, acc: T):
        """``acc`` plus the dot product of the k entries at ``oa`` and at ``ob``."""
        return acc + ns.dot_run(ws, e, oa, ob, k)

    @wp.func
    def row_velocity_at(ws: A2, e: int, ov: int, ojr: int, k: int, cst: T):
        """J u = (J S) v + J u0 for the current v."""
        return dot_at(ws, e, ojr, ov, k, cst)

    @wp.func(inline=False)
    def solve_rows3(lp: ns.FactorPattern, ws: A2, e: int, o: int, okeep: int, ox: int, rs: int):
        """``x <- H^+ x`` for a contact's three rows at once (at ``ox``, ``ox + rs``, ``ox + 2 rs``):
        ``factor.sparse_solve`` over all columns, each of the factor's entries and indices read once
        for the three."""
        for q in range(lp.k):
            x0 = ws[e, ox + q]
            x1 = ws[e, ox + rs + q]
            x2 = ws[e, ox + 2 * rs + q]
            if x0 != T(0.0) or x1 != T(0.0) or x2 != T(0.0):
                for a in range(lp.colptr[q], lp.colptr[q + 1]):
                    r = ox + lp.row[a]
                    L = ws[e, o + a]
                    ws[e, r] = ws[e, r] - L * x0
                    ws[e, r + rs] = ws[e, r + rs] - L * x1
                    ws[e, r + 2 * rs] = ws[e, r + 2 * rs] - L * x2
            if ws[e, okeep + q] != T(0.0):
                dq = ws[e, o + q]
                ws[e, ox + q] = x0 / dq
                ws[e, ox + rs + q] = x1 / dq
                ws[e, ox + 2 * rs + q] = x2 / dq
            else:
                ws[e, ox + q] = T(0.0)
                ws[e, ox + rs + q] = T(0.0)
                ws[e, ox + 2 * rs + q] = T(0.0)
        for qq in range(lp.k):
            q = lp.k - 1 - qq
            if ws[e, okeep + q] != T(0.0):
                s0 = ws[e, ox + q]
                s1 = ws[e, ox + rs + q]
                s2 = ws[e, ox + 2 * rs + q]
                for a in range(lp.colptr[q], lp.colptr[q + 1]):
                    r = ox + lp.row[a]
                    L = ws[e, o + a]
                    s0 = s0 - L * ws[e, r]
                    s1 = s1 - L * ws[e, r + rs]
                    s2 = s2 - L * ws[e, r + 2 * rs]
                ws[e, ox + q] = s0
                ws[e, ox + rs + q] = s1
                ws[e, ox + 2 * rs + q] = s2

    @wp.func(inline=False)
    def contact_response(md: MD, ws: A2, e: int, c: int):
        """Contact c's three rows' responses through C (on this solve's factor) and their own
        responses' inverses. Computed on first use (``needs_response``): a contact that never
        pushes costs no solve."""
        n = md.n_u
        k = md.k
        rs = n + 2 * k
        base = md.o_crow + c * md.c_block
        sb = base + 3 * rs
        for d in range(3):
            ojr = base + d * rs + n
            for i in range(k):
                ws[e, ojr + k + i] = ws[e, ojr + i]
        solve_rows3(md.lp, ws, e, md.o_H, md.o_kH, base + n + k, rs)
        if md.m > 0:
            for d in range(3):
                ns.loop_correct(md, ws, e, md.o_YT, md.o_SL, md.o_keep, base + d * rs + n + k, 0, k)
        wd = V3()
        for d in range(3):  # each row's own response J C J^T, and the response's norm
            acc = T(0.0)
            nrm = T(0.0)
            oa = base + d * rs + n
            for i in range(k):
                acc = acc + ws[e, oa + i] * ws[e, oa + k + i]
                nrm = nrm + ws[e, oa + k + i] * ws[e, oa + k + i]
            wd[d] = acc
            ws[e, sb + _S_RN + d] = wp.sqrt(nrm)
        iwn = T(0.0)
        if wd[0] > T(1.0e-9):  # 1/kg: an effective mass above 1e9 kg is a locked direction
            iwn = T(1.0) / wd[0]
        wt = wp.max(wd[1], wd[2])
        iwt = T(0.0)
        if wt > T(1.0e-9):
            iwt = T(1.0) / wt
        ws[e, sb + _S_IWN] = iwn
        ws[e, sb + _S_IWT] = iwt
        for d in range(2):
            iw = T(0.0)
            if wd[1 + d] > T(1.0e-9):
                iw = T(1.0) / wd[1 + d]
            ws[e, sb + _S_IW1 + d] = iw
        ws[e, sb + _S_WN] = wd[0]
        ws[e, sb + _S_WT] = wd[1] + wd[2]
        ws[e, sb + _S_RSP] = T(1.0)

    @wp.func
    def block_offsets(md: MD):
        """Where the active block keeps its parts in the work space (``active_size``): the block
        of D, its right-hand side, keep flags, row ids (contact c's row d is ``3 c + d``, joint
        j's ``3 c_cap + j``), each row's ``J S`` offset and gain (``block_factor``), the contacts'
        then the joints' out-of-block flags this pass, and each joint's row in the block factored
        last (a contact's: ``_S_INB``)."""
        bm = md.c_bmax
        oA = md.o_cD
        orhs = oA + bm * bm
        okeep = orhs + bm
        oidx = okeep + bm
        ojo = oidx + bm
        ogn = ojo + bm
        oout = ogn + bm
        return oA, orhs, okeep, oidx, ojo, ogn, oout, oout + md.c_cap + md.n1

    @wp.func
    def needs_response(ws: A2, e: int, sb: int):
        return ws[e, sb + _S_RSP] == T(0.0)

    @wp.func(inline=False)
    def contact_prepare(md: MD, sc: SC, e: int):
        """No response computed yet this solve; the warm-start impulses applied to v (their
        contacts' responses computed for it)."""
        ws = sc.ws
        n = md.n_u
        k = md.k
        rs = n + 2 * k
        ov = md.o_v
        for c in range(sc.cx.nc[e]):
            base = md.o_crow + c * md.c_block
            sb = base + 3 * rs
            ws[e, sb + _S_RSP] = T(0.0)
            ws[e, sb + _S_WN] = T(0.0)  # read as CFM W_nn lambda_n with lambda_n = 0 before the response
            ws[e, sb + _S_INB] = T(-1.0)
            ws[e, sb + _S_SLK] = T(-1.0)
            ws[e, sb + _S_SLD] = T(0.0)
            for d in range(3):
                lam = ws[e, sb + _S_LAM + d]
                if lam != T(0.0):
                    if needs_response(ws, e, sb):
                        contact_response(md, ws, e, c)
                    apply_row_at(ws, e, ov, base + d * rs + n, k, lam)
        oL = md.o_cpath
        ws[e, oL] = T(0.0)
        for i in range(k):
            ws[e, oL + 1 + i] = ws[e, ov + i]
        oA, orhs, okeep, oidx, ojo, ogn, oout, ojin = block_offsets(md)
        for j in range(md.n1):
            ws[e, ojin + j] = T(-1.0)  # no block factored yet this step

    # The block's helpers, called per entry, row and round, take offsets, not the model struct
    # (Warp passes structs by value: the model's is some 1.5 KB).
    @wp.func(inline=False)
    def block_factor(md: MD, ws: A2, e: int, oA: int, okeep: int, oidx: int, ojo: int, ogn: int, m: int):
        """The active block of ``D = (J S) C (J S)^T`` over its m rows, factored at ``oA`` with
        rank selection (the normal rows' compliance on their diagonal). Row a's ``J S`` starts at
        ``ws[ojo + a]`` with its response ``C (J S)^T`` k entries after it; a joint's row is
        ``gain e_col`` (``ws[ojo + a] = -1 - col``, the gain at ``ogn + a``), so an entry with it
        is its gain times the other row's response at its column."""
        k = md.k
        nr = 3 * md.c_cap
        for a in range(m):
            ja = int(ws[e, ojo + a])
            ga = ws[e, ogn + a]
            for b in range(a + 1):
                jb = int(ws[e, ojo + b])
                d = T(0.0)
                if ja >= 0 and jb >= 0:
                    d = dot_at(ws, e, ja, jb + k, k, T(0.0))
                elif ja >= 0:
                    d = ws[e, ogn + b] * ws[e, ja + k - 1 - jb]
                elif jb >= 0:
                    d = ga * ws[e, jb + k - 1 - ja]
                else:  # two joints: nothing across groups (C is block diagonal)
                    ca = -1 - ja
                    cb = -1 - jb
                    if ca >= md.grp_lo[cb] and ca < md.grp_hi[cb]:
                        oR = ns.column_response(md, ws, e, cb)
                        d = ga * ws[e, ogn + b] * ws[e, oR + ca]
                ws[e, oA + a * m + b] = d
            ia = int(ws[e, oidx + a])
            if ia < nr:  # a contact row: its compliance
                cfm = T(CFM)
                if ia % 3 != 0:
                    cfm = T(CFM_T)
                ws[e, oA + a * m + a] = ws[e, oA + a * m + a] * (T(1.0) + cfm)
        for a in range(m):  # a pivot below this floor is a locked row (``factor`` drops repeated ones)
            ws[e, okeep + a] = T(1.0e-9)
        ns.factor(ws, e, oA, m, okeep, md.rank_tol)

    @wp.func
    def limit_row(jd: ns.JointData, lam: T, W: T, drow: T, qj: T, w: T, erp: T, idt: T):
        """A joint's velocity ``w`` minus its active limit's target, when its rows are its limits
        alone (``drow``: 1 for a bounded drive row) and its impulse ``lam`` holds one (the sign of
        the impulse: which); 0 and no row otherwise."""
        if lam == T(0.0) or (jd.flags & (F_VMAX | F_FRICTION)) != 0 or W <= T(0.0):
            return int(0), T(0.0)
        if (jd.flags & F_DSAT) != 0 and drow == T(1.0):
            return int(0), T(0.0)  # a bounded drive row: the joint's own block solves it
        if lam > T(0.0):
            if (jd.flags & F_LOWER) == 0:
                return int(0), T(0.0)
            return int(1), w - ns.limit_speed(jd.lower, qj, idt, erp, qj < jd.lower)
        if (jd.flags & F_UPPER) == 0:
            return int(0), T(0.0)
        return int(1), w - ns.limit_speed(jd.upper, qj, idt, erp, qj > jd.upper)

    @wp.func
    def block_impulse(ws: A2, e: int, nr: int, olam: int, ob0: int, cb: int, osc: int, ia: int):
        """A block row's impulse and its bound's sign (1: >= 0, a normal row; the joint's: its
        limit's side; 0: free, a friction row); ``osc``: a contact's scalars in its block."""
        if ia >= nr:
            lam = ws[e, olam + ia - nr]
            s = T(1.0)
            if lam < T(0.0):
                s = T(-1.0)
            return lam, s
        c = ia // 3
        d = ia - 3 * c
        s = T(0.0)
        if d == 0:
            s = T(1.0)
        return ws[e, ob0 + c * cb + osc + _S_LAM + d], s

    @wp.func
    def own_response(iw: T):
        """A row's own response W from its stored inverse (0: a locked row)."""
        w = T(0.0)
        if iw > T(0.0):
            w = T(1.0) / iw
        return w

    @wp.func
    def out_slot(cap: int, nr: int, ia: int):
        """A block row's out-of-block flag: its contact's, or its joint's after the contacts'."""
        if ia >= nr:
            return cap + ia - nr
        return ia // 3

    @wp.func
    def track_path(ws: A2, e: int, oL: int, ov: int, k: int):
        """The solve's velocity path length at ``oL`` grown by how far v moved since its snapshot
        (after it), and the snapshot taken again."""
        moved = T(0.0)
        for i in range(k):
            dv = ws[e, ov + i] - ws[e, oL + 1 + i]
            moved = moved + dv * dv
            ws[e, oL + 1 + i] = ws[e, ov + i]
        ws[e, oL] = ws[e, oL] + wp.sqrt(moved)

    @wp.func(inline=False)
    def active_block(md: MD, sc: SC, e: int, q: A2, idt: T):
        """Every row that acts solved together, as a feasible active-set method on their block of
        D: the normal rows that push (``lambda_n > 0``) or whose bound is violated, the friction
        rows of those that stick (within the static cone, not slid yet this solve; held at the
        compliant ``v_t = -CFM_T W_tt (lambda_t - lambda_t0)``), and the joints whose rows are limits and push.
        Rank selection drops repeated rows. A bounded row at 0 that the step would pull leaves and
        the block is solved again, as does the friction of a contact the step would put outside
        its static cone (it slides: the Gauss-Seidel step puts it on the dynamic cone); otherwise
        the step is cut where the first bounded impulse reaches 0 (that row leaves), so the
        impulses keep their signs and cones and every round lowers the rows' error. Row by row a
        box between two pads on a stiff drive converges at ``(1 - W_pads / W_box)^2`` a pass, a
        grasp's friction and the linkage's limits each at their own rate: the block gets them
        all in one."""
        ws = sc.ws
        n = md.n_u
        k = md.k
        rs = n + 2 * k
        ov = md.o_v
        nc = sc.cx.nc[e]
        cap = md.c_cap
        n1 = md.n1
        bm = md.c_bmax
        nr = 3 * cap
        oA, orhs, okeep, oidx, ojo, ogn, oout, ojin = block_offsets(md)
        oL = md.o_cpath
        for i in range(nc):
            ws[e, oout + i] = T(0.0)
        for j in range(n1):
            ws[e, oout + cap + j] = T(0.0)
        for rnd in range(ACTIVE_SET_ROUNDS):
            m = int(0)
            same = int(1)  # the rows of the block factored last: its factor stands (D is the step's)
            for i in range(nc):
                base = md.o_crow + i * md.c_block
                sb = base + 3 * rs
                lam = ws[e, sb + _S_LAM]
                r = T(0.0)
                if lam == T(0.0) and provably_apart(ws, e, sb, oL):
                    r = T(1.0)  # bound holds (not evaluated)
                else:
                    r = (
                        row_velocity_at(ws, e, ov, base + n, k, ws[e, sb + _S_CST])
                        - ws[e, sb + _S_TGT]
                        + T(CFM) * ws[e, sb + _S_WN] * lam
                    )
                    if lam == T(0.0):
                        ws[e, sb + _S_LEV] = ws[e, oL]
                        ws[e, sb + _S_SLK] = r
                sel = T(0.0)
                if ws[e, oout + i] == T(0.0) and (lam > T(0.0) or r < T(0.0)) and m < bm:
                    if needs_response(ws, e, sb):
                        contact_response(md, ws, e, i)
                    ws[e, oidx + m] = T(float(3 * i))
                    ws[e, ojo + m] = T(float(base + n))
                    ws[e, orhs + m] = -r
                    m = m + 1
                    sel = T(1.0)
                    l1 = ws[e, sb + _S_LAM + 1]
                    l2 = ws[e, sb + _S_LAM + 2]
                    cone = ws[e, sb + _S_MUS] * lam
                    if (
                        m + 2 <= bm
                        and ws[e, sb + _S_SLD] == T(0.0)
                        and ws[e, sb + _S_MUS] > T(0.0)
                        and l1 * l1 + l2 * l2 <= cone * cone
                    ):
                        for d in range(1, 3):
                            ws[e, oidx + m] = T(float(3 * i + d))
                            ws[e, ojo + m] = T(float(base + d * rs + n))
                            ws[e, orhs + m] = -row_velocity_at(
                                ws, e, ov, base + d * rs + n, k, ws[e, sb + _S_CST + d]
                            ) - T(CFM_T) * own_response(ws[e, sb + _S_IW1 + d - 1]) * (
                                ws[e, sb + _S_LAM + d] - ws[e, sb + _S_LT0 + d - 1]
                            )
                            m = m + 1
                        sel = T(2.0)
                if sel != ws[e, sb + _S_INB]:
                    same = int(0)
                    ws[e, sb + _S_INB] = sel
            for j in range(n1):
                sel = T(0.0)
                if ws[e, oout + cap + j] == T(0.0) and m < bm:
                    jd = md.joints[j]
                    act, r = limit_row(
                        jd,
                        ws[e, md.o_lam + j],
                        ws[e, md.o_W + 2 * j],
                        ws[e, md.o_drv + 3 * j + 2],
                        q[e, j],
                        jd.gain * ws[e, ov + jd.col] + ws[e, md.o_u0 + j],
                        md.erp,
                        idt,
                    )
                    if act != 0:
                        ws[e, oidx + m] = T(float(nr + j))
                        ws[e, ojo + m] = T(float(-1 - jd.col))
                        ws[e, ogn + m] = jd.gain
                        ws[e, orhs + m] = -r
                        m = m + 1
                        sel = T(1.0)
                if sel != ws[e, ojin + j]:
                    same = int(0)
                    ws[e, ojin + j] = sel
            if m == 0:
                break
            if same == 0:
                block_factor(md, ws, e, oA, okeep, oidx, ojo, ogn, m)
            ns.solve(ws, e, oA, m, okeep, orhs)
            pulled = int(0)
            alpha = T(1.0)
            for a in range(m):
                ia = int(ws[e, oidx + a])
                lam, s = block_impulse(ws, e, nr, md.o_lam, md.o_crow, md.c_block, 3 * rs, ia)
                ds = s * ws[e, orhs + a]
                if ds < T(0.0):
                    if s * lam <= T(0.0):
                        ws[e, oout + out_slot(cap, nr, ia)] = T(1.0)  # at 0 and pulled: out
                        pulled = int(1)
                    else:
                        alpha = wp.min(alpha, -(s * lam) / ds)
            if pulled == 0:  # the friction the step would give each sticking contact: inside its cone?
                for a in range(m - 2):
                    ia = int(ws[e, oidx + a])
                    if ia < nr and ia % 3 == 0 and int(ws[e, oidx + a + 1]) == ia + 1:
                        sb = md.o_crow + (ia // 3) * md.c_block + 3 * rs
                        ln = wp.max(ws[e, sb + _S_LAM] + alpha * ws[e, orhs + a], T(0.0))
                        l1 = ws[e, sb + _S_LAM + 1] + alpha * ws[e, orhs + a + 1]
                        l2 = ws[e, sb + _S_LAM + 2] + alpha * ws[e, orhs + a + 2]
                        cone = ws[e, sb + _S_MUS] * ln
                        if l1 * l1 + l2 * l2 > cone * cone * T(1.0 + 1.0e-6):
                            ws[e, sb + _S_SLD] = T(1.0)  # it would slide: its friction leaves the block
                            pulled = int(1)
            if pulled == 0:
                for a in range(m):
                    ia = int(ws[e, oidx + a])
                    old, s = block_impulse(ws, e, nr, md.o_lam, md.o_crow, md.c_block, 3 * rs, ia)
                    new = old + alpha * ws[e, orhs + a]
                    if s * new <= T(0.0) and s != T(0.0):
                        new = T(0.0)
                        ws[e, oout + out_slot(cap, nr, ia)] = T(1.0)  # the row that blocked the step leaves
                    dl = new - old
                    if dl == T(0.0):
                        continue
                    if ia >= nr:
                        ns.joint_impulse(md, ws, e, ia - nr, new, dl)
                    else:
                        ci = ia // 3
                        d = ia - 3 * ci
                        base = md.o_crow + ci * md.c_block
                        ws[e, base + 3 * rs + _S_LAM + d] = new
                        apply_row_at(ws, e, ov, base + d * rs + n, k, dl)
                track_path(ws, e, oL, ov, k)
                if alpha >= T(1.0):
                    break

    @wp.func(inline=False)
    def contact_pass(md: MD, sc: SC, e: int, q: A2, idt: T):
        """The active block, then one projected Gauss-Seidel pass over the contacts (normal, then
        the friction pair on its cone); returns 1 when a row changed its own velocity by more than
        V_TOL."""
        ws = sc.ws
        n = md.n_u
        k = md.k
        rs = n + 2 * k
        ov = md.o_v
        changed = int(0)
        oL = md.o_cpath
        track_path(ws, e, oL, ov, k)  # what the joint rows did to v since the last pass
        active_block(md, sc, e, q, idt)
        for c in range(sc.cx.nc[e]):
            base = md.o_crow + c * md.c_block
            sb = base + 3 * rs
            old = ws[e, sb + _S_LAM]
            idle = old == T(0.0) and ws[e, sb + _S_LAM + 1] == T(0.0) and ws[e, sb + _S_LAM + 2] == T(0.0)
            if idle and provably_apart(ws, e, sb, oL):
                continue
            # normal: lambda_n >= 0, n . v_rel >= target
            vn = row_velocity_at(ws, e, ov, base + n, k, ws[e, sb + _S_CST])
            if old == T(0.0):
                ws[e, sb + _S_LEV] = ws[e, oL]
                ws[e, sb + _S_SLK] = vn - ws[e, sb + _S_TGT]
            if idle and vn >= ws[e, sb + _S_TGT]:
                continue  # apart and nothing to keep: no impulse, no friction (and no response needed)
            if needs_response(ws, e, sb):
                contact_response(md, ws, e, c)
            wn = ws[e, sb + _S_WN]
            lam_n = wp.max(
                old + (ws[e, sb + _S_TGT] - vn - T(CFM) * wn * old) * ws[e, sb + _S_IWN] / (T(1.0) + T(CFM)), T(0.0)
            )
            dl = lam_n - old
            if dl != T(0.0):
                ws[e, sb + _S_LAM] = lam_n
                apply_tracked(ws, e, ov, base + n, k, dl, sb, 0, oL)
                if wp.abs(dl) * ws[e, sb + _S_WN] > T(V_TOL):
                    changed = int(1)
            # friction: the tangent pair along its slip velocity, then onto the cone
            v1 = row_velocity_at(ws, e, ov, base + rs + n, k, ws[e, sb + _S_CST + 1])
            v2 = row_velocity_at(ws, e, ov, base + 2 * rs + n, k, ws[e, sb + _S_CST + 2])
            o1 = ws[e, sb + _S_LAM + 1]
            o2 = ws[e, sb + _S_LAM + 2]
            # sticking: each row on its own response, with the rows' compliance
            l1 = o1 - (ws[e, sb + _S_IW1] * v1 + T(CFM_T) * (o1 - ws[e, sb + _S_LT0])) / (T(1.0) + T(CFM_T))
            l2 = o2 - (ws[e, sb + _S_IW1 + 1] * v2 + T(CFM_T) * (o2 - ws[e, sb + _S_LT0 + 1])) / (T(1.0) + T(CFM_T))
            if l1 * l1 + l2 * l2 > (ws[e, sb + _S_MUS] * lam_n) * (ws[e, sb + _S_MUS] * lam_n):
                iwt = ws[e, sb + _S_IWT]  # sliding: along the slip, onto the cone
                l1 = o1 - iwt * v1
                l2 = o2 - iwt * v2
                r = wp.sqrt(l1 * l1 + l2 * l2)
                s = T(0.0)
                if r > T(0.0):
                    s = ws[e, sb + _S_MUD] * lam_n / r
                l1 = l1 * s
                l2 = l2 * s
                ws[e, sb + _S_SLD] = T(1.0)  # slid: its friction stays out of the block
            d1 = l1 - o1
            d2 = l2 - o2
            if d1 != T(0.0) or d2 != T(0.0):
                ws[e, sb + _S_LAM + 1] = l1
                ws[e, sb + _S_LAM + 2] = l2
                apply_tracked(ws, e, ov, base + rs + n, k, d1, sb, 1, oL)
                apply_tracked(ws, e, ov, base + 2 * rs + n, k, d2, sb, 2, oL)
                if (wp.abs(d1) + wp.abs(d2)) * ws[e, sb + _S_WT] > T(V_TOL):
                    changed = int(1)
        return changed

    @wp.func(inline=False)
    def contact_finish(md: MD, sc: SC, e: int):
        """The contacts' generalized impulse ``sum J^T lambda`` (for the coupling read-out) and
        their ``sum (J S)^T lambda`` into the rows' sum (before ``rows.joint_rows_finish``), each
        contact's world impulse on shape a, and this step's contacts kept for the warm start."""
        cx = sc.cx
        ws = sc.ws
        n = md.n_u
        k = md.k
        rs = n + 2 * k
        for j in range(n):
            ws[e, md.o_cimp + j] = T(0.0)
        nc = cx.nc[e]
        for bi in range(cx.buf.count[e]):
            cx.imp[e, bi] = wp.vec3(0.0)
        for c in range(nc):
            base = md.o_crow + c * md.c_block
            sb = base + 3 * rs
            bi = cx.cmap[e, c]
            nn = v3t(cx.buf.normal[e, bi])
            t1, t2 = tangents(nn)
            P = V3(T(0.0))
            for d in range(3):
                lam = ws[e, sb + _S_LAM + d]
                P = P + lam * row_dir(nn, t1, t2, d)
                if lam != T(0.0):
                    oj = base + d * rs
                    for j in range(n):
                        ws[e, md.o_cimp + j] = ws[e, md.o_cimp + j] + ws[e, oj + j] * lam
                    for i in range(k):  # the rows' solve-space impulse sum (the loops' follow it)
                        ws[e, md.o_gsum + i] = ws[e, md.o_gsum + i] + ws[e, oj + n + i] * lam
            cx.imp[e, bi] = v32(P)
            cx.prev_shapes[e, c] = cx.buf.shapes[e, bi]
            cx.prev_point[e, c] = cx.buf.point[e, bi]
            cx.prev_imp[e, c] = v32(P)
            land = T(0.0)
            if ws[e, sb + _S_LAM] > T(0.0):  # its row pushed: the surfaces meet at the step's end
                land = ws[e, sb + _S_LND]
            cx.prev_vin[e, c] = wp.float32(land)
        cx.prev_n[e] = nc

    ns.contact_detect, ns.contact_prepare, ns.contact_pass, ns.contact_finish = (
        contact_detect,
        contact_prepare,
        contact_pass,
        contact_finish,
    )
    ns.solve_rows3 = solve_rows3
