"""One rotation convention for the package: (w, x, y, z) quaternions as USD's Gf, column vectors."""

import math

import numpy as np
import pytest
from pxr import Gf

from mimic_ext import math3d as m3

# float64 arithmetic on unit quantities: a few ulps of 1 (2.2e-16) per operation
TOL = 1e-12


@pytest.mark.parametrize("seed", range(5))
def test_quaternions_match_usd_gf_and_round_trip(seed):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    gq = Gf.Quatd(*q[:1], Gf.Vec3d(*q[1:]))
    # Gf matrices are row-vector: the column-vector rotation is the transpose
    want = np.array(Gf.Matrix3d(Gf.Rotation(gq))).T
    R = m3.quat_to_mat(m3.gf_wxyz(gq))
    np.testing.assert_allclose(R, want, atol=TOL)
    back = m3.mat_to_quat(R)
    assert back[0] >= 0 and np.allclose(back, q if q[0] >= 0 else -q, atol=TOL)
    assert np.array_equal(m3.quat_wxyz(m3.quat_xyzw(back)), back)
    assert np.array_equal(m3.quat_xyzw(back), [back[1], back[2], back[3], back[0]])


def test_axis_angle_transform_and_inverse():
    R = m3.axis_angle([0, 0, 2.0], np.pi / 2)  # the axis is normalised
    np.testing.assert_allclose(R @ [1, 0, 0], [0, 1, 0], atol=TOL)
    T = m3.transform(R, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(T @ [1, 0, 0, 1], [1, 3, 3, 1], atol=TOL)
    np.testing.assert_allclose(m3.inverse(T) @ T, np.eye(4), atol=TOL)
    np.testing.assert_allclose(m3.quat_to_mat([0, 0, 0, 0]), np.eye(3))  # a zero quaternion: identity


def test_no_other_module_writes_its_own_quaternion_conversion():
    """The conversions live in math3d alone (they were written three times, in two orders)."""
    import re
    from pathlib import Path

    root = Path(m3.__file__).parent
    own = re.compile(r"1 - 2 \* \(y \* y \+ z \* z\)")  # the matrix's first entry
    hits = [str(p.relative_to(root)) for p in root.rglob("*.py") if p.name != "math3d.py" and own.search(p.read_text())]
    assert hits == []


def _gf_rot(axis, deg):
    """Gf's rotation as a column-vector matrix (Gf is row-vector: transposed)."""
    return np.array(Gf.Matrix3d(Gf.Rotation(Gf.Vec3d(*axis), deg))).T


# general axes and angles: no quarter turn (where a transposed or sign-flipped rotation can agree),
# and one per branch of Shepperd's method (trace > 0, then the largest diagonal entry x, y, z)
GENERAL = [((1, 2, 3), 37.0), ((0.9, 0.2, -0.1), 170.0), ((0.1, -0.95, 0.2), 160.0), ((-0.2, 0.1, 0.97), 175.0)]


@pytest.mark.parametrize(("axis", "deg"), GENERAL)
def test_general_rotations_match_gf(axis, deg):
    R = m3.axis_angle(axis, math.radians(deg))
    np.testing.assert_allclose(R, _gf_rot(axis, deg), atol=TOL)
    gq = Gf.Rotation(Gf.Vec3d(*axis), deg).GetQuat()
    want = np.array([gq.GetReal(), *gq.GetImaginary()])
    want = want if want[0] >= 0 else -want
    np.testing.assert_allclose(m3.mat_to_quat(R), want, atol=TOL)  # each Shepperd branch
    np.testing.assert_allclose(m3.quat_to_mat(want), R, atol=TOL)
    t = np.array([0.3, -1.2, 2.5])
    T = m3.transform(R, t)
    p = np.array([0.7, 0.1, -0.4])
    np.testing.assert_allclose(T @ np.append(p, 1.0), np.append(R @ p + t, 1.0), atol=TOL)
    # the inverse against Gf's general 4x4 inverse (row-vector: transposed both ways)
    gf_inv = np.array(Gf.Matrix4d(T.T.tolist()).GetInverse()).T
    np.testing.assert_allclose(m3.inverse(T), gf_inv, atol=TOL)
