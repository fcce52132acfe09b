"""``mimic-ext sweep STAGES --report R --jobs N``: this tree against ``--base REF``, end to end.

    python benchmarks/sweep_phase_in_unit.py --base af9cbb9 [--rounds 3] [--jobs 2] [--recursive] [--engine E] [STAGES ...]

Issue 37/38: NVIDIA's phase ran after the sweep, serially in the client, and again on every
``--resume``; it now runs inside each unit of work (in the pool) and is stored with it. Each
round runs, in fresh processes and in alternating order, the base tree (``git archive REF``
into a temporary folder, run with ``PYTHONPATH`` on it) and this tree: a fresh run into a new
run folder, then ``--resume`` of that folder (every unit stored). Wall times of the whole
command; medians over the rounds, printed with the ratio this / base. One untimed run of each
first (Warp's kernel cache, the OS's file cache). Default STAGES: data/.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _archive(ref: str, into: Path) -> Path:
    tree = into / "base"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def _sweep(tree: Path, stages: list[str], args: list[str], cwd: Path) -> tuple[float, int]:
    """Wall seconds of the whole command, and its exit code. Run in ``cwd``, outside both trees:
    ``python -m`` puts its working folder before ``PYTHONPATH``, so from the repository root the
    base run would import this tree."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "mimic_ext", "sweep", *stages, *args, "-q"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{tree}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    return took, proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stages", nargs="*", default=["data/"])
    ap.add_argument("--base", required=True, metavar="REF", help="git ref of the tree to compare against")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--recursive", action="store_true", help="sweep --recursive (e.g. ../shared/assets)")
    ap.add_argument("--engine", default="warp", help="sweep --engine (e.g. physx: NVIDIA's phase costs more there)")
    a = ap.parse_args()
    stages = [os.path.abspath(s) for s in a.stages]
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        (tmpdir / "cwd").mkdir()
        trees = {"base": _archive(a.base, tmpdir), "this": ROOT}
        for name, tree in trees.items():  # each run imports its own tree
            where = subprocess.run(
                [sys.executable, "-c", "import mimic_ext; print(mimic_ext.__file__)"],
                cwd=tmpdir / "cwd",
                env={**os.environ, "PYTHONPATH": str(tree)},
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            if not where.startswith(str(tree)):
                raise SystemExit(f"the {name} run imports {where}, not {tree}")
        times: dict[tuple[str, str], list[float]] = {}
        codes: dict[str, set[int]] = {}
        n = 0
        for r in range(a.rounds + 1):
            order = list(trees) if r % 2 == 0 else list(reversed(trees))
            for name in order:
                n += 1
                run_dir = tmpdir / f"run{n}"
                jobs = ["--jobs", str(a.jobs), "--engine", a.engine, *(["--recursive"] if a.recursive else [])]
                fresh = _sweep(trees[name], stages, ["--report", str(run_dir), *jobs], tmpdir / "cwd")
                resumed = _sweep(trees[name], stages, ["--resume", str(run_dir), *jobs], tmpdir / "cwd")
                codes.setdefault(name, set()).update({fresh[1], resumed[1]})
                if r == 0:
                    continue  # the untimed warm-up
                times.setdefault((name, "fresh"), []).append(fresh[0])
                times.setdefault((name, "resume"), []).append(resumed[0])
    rec = (" --recursive" if a.recursive else "") + f" --engine {a.engine}"
    print(
        f"mimic-ext sweep {' '.join(a.stages)}{rec} --report R --jobs {a.jobs} (then --resume R); medians of {a.rounds}"
    )
    print(f"exit codes: base {sorted(codes['base'])}, this {sorted(codes['this'])}")
    print("| run | base s | this s | this / base | rounds (base; this) |")
    print("|---|---|---|---|---|")
    for kind in ("fresh", "resume"):
        b, t = times[("base", kind)], times[("this", kind)]
        mb, mt = statistics.median(b), statistics.median(t)
        print(
            f"| {kind} | {mb:.2f} | {mt:.2f} | {mt / mb:.2f} | "
            f"{', '.join(f'{x:.2f}' for x in b)}; {', '.join(f'{x:.2f}' for x in t)} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
