"""Our checks as rules of NVIDIA's validator, run through its own command.

``python -m omni.asset_validator`` is omniverse-asset-validator's command, or, where
usd-validation-nvidia (its successor, which simready-foundation-tier-core brings) is installed,
usd-validation-nvidia's: it replaces ``omni/asset_validator`` with a re-export of itself and
reads plugins from the entry-point groups ``usd_validation_nvidia`` and ``omni.asset_validator``.
The editable install a developer has may predate our entry point, so each run puts a minimal
``mimic_ext`` distribution first on the path whose only content is the entry-point table of
this tree's pyproject.toml: what is checked is the declaration that ships, discovered by the
validator's real plugin manager. Runs select our category (``-c MimicJoints``): tier-core's
SimReady rules would otherwise report thousands of issues on the samples.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import mimic_ext
from mimic_ext.schema.asset_rules import CATEGORY, DJ_007, DJ_007_CODES
from mimic_ext.schema.validation import CODES, ERROR, INFO, WARNING

# found, not imported: importing it here would start its plugin system inside the test process
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("omni.asset_validator") is None,
    reason="omniverse-asset-validator is not installed (the validator extra)",
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
TESTS = Path(__file__).resolve().parent
#: usd-validation-nvidia's command logs infos (and "Results for Asset") only with -v, and from its own logger
SUCCESSOR = importlib.util.find_spec("usd_validation_nvidia") is not None
VERBOSE = ["-v"] if SUCCESSOR else []
LEVEL = {ERROR: "ERROR", WARNING: "WARNING", INFO: "INFO"}  # how the validator logs failure/warning/info
# "<LEVEL>:<the command's logger>:[<group: rule name, or requirement code>] <message> At <where>"
LINE = re.compile(
    r"^(ERROR|WARNING|INFO):(?:omni\.asset_validator\._cli|usd_validation_nvidia\.cli\._validation):"
    r"\[([^\]]+)\] (.*?)(?: At .*)?$"
)
RECORD = re.compile(r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):")
#: codes that validate() reports only for a target (tests/test_validation.py's SAMPLE_TARGET): the rules run
#: without one, so these samples have none of their code
TARGET_ONLY = {"MIMIC_NO_JOINT_STATE", "MIMIC_HOST_NOT_COUPLED"}


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


def foreign_tracebacks_only(text: str) -> None:
    """Every traceback is another distribution's plugin failing to load (usd-validation-nvidia 1.22 reaches
    omniverse-asset-validator's ``default`` plugin through its own partially imported re-export), none
    mentions mimic_ext."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("Traceback (most recent call last):"):
            continue
        block = [line]
        for follow in lines[i + 1 :]:
            if RECORD.match(follow):
                break
            block.append(follow)
        assert "mimic_ext" not in "\n".join(block), "\n".join(block)
        cause = next((lines[j] for j in range(i - 1, -1, -1) if RECORD.match(lines[j])), "")
        m = re.search(r"Failed to load plugin '.*' from '(.*)'", cause)
        assert m and m.group(1).replace("_", "-") != "mimic-ext", (cause, "\n".join(block))


def run_validator(
    entry_point_path: Path, *args: str, bridge: bool = False
) -> tuple[int, dict[str, list[tuple[str, str, str]]]]:
    """Exit code and, per asset, the (log level, group, message) lines the validator's command printed.
    ``bridge``: with tests/simready_checks.py's ``pxr.PhysxSchema`` bridge, which tier-core's DJ rules need
    (the command then runs as ``python -m`` does, through runpy)."""
    if bridge:
        launch = (
            "import runpy, sys\n"
            f"sys.path.insert(0, {str(TESTS)!r})\n"
            "from simready_checks import bridged\n"
            "sys.argv[0] = 'validate'\n"
            "with bridged():\n"
            "    runpy.run_module('omni.asset_validator', run_name='__main__', alter_sys=True)\n"
        )
        command = [sys.executable, "-c", launch]
    else:
        command = [sys.executable, "-m", "omni.asset_validator"]
    out = subprocess.run(
        [*command, *VERBOSE, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(entry_point_path),
        cwd=ROOT,
    )
    foreign_tracebacks_only(out.stdout + out.stderr)
    assert out.returncode in (0, 1), (out.stdout + out.stderr)[-3000:]  # 2: an argument (our category) unknown
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
def registered(entry_point_path) -> dict:
    """What the validator's real plugin manager registered: our category's rules and DJ.007's owners
    as (requirement code, top-level package, rule name)."""
    script = (
        "import json\n"
        "import omni.asset_validator as av\n"  # as the command does (usd-validation-nvidia: its re-export)
        "from mimic_ext.schema.asset_rules import is_dj_007\n"
        "reg = av.RequirementsRegistry()\n"
        "owners = sorted({(r.code, o.__module__.split('.')[0], o.__name__) for r in list(reg) if is_dj_007(r.code)\n"
        "    for o in [reg.get_validator(r)] if o is not None})\n"
        f"rules = sorted(r.__name__ for r in av.CategoryRuleRegistry().get_rules({CATEGORY!r}))\n"
        "print('REGISTERED', json.dumps({'rules': rules, 'dj_007': owners}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=_env(entry_point_path)
    )
    assert out.returncode == 0, out.stderr[-3000:]
    foreign_tracebacks_only(out.stdout + out.stderr)
    (line,) = [x for x in out.stdout.splitlines() if x.startswith("REGISTERED ")]
    return json.loads(line.removeprefix("REGISTERED "))


def our_dj_007(registered: dict) -> bool:
    """Whether our MimicApiCheck is DJ.007 here: only where no other plugin (tier-core) implements it."""
    return registered["dj_007"] == [[DJ_007, "mimic_ext", "MimicApiCheck"]]


def test_dj_007_has_one_owner_and_ours_defers_to_nvidias(registered):
    owners = registered["dj_007"]
    assert len(owners) == 1, owners  # one DJ.007 runs, never two that disagree on the same joints
    if our_dj_007(registered):
        assert registered["rules"] == ["MimicApiCheck", "MimicJointChecker"]
    else:  # tier-core's rule, and ours withdrawn from our category
        assert owners[0][1] != "mimic_ext" and registered["rules"] == ["MimicJointChecker"], registered


@pytest.fixture(scope="module")
def data_run(entry_point_path):
    """One run of the validator's command, our category, over data/ (the valid samples and data/invalid/)."""
    return run_validator(entry_point_path, "-c", CATEGORY, "data/")


def test_every_invalid_sample_reports_its_code_through_the_validator(data_run, registered):
    code, per_asset = data_run
    assert code == 1  # the validator's exit status for "issues found"
    assert {f"{c}.usda" for c in CODES} <= set(per_asset)
    groups = {r for lines in per_asset.values() for _, r, _ in lines}
    assert groups == set(registered["rules"])  # our category ran: our rules, each with issues, nothing else
    for sample in CODES:
        lines = per_asset[f"{sample}.usda"]
        found = ours(lines)
        if sample in TARGET_ONLY:
            assert sample not in {c for _, c in found}, (sample, found)
        else:
            assert (LEVEL[CODES[sample][0]], sample) in found, (sample, lines)
        # the samples are minimal: no other error or warning of ours
        assert {c for lvl, c in found if lvl != "INFO"} <= {sample}, (sample, found)
        if not our_dj_007(registered):
            continue  # DJ.007 is NVIDIA's: test_requirement_and_category_select_our_rules
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


def test_valid_samples_have_no_findings_of_ours(data_run, registered):
    _, per_asset = data_run
    for name, expected in VALID.items():
        assert ours(per_asset[name]) == expected, name
        assert {r for _, r, _ in per_asset[name]} <= {"MimicJointChecker", "MimicApiCheck"}, name
        if our_dj_007(registered):
            assert ours(per_asset[name], "MimicApiCheck") == expected, name


@pytest.mark.slow
def test_requirement_and_category_select_our_rules(entry_point_path, registered):
    sample = "data/invalid/MIMIC_ZERO_GEARING.usda"
    # one of our codes as the requirement: issues are grouped by requirement, only that one's
    code, per_asset = run_validator(entry_point_path, "--requirement", "MIMIC_ZERO_GEARING", sample)
    (lines,) = per_asset.values()
    assert code == 1 and [(lvl, group) for lvl, group, _ in lines] == [("ERROR", "MIMIC_ZERO_GEARING")]
    assert lines[0][2].startswith("MIMIC_ZERO_GEARING: gearing is 0")
    if our_dj_007(registered):
        # SimReady's route: ask for the requirement DJ.007 only; none of MimicJointChecker's issues
        code, per_asset = run_validator(entry_point_path, "--requirement", DJ_007, sample)
        (lines,) = per_asset.values()
        assert code == 1 and [(lvl, group) for lvl, group, _ in lines] == [("ERROR", DJ_007)]
        assert lines[0][2].startswith("DJ.007 MIMIC_ZERO_GEARING: gearing is 0")
    else:
        # DJ.007 is tier-core's rule (under its long name); grouped by rule, its issues are NVIDIA's rule's
        ((name, _, rule),) = registered["dj_007"]  # com.nvidia.simready.DJ.007, MimicAPICheck
        code, per_asset = run_validator(
            entry_point_path, "--requirement", name, "--group-by", "rule_name", sample, bridge=True
        )
        (lines,) = per_asset.values()
        assert code == 1 and {group for _, group, _ in lines} == {rule} != {"MimicApiCheck"}, lines
        assert ("ERROR", rule, "Joint /Robot/Joints/follower has gear ratio == 0") in lines
    # our category alone on a valid sample: nothing to report, exit 0
    code, per_asset = run_validator(entry_point_path, "--category", CATEGORY, "data/geared_pair.usda")
    assert code == 0 and per_asset == {"geared_pair.usda": []}


def test_plugin_restarts_cleanly_and_importing_it_loads_no_omni(entry_point_path, registered):
    script = (
        "import sys\n"
        "import mimic_ext.schema.asset_rules\n"
        "print('omni before', any(m == 'omni' or m.startswith('omni.') for m in sys.modules))\n"
        "import omni.asset_validator as av\n"
        f"names = lambda: sorted(r.__name__ for r in av.CategoryRuleRegistry().get_rules({CATEGORY!r}))\n"
        "print('started', names())\n"
        "av.PluginManager().shutdown(); print('stopped', names())\n"
        "av.PluginManager().initialize(); print('restarted', names())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=_env(entry_point_path)
    )
    assert out.returncode == 0, out.stderr[-3000:]
    foreign_tracebacks_only(out.stdout + out.stderr)
    marks = ("omni before", "started", "stopped", "restarted")
    lines = [line for line in out.stdout.splitlines() if line.startswith(marks)]
    rules = registered["rules"]  # MimicApiCheck among them only where DJ.007 is ours
    assert "MimicJointChecker" in rules
    assert lines == ["omni before False", f"started {rules}", "stopped []", f"restarted {rules}"]


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
