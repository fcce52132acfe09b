"""Our checks as rules of NVIDIA's omniverse-asset-validator, run through its own command.

``python -m omni.asset_validator`` finds plugins through the entry-point group
``omni.asset_validator``. The editable install a developer has may predate the entry point,
so each run puts a minimal ``mimic_ext`` distribution first on the path whose only content
is the entry-point table of this tree's pyproject.toml: what is checked is the declaration
that ships, discovered by the validator's real plugin manager.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import mimic_ext
from mimic_ext.schema.asset_rules import DJ_007, DJ_007_CODES
from mimic_ext.schema.validation import CODES, ERROR, INFO, WARNING

# found, not imported: importing it here would start its plugin system inside the test process
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("omni.asset_validator") is None,
    reason="omniverse-asset-validator is not installed (the validator extra)",
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
LEVEL = {ERROR: "ERROR", WARNING: "WARNING", INFO: "INFO"}  # how the validator logs failure/warning/info
# "<LEVEL>:omni.asset_validator._cli:[<group: rule name, or requirement code>] <message> At <where>"
LINE = re.compile(r"^(ERROR|WARNING|INFO):omni\.asset_validator\._cli:\[([^\]]+)\] (.*?)(?: At .*)?$")


@pytest.fixture(scope="module")
def entry_point_path(tmp_path_factory) -> Path:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    group = project["entry-points"]["omni.asset_validator"]
    folder = tmp_path_factory.mktemp("dist")
    version = mimic_ext.__version__  # the one version source (pyproject reads it dynamically)
    info = folder / f"mimic_ext-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(
        "[omni.asset_validator]\n" + "".join(f"{name} = {value}\n" for name, value in group.items())
    )
    return folder


def _env(entry_point_path: Path) -> dict:
    return dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(entry_point_path), str(ROOT), os.environ.get("PYTHONPATH", "")])
    )


def run_validator(entry_point_path: Path, *args: str) -> tuple[int, dict[str, list[tuple[str, str, str]]]]:
    """Exit code and, per asset, the (log level, rule, message) lines the validator printed."""
    env = _env(entry_point_path)
    out = subprocess.run(
        [sys.executable, "-m", "omni.asset_validator", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert "Traceback" not in out.stdout + out.stderr, (out.stdout + out.stderr)[-3000:]
    assert "mimic_ext.schema.asset_rules:MimicAssetValidatorPlugin" in out.stdout  # the plugin was loaded
    per_asset: dict[str, list] = {}
    current = None
    for line in out.stdout.splitlines():
        if m := re.search(r"Results for Asset '(.*)'", line):
            current = Path(m.group(1)).name
            per_asset[current] = []
        elif (m := LINE.match(line)) and current is not None:
            per_asset[current].append(m.groups())
    return out.returncode, per_asset


def ours(lines, rule="MimicJointChecker"):
    """(level, code) of our rule's issues; each message starts with the code."""
    return {(level, msg.split(":", 1)[0].removeprefix(f"{DJ_007} ")) for level, r, msg in lines if r == rule}


@pytest.fixture(scope="module")
def data_run(entry_point_path):
    """One run of the validator's command over data/ (the valid samples and data/invalid/)."""
    return run_validator(entry_point_path, "data/")


def test_every_invalid_sample_reports_its_code_through_the_validator(data_run):
    code, per_asset = data_run
    assert code == 1  # the validator's exit status for "issues found"
    assert {f"{c}.usda" for c in CODES} <= set(per_asset)
    for sample in CODES:
        lines = per_asset[f"{sample}.usda"]
        found = ours(lines)
        assert (LEVEL[CODES[sample][0]], sample) in found, (sample, lines)
        # the samples are minimal: no other error or warning of ours
        assert {c for lvl, c in found if lvl != "INFO"} <= {sample}, (sample, found)
        dj = ours(lines, "MimicApiCheck")
        # DJ.007 reports the checks it covers on PhysxMimicJointAPI relations (MIMIC_DISABLED's is Newton's)
        expected = {(LEVEL[CODES[sample][0]], sample)} if sample in DJ_007_CODES else set()
        assert {x for x in dj if x[1] == sample} == expected, (sample, dj)


VALID = {
    "geared_pair.usda": set(),
    "gripper_prismatic.usda": set(),
    "gripper_prismatic_newton.usda": set(),
    "rack_and_pinion.usda": set(),
    "robotiq_style_linkage.usda": set(),
    "chain3.usda": {("INFO", "MIMIC_CHAIN")},
}  # built to show the one info a chain gets


def test_valid_samples_have_no_findings_of_ours(data_run):
    _, per_asset = data_run
    for name, expected in VALID.items():
        assert ours(per_asset[name]) == expected, name
        assert ours(per_asset[name], "MimicApiCheck") == expected, name


@pytest.mark.slow
def test_requirement_and_category_select_our_rules(entry_point_path):
    # SimReady's route: ask for the requirement DJ.007 only
    code, per_asset = run_validator(entry_point_path, "--requirement", DJ_007, "data/invalid/MIMIC_ZERO_GEARING.usda")
    (lines,) = per_asset.values()
    # issues are grouped by requirement here: only DJ.007's, none of MimicJointChecker's
    assert code == 1 and [(lvl, group) for lvl, group, _ in lines] == [("ERROR", DJ_007)]
    assert lines[0][2].startswith("DJ.007 MIMIC_ZERO_GEARING: gearing is 0")
    # our category alone on a valid sample: nothing to report, exit 0
    code, per_asset = run_validator(entry_point_path, "--category", "MimicJoints", "data/geared_pair.usda")
    assert code == 0 and per_asset == {"geared_pair.usda": []}


def test_plugin_restarts_cleanly_and_importing_it_loads_no_omni(entry_point_path):
    script = (
        "import sys\n"
        "import mimic_ext.schema.asset_rules\n"
        "print('omni before', any(m == 'omni' or m.startswith('omni.') for m in sys.modules))\n"
        "import omni.asset_validator as av\n"
        "names = lambda: sorted(r.__name__ for r in av.CategoryRuleRegistry().get_rules('MimicJoints'))\n"
        "print('started', names())\n"
        "av.PluginManager().shutdown(); print('stopped', names())\n"
        "av.PluginManager().initialize(); print('restarted', names())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=_env(entry_point_path)
    )
    assert out.returncode == 0, out.stderr[-3000:]
    marks = ("omni before", "started", "stopped", "restarted")
    lines = [line for line in out.stdout.splitlines() if line.startswith(marks)]
    assert lines == [
        "omni before False",
        "started ['MimicApiCheck', 'MimicJointChecker']",
        "stopped []",
        "restarted ['MimicApiCheck', 'MimicJointChecker']",
    ]


def test_only_the_kit_layer_and_the_validator_adapter_import_omni():
    """The core runs without Kit; asset_rules imports the pip package omni.asset_validator lazily."""
    offenders = []
    for path in (ROOT / "mimic_ext").rglob("*.py"):
        rel = path.relative_to(ROOT / "mimic_ext")
        if rel.parts[0] == "kit":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n == "omni" or n.startswith("omni.") or n == "carb" for n in names):
                top_level = node.col_offset == 0
                if str(rel) != "schema/asset_rules.py" or top_level:
                    offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []
