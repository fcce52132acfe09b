"""One OpenUSD per environment (docs/conventions.md): usd-core and usd-exchange install the same
`pxr`, so the extras must never bring both. README's two set-up commands install `usd` then
`test` into one environment; both extras name the provider NVIDIA's converters require."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROVIDERS = ("usd-core", "usd-exchange")
CONVERTERS = ("urdf-usd-converter", "mujoco-usd-converter")


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].lower().replace("_", "-")


def _extras() -> dict[str, set[str]]:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return {extra: {_name(r) for r in reqs} for extra, reqs in extras.items()}


def test_core_depends_on_no_provider():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not {_name(r) for r in deps} & set(PROVIDERS)


def test_no_extra_mixes_providers():
    for extra, names in _extras().items():
        assert len(names & set(PROVIDERS)) <= 1, extra


def test_usd_and_test_extras_bring_the_same_provider():
    """`pip install -e '.[usd]'` then `pip install -e '.[test]'` (README) must leave one `pxr`:
    before, `usd` brought usd-core and `test` usd-exchange, and usdex warned of both."""
    extras = _extras()
    assert extras["usd"] & set(PROVIDERS) == {"usd-exchange"}
    assert extras["test"] & set(PROVIDERS) == {"usd-exchange"}
    # the extras that bring NVIDIA's converters get their provider, never the other one
    for extra, names in extras.items():
        if names & set(CONVERTERS):
            assert "usd-core" not in names, extra


@pytest.mark.parametrize("converter", CONVERTERS)
def test_converters_require_the_provider_the_extras_bring(converter):
    """Where a converter is installed, its own metadata names usd-exchange: the reason `usd` does."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        reqs = requires(converter) or []
    except PackageNotFoundError:
        pytest.skip(f"{converter} not installed")
    names = {_name(r) for r in reqs if "extra ==" not in r}
    assert names & set(PROVIDERS) == {"usd-exchange"}
