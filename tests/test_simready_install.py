"""The `simready` extra, the `test` extra and .ci/run agree on NVIDIA's packages and versions, and
the `test` extra (usd-exchange's environment) pulls in nothing that requires usd-core."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEEDS_USD_CORE = ("simready-benchmark", "simready-validate")


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _pins(reqs: list[str]) -> dict[str, str]:
    out = {}
    for r in reqs:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9.]+)", r)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def test_extras_and_ci_agree():
    extras = _extras()
    simready = _pins(extras["simready"])
    assert set(simready) == {"simready-foundation-tier-core", *NEEDS_USD_CORE}
    test = _pins(extras["test"])
    assert test["simready-foundation-tier-core"] == simready["simready-foundation-tier-core"]
    assert not set(NEEDS_USD_CORE) & {re.split(r"[<>=\[; ]", r)[0] for r in extras["test"]}
    ci = (ROOT / ".ci" / "run").read_text()
    line = next(x for x in ci.splitlines() if x.startswith("pip install --no-deps"))
    assert sorted(re.findall(r"'([a-z-]+)==([0-9.]+)'", line)) == sorted((n, simready[n]) for n in NEEDS_USD_CORE)


def test_installed_versions_are_the_verified_ones():
    """Where NVIDIA's packages are installed, they are the versions the extras pin (the adapter
    runs whatever phase is installed; this says when that is no longer the verified one)."""
    from importlib.metadata import PackageNotFoundError, version

    for name, want in _pins(_extras()["simready"]).items():
        try:
            assert version(name) == want, name
        except PackageNotFoundError:
            continue
