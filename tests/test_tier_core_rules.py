"""NVIDIA's tier-core DJ rules without ``pxr.PhysxSchema`` check nothing, and we say so (issue 44).

In a pip environment tier-core's ``from pxr import PhysxSchema`` fails (physx-usd-schemas
provides ``physx_usd_schemas.PhysxSchema``), DJ.001-007 end in errors that carry no
requirement, and NVIDIA's validator reports FET_022_STANDARD passed. ``mimic-ext validate`` and
our plugin inside NVIDIA's validator say it once. The import is made to fail or succeed here by
what stands at ``pxr.PhysxSchema`` (a stand-in module, or nothing), and tier-core is made present
or absent through ``find_spec``, so the tests do not depend on what this environment has.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest
from test_validation_asset_rules import _env, entry_point_path  # noqa: F401 (a fixture)

from mimic_ext.cli import main
from mimic_ext.schema import tier_core_rules as tcr

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = str(ROOT / "data" / "geared_pair.usda")


@pytest.fixture
def physx_schema(monkeypatch):
    """Set what ``from pxr import PhysxSchema`` finds: ``physx_schema(None)`` makes it fail,
    ``physx_schema(module)`` makes it succeed; tier-core's rule module counts as not imported yet."""
    import pxr

    monkeypatch.delitem(sys.modules, tcr.DRIVEN_JOINT_RULES, raising=False)

    def put(module):
        if module is None:
            monkeypatch.delitem(sys.modules, "pxr.PhysxSchema", raising=False)
            monkeypatch.delattr(pxr, "PhysxSchema", raising=False)
            # a finder that refuses it, so an installed Kit build could not answer either
            monkeypatch.setitem(sys.modules, "pxr.PhysxSchema", None)
        else:
            monkeypatch.setitem(sys.modules, "pxr.PhysxSchema", module)
            monkeypatch.setattr(pxr, "PhysxSchema", module, raising=False)

    return put


@pytest.fixture
def tier_core(monkeypatch):
    """``tier_core(True)``: tier-core's package is found; ``False``: it is not."""
    real = importlib.util.find_spec

    def put(present: bool):
        def find_spec(name, *args, **kwargs):
            if name == tcr.TIER_CORE:
                return importlib.machinery.ModuleSpec(name, None) if present else None
            return real(name, *args, **kwargs)

        monkeypatch.setattr(tcr.importlib.util, "find_spec", find_spec)

    return put


def test_validate_says_once_that_nvidias_dj_rules_check_nothing(physx_schema, tier_core, capsys):
    physx_schema(None)
    tier_core(True)
    assert main(["validate", SAMPLE]) == 0  # our own findings decide the exit code, as before
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if "pxr.PhysxSchema" in line]
    assert notes == [f"mimic-ext: note: {tcr.NOTICE}"]
    for words in ("DJ.001-DJ.007", "FET_022_STANDARD passed", "inside Kit or Isaac Sim", "--target simready"):
        assert words in notes[0], words
    assert "pxr.PhysxSchema" not in captured.out

    assert main(["validate", SAMPLE, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["notices"] == [tcr.NOTICE]
    assert "pxr.PhysxSchema" not in captured.err  # said once: in the JSON


def test_validate_is_quiet_where_tier_core_has_its_physx_schema(physx_schema, tier_core, capsys):
    physx_schema(types.ModuleType("pxr.PhysxSchema"))  # Kit's compiled module, as tier-core imports it
    tier_core(True)
    assert main(["validate", SAMPLE, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["notices"] == [] and "pxr.PhysxSchema" not in captured.err
    assert tcr.unchecked_notice() is None


def test_without_tier_core_there_is_nothing_to_say(physx_schema, tier_core, capsys):
    physx_schema(None)
    tier_core(False)
    assert main(["validate", SAMPLE]) == 0
    assert "pxr.PhysxSchema" not in capsys.readouterr().err
    assert tcr.unchecked_notice() is None


def test_the_phase_bridge_is_no_physx_schema(physx_schema, tier_core):
    """mimic_ext.simready's reader (in place only while one of NVIDIA's phases runs) reads
    PhysxMimicJointAPI only: tier-core's DJ rules would still check nothing with it."""
    from mimic_ext.simready import pxr_bridge

    tier_core(True)
    physx_schema(None)
    with pxr_bridge.bridged() as installed:
        assert installed
        assert tcr.unchecked_notice() == tcr.NOTICE


def test_what_tier_cores_rule_module_took_at_import_decides(physx_schema, tier_core, monkeypatch):
    """Once tier-core's module is imported, its own ``PhysxSchema`` (None or a module) is the answer,
    whatever ``pxr`` holds now."""
    tier_core(True)
    physx_schema(types.ModuleType("pxr.PhysxSchema"))
    rules = types.ModuleType(tcr.DRIVEN_JOINT_RULES)
    rules.PhysxSchema = None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, tcr.DRIVEN_JOINT_RULES, rules)
    assert tcr.unchecked_notice() == tcr.NOTICE
    rules.PhysxSchema = types.ModuleType("pxr.PhysxSchema")  # type: ignore[attr-defined]
    assert tcr.unchecked_notice() is None


# ------------------------------------------------------------------ our plugin inside NVIDIA's validator


def _start_validator(entry_point_path: Path, bridge: bool) -> str:
    """stdout + stderr of a process that starts NVIDIA's validator: importing it starts its plugins,
    ours among them (declared by this tree's pyproject.toml: test_validation_asset_rules's dist)."""
    launch = (
        "import contextlib, logging, sys\n"
        "logging.basicConfig(stream=sys.stdout, format='%(levelname)s:%(name)s:%(message)s')\n"
        f"sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "from simready_checks import bridged\n"
        f"with bridged() if {bridge} else contextlib.nullcontext():\n"
        "    import omni.asset_validator\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", launch],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=_env(entry_point_path),
    )
    assert out.returncode == 0, (out.stdout + out.stderr)[-3000:]
    return out.stdout + out.stderr


@pytest.mark.slow
def test_our_plugin_says_it_when_it_starts_beside_tier_core_without_physx_schema(entry_point_path):
    """This environment as it is: tier-core installed by pip, no ``pxr.PhysxSchema``. With
    tests/simready_checks.py's bridge (which gives tier-core a PhysxSchema) nothing is said."""
    if importlib.util.find_spec(tcr.TIER_CORE) is None or importlib.util.find_spec("usd_validation_nvidia") is None:
        pytest.skip("simready-foundation-tier-core / usd-validation-nvidia not installed (simready extra)")
    # asked in a fresh process: in this one an earlier test may have imported tier-core's rules
    # inside tests/simready_checks.py's bridge, which they keep
    fresh = subprocess.run(
        [
            sys.executable,
            "-c",
            "from mimic_ext.schema import tier_core_rules as t; print(t.physx_schema_for_tier_core())",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    if fresh.stdout.strip() == "True":
        pytest.skip("this OpenUSD has pxr.PhysxSchema (Kit's build): tier-core's rules work here")
    plain = _start_validator(entry_point_path, bridge=False)
    lines = [line for line in plain.splitlines() if "pxr.PhysxSchema" in line]
    assert lines == [f"WARNING:mimic_ext.schema.asset_rules:mimic-ext: {tcr.NOTICE}"], plain[-3000:]
    assert "pxr.PhysxSchema" not in _start_validator(entry_point_path, bridge=True)
