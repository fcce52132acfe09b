"""Issue 43 (first hour): every ``--help`` says the conventions paragraph at most where its flags
need it, and no help line runs past the terminal's width."""

from __future__ import annotations

import pytest

from mimic_ext import cli

#: the width the helps are read at here (argparse wraps to $COLUMNS less 2)
WIDTH = 100


def _help(monkeypatch, capsys, *argv: str) -> str:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    with pytest.raises(SystemExit):
        cli.main([*argv, "--help"])
    return capsys.readouterr().out


def test_conventions_paragraph_said_once_and_helps_wrapped(monkeypatch, capsys):
    commands = ["list", "validate", "set", "remove", "convert", "import", "export", "sweep"]
    helps = {c: _help(monkeypatch, capsys, c) for c in commands}
    helps["mimic-ext"] = _help(monkeypatch, capsys)
    paragraph = "conventions: canonical q_f"
    having = sorted(c for c, text in helps.items() if paragraph in " ".join(text.split()))
    assert having == ["mimic-ext", "set"], having
    for c in ("list", "validate", "remove", "convert"):
        assert "mimic-ext --help" in helps[c], c  # where the paragraph is
    for c, text in helps.items():
        long = [ln for ln in text.splitlines() if len(ln) > WIDTH]
        assert not long, f"{c} --help: {long}"


def _commands(parser) -> dict:
    import argparse

    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def _options(parser) -> list:
    return [(a.dest, a.option_strings, a.default, a.type, a.choices, a.required, a.nargs) for a in parser._actions]


def _help_of(argv: list[str]) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        cli.main(argv)
    return out.getvalue()


def test_a_command_line_builds_only_its_commands_parser(monkeypatch):
    """Issue 43 (a one-stage sweep's process time): ``build_parser(command)`` builds that
    sub-command's parser alone, the same one the full parser has (help, options, defaults),
    without importing the other parts' command modules; a name no part adds builds them all
    (so that the usage error lists them)."""
    import subprocess
    import sys

    monkeypatch.setenv("COLUMNS", str(WIDTH))
    full = _commands(cli.build_parser())
    assert sorted(full) == sorted({*cli.OWN_COMMANDS, *(n for names in cli.COMMAND_MODULES.values() for n in names)})
    for name, parser in full.items():
        alone = _commands(cli.build_parser(name))
        assert list(alone) == [name]
        assert alone[name].format_help() == parser.format_help(), name
        assert _options(alone[name]) == _options(parser), name
    assert list(_commands(cli.build_parser("nope"))) == list(full)
    assert _help_of(["--help", "sweep"]) == _help_of(["--help"])  # the top-level help lists them all
    code = (
        "import sys\nfrom mimic_ext.cli import build_parser\nbuild_parser('sweep')\n"
        "print(sorted(m for m in sys.modules if m.endswith('.commands')))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["['mimic_ext.fet022.commands']"]
