"""Cold compile of the solver's Warp modules, this tree against another, interleaved.

``step_throughput.py`` times this tree's compile alone; a change's cost needs the peer in the same
run, alternating which goes first (the machine's load and Warp's precompiled header are shared).
Each round compiles float32 then float64 into an empty kernel cache in a fresh process per tree.

    git archive af9cbb9 | tar -x -C /tmp/base   # the other tree
    python benchmarks/cold_compile.py --against /tmp/base --rounds 4

Prints, per tree and precision, the median CPU seconds and every round's figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from step_throughput import _COMPILE

ROOT = Path(__file__).resolve().parents[1]


def compile_cpu(tree: Path) -> dict[str, float]:
    """CPU seconds per precision of compiling ``tree``'s solver modules into an empty cache."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, WARP_CACHE_PATH=tmp, PYTHONPATH=str(tree))
        # run from a neutral folder: python -c puts the working folder ahead of PYTHONPATH
        out = subprocess.run(
            [sys.executable, "-c", _COMPILE, "serial"], env=env, capture_output=True, text=True, check=True, cwd=tmp
        )
    return {p[0]: float(p[2]) for p in (ln.split() for ln in out.stdout.splitlines()) if p and p[0].startswith("float")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=Path, required=True, help="the other tree (a folder holding mimic_ext)")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    trees = {"this": ROOT, "against": args.against.resolve()}
    runs: dict[str, dict[str, list[float]]] = {k: {} for k in trees}
    for r in range(args.rounds):
        order = list(trees.items()) if r % 2 == 0 else list(trees.items())[::-1]
        for name, tree in order:
            for p, cpu in compile_cpu(tree).items():
                runs[name].setdefault(p, []).append(cpu)
    for name, tree in trees.items():
        for p, v in sorted(runs[name].items()):
            print(
                f"{name:8s} {p}: median {statistics.median(v):.2f} s CPU  rounds {' '.join(f'{x:.2f}' for x in v)}  ({tree})"
            )
    for p in sorted(runs["this"]):
        ratio = statistics.median(runs["this"][p]) / statistics.median(runs["against"][p])
        print(f"{p}: this / against {ratio:.3f}")


if __name__ == "__main__":
    main()
