"""Contacts as numpy arrays for users and tests, per environment and per shape pair."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class PairContacts:
    """The contacts between two shapes in one environment (world frame, SI)."""

    shape_a: str
    shape_b: str
    body_a: str | None
    body_b: str | None
    points: np.ndarray  # (m, 3) midway between the surfaces
    normals: np.ndarray  # (m, 3) from shape_b to shape_a
    separations: np.ndarray  # (m,) < 0: penetration depth
    impulses: np.ndarray | None  # (m, 3) world impulse on shape_a, from the solver's contact rows


@dataclass
class Contacts:
    """Every environment's contacts after the last detection: rows ``[e, :count[e]]``.

    ``impulse`` (world impulse on shape a, N s) comes from ``Solver.contacts()`` after a step;
    None from detection alone.
    """

    count: np.ndarray  # (N,)
    lost: np.ndarray  # (N,) contacts that did not fit the buffer
    shapes: np.ndarray  # (N, C, 2) shape indices (a, b)
    frames: np.ndarray  # (N, C, 2) their frames (-1: static)
    point: np.ndarray  # (N, C, 3)
    normal: np.ndarray  # (N, C, 3) from shape b to shape a
    separation: np.ndarray  # (N, C)
    rest_offset: np.ndarray  # (N, C) rest_a + rest_b
    material: np.ndarray  # (N, C, 3) static friction, dynamic friction, restitution
    shape_paths: list[str]
    shape_bodies: list[str | None]
    impulse: np.ndarray | None = None

    def pairs(self, env: int = 0) -> dict[tuple[str, str], PairContacts]:
        """Contacts of one environment grouped by shape pair, in detection order."""
        out: dict[tuple[str, str], list[int]] = {}
        for c in range(int(self.count[env])):
            a, b = (int(x) for x in self.shapes[env, c])
            out.setdefault((self.shape_paths[a], self.shape_paths[b]), []).append(c)
        res = {}
        for (pa, pb), rows in out.items():
            a, b = (int(x) for x in self.shapes[env, rows[0]])
            res[(pa, pb)] = PairContacts(
                shape_a=pa,
                shape_b=pb,
                body_a=self.shape_bodies[a],
                body_b=self.shape_bodies[b],
                points=self.point[env, rows],
                normals=self.normal[env, rows],
                separations=self.separation[env, rows],
                impulses=None if self.impulse is None else self.impulse[env, rows],
            )
        return res
