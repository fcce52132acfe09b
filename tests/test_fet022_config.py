"""FET022 settings: the YAML defaults and the dataclass agree; user files and flags override them."""

from pathlib import Path

import pytest
import yaml

from mimic_ext.errors import MimicInputError
from mimic_ext.fet022 import config as cfgmod
from mimic_ext.fet022.config import SweepConfig, load_config

ROOT = Path(__file__).resolve().parents[1]


def _as_yaml_values(cfg: SweepConfig) -> dict:
    d = cfg.to_dict()
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}


def test_project_yaml_and_dataclass_defaults_agree():
    raw = yaml.safe_load((ROOT / "config" / "fet022.yaml").read_text())
    defaults = _as_yaml_values(SweepConfig())
    assert set(raw) == set(defaults), "every setting lives in both places, and only those"
    for key, value in raw.items():
        # exact equality: both are the same literal decimal numbers (240 and 240.0 compare equal)
        assert value == defaults[key], key
    assert cfgmod.PROJECT_CONFIG == ROOT / "config" / "fet022.yaml"


def test_defaults_are_the_public_test_values():
    """The harness's get_defaults() (articulation_phases/mimic_joint.py) and its absolute criterion."""
    c = SweepConfig()
    assert (c.gear_ratio_tolerance, c.tolerance_mode, c.ratio_measure, c.sweep_seconds, c.settle_seconds,
            c.sweep_margin_ratio, c.physics_fps, c.sample_every, c.bbox_explode_ratio, c.follow_tolerance,
            c.capture_fps) == (0.10, "absolute", "motion_ratio", 2.0, 1.0, 0.10, 240, 10, 10.0, 0.05, 15)
    assert (c.settle_steps, c.sweep_steps) == (240, 480)


def test_the_harness_yaml_keys_load_unchanged(tmp_path):
    """Every key of the harness's get_defaults(), with its own values, is a valid file here."""
    f = tmp_path / "harness.yaml"
    f.write_text("settle_seconds: 1.0\nsweep_seconds: 2.0\nfollow_tolerance: 0.05\ngear_ratio_tolerance: 0.10\n"
                 "sweep_margin_ratio: 0.10\nbbox_explode_ratio: 10.0\nphysics_fps: 240.0\ncapture_fps: 15\n")
    assert load_config(f) == SweepConfig()


@pytest.mark.parametrize("flags", [{"sweep_seconds": 1e6}, {"settle_seconds": 1e7}, {"physics_fps": 1e7}])
def test_runs_past_the_step_bound_are_refused_before_any_work(flags):
    with pytest.raises(MimicInputError) as info:
        load_config(None, **flags)
    msg = str(info.value)
    assert f"at most {cfgmod.MAX_STEPS:,}" in msg and "\n" not in msg


def test_installed_package_falls_back_to_the_dataclass(monkeypatch, tmp_path):
    monkeypatch.setattr(cfgmod, "PROJECT_CONFIG", tmp_path / "absent" / "fet022.yaml")
    assert load_config() == SweepConfig()


def test_user_file_then_overrides(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("gear_ratio_tolerance: 0.2\ntest_drive:\n  angular_stiffness: 5\nunlimited_range_deg: [-45, 45]\n")
    c = load_config(f)
    assert c.gear_ratio_tolerance == 0.2
    assert c.test_drive.angular_stiffness == 5.0 and c.test_drive.linear_stiffness == 10000.0
    assert c.unlimited_range_deg == (-45.0, 45.0)
    c2 = load_config(f, gear_ratio_tolerance=0.05, tolerance_mode="absolute", sweep_seconds=None)
    assert (c2.gear_ratio_tolerance, c2.tolerance_mode, c2.sweep_seconds) == (0.05, "absolute", 2.0)


@pytest.mark.parametrize("text, words", [
    ("gear_ratio_tol: 0.1\n", ["unknown setting 'gear_ratio_tol'"]),
    ("tolerance_mode: percent\n", ["tolerance_mode", "absolute, relative"]),
    ("ratio_measure: slope\n", ["ratio_measure", "motion_ratio, fit_slope"]),
    ("sweep_margin_ratio: 0.5\n", ["sweep_margin_ratio", "[0, 0.5)"]),
    ("sample_every: 2.5\n", ["sample_every", "int"]),
    ("unlimited_range_m: [0.1, -0.1]\n", ["unlimited_range_m", "low < high"]),
    ("test_drive: {angular_stiffness: 0}\n", ["test_drive", "stiffness"]),
    ("physics_fps: [1, 2]\n", ["physics_fps", "expected float"]),
])
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
