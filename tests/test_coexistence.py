"""mimic_ext beside the real hosts, in every import order, each in its own process.

USD takes schema plugins and builds its schema registry once per process, and two plugins
declaring one schema make every later stage open raise; so each order runs
``tests/coexistence_probe.py`` in a fresh interpreter and the checks here read its JSON:

(a) NVIDIA's physx-usd-schemas and Newton's newton-usd-schemas imported before, between
    and after mimic_ext, and without mimic_ext at all;
(b) a PhysxSchema registered as Kit has it (a resource plugin declaring the compiled
    type ``PhysxSchemaPhysxMimicJointAPI`` with alias ``PhysxMimicJointAPI``, written here
    from physx-usd-schemas' own declaration) before ``mimic_ext.kit`` starts;
(c) Newton's ``ModelBuilder.add_usd`` and NVIDIA's urdf-usd-converter in one process with
    mimic_ext, imported first and last.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pxr import Sdf

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "coexistence_probe.py"
STUBS = ROOT / "tests" / "kit_stubs"
# USD stores the relation's numbers as 32-bit floats: 6e-8 relative round-off per value,
# so values read back agree to 1e-6 relative (a factor ~16 of margin).
F32 = 1e-6
# what a USD conflict between two declarations of one schema prints (Tf errors and warnings)
CONFLICT_WORDS = ("Duplicate schema", "Cannot set alias", "previously provided", "Error", "Traceback")


def run_probe(*args: str, python: str = sys.executable, timeout: int = 300) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([python, str(PROBE), *args], capture_output=True, text=True, timeout=timeout, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    for word in CONFLICT_WORDS:
        assert word not in out.stderr, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])  # Warp and converters print before it
    result["_stderr"] = out.stderr
    return result


def assert_stage_work(result: dict) -> None:
    """geared_pair.usda (gear_follower = 2 gear_leader + 0.1 rad) read, rewritten at 1.5 in both schemas."""
    schema, instance, multiplier, offset = result["read"]
    assert (schema, instance) == ("physx", "rotX")
    assert multiplier == pytest.approx(2.0, rel=F32) and offset == pytest.approx(0.1, rel=F32)
    (newton, physx) = result["written"]
    assert newton[0] == "newton" and physx[0] == "physx"
    for _, m, c in (newton, physx):
        assert m == pytest.approx(1.5, rel=F32) and c == pytest.approx(0.1, rel=F32)
    # valid; the two schemas' copies agree, which PhysX still applies as two constraints: one warning
    assert [f.split(" ", 2)[:2] for f in result["findings"]] == [["warning", "MIMIC_BOTH_SCHEMAS"]]
    assert result["has_api"] == [True, True]  # USD itself resolves both schemas on the prim
    assert result["follower_gearing"] == pytest.approx(-1.5, rel=F32)
    # our attribute tables are the real declarations: names, types, variability, fallbacks
    assert result["declared"] == result["ours"]
    assert result["resolvable"] is True


# ------------------------------------------------------------------ (a) the pip schema packages


@pytest.mark.parametrize("order", ["packages-first", "mimic-first", "interleaved"])
def test_pip_schema_packages_and_mimic_ext_in_any_order(order):
    result = run_probe("schemas", order)
    assert result["_stderr"] == ""
    assert_stage_work(result)
    # the codeless PhysxSchema API class reads what mimic_ext wrote
    assert result["api_class"] == [True, pytest.approx(-1.5, rel=F32), ["/Gears/Joints/gear_leader"]]
    src = result["sources"]
    assert src["PhysxMimicJointAPI"][2] == "PhysxSchemaPhysxMimicJointAPI"
    package = Path(importlib.util.find_spec("physx_usd_schemas").origin).parent
    assert Path(src["PhysxMimicJointAPI"][1]).is_relative_to(package)
    assert src["NewtonMimicAPI"][2] == "NewtonPhysicsMimicAPI"


def test_pip_schema_packages_work_with_mimic_ext_installed_but_not_imported():
    result = run_probe("schemas", "mimic-never")
    assert result["_stderr"] == "" and result["mimic_ext_imported"] is False
    assert result["has_api"] == [True, True] and result["gearing"] == -3.0
    assert result["declared"]["PhysxMimicJointAPI"]["gearing"] == ["float", "Sdf.VariabilityVarying", 1.0]


def test_nothing_of_ours_declares_a_schema():
    """No plugInfo.json or generatedSchema.usda ships in the package, and no boot hook."""
    shipped = [p.name for p in (ROOT / "mimic_ext").rglob("*") if p.name in ("plugInfo.json", "generatedSchema.usda")]
    assert shipped == []
    assert not list(ROOT.glob("*.pth")) and not (ROOT / "mimic_ext_boot.py").exists()


# ------------------------------------------------------------------ (b) a Kit-like compiled PhysxSchema


def write_kit_like_physx_schema(folder: Path, plugin_name: str) -> Path:
    """A resource plugin declaring what Kit's compiled PhysxSchema declares for the mimic API.

    Kit's ``omni.usd.schema.physx`` registers ``physxSchema`` (type ``library``) whose
    ``PhysxSchemaPhysxMimicJointAPI`` has the alias ``PhysxMimicJointAPI``; the declaration is
    copied from physx-usd-schemas' resources (found, not imported: importing registers it),
    without a library and without ``schemaIdentifier``, which older compiled builds lack.
    """
    spec = importlib.util.find_spec("physx_usd_schemas")
    resources = Path(spec.origin).parent / "PhysxSchema" / "resources"
    text = "\n".join(
        line for line in (resources / "plugInfo.json").read_text().splitlines() if not line.lstrip().startswith("#")
    )  # Plug allows comments, json does not
    real = json.loads(text)["Plugins"][0]
    mimic = dict(real["Info"]["Types"]["PhysxSchemaPhysxMimicJointAPI"])
    mimic.pop("schemaIdentifier", None)
    assert mimic["alias"] == {"UsdSchemaBase": "PhysxMimicJointAPI"}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plugInfo.json").write_text(
        json.dumps(
            {
                "Plugins": [
                    {
                        "Name": plugin_name,
                        "Type": "resource",
                        "Root": ".",
                        "ResourcePath": ".",
                        "Info": {"Types": {"PhysxSchemaPhysxMimicJointAPI": mimic}},
                    }
                ]
            },
            indent=2,
        )
    )
    source = Sdf.Layer.OpenAsAnonymous(str(resources / "generatedSchema.usda"))
    layer = Sdf.Layer.CreateNew(str(folder / "generatedSchema.usda"))
    assert Sdf.CopySpec(source, "/PhysxMimicJointAPI", layer, "/PhysxMimicJointAPI")
    layer.Save()
    return folder


@pytest.mark.parametrize(
    "plugin_name",
    [
        "physxSchema",  # Kit's name: a second plugin of that name would be skipped by Plug
        "kitPhysxSchema",  # another name: loading physx-usd-schemas too would raise at once
    ],
)
@pytest.mark.parametrize("order", ["kit-first", "kit-newton-first"])
def test_kit_compiled_physx_schema_is_used_and_the_pip_one_never_loaded(order, plugin_name, tmp_path):
    plugin = write_kit_like_physx_schema(tmp_path / "physx_schema", plugin_name)
    result = run_probe("kit", str(plugin), str(STUBS), order)
    assert_stage_work(result)
    assert result["sources"]["PhysxMimicJointAPI"] == [plugin_name, str(plugin), "PhysxSchemaPhysxMimicJointAPI"]
    assert result["physx_usd_schemas_imported"] is False
    assert result["physx_usd_schemas_plugins"] == []
    assert "api_class" not in result  # Kit's class lives in pxr.PhysxSchema, which only Kit has


def test_kit_without_newtons_schema_says_only_what_is_true_there(tmp_path):
    """Isaac Sim 4.x/5.x and USD Composer have Kit's PhysxSchema but no Newton schema: enabling the
    extension must neither claim PhysxMimicJointAPI will not resolve (it does) nor advise pip installs,
    which docs/kit.md forbids inside Kit; it names the Kit extension that would bring the schema."""
    plugin = write_kit_like_physx_schema(tmp_path / "physx_schema", "physxSchema")
    result = run_probe("kit", str(plugin), str(STUBS), "kit-no-newton")
    err = result["_stderr"]
    assert "will not resolve" not in err and "pip install" not in err, err[-2000:]
    assert (
        "NewtonMimicAPI is not declared by any USD plugin in this Kit app (omni.usd.schema.newton is not loaded)" in err
    ), err[-2000:]
    assert result["has_api"][0] is True  # PhysxMimicJointAPI resolves: Kit's plugin
    assert result["sources"]["PhysxMimicJointAPI"][0] == "physxSchema" and "NewtonMimicAPI" not in result["sources"]
    assert sorted(w[0] for w in result["written"]) == ["newton", "physx"]  # Newton's written by attribute name
    assert result["physx_usd_schemas_imported"] is False


# ------------------------------------------------------------------ (c) Newton and NVIDIA's converter


@pytest.mark.slow
@pytest.mark.parametrize("order", ["mimic-first", "mimic-last"])
def test_newton_add_usd_reads_our_newton_relation(order, tmp_path):
    if importlib.util.find_spec("newton") is None:
        pytest.skip("newton is not installed (pip install mimic-ext[newton])")
    result = run_probe("newton", order, str(tmp_path))
    multiplier, offset = result["ours"]
    assert multiplier == pytest.approx(1.5, rel=F32) and offset == pytest.approx(0.1, rel=F32)
    assert result["follower_mimics"] == result["leader_index"]
    # Newton's (coef0 in rad, coef1) is our canonical (offset, multiplier); float32 round-off only
    assert result["newton_coeffs"] == pytest.approx([offset, multiplier], rel=F32)


def _converter_python() -> str:
    """An interpreter whose OpenUSD can load urdf-usd-converter, or a skip saying why not.

    The converter runs on usd-exchange's OpenUSD build; usd-core installs the same ``pxr``
    package over it, so where both are installed (this project's base dependency and the
    converter's) the converter cannot load at all, with or without mimic_ext. Set
    ``MIMIC_EXT_USD_EXCHANGE_PYTHON`` to an interpreter where usd-exchange provides ``pxr``
    (docs/conventions.md) to run this check there.
    """
    python = os.environ.get("MIMIC_EXT_USD_EXCHANGE_PYTHON", sys.executable)
    probe = subprocess.run([python, "-c", "import urdf_usd_converter"], capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(
            f"urdf-usd-converter cannot load under {python} ({last}); usd-core and usd-exchange both "
            "install pxr: set MIMIC_EXT_USD_EXCHANGE_PYTHON to an interpreter with usd-exchange's pxr"
        )
    return python


@pytest.mark.parametrize("order", ["mimic-first", "mimic-last"])
def test_urdf_usd_converter_output_is_read_by_mimic_ext_in_one_process(order, tmp_path):
    python = _converter_python()
    result = run_probe("converter", order, str(tmp_path), python=python)
    ((schema, follower, leader, multiplier, offset),) = result["relations"]  # <mimic multiplier="2" offset="0.1"/>
    assert (schema, follower, leader) == ("newton", "follower", "leader")
    assert multiplier == pytest.approx(2.0, rel=F32) and offset == pytest.approx(0.1, rel=F32)
    assert result["errors"] == []
