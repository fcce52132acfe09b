"""The broad phase (a hash grid per environment): it hands the narrow phase every pair whose
bounding boxes meet, each once, and its candidate pairs grow linearly with the number of
shapes at a given density (counted, not timed)."""

from __future__ import annotations

import numpy as np
import pytest
from collision_scenes import box, capsule, collide, plane, pose, random_rotations, sphere


def world_box(s, T):
    c, h = s.local_bounds()
    R = T[:3, :3] @ s.pose[:3, :3]
    centre = T[:3, :3] @ (s.pose[:3, :3] @ c + s.pose[:3, 3]) + T[:3, 3]
    half = np.abs(R) @ h + s.contact_offset
    return centre - half, centre + half


def scatter(n, extent, rng, big=0):
    """n small shapes of three kinds in a cube of side ``extent``, ``big`` large boxes, each
    its own body, and a ground plane."""
    kinds = [lambda b: sphere(0.03, b), lambda b: box((0.03, 0.02, 0.04), b), lambda b: capsule(0.02, 0.03, b)]
    shapes = [kinds[i % 3](f"s{i}") for i in range(n)] + [box((0.4, 0.4, 0.05), f"big{i}") for i in range(big)]
    R = random_rotations(len(shapes), rng)
    t = rng.uniform(0, extent, (len(shapes), 3))
    poses = {s.body: pose(t[i], R[i])[None] for i, s in enumerate(shapes)}
    return shapes + [plane(0.02)], poses


@pytest.mark.slow
@pytest.mark.parametrize("n, extent", [(150, 0.6), (24, 0.3)])
def test_every_pair_of_meeting_bounds_reaches_the_narrow_phase_once(n, extent):
    """150 shapes go through the hash grid, 24 (at most ``ALL_PAIRS_MAX`` small ones) are paired
    directly: either way each pair whose bounds meet is collided or filtered exactly once."""
    rng = np.random.default_rng(11)
    shapes, poses = scatter(n, extent, rng, big=3)
    cm, c = collide(shapes, poses)
    boxes = [world_box(s, poses[s.body][0]) for s in shapes[:-1]]
    meet = sum(
        np.all(boxes[i][0] <= boxes[j][1]) and np.all(boxes[j][0] <= boxes[i][1])
        for i in range(len(boxes))
        for j in range(i + 1, len(boxes))
    )
    ground = shapes[-1]
    meet += sum((0.5 * (lo + hi))[2] - 0.5 * (hi - lo)[2] - 0.02 <= ground.contact_offset for lo, hi in boxes)
    stats = cm.stats()[0]
    assert meet > n // 2  # the scene is crowded enough to mean something
    assert stats[1] + stats[2] == meet  # collided + filtered: all of them, none twice
    assert stats[2] == 0  # every shape its own body: nothing filtered
    assert c.lost[0] == 0


def _contact_set(c, env: int = 0):
    """An environment's contacts as a sorted list of (shape pair, point, normal, separation)."""
    rows = [
        (
            tuple(int(x) for x in c.shapes[env, i]),
            tuple(np.round(c.point[env, i], 6)),
            tuple(np.round(c.normal[env, i], 6)),
            round(float(c.separation[env, i]), 7),
        )
        for i in range(int(c.count[env]))
    ]
    return sorted(rows)


def test_pairing_every_shape_directly_finds_what_the_grid_finds():
    """The same 24 touching shapes alone (paired directly) and beside 12 far-off spheres (36
    small shapes: the hash grid): the same contacts, to the rounding of their order."""
    from mimic_ext.solver.collision.kernels import ALL_PAIRS_MAX

    rng = np.random.default_rng(13)
    shapes, poses = scatter(24, 0.3, rng)
    assert len(shapes) - 1 <= ALL_PAIRS_MAX < len(shapes) - 1 + 12
    far = [sphere(0.01, f"far{i}") for i in range(12)]
    far_poses = {f"far{i}": pose((5.0 + 0.1 * i, 5.0, 5.0))[None] for i in range(12)}
    cm_direct, direct = collide(shapes, poses)
    cm_grid, grid = collide(shapes[:-1] + far + shapes[-1:], {**poses, **far_poses})
    assert direct.count[0] > 20 and direct.lost[0] == 0 and grid.lost[0] == 0  # touching enough, all kept

    # shape indices shift by the far spheres inserted before the plane: compare by path
    def by_path(cm, c):
        return sorted(
            (tuple(sorted((cm.shape_paths[a], cm.shape_paths[b]))), pt, nrm, sep)
            for (a, b), pt, nrm, sep in _contact_set(c)
        )

    a, b = by_path(cm_direct, direct), by_path(cm_grid, grid)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert (
            x[0] == y[0]
            and np.allclose(x[1], y[1], atol=1e-6)
            and np.allclose(x[2], y[2], atol=1e-6)
            and abs(x[3] - y[3]) <= 1e-6
        ), (x, y)
    assert cm_direct.stats()[0][0] >= len(shapes) - 1  # every small pair a candidate


def test_candidate_pairs_grow_linearly_with_the_shape_count():
    """Shapes on a jittered lattice at a fixed spacing, 512 then 1728 of them (3.4 times as
    many in 3.4 times the volume): the candidates per shape stay about the same (they would
    grow 3.4 times were they all pairs). They rise a little as fewer shapes sit on the
    lattice's boundary, with fewer neighbours: 24 to 26 here, toward about 27 inside."""
    rng = np.random.default_rng(12)
    counts = {}
    for side in (8, 12):
        n = side**3
        g = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3) * 0.1
        t = g + rng.uniform(-0.02, 0.02, g.shape)
        R = random_rotations(n, rng)
        shapes = [box((0.03, 0.03, 0.03), f"s{i}") for i in range(n)] + [box((2.0, 2.0, 0.05), "table")]
        poses = {f"s{i}": pose(t[i], R[i])[None] for i in range(n)}
        poses["table"] = pose((0.4, 0.4, -0.1))[None]
        cm, _ = collide(shapes, poses)
        counts[n] = int(cm.stats()[0][0])
    per_shape = {n: c / n for n, c in counts.items()}
    assert per_shape[1728] < 1.15 * per_shape[512], counts  # linear (quadratic: x 3.4)
    assert per_shape[1728] < 40, counts  # each shape meets its neighbours and the table


def test_a_full_buffer_counts_the_contacts_it_could_not_keep():
    # two boxes resting flat on the plane: 8 contacts, room for 5
    shapes = [box((0.05, 0.05, 0.05), "a"), box((0.05, 0.05, 0.05), "b"), plane(0.0)]
    poses = {"a": pose((0, 0, 0.049))[None], "b": pose((0.5, 0, 0.049))[None]}
    _, full = collide(shapes, poses)
    _, c = collide(shapes, poses, capacity=5)
    assert full.count[0] == 8 and full.lost[0] == 0
    assert c.count[0] == 5 and c.lost[0] == 3


def test_no_colliders_and_static_only_scenes_detect_nothing():
    _, c = collide([], {})
    assert c.count[0] == 0
    _, c = collide([box((0.1, 0.1, 0.1), None), plane(0.0)], {})  # static box in the plane: never a pair
    assert c.count[0] == 0


def test_the_big_shape_threshold_median_is_numpys():
    """The broad phase's median diameter (which shapes count as "big") is computed without
    ``np.median`` (that imports ``numpy.ma``, issue 43): the same value, bit for bit (tolerance 0:
    the same sort and the same two-element mean), odd and even counts, spreads of 12 decades."""
    from mimic_ext.solver.collision.pipeline import _median

    rng = np.random.default_rng(43)
    for n in range(1, 40):
        for scale in (1e-6, 1.0, 1e6):
            d = rng.random(n) * scale
            assert _median(d) == float(np.median(d))
