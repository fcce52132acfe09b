"""The FET022 sweep on MuJoCo against our warp engine, on the same stages (issue 39: within 2x).

Run from the project root:  python benchmarks/mujoco_sweep.py [--rounds N] [--isolation]

Three shared robots (the Inspire hand's URDF, the Menagerie Robotiq 2F-85 MJCF, the pybullet
Robotiq 140 URDF) are imported once to USD in a temporary folder; each is then swept by
``mimic_ext.fet022.run`` on warp and on mujoco in this process, in interleaved rounds (warp,
mujoco, warp, ...: machine load hits both alike) after one untimed sweep each (Warp's kernel
cache and MuJoCo's import warm). Printed per robot: the medians of the whole sweep (open,
checks, build, simulate, judge) and of the stepping alone, the ratio mujoco / warp of each, and
the largest |motion ratio difference| between the two engines.

``--isolation`` also times the process hop of a single-engine run: ``batch.sweep_one`` here
against ``isolation.Isolated`` (a forkserver worker), on data/geared_pair.usda, interleaved.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "assets"
ROBOTS = {
    "Inspire hand (URDF, 6 followers)": SHARED / "dexurdf_inspire_hand_right" / "inspire_hand_right.urdf",
    "Robotiq 2F-85 (Menagerie MJCF, 1)": SHARED / "menagerie_robotiq_2f85" / "2f85.xml",
    "Robotiq 140 (pybullet URDF, 5)": SHARED / "pybullet_ur5_robotiq" / "urdf" / "robotiq_140.urdf",
}


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def robots(rounds: int) -> None:
    from mimic_ext.fet022 import get_engine, run
    from mimic_ext.importers import import_robot

    engines = {"warp": get_engine("warp"), "mujoco": get_engine("mujoco")}
    print(f"medians of {rounds} interleaved rounds; ratio = mujoco / warp")
    print(
        f"{'robot':36s} {'warp s':>8s} {'mujoco s':>9s} {'ratio':>6s}   {'warp step s':>11s} {'mujoco step s':>13s}  max |ratio diff|"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for label, source in ROBOTS.items():
            if not source.is_file():
                print(f"{label:36s} absent ({source})")
                continue
            stage = Path(tmp) / f"{source.stem}.usda"
            import_robot(source, out=stage)
            last = {name: run(stage, engine=e, label=name) for name, e in engines.items()}  # untimed, warm
            total = {name: [] for name in engines}
            step = {name: [] for name in engines}
            for _ in range(rounds):
                for name, e in engines.items():
                    t0 = time.perf_counter()
                    last[name] = run(stage, engine=e, label=name)
                    total[name].append(time.perf_counter() - t0)
                    step[name].append(last[name].timings.get("simulate_s", float("nan")))
            w = {f.name: f.motion_ratio for f in last["warp"].followers}
            diff = max(abs(f.motion_ratio - w[f.name]) for f in last["mujoco"].followers)
            tw, tm = _median(total["warp"]), _median(total["mujoco"])
            sw, sm = _median(step["warp"]), _median(step["mujoco"])
            verdicts = f"{last['warp'].status}/{last['mujoco'].status}"
            print(f"{label:36s} {tw:8.3f} {tm:9.3f} {tm / tw:6.2f}   {sw:11.4f} {sm:13.4f}  {diff:.2g} ({verdicts})")


def isolation(rounds: int) -> None:
    from mimic_ext.fet022.batch import sweep_one
    from mimic_ext.fet022.config import as_config
    from mimic_ext.fet022.isolation import Isolated

    stage, cfg = ROOT / "data" / "geared_pair.usda", as_config(None)
    sweep_one(stage, cfg, "mujoco")  # warm here
    here, hop = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        sweep_one(stage, cfg, "mujoco")
        here.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        with Isolated({}) as iso:  # a fresh worker each time: what a one-stage mimic-ext sweep pays
            iso.sweep(stage, cfg, "mujoco")
        hop.append(time.perf_counter() - t0)
    print(
        f"single-engine run of {stage.name} on mujoco: here {_median(here):.3f} s, in a worker "
        f"{_median(hop):.3f} s (medians of {rounds}; the hop costs {_median(hop) - _median(here):.3f} s)"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--isolation", action="store_true", help="also time a single-engine run's process hop")
    args = p.parse_args(argv)
    robots(args.rounds)
    if args.isolation:
        isolation(args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
