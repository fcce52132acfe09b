"""`mimic-ext sweep` as a command: help text, input errors, a light import, folder collection."""

import subprocess
import sys

import pytest

from mimic_ext import cli
from mimic_ext.fet022.batch import STAGE_SUFFIXES, collect_stages


def test_help_states_units_signs_and_exit_codes(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["sweep", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    flat = " ".join(out.split())  # the paragraphs are wrapped at 100 columns (issue 43)
    units = flat[flat.index("Units:") : flat.index("Signs:")]
    assert "degrees" in units and "rad or m" in units
    assert "q_f + gearing*q_ref + offset = 0" in flat[flat.index("Signs:") : flat.index("Exit code:")]
    assert all(any(line.startswith(head) for line in lines) for head in ("Units:", "Signs:", "Exit code:"))
    for flag in ("--config", "--tolerance", "--report", "--json", "--junit", "--html", "--recursive", "--jobs"):
        assert flag in out


def test_command_module_imports_only_the_standard_library():
    code = (
        "import sys, argparse; import mimic_ext.fet022.commands as c; "
        "p = argparse.ArgumentParser(); c.add_commands(p.add_subparsers()); "
        "from mimic_ext.fet022 import batch, config, reports; "
        "heavy = [m for m in ('pxr', 'warp', 'numpy', 'mimic_ext.solver') if m in sys.modules]; "
        "print(heavy); sys.exit(1 if heavy else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_suffixes_match_the_stage_reader():
    from mimic_ext.schema.stage_io import USD_EXTENSIONS

    assert STAGE_SUFFIXES == USD_EXTENSIONS


def test_bad_inputs_are_one_line_errors(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert cli.main(["sweep", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mimic-ext: error: ") and "no USD files" in err and "\n" not in err
    stage = tmp_path / "a.usda"
    stage.write_text("#usda 1.0\n")
    assert cli.main(["sweep", str(stage), "--engine", "bullet"]) == 2
    assert "unknown sweep engine 'bullet'" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("gear_ratio_tolerance: -1\n")
    assert cli.main(["sweep", str(stage), "--config", str(bad)]) == 2
    assert "gear_ratio_tolerance" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:  # argparse rejects it before anything runs
        cli.main(["sweep", str(stage), "--tolerance", "0"])
    assert info.value.code == 2


def test_folders_are_one_level_deep_unless_recursive(tmp_path):
    (tmp_path / "sub").mkdir()
    for name in ("b.usda", "a.usd", ".hidden.usda", "notes.txt", "sub/c.usdc"):
        (tmp_path / name).write_text("")
    assert [p.name for p in collect_stages([tmp_path])] == ["a.usd", "b.usda"]
    assert [p.name for p in collect_stages([tmp_path], recursive=True)] == ["a.usd", "b.usda", "c.usdc"]
    # a file named twice is swept once; a missing one is kept (it becomes an error result)
    got = collect_stages([tmp_path / "a.usd", tmp_path, tmp_path / "gone.usda"])
    assert [p.name for p in got] == ["a.usd", "b.usda", "gone.usda"]
