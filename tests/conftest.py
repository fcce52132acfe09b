"""Shared fixtures: the real public assets (read in place, never copied) and data/; the
``--device`` option.

``--device cuda:0`` builds every solver model of the session on that Warp device when its test
names none (``mimic_ext.solver.set_default_device``): the solver's own tests then run there
(``benchmarks/device_check.sh`` runs them so on a GPU). A test that holds only on the CPU by
nature (threads slicing a CPU launch, NumPy views of CPU arrays) carries
``@pytest.mark.cpu_only("why")`` and is skipped, with that reason, on any other device.
Without the option nothing changes: models are built on "cpu".
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_assets() -> Path:
    """../shared/assets beside the project; tests that need it skip when it is absent."""
    path = ROOT.parent / "shared" / "assets"
    if not path.is_dir():
        pytest.skip(f"shared assets not present at {path}")
    return path


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The project's committed sample stages (data/, data/invalid/)."""
    return ROOT / "data"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """The importer cases of ``importer_cases.py`` written into a temporary folder (a module's
    tests share them)."""
    from importer_cases import write_cases

    cases = write_cases(tmp_path_factory.mktemp("built"))
    if cases is None:
        pytest.skip("trimesh or Pillow absent (the mesh extra builds these cases' meshes)")
    return cases


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--device",
        default=None,
        metavar="NAME",
        help="Warp device the solver's models default to (cpu, cuda:0); cpu_only tests skip elsewhere",
    )


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        "cpu_only(reason): holds only on the CPU by nature; skipped under "
        "--device naming another device, with the reason",
    )
    device = config.getoption("--device")
    if device is None:
        return
    from mimic_ext.errors import MimicInputError
    from mimic_ext.warp_runtime import check_device, init_warp

    init_warp()
    try:
        check_device(device)
    except MimicInputError as exc:
        raise pytest.UsageError(str(exc)) from None
    from mimic_ext.solver import set_default_device

    set_default_device(device)
    import warp as wp

    wp.set_device(device)  # a test's own wp.array(...) without a device lands there too


def pytest_collection_modifyitems(config, items) -> None:
    device = config.getoption("--device")
    if device is None or str(device) == "cpu":
        return
    for item in items:
        mark = item.get_closest_marker("cpu_only")
        if mark is not None:
            why = mark.args[0] if mark.args else mark.kwargs.get("reason", "CPU only")
            item.add_marker(pytest.mark.skip(reason=f"CPU only under --device {device}: {why}"))


@pytest.fixture(scope="session")
def solver_device(request) -> str:
    """The device the session's solver models default to ("cpu" without ``--device``)."""
    return request.config.getoption("--device") or "cpu"
