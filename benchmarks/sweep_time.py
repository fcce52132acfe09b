"""Wall time of a full FET022 mimic_joint sweep: the shared Robotiq USD, and the whole data/ folder.

Run from the project root:  python benchmarks/sweep_time.py [--repeat N] [--jobs N]

Three numbers per subject, all with a warm Warp kernel cache (one untimed sweep first):
  * in-process: ``mimic_ext.fet022.run`` called again in a process that already swept once
    (what Kit or a script pays per sweep);
  * fresh process: ``python -m mimic_ext.cli sweep ...`` end to end, interpreter start,
    imports and Warp start-up included (what a CI job pays);
  * for data/: the multi-stage pool (``--jobs``) versus one process.
Target: the Robotiq sweep under 1 second.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROBOTIQ = (ROOT.parent / "shared" / "assets" / "robotiq_isaacsim_usd_2f85" / "Gripper_2F85" / "configuration"
           / "Robotiq_2F_85_config_physics_parallel_grip.usda")
DATA = ROOT / "data"


def _fresh(args: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mimic_ext.cli", "sweep", *args, "-q"], cwd=ROOT,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"sweep failed ({proc.returncode}): {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return elapsed


def _stats(samples: list[float]) -> str:
    return f"median {statistics.median(samples):.3f} s, min {min(samples):.3f} s (n={len(samples)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=None, help="pool size for data/ (default: one per CPU)")
    args = ap.parse_args()

    from mimic_ext.fet022 import load_config, run
    from mimic_ext.fet022.batch import sweep_paths

    config = load_config()
    if ROBOTIQ.is_file():
        first = run(ROBOTIQ, config)               # warms the Warp cache and this process
        assert first.status == "pass", first.to_dict(samples=False)
        warm = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = run(ROBOTIQ, config)
            warm.append(time.perf_counter() - t0)
        sim = res.timings.get("simulate_s", float("nan"))
        steps = config.settle_steps + config.sweep_steps
        print(f"Robotiq 2F-85 (5 followers, {steps} steps): in-process {_stats(warm)}; "
              f"of which stepping {sim:.3f} s ({sim / steps * 1e6:.0f} us/step)")
        fresh = [_fresh([str(ROBOTIQ)]) for _ in range(max(2, args.repeat // 2))]
        print(f"Robotiq 2F-85: fresh process (mimic-ext sweep) {_stats(fresh)}; target < 1 s")
    else:
        print(f"(shared Robotiq asset not found at {ROBOTIQ}: skipped)")

    stages = sorted(DATA.glob("*.usd*"))
    if stages:
        seq, pool = [], []
        for _ in range(max(2, args.repeat // 2)):
            t0 = time.perf_counter()
            r1 = sweep_paths([DATA], config, jobs=1)
            seq.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            r2 = sweep_paths([DATA], config, jobs=args.jobs)
            pool.append(time.perf_counter() - t0)
        followers = r1.summary()["followers"]
        print(f"data/ ({len(r1.stages)} stages, {followers} followers): in-process, one process {_stats(seq)}; "
              f"process pool of {r2.jobs} {_stats(pool)}")
        fresh = [_fresh([str(DATA)]) for _ in range(max(2, args.repeat // 2))]
        print(f"data/: fresh process (mimic-ext sweep data/, pool) {_stats(fresh)}")


if __name__ == "__main__":
    main()
