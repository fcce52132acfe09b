"""Paired in-process A/B of the solver: the package at a git ref against the working tree.

    python benchmarks/ab_kernels.py --base REF [--rows robotiq:256 humanoid:16 grasp:256] [--pairs 400] [--processes 5]

A change worth a few per cent cannot be seen in separate runs on a shared machine, whose speed
drifts 10-20 % between minutes. So both versions run in one process (the ref's ``mimic_ext``
copied to a temporary directory as ``mimic_base``, its Warp modules renamed so both compile),
in short blocks (``--block-ms``, about 8 ms of one thread's work) alternating A B B A, and the
figure is the median over the pairs of tree/base CPU time, with a bootstrap 5-95 % interval:
the drift cancels within a pair. An A/A run (``--base HEAD`` on a clean tree) reads 1.00 within
about 0.5 %. Rows: a mechanism of ``benchmarks/mechanisms.py`` at N environments (its leader
driven along the benchmark's schedule; ``Solver.step_many``, one thread, blocks continuing
from the last), or ``grasp:N``, the Menagerie 2F-85 holding its box (``grasp_scene.py``), each
block 20 steps from the lift's start.

``--processes N``: each row in N fresh processes, then the median of their medians and their
range. One process's figure carries an offset of its own that its bootstrap interval does not
show (where each version's arrays and code landed): A/A runs of robotiq:256 on the shared 2-core
machine read 0.965 to 1.048 over 11 processes (issue 40), so a few per cent needs several.
"""

from __future__ import annotations

import argparse
import importlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def base_package(ref: str, into: Path) -> None:
    """``mimic_ext`` at ``ref`` as the package ``mimic_base`` under ``into``."""
    subprocess.run(f"git -C {ROOT} archive {ref} mimic_ext | tar -x -C {into}", shell=True, check=True)
    dst = into / "mimic_base"
    (into / "mimic_ext").rename(dst)
    for f in dst.rglob("*.py"):
        text = f.read_text()
        new = re.sub(r"\bmimic_ext\b", "mimic_base", text)
        if f.parent.name == "kernels" and f.name == "__init__.py":  # Warp modules of their own
            new = new.replace('module = f"mimic_', 'module = f"mimicbase_')
        if new != text:
            f.write_text(new)


def mechanism_block(pkg: str, name: str, n: int):
    """A function running k steps of the mechanism (returns this thread's CPU seconds)."""
    import warp as wp

    from benchmarks import grasp_scene as G
    from benchmarks import mechanisms as M
    from benchmarks import peers as P

    S = importlib.import_module(pkg + ".solver")
    mech = M.MECHANISMS[name]()
    stage, paths = M.usd_stage(mech)
    model = S.build_model(stage, num_envs=n, fix_base=True)
    solver, state = S.Solver(model, threads=1), model.state()
    sched = np.repeat(G.position_targets(model.control()).numpy()[None], P.TABLE_STEPS, axis=0)
    sched[:, :, [model.dof_index(paths[j]) for j in mech.driven]] = P.schedule(mech, n)
    sched = sched.astype(np.float32 if model.precision == "float32" else np.float64)

    def block(k: int) -> float:
        c = time.thread_time()
        solver.step_many(state, sched[:k], M.DT)
        wp.synchronize()
        return time.thread_time() - c

    return block


def grasp_block(pkg: str, n: int, xml: Path):
    """A function running k steps of the grasp from the lift's start (returns CPU seconds)."""
    import warp as wp

    from benchmarks import grasp_scene as G

    g = G.OursGrasp(xml, num_envs=n, package=pkg, threads=1)
    for i in range(G.lift_start()):
        g.step(i)
    start = [a.numpy().copy() for a in (g.a.joint_q, g.a.joint_qd)]

    def block(k: int) -> float:
        g.a.joint_q.assign(start[0])
        g.a.joint_qd.assign(start[1])
        wp.synchronize()
        t = time.thread_time()
        for i in range(G.lift_start(), G.lift_start() + k):
            g.step(i)
        wp.synchronize()
        return time.thread_time() - t

    return block


def over_processes(args) -> int:
    """Each row in ``args.processes`` fresh processes of this script; their lines, then the median."""
    for row in args.rows:
        meds = []
        for _ in range(args.processes):
            cmd = [sys.executable, __file__, "--base", args.base, "--rows", row, "--pairs", str(args.pairs)]
            out = subprocess.run(cmd + ["--block-ms", str(args.block_ms)], capture_output=True, text=True, check=True)
            line = [x for x in out.stdout.splitlines() if x.startswith(row + ":")][-1]
            print(line, flush=True)
            meds.append(float(re.search(r"CPU median ([0-9.]+)", line).group(1)))
        print(
            f"{row}: over {len(meds)} processes: tree / {args.base} median {np.median(meds):.3f} "
            f"(range {min(meds):.3f}-{max(meds):.3f})",
            flush=True,
        )
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="git ref of the version to compare the tree against")
    ap.add_argument("--rows", nargs="*", default=["robotiq:256", "humanoid:16", "grasp:256"])
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--block-ms", type=float, default=8.0)
    ap.add_argument("--processes", type=int, default=1, help="fresh processes per row (median of their medians)")
    args = ap.parse_args(argv)
    if args.processes > 1:
        return over_processes(args)
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(ROOT))
    tmp = Path(tempfile.mkdtemp())
    try:
        base_package(args.base, tmp)
        sys.path.insert(0, str(tmp))
        from mimic_ext.warp_runtime import init_warp

        init_warp()
        for row in args.rows:
            name, _, n = row.partition(":")
            n = int(n or 64)
            if name == "grasp":
                from benchmarks import grasp_scene as G

                xml = G.scene_xml(tmp)
                blocks = {pkg: grasp_block(pkg, n, xml) for pkg in ("mimic_base", "mimic_ext")}
                k = 20
            else:
                blocks = {pkg: mechanism_block(pkg, name, n) for pkg in ("mimic_base", "mimic_ext")}
                for b in blocks.values():
                    b(8)  # compiled, caches warm
                k = max(2, int(32 * args.block_ms * 1e-3 / max(blocks["mimic_base"](32), 1e-9)))
            for b in blocks.values():
                b(k)
            ratios = []
            for i in range(args.pairs):
                order = ("mimic_base", "mimic_ext") if i % 2 == 0 else ("mimic_ext", "mimic_base")
                t = {pkg: blocks[pkg](k) for pkg in order}
                ratios.append(t["mimic_ext"] / t["mimic_base"])
            r = np.array(ratios)
            rng = np.random.default_rng(0)
            boot = [np.median(rng.choice(r, r.size)) for _ in range(400)]
            print(
                f"{row}: {args.pairs} pairs of {k}-step blocks: tree / {args.base} CPU median {np.median(r):.3f} "
                f"(bootstrap 5-95 %: {np.percentile(boot, 5):.3f}-{np.percentile(boot, 95):.3f})",
                flush=True,
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
