"""FET022 settings: the packaged YAML and the dataclass agree; named user files and flags override them."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mimic_ext.errors import MimicInputError
from mimic_ext.fet022 import config as cfgmod
from mimic_ext.fet022.config import SweepConfig, load_config


def _as_yaml_values(cfg: SweepConfig) -> dict:
    d = cfg.to_dict()
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}


def test_packaged_yaml_and_dataclass_defaults_agree():
    raw = yaml.safe_load(cfgmod.DEFAULTS_TEMPLATE.read_text())
    defaults = _as_yaml_values(SweepConfig())
    assert set(raw) == set(defaults), "every setting lives in both places, and only those"
    for key, value in raw.items():
        # exact equality: both are the same literal decimal numbers (240 and 240.0 compare equal)
        assert value == defaults[key], key
    assert cfgmod.DEFAULTS_TEMPLATE.parent == Path(cfgmod.__file__).parent  # ships in the wheel


def test_defaults_are_the_public_test_values():
    """The harness's get_defaults() (articulation_phases/mimic_joint.py) and its absolute criterion."""
    c = SweepConfig()
    assert (
        c.gear_ratio_tolerance,
        c.tolerance_mode,
        c.ratio_measure,
        c.sweep_seconds,
        c.settle_seconds,
        c.sweep_margin_ratio,
        c.physics_fps,
        c.sample_every,
        c.bbox_explode_ratio,
        c.follow_tolerance,
        c.capture_fps,
    ) == (0.10, "absolute", "motion_ratio", 2.0, 1.0, 0.10, 240, 10, 10.0, 0.05, 15)
    assert (c.settle_steps, c.sweep_steps) == (240, 480)


def test_the_harness_yaml_keys_load_unchanged(tmp_path):
    """Every key of the harness's get_defaults(), with its own values, is a valid file here."""
    f = tmp_path / "harness.yaml"
    f.write_text(
        "settle_seconds: 1.0\nsweep_seconds: 2.0\nfollow_tolerance: 0.05\ngear_ratio_tolerance: 0.10\n"
        "sweep_margin_ratio: 0.10\nbbox_explode_ratio: 10.0\nphysics_fps: 240.0\ncapture_fps: 15\n"
    )
    assert load_config(f) == SweepConfig()


@pytest.mark.parametrize("flags", [{"sweep_seconds": 1e6}, {"settle_seconds": 1e7}, {"physics_fps": 1e7}])
def test_runs_past_the_step_bound_are_refused_before_any_work(flags):
    with pytest.raises(MimicInputError) as info:
        load_config(None, **flags)
    msg = str(info.value)
    assert f"at most {cfgmod.MAX_STEPS:,}" in msg and "\n" not in msg


def test_defaults_do_not_depend_on_where_the_package_sits(monkeypatch, tmp_path):
    """A checkout, a wheel and a Kit folder run one set of defaults: a config/fet022.yaml beside
    the package (where a checkout once kept one, and which used to be read) is never read."""
    root = tmp_path / "checkout"
    shutil.copytree(Path(cfgmod.__file__).parents[1], root / "mimic_ext", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "config").mkdir()
    (root / "config" / "fet022.yaml").write_text("gear_ratio_tolerance: 0.5\n")
    env = {k: v for k, v in os.environ.items() if k != cfgmod.CONFIG_ENV}
    env["PYTHONPATH"] = str(root)
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import mimic_ext.fet022.config as c; print(c.__file__, c.load_config().gear_ratio_tolerance)",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    where, tolerance = out.stdout.split()
    assert Path(where).is_relative_to(root) and float(tolerance) == SweepConfig().gear_ratio_tolerance


def test_a_file_named_by_the_environment_is_read_under_the_flags(monkeypatch, tmp_path):
    env_file = tmp_path / "site.yaml"
    env_file.write_text("gear_ratio_tolerance: 0.2\nsweep_seconds: 3.0\n")
    mine = tmp_path / "mine.yaml"
    mine.write_text("sweep_seconds: 4.0\n")
    monkeypatch.setenv(cfgmod.CONFIG_ENV, str(env_file))
    assert load_config().gear_ratio_tolerance == 0.2 and cfgmod.as_config(None).sweep_seconds == 3.0
    c = load_config(mine, gear_ratio_tolerance=0.05)  # --config over the variable, flags over both
    assert (c.gear_ratio_tolerance, c.sweep_seconds) == (0.05, 4.0)
    env_file.write_text("gear_ratio_tol: 1\n")
    with pytest.raises(MimicInputError) as info:
        load_config()
    assert cfgmod.CONFIG_ENV in str(info.value) and "gear_ratio_tol" in str(info.value)


def test_user_file_then_overrides(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("gear_ratio_tolerance: 0.2\ntest_drive:\n  angular_stiffness: 5\nunlimited_range_deg: [-45, 45]\n")
    c = load_config(f)
    assert c.gear_ratio_tolerance == 0.2
    assert c.test_drive.angular_stiffness == 5.0 and c.test_drive.linear_stiffness == 10000.0
    assert c.unlimited_range_deg == (-45.0, 45.0)
    c2 = load_config(f, gear_ratio_tolerance=0.05, tolerance_mode="absolute", sweep_seconds=None)
    assert (c2.gear_ratio_tolerance, c2.tolerance_mode, c2.sweep_seconds) == (0.05, "absolute", 2.0)


@pytest.mark.parametrize(
    "text, words",
    [
        ("gear_ratio_tol: 0.1\n", ["unknown setting 'gear_ratio_tol'"]),
        ("tolerance_mode: percent\n", ["tolerance_mode", "absolute, relative"]),
        ("ratio_measure: slope\n", ["ratio_measure", "motion_ratio, fit_slope"]),
        ("sweep_margin_ratio: 0.5\n", ["sweep_margin_ratio", "[0, 0.5)"]),
        ("sample_every: 2.5\n", ["sample_every", "int"]),
        ("unlimited_range_m: [0.1, -0.1]\n", ["unlimited_range_m", "low < high"]),
        ("test_drive: {angular_stiffness: 0}\n", ["test_drive", "stiffness"]),
        ("physics_fps: [1, 2]\n", ["physics_fps", "expected float"]),
    ],
)
def test_bad_settings_name_the_file_and_the_setting(tmp_path, text, words):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(MimicInputError) as info:
        load_config(f)
    msg = str(info.value)
    assert str(f) in msg and "\n" not in msg
    for w in words:
        assert w in msg


def test_yaml_syntax_error_names_the_line(tmp_path):
    f = tmp_path / "broken.yaml"
    f.write_text("gear_ratio_tolerance: 0.1\nsweep_seconds: [2.0\n")
    with pytest.raises(MimicInputError, match=r"broken.yaml: line \d+ is not valid YAML"):
        load_config(f)


def test_missing_config_file(tmp_path):
    with pytest.raises(MimicInputError, match="no such config file"):
        load_config(tmp_path / "nope.yaml")
