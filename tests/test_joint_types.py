"""One joint-type vocabulary (``mimic_ext.joint_types``): every layer's names and codes are it.

There were four copies (schema strings, importer strings, the reader's ints, the kernels' Warp
constants) with nothing tying them; these tests fail when any copy disagrees with the table or
when a module declares its own vocabulary again.
"""

import ast
from pathlib import Path

import pytest
from pxr import Usd, UsdPhysics

from mimic_ext import joint_types as JT
from mimic_ext.importers import model as importer_model
from mimic_ext.schema import joints
from mimic_ext.solver import stage_reader

PACKAGE = Path(JT.__file__).parent


def test_table_is_consistent():
    names = [t.name for t in JT.JOINT_TYPES]
    assert len(set(names)) == len(names)
    codes = list(JT.JOINT_CODES.values())
    assert sorted(codes) == list(range(len(codes)))  # dense codes: the kernels branch on them
    for t in JT.JOINT_TYPES:
        assert getattr(JT, t.name.upper()) == t.name
        assert (t.dofs is None) == (t.coords is None)
        if t.code is not None:  # a tree link has a known motion
            assert t.dofs is not None and t.dofs >= 1
    # a quaternion's 4 coordinates for its 3 rotations (spherical, and the floating base's 7 for 6)
    assert (JT.BY_NAME[JT.SPHERICAL].dofs, JT.BY_NAME[JT.SPHERICAL].coords) == (3, 4)
    assert (JT.BY_NAME[JT.FREE].dofs, JT.BY_NAME[JT.FREE].coords) == (6, 7)


def test_every_layer_uses_the_table():
    for name in ("REVOLUTE", "PRISMATIC", "FIXED", "SPHERICAL", "DISTANCE", "D6", "OTHER"):
        assert getattr(joints, name) == getattr(JT, name), name
    for name in ("REVOLUTE", "PRISMATIC", "FIXED", "SPHERICAL"):
        assert getattr(importer_model, name) == getattr(JT, name), name
    for name, code in JT.JOINT_CODES.items():
        assert getattr(stage_reader, name.upper()) == code, name


def test_kernel_constants_are_the_table_codes():
    pytest.importorskip("warp")
    from mimic_ext.solver.kernels import dynamics

    for name, code in JT.JOINT_CODES.items():
        constant = getattr(dynamics, name.upper())
        assert isinstance(constant, int) and constant == code, name


def test_usd_type_names_are_the_schemas_and_joint_kind_reads_them():
    stage = Usd.Stage.CreateInMemory()
    for usd_type, kind in JT.USD_TYPES.items():
        prim = stage.DefinePrim(f"/J_{kind}", usd_type)
        assert prim.IsA(UsdPhysics.Joint), usd_type  # a real UsdPhysics joint type name
        assert joints.joint_kind(prim) == kind, usd_type
    # every typed UsdPhysics joint schema has its row (a new one in USD gets a kind here first);
    # a plugin's joint (PhysX's gear, rack and pinion: "PhysxPhysics...") is OTHER
    derived = [
        Usd.SchemaRegistry.GetSchemaTypeName(t)
        for t in Usd.SchemaRegistry.GetTypeFromName("UsdPhysicsJoint").GetAllDerivedTypes()
    ]
    assert set(JT.USD_TYPES) == {n for n in derived if n.startswith("Physics")} | {"PhysicsJoint"}
    for name in (n for n in derived if not n.startswith("Physics")):
        assert joints.joint_kind(stage.DefinePrim(f"/J_{name}", name)) == JT.OTHER, name


def _own_vocabulary(path: Path) -> list[str]:
    """Module-level assignments in ``path`` that declare a joint type by a literal: a type name
    string (``REVOLUTE = "revolute"``), or a code, a tuple of codes or ``wp.constant(code)``
    bound to a type's upper-case name (``REVOLUTE, PRISMATIC, FREE = 0, 1, 2``)."""
    names = {t.name for t in JT.JOINT_TYPES}
    upper = {t.name.upper() for t in JT.JOINT_TYPES}

    def literal(node) -> bool:
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Tuple):
            return all(literal(e) for e in node.elts)
        if isinstance(node, ast.Call):  # wp.constant(0)
            return bool(node.args) and all(isinstance(a, ast.Constant) for a in node.args)
        return False

    found = []
    for node in ast.parse(path.read_text()).body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        bound = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        value = node.value
        if isinstance(value, ast.Constant) and value.value in names:
            found.append(f"{path.name}:{node.lineno} {bound} = {value.value!r}")
        elif set(bound) & upper and literal(value):
            found.append(f"{path.name}:{node.lineno} {bound} = {ast.unparse(value)}")
    return found


def test_no_module_declares_its_own_joint_vocabulary():
    stray = [hit for p in sorted(PACKAGE.rglob("*.py")) if p.name != "joint_types.py" for hit in _own_vocabulary(p)]
    assert not stray, "declare joint types in mimic_ext/joint_types.py only:\n" + "\n".join(stray)


def test_the_scan_finds_a_copy(tmp_path):
    """The scan above sees each form the copies had (so its pass means something)."""
    copy = tmp_path / "copy.py"
    copy.write_text(
        'REVOLUTE = "revolute"\nREVOLUTE, PRISMATIC, FREE = 0, 1, 2\nFREE = wp.constant(2)\nKIND: str = "spherical"\n'
    )
    assert len(_own_vocabulary(copy)) == 4
