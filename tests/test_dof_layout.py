"""The DOF layout (``solver.layout.DofLayout``): each link's coordinate and DOF starts, sized by
the joint-type table, replace the "1-DOF joints, then 7 / 6 per floating base" arithmetic."""

from mimic_ext import joint_types as JT
from mimic_ext.solver.layout import DofLayout

R, P, F, S = (JT.JOINT_CODES[k] for k in (JT.REVOLUTE, JT.PRISMATIC, JT.FREE, JT.SPHERICAL))


def test_one_dof_joints_first_then_multi_dof_links_in_link_order():
    lay = DofLayout.of([F, R, S, P, F, R])
    assert lay.n1 == 3
    # the 1-DOF joints take columns 0, 1, 2 in link order (joint j is DOF j)
    assert [lay.q_start[i] for i in (1, 3, 5)] == [0, 1, 2]
    assert [lay.qd_start[i] for i in (1, 3, 5)] == [0, 1, 2]
    # then the free base (7 coords, 6 DOFs), the spherical joint (4, 3), the second base
    assert [lay.q_start[i] for i in (0, 2, 4)] == [3, 10, 14]
    assert [lay.qd_start[i] for i in (0, 2, 4)] == [3, 9, 12]
    assert (lay.coord_count, lay.dof_count) == (21, 18)
    assert lay.q_slice(2) == slice(10, 14) and lay.qd_slice(2) == slice(9, 12)


def test_sizes_are_the_tables():
    for code, jt in JT.BY_CODE.items():
        lay = DofLayout.of([code])
        assert (lay.coords[0], lay.dofs[0]) == (jt.coords, jt.dofs)
        assert (lay.coord_count, lay.dof_count) == (jt.coords, jt.dofs)


def test_model_uses_the_layout():
    """A model's DOF and coordinate counts and its links' starts in the kernels' data are the
    layout's (a floating gripper: 1-DOF joints, then the base)."""
    import pytest

    pytest.importorskip("warp")
    from solver_stages import gripper

    from mimic_ext.solver import build_model

    model = build_model(gripper(floating=True, gravity=9.81)[0].stage)
    lay = model.layout
    assert (model.dof_count, model.coord_count) == (lay.dof_count, lay.coord_count)
    assert lay.n1 == len(model.joints) and lay.dof_count == lay.n1 + 6
    links = model.data.links.numpy()
    assert [int(x) for x in links["qs"]] == list(lay.q_start)
    assert [int(x) for x in links["us"]] == list(lay.qd_start)
    assert [int(x) for x in links["nd"]] == list(lay.dofs)
