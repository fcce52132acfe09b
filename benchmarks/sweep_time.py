"""Wall time of FET022 mimic_joint sweeps: per engine, and Dask against the local pool.

Run from the project root:  python benchmarks/sweep_time.py [--rounds N] [--stages N] [--jobs N]

Printed, all with a warm Warp kernel cache (one untimed sweep first) and as medians of
interleaved rounds (A B A B ..., so machine load hits both sides alike):
  * per engine that runs here (every registered engine whose ``check_engine`` passes: warp,
    and physx / newton / mujoco once their modules are installed): the shared Robotiq 2F-85
    sweep in this process, and the whole shared-assets folder (``--recursive``; layers that
    other files compose are not stages);
  * a fresh ``mimic-ext sweep`` of the Robotiq (interpreter, imports, Warp start-up);
  * the local process pool's start-up against sweeping here, which sets
    ``batch.POOL_STARTUP_S``: data/ in this process (jobs=1) vs. in a pool (jobs=N);
  * ``--stages`` copies of the data/ samples (200 by default, in a temporary folder) on a
    Dask ``LocalCluster`` (N worker processes) against the local pool of N.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "assets"
ROBOTIQ = (
    SHARED
    / "robotiq_isaacsim_usd_2f85"
    / "Gripper_2F85"
    / "configuration"
    / "Robotiq_2F_85_config_physics_parallel_grip.usda"
)
DATA = ROOT / "data"


def _med(xs: list[float]) -> str:
    return f"median {statistics.median(xs):.3f} s (min {min(xs):.3f}, n={len(xs)})"


def _interleaved(rounds: int, **sides) -> dict[str, list[float]]:
    out = {k: [] for k in sides}
    for _ in range(rounds):
        for name, fn in sides.items():
            t0 = time.perf_counter()
            fn()
            out[name].append(time.perf_counter() - t0)
    return out


def _fresh() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mimic_ext.cli", "sweep", str(ROBOTIQ), "-q"], cwd=ROOT, capture_output=True, text=True
    )
    if proc.returncode not in (0, 1):
        sys.exit(f"sweep failed ({proc.returncode}): {proc.stdout[-2000:]}{proc.stderr[-2000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--stages", type=int, default=200, help="stages for the Dask vs pool comparison")
    ap.add_argument("--jobs", type=int, default=2, help="pool size and Dask workers")
    args = ap.parse_args()

    from mimic_ext.errors import MimicInputError
    from mimic_ext.fet022 import load_config, run, sweep_paths
    from mimic_ext.fet022.engines import check_engine, engine_names

    config = load_config()
    engines = []
    for name in engine_names():
        try:
            check_engine(name)
            engines.append(name)
        except MimicInputError as exc:
            print(f"engine {name}: not run here ({exc})")
    if ROBOTIQ.is_file():
        for e in engines:
            first = run(ROBOTIQ, config, e)  # warms caches and this process
            times = _interleaved(
                args.rounds,
                robotiq=lambda e=e: run(ROBOTIQ, config, e),
                folder=lambda e=e: sweep_paths([SHARED], config, engine=e, jobs=1, recursive=True),
            )
            folder = sweep_paths([SHARED], config, engine=e, jobs=1, recursive=True)
            sim = first.timings.get("simulate_s", float("nan"))
            print(
                f"[{e}] Robotiq 2F-85 ({len(first.followers)} followers, {config.settle_steps + config.sweep_steps} "
                f"steps, {first.status}): in-process {_med(times['robotiq'])}, of which stepping {sim:.3f} s"
            )
            print(
                f"[{e}] shared assets ({len(folder.stages)} stages, {folder.summary()['followers']} followers): "
                f"in-process {_med(times['folder'])}"
            )
        fresh = _interleaved(max(2, args.rounds // 2), fresh=_fresh)["fresh"]
        print(f"Robotiq 2F-85: fresh process (mimic-ext sweep) {_med(fresh)}")
    else:
        print(f"(shared Robotiq asset not found at {ROBOTIQ}: skipped)")

    here = _interleaved(
        args.rounds,
        here=lambda: sweep_paths([DATA], config, jobs=1),
        pool=lambda: sweep_paths([DATA], config, jobs=args.jobs),
    )
    n_data = len(sweep_paths([DATA], config, jobs=1).stages)
    print(
        f"data/ ({n_data} stages): here {_med(here['here'])}; pool of {args.jobs} {_med(here['pool'])}; "
        f"pool start-up about {statistics.median(here['pool']) - statistics.median(here['here']) / args.jobs:.2f} s "
        f"(batch.POOL_STARTUP_S = 1.0)"
    )

    try:
        import distributed
    except ImportError:
        print("(dask.distributed not installed: the Dask comparison is skipped; pip install 'mimic-ext[dask]')")
        return
    samples = sorted(DATA.glob("*.usda"))
    with tempfile.TemporaryDirectory(prefix="fet022_bench_") as tmp:
        for i in range(args.stages):
            src = samples[i % len(samples)]
            shutil.copy(src, Path(tmp) / f"{i:04d}_{src.name}")
        with (
            distributed.LocalCluster(
                n_workers=args.jobs, threads_per_worker=1, processes=True, dashboard_address=None
            ) as lc,
            distributed.Client(lc) as client,
        ):
            sweep_paths([tmp], config, executor="dask", scheduler=client)  # warm the workers
            rounds = max(2, args.rounds // 2)
            times = _interleaved(
                rounds,
                dask=lambda: sweep_paths([tmp], config, executor="dask", scheduler=client),
                pool=lambda: sweep_paths([tmp], config, jobs=args.jobs),
            )
        d, p = statistics.median(times["dask"]), statistics.median(times["pool"])
        print(
            f"{args.stages} stages: Dask LocalCluster ({args.jobs} workers) {_med(times['dask'])}; local pool of "
            f"{args.jobs} {_med(times['pool'])}; Dask / pool = {d / p:.2f} (cpus here: {os.cpu_count()})"
        )


if __name__ == "__main__":
    main()
