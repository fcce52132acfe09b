"""The broad phase (a hash grid per environment): it hands the narrow phase every pair whose
bounding boxes meet, each once, and its candidate pairs grow linearly with the number of
shapes at a given density (counted, not timed)."""

from __future__ import annotations

import numpy as np

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


def test_every_pair_of_meeting_bounds_reaches_the_narrow_phase_once():
    rng = np.random.default_rng(11)
    shapes, poses = scatter(150, 0.6, rng, big=3)
    cm, c = collide(shapes, poses)
    boxes = [world_box(s, poses[s.body][0]) for s in shapes[:-1]]
    meet = sum(np.all(boxes[i][0] <= boxes[j][1]) and np.all(boxes[j][0] <= boxes[i][1])
               for i in range(len(boxes)) for j in range(i + 1, len(boxes)))
    ground = shapes[-1]
    meet += sum((0.5 * (lo + hi))[2] - 0.5 * (hi - lo)[2] - 0.02 <= ground.contact_offset for lo, hi in boxes)
    stats = cm.stats()[0]
    assert meet > 100                                        # the scene is crowded enough to mean something
    assert stats[1] + stats[2] == meet                       # collided + filtered: all of them, none twice
    assert stats[2] == 0                                     # every shape its own body: nothing filtered
    assert c.lost[0] == 0


def test_candidate_pairs_grow_linearly_with_the_shape_count():
    """Shapes on a jittered lattice at a fixed spacing, 512 then 1728 of them (3.4 times as
    many in 3.4 times the volume): the candidates per shape stay about the same (they would
    grow 3.4 times were they all pairs). They rise a little as fewer shapes sit on the
    lattice's boundary, with fewer neighbours: 24 to 26 here, toward about 27 inside."""
    rng = np.random.default_rng(12)
    counts = {}
    for side in (8, 12):
        n = side ** 3
        g = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3) * 0.1
        t = g + rng.uniform(-0.02, 0.02, g.shape)
        R = random_rotations(n, rng)
        shapes = [box((0.03, 0.03, 0.03), f"s{i}") for i in range(n)] + [box((2.0, 2.0, 0.05), "table")]
        poses = {f"s{i}": pose(t[i], R[i])[None] for i in range(n)}
        poses["table"] = pose((0.4, 0.4, -0.1))[None]
        cm, _ = collide(shapes, poses)
        counts[n] = int(cm.stats()[0][0])
    per_shape = {n: c / n for n, c in counts.items()}
    assert per_shape[1728] < 1.15 * per_shape[512], counts   # linear (quadratic: x 3.4)
    assert per_shape[1728] < 40, counts                      # each shape meets its neighbours and the table


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
    _, c = collide([box((0.1, 0.1, 0.1), None), plane(0.0)], {})      # static box in the plane: never a pair
    assert c.count[0] == 0
