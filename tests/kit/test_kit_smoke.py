"""tools/kit_smoke.py, the script users run in their own Kit, run here as Kit's --exec would run it, with the
stand-ins as Kit's modules (tests/kit/kit_exec.py): its JSON lines and verdict, and that a check the host cannot
run is reported as not run, never as a pass.

The same file a user runs; only the modules under it differ: with the full stand-ins its kit-physx sweep runs
on the omni.physx stand-in (real NVIDIA PhysX through ovphysx where installed), and the check says so in the
engine label; with omni.physx and omni.physics taken out of the stand-ins (an app without PhysX), the kit-physx
sweep and the comparison are "not-run" and the verdict is never "pass".
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
STUBS = PROJECT / "tests" / "kit_stubs"
SCRIPT = PROJECT / "tools" / "kit_smoke.py"
KIT_EXEC = Path(__file__).resolve().parent / "kit_exec.py"
COMMANDS = (
    "SetMimicGearing",
    "SetMimicOffset",
    "SetMimicReferenceJoint",
    "SetMimicCompliance",
    "RemoveMimicJoint",
    "AddMimicJoint",
    "ConvertMimicSchema",
    "RemoveMimicDuplicate",
    "undo_all",
)
#: run only where a follower carries both schemas (of the default samples, MIMIC_BOTH_SCHEMAS.usda)
PAIRED = ("RemoveMimicDuplicate",)
SAMPLES = ("geared_pair.usda", "gripper_prismatic.usda", "MIMIC_BOTH_SCHEMAS.usda")
STATUSES = {"pass", "fail", "not-run"}


def _smoke(tmp_path: Path, *args: str, stubs: Path = STUBS, app: tuple[str, ...] = ()):
    """(exit code, {check name: check}, verdict line, stderr) of one run of the script; ``app``: kit_exec's
    options for the app (``--app empty``, ``--enable EXT``, ``--/setting=value``)."""
    # 240 s: a cold Warp compile of the solver's kernels (first run on a machine) takes a minute or two
    proc = subprocess.run(
        [
            sys.executable,
            str(KIT_EXEC),
            "--stubs",
            str(stubs),
            *app,
            str(SCRIPT),
            "--quit",
            "--out",
            str(tmp_path / "out"),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
        check=False,
    )
    lines = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith('{"smoke": "mimic_ext"')]
    checks = {ln["name"]: ln for ln in lines if "name" in ln}
    verdicts = [ln for ln in lines if "verdict" in ln]
    assert len(verdicts) == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert len(checks) == len(lines) - 1, "two checks of the same name"
    for check in checks.values():
        assert set(check) == {"smoke", "name", "status", "detail"} and check["status"] in STATUSES, check
    return proc.returncode, checks, verdicts[0], proc.stderr


def _names(sample: str) -> set[str]:
    paired = sample == "MIMIC_BOTH_SCHEMAS.usda"
    return {
        f"{sample}/open",
        f"{sample}/sweep/kit-physx",
        f"{sample}/sweep/warp",
        f"{sample}/compare/kit-physx-vs-warp",
    } | {f"{sample}/command/{c}" for c in COMMANDS if paired or c not in PAIRED}


def _without_physx(tmp_path: Path) -> Path:
    """The stand-ins of an app that has no omni.physx (nor omni.physics.tensors)."""
    stubs = tmp_path / "stubs_without_physx"
    shutil.copytree(STUBS, stubs, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.rmtree(stubs / "omni" / "physx")
    shutil.rmtree(stubs / "omni" / "physics")
    return stubs


def test_the_smoke_script_passes_in_the_stand_in_kit_and_says_its_physx_is_the_stand_in(tmp_path):
    code, checks, verdict, stderr = _smoke(tmp_path)
    assert set(checks) == {"extension_enabled", "commands_registered"}.union(*map(_names, SAMPLES))
    failed = {n: c["detail"] for n, c in checks.items() if c["status"] != "pass"}
    assert not failed, failed
    assert verdict["verdict"] == "pass" and verdict["counts"] == {"pass": 39, "fail": 0, "not-run": 0}
    assert code == verdict["exit_code"] == 0, stderr[-3000:]
    enabled = checks["extension_enabled"]["detail"]
    # Kit did not know the extension: the script added this project as an extension folder and enabled it
    assert enabled["was_enabled"] is False and enabled["extension_folder_added"]
    assert enabled["set_extension_enabled_immediate"] is True and enabled["MimicExtension started"] is True
    assert enabled["loaded_from"] == str(PROJECT / "mimic_ext")
    for sample in SAMPLES:
        for command in COMMANDS[:-1]:
            if command in PAIRED and sample != "MIMIC_BOTH_SCHEMAS.usda":
                continue
            d = checks[f"{sample}/command/{command}"]["detail"]
            assert d["changed_layers"] and d["undo_restored_byte_for_byte"] and d["redo_gave_the_edit_back"], d
        physx = checks[f"{sample}/sweep/kit-physx"]["detail"]
        # what really ran, labelled as the stand-in it is
        assert physx["engine"].startswith("kit-physx (omni.physx 0.0.0+standin: stand-in over "), physx["engine"]
        assert physx["layers_unchanged"] and physx["fet022"] == "pass"
        assert checks[f"{sample}/sweep/warp"]["detail"]["engine"] == "warp"
        for row in checks[f"{sample}/compare/kit-physx-vs-warp"]["detail"]["followers"]:
            assert row["difference"] <= row["bound"]
    assert "stand-in" in verdict["host"]["omni.physx"]
    assert "Traceback" not in stderr, stderr[-3000:]


def test_without_omni_physx_the_kit_physx_checks_are_not_run_and_the_verdict_is_incomplete(tmp_path):
    code, checks, verdict, stderr = _smoke(tmp_path, "--stage", "geared_pair.usda", stubs=_without_physx(tmp_path))
    not_run = {n for n, c in checks.items() if c["status"] == "not-run"}
    assert not_run == {"geared_pair.usda/sweep/kit-physx", "geared_pair.usda/compare/kit-physx-vs-warp"}
    assert "needs omni.physx" in checks["geared_pair.usda/sweep/kit-physx"]["detail"]["why"]
    assert checks["geared_pair.usda/sweep/warp"]["status"] == "pass"
    assert verdict["verdict"] == "incomplete" and verdict["counts"] == {"pass": 12, "fail": 0, "not-run": 2}
    assert code == verdict["exit_code"] == 2, stderr[-3000:]
    assert "omni.physx" not in verdict["host"]


def test_a_failing_check_makes_the_verdict_fail_whatever_was_not_run(tmp_path):
    """An invalid stage (gearing 0): re-adding its relation is refused and FET022 fails it; kit-physx is not run."""
    code, checks, verdict, _ = _smoke(
        tmp_path, "--stage", "invalid/MIMIC_ZERO_GEARING.usda", stubs=_without_physx(tmp_path)
    )
    failed = {n: c["detail"] for n, c in checks.items() if c["status"] == "fail"}
    # the relation Remove took away is not added back, so there is nothing to convert either
    assert set(failed) == {
        "MIMIC_ZERO_GEARING.usda/command/AddMimicJoint",
        "MIMIC_ZERO_GEARING.usda/command/ConvertMimicSchema",
        "MIMIC_ZERO_GEARING.usda/sweep/warp",
    }
    assert failed["MIMIC_ZERO_GEARING.usda/command/AddMimicJoint"]["executed"] is False
    assert failed["MIMIC_ZERO_GEARING.usda/sweep/warp"]["why"] == ["FET022 says fail"]
    assert checks["MIMIC_ZERO_GEARING.usda/command/undo_all"]["status"] == "pass"  # what did run was undone
    assert verdict["verdict"] == "fail" and verdict["counts"] == {"pass": 9, "fail": 3, "not-run": 2}
    assert code == verdict["exit_code"] == 1


def _cannot_run(tmp_path: Path, app: tuple[str, ...]) -> str:
    """A run in an app that cannot run the checks: exit 3, one failed ``kit_app`` check, verdict cannot-run;
    returns its ``why``. Before this, the script exited 0 printing nothing without a run loop, and without
    omni.kit.async_engine its task sat on a loop nobody ran until kit_exec gave up (124)."""
    code, checks, verdict, stderr = _smoke(tmp_path, "--stage", "geared_pair.usda", app=(*app, "--max-frames", "2000"))
    assert code == verdict["exit_code"] == 3, stderr[-3000:]
    assert verdict["verdict"] == "cannot-run" and verdict["counts"] == {"pass": 0, "fail": 1, "not-run": 0}
    assert set(checks) == {"kit_app"} and checks["kit_app"]["status"] == "fail"
    return checks["kit_app"]["detail"]["why"]


def test_without_a_run_loop_the_smoke_script_exits_3_saying_which_flag_is_missing(tmp_path):
    """omni.app.empty.kit with the async engine but no run loop: Kit runs the file and quits at once (the script's
    shutdown subscriber says so and sets the exit code, as it does in the real kernel 6.2)."""
    why = _cannot_run(tmp_path, ("--app", "empty", "--enable", "omni.kit.async_engine"))
    assert "--/app/runWithoutRunloop=true" in why and "quit before the checks ended" in why


def test_without_the_async_engine_the_smoke_script_exits_3_saying_which_flag_is_missing(tmp_path):
    """omni.app.empty.kit updated by the kernel (runWithoutRunloop) but with no omni.kit.async_engine: no loop
    would ever run the checks; the script says so at once instead of waiting forever."""
    why = _cannot_run(tmp_path, ("--app", "empty", "--/app/runWithoutRunloop=true"))
    assert "--enable omni.kit.async_engine" in why
    # an empty app with neither: the same answer (the first thing missing)
    assert "--enable omni.kit.async_engine" in _cannot_run(tmp_path, ("--app", "empty"))
