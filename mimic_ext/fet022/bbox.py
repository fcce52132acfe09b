"""The harness's bounding-box explosion canary, from the body positions an engine reports.

The harness compares the volume of the articulation's world-aligned box (its renderable
geometry) during the sweep with the volume after settling, and warns past
``bbox_explode_ratio`` (10). Engines here report body origins, not geometry, so each body
is taken as a sphere around its origin that holds its own geometry (radius from the
authored geometry's bound in the body's frame, 0 when it has none): the box of those
spheres contains the geometry's box at every pose, and is the same box for a body that
only turns. Without any geometry (the shared Robotiq's meshes are missing) or with a
start box of no volume there is nothing the harness's ratio could be taken of: the check
then says it could not run, rather than pass or guess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: below this start volume (m^3) the ratio means nothing (the harness uses 1e-9 too)
MIN_VOLUME = 1e-9


@dataclass(frozen=True)
class Explosion:
    """The box check of one environment: largest volume over the start volume, and when."""

    ratio: float  # max volume / start volume (nan when the check could not run)
    start_volume: float  # m^3
    sample: int | None  # first sample index over the limit, None when none was
    why_not: str = ""  # why the check could not run (then ratio is nan)


def body_radii(stage, bodies) -> dict[str, float]:
    """Per rigid-body prim: the radius (m) about its origin that holds its own geometry.

    Geometry under a nested rigid body belongs to that body, not to its parent.
    """
    from pxr import Usd, UsdGeom, UsdPhysics

    from ..schema.joints import meters_per_unit

    mpu = meters_per_unit(stage)
    cache = UsdGeom.BBoxCache(
        Usd.TimeCode.Default(), [UsdGeom.Tokens.default_, UsdGeom.Tokens.render, UsdGeom.Tokens.proxy]
    )
    out: dict[str, float] = {}
    for path in bodies:
        body = stage.GetPrimAtPath(path)
        radius = 0.0
        if body and body.IsValid():
            it = iter(Usd.PrimRange(body))
            for prim in it:
                if prim != body and prim.HasAPI(UsdPhysics.RigidBodyAPI):
                    it.PruneChildren()
                    continue
                if not prim.IsA(UsdGeom.Boundable):
                    continue
                box = cache.ComputeRelativeBound(prim, body)
                rng = box.GetRange()
                if rng.IsEmpty():
                    continue
                m = box.GetMatrix()
                for i in range(8):
                    c = m.Transform(rng.GetCorner(i))
                    r = math.sqrt(c[0] ** 2 + c[1] ** 2 + c[2] ** 2)
                    if math.isfinite(r):
                        radius = max(radius, r)
        out[str(path)] = radius * mpu
    return out


def _extents(points: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Box sides of spheres (samples, bodies, 3) with radii (bodies,) -> (samples, 3)."""
    lo = (points - radii[None, :, None]).min(axis=1)
    hi = (points + radii[None, :, None]).max(axis=1)
    return np.maximum(hi - lo, 0.0)


class BoxCheck:
    """The check for every environment of one trace, prepared once: the bodies, their radii and
    whether any carries geometry are decided before any position is read (an engine may
    compute positions lazily). An engine whose ``body_positions`` has ``extents(radii, env)``
    gives the box sides of one environment itself (the warp engine, from each part's own
    environments, without forming a bodies x environments table)."""

    def __init__(self, body_positions, radii: dict[str, float], limit: float):
        self.body_positions, self.limit = body_positions, limit
        self.names = sorted(body_positions) if body_positions else []
        self.radii = {n: radii.get(n, 0.0) for n in self.names}
        self.r = np.array([self.radii[n] for n in self.names])
        self.bounded = bool((self.r > 0).any())

    def explosion(self, env: int) -> Explosion | None:
        """The check for environment ``env``; None when the engine reported no body positions."""
        if not self.body_positions:
            return None
        if not self.bounded:
            return Explosion(math.nan, 0.0, None, "no body carries geometry to bound (are its meshes missing?)")
        sides = getattr(self.body_positions, "extents", None)
        if sides is not None:
            vol = np.prod(sides(self.radii, env), axis=1)
        else:
            pts = np.stack([np.asarray(self.body_positions[n][env], float) for n in self.names], axis=1)
            vol = np.prod(_extents(pts, self.r), axis=1)  # pts: (samples, bodies, 3)
        start = float(vol[0])
        if not (start > MIN_VOLUME and math.isfinite(start)):
            return Explosion(math.nan, start, None, f"the bodies' start box has no volume ({start:.3g} m^3)")
        ratio = vol / start
        over = np.nonzero(~(ratio <= self.limit))[0]  # NaN counts as over: a body that flew off to NaN
        return Explosion(
            ratio=float(np.nanmax(ratio)) if np.isfinite(ratio).any() else math.nan,
            start_volume=start,
            sample=int(over[0]) if over.size else None,
        )


def explosion(
    body_positions: dict[str, np.ndarray], radii: dict[str, float], env: int, limit: float
) -> Explosion | None:
    """The check for environment ``env``; None when the engine reported no body positions."""
    return BoxCheck(body_positions, radii, limit).explosion(env)
