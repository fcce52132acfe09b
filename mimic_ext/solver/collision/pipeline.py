"""CollisionModel: colliders packed for the Warp kernel, per-environment buffers, and the
detection call the solver's step makes with its link frames."""

from __future__ import annotations

import numpy as np
import warp as wp

from ..devices import resolve_device
from . import wp_types as T
from .frames import FrameLayout, motion_frames
from .pair_filter import pair_filter
from .readout import Contacts
from .shapes import COMBINE_MODES, KINDS, CollisionSpec, FreeBody

#: contacts per environment and shape, unless ``capacity`` is given
CONTACTS_PER_SHAPE = 8
#: a shape whose bounding diameter exceeds this many times the median goes to the "big" list
BIG_FACTOR = 4.0


def combine_materials(a, b) -> tuple[float, float, float]:
    """PhysX's pair material: each value averaged, or min / multiply / max when a material
    asks; with two different modes the later in average < min < multiply < max wins."""

    def one(x, y, mode):
        return {"average": 0.5 * (x + y), "min": min(x, y), "multiply": x * y, "max": max(x, y)}[mode]

    fm = max(a.friction_mode, b.friction_mode, key=COMBINE_MODES.index)
    rm = max(a.restitution_mode, b.restitution_mode, key=COMBINE_MODES.index)
    return (
        one(a.static_friction, b.static_friction, fm),
        one(a.dynamic_friction, b.dynamic_friction, fm),
        one(a.restitution, b.restitution, rm),
    )


def _pow2(n: int) -> int:
    p = 16
    while p < n:
        p *= 2
    return p


def _median(values: np.ndarray) -> float:
    """``np.median`` of a 1-D array, the same value, without its check for masked arrays, which
    imports ``numpy.ma`` (15 ms of a one-stage sweep's start-up, issue 43)."""
    s = np.sort(values)
    m = len(s) // 2
    return float(s[m]) if len(s) % 2 else float((s[m - 1] + s[m]) / 2.0)


class CollisionModel:
    """The colliders of a stage against the frames of a solver Model (and free bodies).

    ``collide(frame_R, frame_p)`` takes one rotation and origin per frame and environment
    (``(N, n_frames)`` Warp arrays of mat33 / vec3, world): the model's links' joint-motion
    frames first (``frames.motion_frames``; the solver's ``sc.R`` / ``sc.pos``), then the
    free bodies' body frames. ``contacts()`` reads the buffer back.
    """

    def __init__(
        self, spec: CollisionSpec, layout: FrameLayout, num_envs: int = 1, device=None, capacity: int | None = None
    ):
        self.spec = spec
        self.layout = layout
        self.num_envs = int(num_envs)
        self.device = resolve_device(device)
        self.warnings = list(spec.warnings)
        shapes = spec.shapes
        self.shape_paths = [s.path for s in shapes]
        self.shape_bodies = [s.body for s in shapes]
        self.shape_kinds = [s.kind for s in shapes]
        n = len(shapes)
        nf = layout.n_frames
        # owners: a frame per simulated link/body, then one per static actor
        pf = pair_filter(spec, {body: f for body, (f, _) in layout.body_frame.items()}, nf)
        owner_of, gsets = pf.owner_of, pf.gsets
        self.n_owners = pf.n_owners
        mats = sorted({s.material for s in shapes}, key=repr)
        verts: list = []  # wp.vec3 per hull vertex
        faces: list = []  # T.FaceData per hull face
        fverts: list[int] = []
        data = []
        diam = np.zeros(n)
        self.shape_frame = pf.frame
        for i, s in enumerate(shapes):
            sd = T.ShapeData()
            sd.kind = KINDS.index(s.kind)
            if s.static:
                frame, pose = -1, s.pose
            else:
                assert s.body is not None  # a shape that is not static has a body
                frame, in_frame = layout.body_frame[s.body]
                pose = in_frame @ s.pose
            sd.frame, sd.owner = frame, owner_of[s.actor]
            sd.R, sd.p = wp.mat33(*pose[:3, :3].flatten()), wp.vec3(*pose[:3, 3])
            sd.size = wp.vec3(*s.size)
            sd.radius = float(s.size[0]) if s.kind in ("sphere", "capsule") else 0.0
            sd.v0 = sd.nv = sd.f0 = sd.nf = 0
            if s.hull is not None:
                sd.v0, sd.nv, sd.f0, sd.nf = len(verts), len(s.hull.vertices), len(faces), len(s.hull.faces)
                for fi, idx in enumerate(s.hull.faces):
                    fd = T.FaceData()
                    fd.n, fd.d = wp.vec3(*s.hull.normals[fi]), float(s.hull.offsets[fi])
                    fd.start, fd.count = len(fverts), len(idx)
                    fverts.extend(int(sd.v0 + k) for k in idx)
                    faces.append(fd)
                verts.extend(wp.vec3(*v) for v in s.hull.vertices)
            c, h = s.local_bounds()
            bounded = np.all(np.isfinite(h))
            sd.center, sd.half = wp.vec3(*c), wp.vec3(*(h if bounded else np.zeros(3)))
            diam[i] = 2.0 * np.linalg.norm(h) + 2.0 * s.contact_offset if bounded else np.inf
            sd.offset, sd.rest = float(s.contact_offset), float(s.rest_offset)
            sd.mat, sd.gset = mats.index(s.material), gsets.index(s.groups)
            data.append(sd)
        finite = np.isfinite(diam)
        med = _median(diam[finite]) if finite.any() else 1.0
        small = [i for i in range(n) if finite[i] and diam[i] <= BIG_FACTOR * med]
        big = [i for i in range(n) if finite[i] and diam[i] > BIG_FACTOR * med]
        planes = [i for i in range(n) if not finite[i]]
        for i in big:
            data[i].big = 1
        for i in small + planes:
            data[i].big = 0
        cell = 1.001 * float(max((diam[i] for i in small), default=1.0))
        self.cell_size = cell
        self.small, self.big, self.planes = small, big, planes
        d = self.device

        def arr(items, t):
            """Warp array of ``items``; one placeholder element when empty (Warp needs a buffer)."""
            return wp.array(list(items) or [0 if t is int else t()], dtype=t, device=d)

        cd = T.CollisionData()
        cd.n_shapes, cd.n_owners = n, self.n_owners
        cd.shapes = arr(data, T.ShapeData)
        cd.verts = arr(verts, wp.vec3)
        cd.faces = arr(faces, T.FaceData)
        cd.fverts = arr(fverts, int)
        cd.n_mats = max(len(mats), 1)
        self.pair_material = (
            np.array([combine_materials(x, y) for x in mats for y in mats]).reshape(-1, 3) if mats else np.zeros((1, 3))
        )
        cd.pair_mat = arr([wp.vec3(*v) for v in self.pair_material], wp.vec3)
        self.shape_material = np.array([mats.index(s.material) for s in shapes], int)
        self.shape_rest = np.array([s.rest_offset for s in shapes], float)
        cd.n_gsets = max(len(gsets), 1)
        cd.gtable = arr(pf.table or [1], int)
        owner_keys, shape_keys = pf.owner_keys, pf.shape_keys
        if pf.n_owners * pf.n_owners >= 2**31 or n * n >= 2**31:
            raise ValueError("too many colliders for 32-bit pair keys")
        self.live_pairs = pf.live_pairs()
        cd.n_owner_pairs, cd.owner_pairs = len(owner_keys), arr(sorted(owner_keys), int)
        cd.n_shape_pairs, cd.shape_pairs = len(shape_keys), arr(sorted(shape_keys), int)
        cd.n_small, cd.small = len(small), arr(small, int)
        cd.n_big, cd.big = len(big), arr(big, int)
        cd.n_planes, cd.planes = len(planes), arr(planes, int)
        cd.inv_cell = 1.0 / cell
        entries = 8 * len(small) + 8
        cd.hash_mask = _pow2(2 * entries) - 1
        self.capacity = int(capacity) if capacity is not None else max(16, CONTACTS_PER_SHAPE * n)
        cd.capacity = self.capacity
        cd.bounce_threshold = float(spec.bounce_threshold)
        self.data = cd
        self._alloc(entries)

    @classmethod
    def of_shapes(
        cls, shapes, num_envs: int = 1, device=None, capacity: int | None = None, joint_pairs=(), filtered_pairs=()
    ) -> CollisionModel:
        """Detection only, without a stage or solver model: every body the shapes name is a
        free frame (in order of first appearance), shapes without a body or marked static
        stay where they are. Frames are then the bodies' world poses."""
        bodies = []
        for s in shapes:
            if not s.static and s.body not in bodies:
                bodies.append(s.body)
        free = [
            FreeBody(
                path=b,
                pose=np.eye(4),
                mass=1.0,
                com=np.zeros(3),
                inertia=np.eye(3),
                velocity=np.zeros(3),
                angular_velocity=np.zeros(3),
                shapes=[i for i, s in enumerate(shapes) if s.body == b],
            )
            for b in bodies
        ]
        layout = FrameLayout(
            names=list(bodies), body_frame={b: (i, np.eye(4)) for i, b in enumerate(bodies)}, n_links=0
        )
        sets = {s.groups for s in shapes}
        spec = CollisionSpec(
            shapes=list(shapes),
            free_bodies=free,
            group_table={(a, b): True for a in sets for b in sets},
            joint_pairs=list(joint_pairs),
            no_self_collision=[],
            filtered_pairs=list(filtered_pairs),
            warnings=[],
        )
        return cls(spec, layout, num_envs=num_envs, device=device, capacity=capacity)

    def _alloc(self, entries: int) -> None:
        N, d, n = self.num_envs, self.device, max(len(self.shape_paths), 1)
        z = lambda cols, t: wp.zeros((N, cols), dtype=t, device=d)  # noqa: E731
        sc = T.CollisionScratch()
        sc.Rw, sc.pw, sc.lo, sc.hi = z(n, wp.mat33), z(n, wp.vec3), z(n, wp.vec3), z(n, wp.vec3)
        sc.heads = z(self.data.hash_mask + 1, int)
        sc.ent, sc.nxt = z(entries, wp.vec4i), z(entries, int)
        sc.pts = z(T.PTS, wp.vec3)
        sc.cand, sc.cs = z(T.MAXC, wp.vec3), z(T.MAXC, float)
        sc.tri, sc.pln, sc.edges = z(T.MAXF, wp.vec3i), z(T.MAXF, wp.vec4), z(T.MAXE, wp.vec2i)
        sc.gk_key = wp.full((N, T.GK_SLOTS), -1, dtype=int, device=d)
        sc.gk_R, sc.gk_t, sc.gk_d = z(T.GK_SLOTS, wp.mat33), z(T.GK_SLOTS, wp.vec3), z(T.GK_SLOTS, float)
        self.scratch = sc
        self._no_move = wp.zeros((1, 1), dtype=wp.vec2, device=d)  # detection alone: frames' motion not used
        C = self.capacity
        b = T.ContactBuffer()
        b.count, b.lost = wp.zeros(N, dtype=int, device=d), wp.zeros(N, dtype=int, device=d)
        b.stats = wp.zeros(N, dtype=wp.vec4i, device=d)
        b.shapes = z(C, wp.vec2i)
        b.point, b.normal = z(C, wp.vec3), z(C, wp.vec3)
        b.sep = z(C, float)
        self.buffer = b

    # ---- detection ----------------------------------------------------------------------------
    def frames(self, model=None, q=None, free_poses=None) -> tuple[wp.array, wp.array]:
        """Frame arrays for ``collide`` from host data: the links' joint-motion frames for
        ``q`` (``(coord_count,)`` or ``(N, coord_count)``; the model's state when None) and the
        free bodies' world poses ``free_poses`` (``{path: 4x4}`` or ``{path: (N, 4, 4)}``;
        their stage poses when missing). For tests and users; the solver passes its own."""
        N, F, L = self.num_envs, max(self.layout.n_frames, 1), self.layout.n_links
        R = np.tile(np.eye(3, dtype=np.float32), (N, F, 1, 1))
        p = np.zeros((N, F, 3), np.float32)
        if L:
            qs = np.asarray(model.state().joint_q.numpy()[0] if q is None else q, float)
            qs = np.broadcast_to(qs, (N, qs.shape[-1]))
            for e in range(N):
                R[e, :L], p[e, :L] = motion_frames(model, qs[e])
        poses = {fb.path: fb.pose for fb in self.spec.free_bodies}
        poses.update(free_poses or {})
        for k, fb in enumerate(self.spec.free_bodies):
            t = np.broadcast_to(np.asarray(poses[fb.path], float), (N, 4, 4))
            R[:, L + k], p[:, L + k] = t[:, :3, :3], t[:, :3, 3]
        return wp.array(R, dtype=wp.mat33, device=self.device), wp.array(p, dtype=wp.vec3, device=self.device)

    def collide(
        self, frame_R: wp.array, frame_p: wp.array, frame_move: wp.array | None = None, reach0: float | None = None
    ) -> T.ContactBuffer:
        """Detect every environment's contacts for the given frames (one thread each), every pair
        out to its contact offsets; or, with ``frame_move`` (per environment and frame: how far
        its origin moves, how far it turns) and ``reach0`` (m), only as far as the pair can close
        (``kernels.pair_margin``; the solver's step passes its own)."""
        # the detection kernels load here: a model whose colliders cannot touch (the solver
        # drops its collision model) is built and checked without them
        from .kernels import NO_REACH, collide_kernel

        if frame_move is None:
            frame_move, reach0 = self._no_move, NO_REACH
        assert reach0 is not None, "collide: frame_move given without reach0"
        wp.launch(
            collide_kernel,
            dim=self.num_envs,
            inputs=[self.data, frame_R, frame_p, frame_move, float(reach0), self.scratch, self.buffer],
            device=self.device,
        )
        return self.buffer

    def contacts(self) -> Contacts:
        """The buffer as numpy, with each contact's frames, material and rest offset looked
        up from its shapes (as ``pairs.py`` does in kernels)."""
        b = self.buffer
        shapes = b.shapes.numpy()
        sa, sb = shapes[..., 0], shapes[..., 1]
        if not self.shape_paths:  # nothing to look up (the buffer stays empty)
            sa = sb = np.zeros_like(sa)
            frame, mat_of, rest = np.full(1, -1), np.zeros(1, int), np.zeros(1)
        else:
            frame, mat_of, rest = self.shape_frame, self.shape_material, self.shape_rest
        return Contacts(
            count=b.count.numpy(),
            lost=b.lost.numpy(),
            shapes=shapes,
            frames=np.stack([frame[sa], frame[sb]], -1),
            point=b.point.numpy(),
            normal=b.normal.numpy(),
            separation=b.sep.numpy(),
            rest_offset=rest[sa] + rest[sb],
            material=self.pair_material[mat_of[sa] * self.data.n_mats + mat_of[sb]],
            shape_paths=self.shape_paths,
            shape_bodies=self.shape_bodies,
        )

    def stats(self) -> np.ndarray:
        """Per environment: (candidate pairs, pairs collided, pairs filtered, collided pairs skipped as
        still proven far apart since an earlier detection) of the last detection."""
        return self.buffer.stats.numpy()


def build_collision(
    stage,
    model,
    num_envs: int | None = None,
    device=None,
    ground_plane: float | None = None,
    capacity: int | None = None,
) -> CollisionModel:
    """Colliders of ``stage`` against the links of the solver ``model`` (plus free bodies)."""
    from .usd_colliders import read_colliders

    bodies = [body for lk in model.links for body, _ in lk.bodies]
    spec = read_colliders(stage, dynamic_bodies=bodies, ground_plane=ground_plane)
    layout = FrameLayout.from_model(model, spec.free_bodies)
    return CollisionModel(
        spec,
        layout,
        num_envs=model.num_envs if num_envs is None else num_envs,
        device=model.device if device is None else device,
        capacity=capacity,
    )
