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
