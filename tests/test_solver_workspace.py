"""The work space's declared layout: every offset from one table, no two fields overlapping,
and debug guards that catch a step writing past a field without changing what it computes."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from solver_schedules import COMPLIANT
from solver_stages import four_bar, gripper, independent_pair

pytest.importorskip("warp")
from mimic_ext.schema import open_stage
from mimic_ext.solver import Solver, WorkSpaceOverrunError, build_model
from mimic_ext.solver import workspace as W
from mimic_ext.solver.kernels import contact_rows as CR
from mimic_ext.solver.kernels import kernels

ROOT = Path(__file__).resolve().parents[1]


def _stages():
    """Stages whose steps touch every field: relations, limits, loops, compliant relations
    (the Isaac 2F-85's), floating bases and contacts (a box dropped on a plane)."""
    from test_contact_restitution import drop_stage

    out = {
        "geared_pair": open_stage(ROOT / "data" / "geared_pair.usda").stage,
        "linkage": open_stage(ROOT / "data" / "robotiq_style_linkage.usda").stage,
        "four_bar": four_bar()[0].stage,
        "floating_gripper": gripper(floating=True, gravity=9.81)[0].stage,
        "limits": independent_pair(multiplier=2.0, limits_f=(-10.0, 10.0))[0].stage,
        "contact_box": drop_stage(0.01, box=True),
    }
    if COMPLIANT.exists():
        out["compliant_2f85"] = open_stage(COMPLIANT).stage
    return out


def _model(stage, guards: bool):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = build_model(stage, num_envs=2)
    if guards:
        model.workspace_guards = True
        model.sync()
    return model


def _run(model, steps=40):
    solver = Solver(model)
    a, b, c = model.state(), model.state(), model.control()
    # 0.05 N m on every joint: enough to move each field, far from the Isaac 2F-85's divergence
    # under efforts of 0.3 N m and more on every joint (docs/solver.md, Limits)
    c.joint_f.fill_(0.05)
    out = []
    for _ in range(steps):
        solver.step(a, b, c, 1.0 / 240.0)
        a, b = b, a
        out.append(a.joint_q.numpy().copy())
    hist = solver.step_many(a, np.repeat(c.joint_target_q.numpy()[None], 10, axis=0), 1.0 / 240.0, sample_every=1)
    return np.array(out), hist.numpy()


def test_every_offset_comes_from_the_table():
    declared = {"o_" + f.name for f in W.FIELDS + W.CONTACT_FIELDS}
    for contacts in (False, True):
        K = kernels("float32", contacts=contacts)
        offsets = {name for name in K.ModelData.vars if name.startswith("o_")}
        want = {"o_" + f.name for f in W.FIELDS + (W.CONTACT_FIELDS if contacts else ())}
        assert offsets == want, f"ModelData offsets without a table entry, or entries without one: {offsets ^ want}"
    assert len(declared) == len(W.FIELDS) + len(W.CONTACT_FIELDS)  # names unique
    assert all(f.meaning for f in W.FIELDS + W.CONTACT_FIELDS)


def test_the_struct_offsets_are_generated_from_the_table_in_its_order():
    """``ModelData``'s offset fields are the table's names, in its order (``workspace.offset_names``),
    and ``kernels/structs.py`` declares none by hand: a field added to the table needs no second list."""
    import ast

    for contacts in (False, True):
        K = kernels("float32", contacts=contacts)
        assert [n for n in K.ModelData.vars if n.startswith("o_")] == W.offset_names(contacts)
    source = ROOT / "mimic_ext" / "solver" / "kernels" / "structs.py"
    by_hand = [
        f"structs.py:{node.lineno} {node.target.id}"
        for node in ast.walk(ast.parse(source.read_text()))
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id.startswith("o_")
    ]
    assert by_hand == [], by_hand


@pytest.mark.parametrize(
    "name", ["geared_pair", "linkage", "four_bar", "floating_gripper", "limits", "contact_box", "compliant_2f85"]
)
def test_real_models_lay_their_fields_out_disjoint(name):
    stages = _stages()
    if name not in stages:
        pytest.skip(f"shared asset missing: {COMPLIANT}")
    model = _model(stages[name], guards=False)
    ws = model.workspace
    W.check_disjoint(ws.fields, model.work_size)
    for field, (offset, _size) in ws.fields.items():
        assert getattr(model.data, "o_" + field) == offset
    assert sum(size for _, size in ws.fields.values()) == model.work_size or model.work_size == 1


def test_the_check_fails_when_two_fields_overlap():
    fields = {"u0": (0, 4), "f": (3, 4)}
    with pytest.raises(ValueError, match=r"u0 .* and f .* overlap"):
        W.check_disjoint(fields, 8)
    with pytest.raises(ValueError, match="outside the row"):
        W.check_disjoint({"u0": (0, 4), "f": (4, 5)}, 8)
    W.check_disjoint({"u0": (0, 4), "f": (4, 4)}, 8)


@pytest.mark.parametrize(
    "name", ["geared_pair", "linkage", "four_bar", "floating_gripper", "limits", "contact_box", "compliant_2f85"]
)
def test_guards_change_nothing_and_no_step_writes_past_a_field(name):
    """Stepping with a sentinel after every field gives the same trajectory bit for bit, and no
    step (nor step_many) touches a sentinel: each field stays within its declared size."""
    stages = _stages()
    if name not in stages:
        pytest.skip(f"shared asset missing: {COMPLIANT}")
    plain, guarded = _model(stages[name], False), _model(stages[name], True)
    assert guarded.work_size == plain.work_size + len(plain.workspace.fields)
    want, got = _run(plain), _run(guarded)
    assert np.isfinite(want[0]).all() and np.isfinite(want[1]).all()
    assert np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1])


def test_a_write_past_a_field_is_named():
    model = _model(open_stage(ROOT / "data" / "geared_pair.usda").stage, True)
    solver = Solver(model)
    a, b, c = model.state(), model.state(), model.control()
    solver.step(a, b, c, 1.0 / 240.0)
    rows = solver._scratch.ws.numpy()
    offset, size = model.workspace.fields["lam"]
    rows[1, offset + size] = 0.0  # as a kernel writing one entry past lam would
    solver._scratch.ws.assign(rows)
    with pytest.raises(WorkSpaceOverrunError, match=r"field\(s\) lam \("):
        solver.step(b, a, c, 1.0 / 240.0)


def test_contact_slots_come_from_their_table():
    offsets, at = {}, 0
    for name, size, meaning in CR.SLOTS:
        assert size >= 1 and meaning
        offsets[name] = at
        at += size
    assert at == CR.N_SCALARS and CR.block_size(5, 3) == 3 * (5 + 2 * 3) + at
    for name, offset in offsets.items():
        assert getattr(CR, "_S_" + name) == offset
