"""Where our step's time goes on a long tree, by timing variants of one mechanism (ours only).

    python benchmarks/step_profile.py [--joints 64] [--envs 256] [--rounds 5]
    python benchmarks/step_profile.py --chains [--envs 256] [--rounds 9]

The step is one fused Warp kernel, so phases cannot be timed by launch (``wp.ScopedTimer``
sees one launch); instead the same hanging chain (``mechanisms.chain``: n joints, same
masses, drives and targets) is stepped with the number of independent joints k varied
(1, n/8, n/4, n/2, n: the rest follow a leader at 0.5) and with its limits removed, so
that the k-dependent part (the reduced k x k system in its tree's sparsity: assembly,
sparse LDL^T and solves, and the limit rows that work through it) separates from the part every
joint pays (kinematics, bias forces, composite inertia, integration). Interleaved rounds,
medians of CPU time per env-step. Fitted: ``t(k) = a + b k^p`` over the limit-free variants.
Then N = 1 on the Robotiq: ``Solver.step`` against its recorded launch alone and one
environment's arithmetic (per env-step at N = 1024), i.e. what launching costs.

``--chains``: only the growth of our step over the benchmark's chains (8, 16, 32, 64 joints,
every other joint a follower; ``step_throughput.py`` fits the same exponent next to MuJoCo),
interleaved rounds, the median and the least per chain, and the exponent of each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import mechanisms as M  # noqa: E402
from benchmarks import peers as P  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--joints", type=int, default=64)
    ap.add_argument("--envs", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--block-s", type=float, default=0.3)
    ap.add_argument("--chains", action="store_true", help="only the growth exponent over chains 8 .. 64")
    args = ap.parse_args(argv)
    from mimic_ext.warp_runtime import init_warp
    init_warp()
    if args.chains:
        chains(args.envs, max(args.rounds, 9), args.block_s / 3)
        return 0
    n = args.joints
    ks = sorted({1, n // 8, n // 4, n // 2, n} - {0})
    variants = [(f"k={k}, no limits", M.chain(n, independent=k, limits=False)) for k in ks]
    variants.append((f"k={n // 2}, limits (the benchmark's chain{n})", M.chain(n)))
    runners = {}
    for label, mech in variants:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = P.make("ours", mech, args.envs)
        r.timed(2)
        est = max(r.timed(2)[0] / 2, 1e-7)
        runners[label] = (r, int(max(2, round(args.block_s / est))))
    cpu = {label: [] for label in runners}
    for _ in range(args.rounds):
        for label, (r, steps) in runners.items():
            _, c = r.timed(steps)
            cpu[label].append(c / steps / args.envs)
    med = {label: statistics.median(v) for label, v in cpu.items()}
    print(f"ours, chain of {n} joints, N = {args.envs}, CPU time per env-step (median of {args.rounds} interleaved "
          f"rounds)")
    base = med[f"k=1, no limits"]
    for label, t in med.items():
        print(f"  {label:<40} {t * 1e6:9.2f} us   ({t / base:5.2f}x k=1)")
    free = [(k, med[f"k={k}, no limits"]) for k in ks]
    kk = np.array([k for k, _ in free], float)
    tt = np.array([t for _, t in free])
    best = None
    for p in np.linspace(1.0, 3.5, 51):          # least squares in (a, b) for each p, best p
        A = np.column_stack([np.ones_like(kk), kk ** p])
        coef, res, *_ = np.linalg.lstsq(A, tt, rcond=None)
        err = float(np.sum((A @ coef - tt) ** 2))
        if best is None or err < best[0]:
            best = (err, p, coef)
    _, p, (a, b) = best
    print(f"  fit over the limit-free variants: t(k) = {a * 1e6:.2f} us + {b * 1e6:.3g} us * k^{p:.2f}")
    half = med[f"k={n // 2}, no limits"]
    lim = med[f"k={n // 2}, limits (the benchmark's chain{n})"]
    print(f"  at k = {n // 2}: the k-dependent part (reduced system, factorisation, solves) is {(half - a) / half:.0%} "
          f"of the step, the per-joint part ({a * 1e6:.2f} us) {a / half:.0%}; with the limits on (rows that never "
          f"bind here) the step takes {lim / half:.2f}x")
    for r, _ in runners.values():
        r.close()
    n1(args.rounds)
    return 0


def chains(envs: int, rounds: int, block_s: float) -> None:
    """CPU time per env-step of ours on the benchmark's chains, and its growth exponent (the
    log-log least-squares slope ``step_throughput.py`` prints), from the medians and the least
    of interleaved rounds (the least is what other jobs on the machine add least to)."""
    joints = (8, 16, 32, 64)
    runners = {}
    for n in joints:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = P.make("ours", M.chain(n), envs)
        r.timed(2)
        est = max(r.timed(2)[1] / 2, 1e-7)
        runners[n] = (r, int(max(2, round(block_s / est))))
    cpu = {n: [] for n in joints}
    for _ in range(rounds):
        for n, (r, steps) in runners.items():
            cpu[n].append(r.timed(steps)[1] / steps / envs)
    fit = lambda t: float(np.polyfit(np.log(joints), np.log(t), 1)[0])  # noqa: E731
    med = [statistics.median(cpu[n]) for n in joints]
    low = [min(cpu[n]) for n in joints]
    print(f"ours, chains (every other joint a follower), N = {envs}, CPU time per env-step over {rounds} "
          f"interleaved rounds:")
    for n, a, b in zip(joints, med, low):
        print(f"  chain{n:<3} median {a * 1e6:8.2f} us   least {b * 1e6:8.2f} us")
    print(f"  growth exponent over {', '.join(map(str, joints))} joints: {fit(med):.2f} (medians), "
          f"{fit(low):.2f} (least); target <= 1.4")
    for r, _ in runners.values():
        r.close()


def n1(rounds: int) -> None:
    """N = 1 on the Robotiq: what the call around one environment's arithmetic costs."""
    import time

    import warp as wp
    try:
        mech = M.robotiq()
    except FileNotFoundError as exc:
        print(f"N = 1 breakdown skipped: {exc}")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one, many = P.make("ours", mech, 1), P.make("ours", mech, 1024)
    one.timed(50)
    many.timed(4)
    s0, s1, ctl, step = one.s0, one.s1, one.ctl, one.solver.step
    cmd = one.solver._launch(s0, s1, ctl, M.DT)         # the recorded launch Solver.step replays
    reps = 2000
    rows = {"Solver.step + target write (the benchmark's ours)": [], "Solver.step": [],
            "recorded launch alone (cmd.launch())": [], "one env's arithmetic (N=1024 per env)": []}
    for _ in range(rounds):
        rows["Solver.step + target write (the benchmark's ours)"].append(one.timed(reps)[1] / reps)
        c = time.process_time()
        for _ in range(reps):
            step(s0, s1, ctl, M.DT)
        rows["Solver.step"].append((time.process_time() - c) / reps)
        c = time.process_time()
        for _ in range(reps):
            cmd.launch()
        rows["recorded launch alone (cmd.launch())"].append((time.process_time() - c) / reps)
        rows["one env's arithmetic (N=1024 per env)"].append(many.timed(20)[1] / 20 / 1024)
    wp.synchronize()
    print(f"ours at N = 1 (Robotiq), CPU time per step (median of {rounds} interleaved rounds):")
    for label, v in rows.items():
        print(f"  {label:<52} {statistics.median(v) * 1e6:7.2f} us")
    one.close()
    many.close()


if __name__ == "__main__":
    sys.exit(main())
