"""Poses and joint frames written to USD: float64 ``Transform`` -> xform ops and joint
frames, with round-off below 1e-12 written as 0 so files read as their sources."""

from __future__ import annotations

from pxr import Gf, UsdGeom

from ..math3d import mat_to_quat
from .transforms import Transform


def quatf(R) -> Gf.Quatf:
    w, x, y, z = mat_to_quat(R)
    return Gf.Quatf(float(w), Gf.Vec3f(float(x), float(y), float(z)))


def quatd(R) -> Gf.Quatd:
    w, x, y, z = [0.0 if abs(c) < 1e-12 else c for c in mat_to_quat(R)]
    return Gf.Quatd(float(w), Gf.Vec3d(float(x), float(y), float(z)))


def vec3f(v) -> Gf.Vec3f:
    return Gf.Vec3f(*(float(x) for x in v))


def tidy(v) -> list[float]:
    """Round-off below 1e-12 (e.g. cos 90 deg = 6e-17) written as 0, for readable files."""
    return [0.0 if abs(x) < 1e-12 else float(x) for x in v]


def set_pose(xformable, pose: Transform, scale=None) -> None:
    xformable.ClearXformOpOrder()
    xformable.AddTranslateOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*tidy(pose.p)))
    xformable.AddOrientOp(UsdGeom.XformOp.PrecisionDouble).Set(quatd(pose.R))
    if scale is not None:
        xformable.AddScaleOp(UsdGeom.XformOp.PrecisionDouble).Set(Gf.Vec3d(*(float(x) for x in scale)))


def set_frames(joint, frame0: Transform, frame1: Transform) -> None:
    joint.CreateLocalPos0Attr(vec3f(frame0.p))
    joint.CreateLocalRot0Attr(quatf(frame0.R))
    joint.CreateLocalPos1Attr(vec3f(frame1.p))
    joint.CreateLocalRot1Attr(quatf(frame1.R))
