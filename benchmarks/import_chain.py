"""Importing a long URDF chain, this tree against another, interleaved.

The URDF default drive gains need the inertia each joint moves; computed by a subtree walk per
joint it grew with the square of a chain's length (issue 43's review), now once per tree
(``importers/joint_inertia.py``). A chain of N revolute links, each 1 kg at 0.1 m, is written to
a temporary folder and imported in memory (``import_robot``) in a fresh process per tree and
round, alternating which tree goes first.

    git archive 3e7dae7 | tar -x -C /tmp/base   # the other tree
    python benchmarks/import_chain.py --against /tmp/base --joints 2000 --rounds 3

Prints per tree the median CPU seconds of the import and every round's figure, then the ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_IMPORT = """
import sys, time
from mimic_ext.importers import import_robot
t = time.process_time()
import_robot(sys.argv[1])
print(time.process_time() - t)
"""


def chain_urdf(n: int) -> str:
    inertial = (
        '<inertial><origin xyz="0.1 0 0"/><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>'
    )
    links = "".join(f'<link name="l{i}">{inertial}</link>' for i in range(n + 1))
    joints = "".join(
        f'<joint name="j{i}" type="revolute"><parent link="l{i}"/><child link="l{i + 1}"/>'
        f'<origin xyz="0.2 0 0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        for i in range(n)
    )
    return f'<robot name="chain">{links}{joints}</robot>'


def import_cpu(tree: Path, urdf: Path) -> float:
    """CPU seconds of ``import_robot(urdf)`` with ``tree``'s mimic_ext, in a fresh process."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    # run from a neutral folder: python -c puts the working folder ahead of PYTHONPATH
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT, str(urdf)], env=env, capture_output=True, text=True, check=True, cwd=urdf.parent
    )
    return float(out.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=Path, required=True, help="the other tree (a folder holding mimic_ext)")
    ap.add_argument("--joints", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    trees = {"this": ROOT, "against": args.against.resolve()}
    runs: dict[str, list[float]] = {k: [] for k in trees}
    with tempfile.TemporaryDirectory() as tmp:
        urdf = Path(tmp) / f"chain{args.joints}.urdf"
        urdf.write_text(chain_urdf(args.joints), encoding="utf-8")
        for r in range(args.rounds):
            order = list(trees.items()) if r % 2 == 0 else list(trees.items())[::-1]
            for name, tree in order:
                runs[name].append(import_cpu(tree, urdf))
    for name, tree in trees.items():
        v = runs[name]
        print(
            f"{name:8s} {args.joints} joints: median {statistics.median(v):.2f} s CPU  "
            f"rounds {' '.join(f'{x:.2f}' for x in v)}  ({tree})"
        )
    print(f"this / against {statistics.median(runs['this']) / statistics.median(runs['against']):.3f}")


if __name__ == "__main__":
    main()
