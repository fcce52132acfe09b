"""Solver trajectories of a few models, saved and compared bit for bit: a refactor's check.

Run it once with each tree's package first on the path (the stages come from this tree's
``data/`` and ``tests/solver_stages.py``, so both runs step the same models), then compare:

    PYTHONPATH=/work/main python tools/trajectories.py /tmp/before.npz
    PYTHONPATH=$PWD python tools/trajectories.py /tmp/after.npz
    python tools/trajectories.py --compare /tmp/before.npz /tmp/after.npz   # exit 1 on any bit

Each model: two environments, 40 steps of ``Solver.step`` at 240 Hz with 0.05 N m on every
joint (joint_q and joint_qd after each), then 10 steps of ``step_many`` (relations, limits, a
loop, a floating base with gravity).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def record(out: Path) -> None:
    import numpy as np

    sys.path.insert(0, str(ROOT / "tests"))
    from solver_stages import four_bar, gripper, independent_pair

    import mimic_ext
    from mimic_ext.schema import open_stage
    from mimic_ext.solver import Solver, build_model

    stages = {
        "geared_pair": open_stage(ROOT / "data" / "geared_pair.usda").stage,
        "linkage": open_stage(ROOT / "data" / "robotiq_style_linkage.usda").stage,
        "four_bar": four_bar()[0].stage,
        "floating_gripper": gripper(floating=True, gravity=9.81)[0].stage,
        "limits": independent_pair(multiplier=2.0, limits_f=(-10.0, 10.0))[0].stage,
    }
    runs = {}
    for name, stage in stages.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = build_model(stage, num_envs=2)
        solver = Solver(model)
        a, b, c = model.state(), model.state(), model.control()
        c.joint_f.fill_(0.05)
        qs = []
        for _ in range(40):
            solver.step(a, b, c, 1.0 / 240.0)
            a, b = b, a
            qs.append(np.concatenate([a.joint_q.numpy().ravel(), a.joint_qd.numpy().ravel()]))
        targets = np.repeat(c.joint_target_q.numpy()[None], 10, axis=0)
        hist = solver.step_many(a, targets, 1.0 / 240.0, sample_every=1)
        runs[name] = np.concatenate([np.ravel(qs), np.ravel(hist.numpy())])
    np.savez(out, **runs)
    print(
        f"{out}: {', '.join(f'{k} {v.size}' for k, v in runs.items())} values (package {Path(mimic_ext.__file__).parent})"
    )


def compare(a: Path, b: Path) -> int:
    import numpy as np

    x, y = np.load(a), np.load(b)
    bad = 0
    for name in sorted(set(x.files) | set(y.files)):
        same = name in x.files and name in y.files and x[name].tobytes() == y[name].tobytes()
        bad += not same
        print(f"{name}: {'bitwise equal' if same else 'DIFFERENT'}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path, help="where to save this tree's trajectories (.npz)")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        ap.error("give an output file or --compare BEFORE AFTER")
    record(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
