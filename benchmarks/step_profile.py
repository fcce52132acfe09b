"""Where our step's time goes on a long tree, by timing variants of one mechanism (ours only).

    python benchmarks/step_profile.py [--joints 64] [--envs 256] [--rounds 5]
    python benchmarks/step_profile.py --chains [--envs 256] [--rounds 9]
    python benchmarks/step_profile.py --phases [--rounds 15]
    python benchmarks/step_profile.py --coupling [--rounds 11]

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

``--phases``: where one step's time goes on the Robotiq (N = 1024), the humanoid (64) and
chain64 (128). The step is one function, so the kernel package is copied (to a temporary
directory, each copy its own package and Warp module) with a ``return`` after each phase of
``step_env``; the copies and the real step are timed interleaved in one process, and each
phase is the difference of the least CPU time per env-step of consecutive cuts.

``--coupling``: what computing the relations' coupling impulses in every step costs, on the
same three rows: each stepped (``step_many``, one thread) with ``Solver.coupling_every_step``
on and off (the default: on demand, in ``mimic_rows()``), interleaved rounds, CPU medians.
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

from benchmarks import mechanisms as M
from benchmarks import peers as P


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--joints", type=int, default=64)
    ap.add_argument("--envs", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--block-s", type=float, default=0.3)
    ap.add_argument("--chains", action="store_true", help="only the growth exponent over chains 8 .. 64")
    ap.add_argument("--phases", action="store_true", help="only the time of each phase of the step")
    ap.add_argument("--coupling", action="store_true", help="only the cost of coupling impulses in every step")
    args = ap.parse_args(argv)
    from mimic_ext.warp_runtime import init_warp

    init_warp()
    if args.chains:
        chains(args.envs, max(args.rounds, 9), args.block_s / 3)
        return 0
    if args.phases:
        phases(max(args.rounds, 15), args.block_s / 10)
        return 0
    if args.coupling:
        coupling(max(args.rounds, 11), args.block_s)
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
    print(
        f"ours, chain of {n} joints, N = {args.envs}, CPU time per env-step (median of {args.rounds} interleaved "
        f"rounds)"
    )
    base = med["k=1, no limits"]
    for label, t in med.items():
        print(f"  {label:<40} {t * 1e6:9.2f} us   ({t / base:5.2f}x k=1)")
    free = [(k, med[f"k={k}, no limits"]) for k in ks]
    kk = np.array([k for k, _ in free], float)
    tt = np.array([t for _, t in free])
    best = None
    for p in np.linspace(1.0, 3.5, 51):  # least squares in (a, b) for each p, best p
        A = np.column_stack([np.ones_like(kk), kk**p])
        coef, res, *_ = np.linalg.lstsq(A, tt, rcond=None)
        err = float(np.sum((A @ coef - tt) ** 2))
        if best is None or err < best[0]:
            best = (err, p, coef)
    _, p, (a, b) = best
    print(f"  fit over the limit-free variants: t(k) = {a * 1e6:.2f} us + {b * 1e6:.3g} us * k^{p:.2f}")
    half = med[f"k={n // 2}, no limits"]
    lim = med[f"k={n // 2}, limits (the benchmark's chain{n})"]
    print(
        f"  at k = {n // 2}: the k-dependent part (reduced system, factorisation, solves) is {(half - a) / half:.0%} "
        f"of the step, the per-joint part ({a * 1e6:.2f} us) {a / half:.0%}; with the limits on (rows that never "
        f"bind here) the step takes {lim / half:.2f}x"
    )
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
    print(
        f"ours, chains (every other joint a follower), N = {envs}, CPU time per env-step over {rounds} "
        f"interleaved rounds:"
    )
    for n, a, b in zip(joints, med, low):
        print(f"  chain{n:<3} median {a * 1e6:8.2f} us   least {b * 1e6:8.2f} us")
    print(
        f"  growth exponent over {', '.join(map(str, joints))} joints: {fit(med):.2f} (medians), "
        f"{fit(low):.2f} (least); target <= 1.4"
    )
    for r, _ in runners.values():
        r.close()


#: (label, the line of ``step_env`` the cut goes before, its indent): the phases in step order
_CUTS = [
    ("set-up, corrections, forward kinematics and bias forces", "od = wp.vec3d(o)", 8),
    ("composite pass (CRBA into H's slots), M u0", "if md.n_soft > 0:           # the mass-only", 8),
    ("joint terms, drives, relation errors", "if md.n_soft > 0:\n            f.soft_rows(", 8),
    ("drives folded, sparse LDL^T", "for c in range(k):\n                ws[e, md.o_v + c] = ws[e, md.o_bh + c]", 12),
    ("solve, joint rows, drive bounds", "for i in range(n):\n            u_out[e, i] = md.dof_gain[i]", 8),
    ("coupling impulses (residual)", "for i in range(n):          # q+ = q (+) dt u+", 8),
    ("integration, finiteness, read-out", None, 0),
]


def _cut_packages(root: Path) -> list[str]:
    """Copies of ``mimic_ext`` under ``root``, the i-th with ``step_env`` returning before cut i."""
    import re
    import shutil

    src = Path(__file__).resolve().parents[1] / "mimic_ext"
    names = []
    for i, (_, anchor, indent) in enumerate(_CUTS[:-1]):
        name = f"mimic_cut{i}"
        dst = root / name
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        for f in dst.rglob("*.py"):
            text = f.read_text()
            new = re.sub(r"\bmimic_ext\b", name, text)
            if f.parent.name == "kernels" and f.name == "__init__.py":
                new = new.replace('module = f"mimic_', f'module = f"mimiccut{i}_')
            if f.parent.name == "kernels" and f.name == "step.py":
                if new.count(" " * indent + anchor) != 1:
                    raise RuntimeError(f"step_profile --phases: step_env changed, no unique cut before {anchor!r}")
                pad = " " * indent
                new = new.replace(
                    pad + anchor,
                    f"{pad}if wp.static(True):\n{pad}    sc.nonfinite[e] = 0\n{pad}    return\n" + pad + anchor,
                )
            if new != text:
                f.write_text(new)
        names.append(name)
    return names + ["mimic_ext"]


#: (label, mechanism, N): the rows ``--phases`` and ``--coupling`` time
_ROWS = [("Robotiq", M.robotiq, 1024), ("humanoid", M.humanoid, 64), ("chain64", lambda: M.chain(64), 128)]


def _rows():
    """(label, mechanism, N) of each of ``_ROWS`` whose source files are present (else said)."""
    for label, make, n in _ROWS:
        try:
            mech = make()
        except FileNotFoundError as exc:
            print(f"{label}: skipped ({exc})")
            continue
        yield label, mech, n


def phases(rounds: int, block_s: float) -> None:
    """The least CPU time per env-step of each cut of the step, differenced (see the module doc)."""
    import importlib
    import tempfile
    import time

    import warp as wp

    with tempfile.TemporaryDirectory() as tmp:
        pkgs = _cut_packages(Path(tmp))
        sys.path.insert(0, tmp)
        runs = {}
        for label, mech, n in _rows():
            stage, _ = M.usd_stage(mech)
            for pkg in pkgs:
                S = importlib.import_module(pkg + ".solver")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = S.build_model(stage, num_envs=n, fix_base=True)
                solver = S.Solver(model, threads=1)
                a, b, c = model.state(), model.state(), model.control()

                def adv(k, solver=solver, a=a, b=b, c=c):
                    for _ in range(k):
                        solver.step(a, b, c, M.DT)
                    wp.synchronize()

                adv(2)
                t = time.process_time()
                adv(3)
                est = max((time.process_time() - t) / 3, 1e-7)
                runs[(label, pkg)] = (adv, n, max(2, int(block_s / est)))
        cpu = {key: [] for key in runs}
        for _ in range(rounds):
            for key, (adv, n, steps) in runs.items():
                t = time.process_time()
                adv(steps)
                cpu[key].append((time.process_time() - t) / steps / n)
        sys.path.remove(tmp)
    done = [label for label, _, _ in _ROWS if (label, "mimic_ext") in runs]
    print(
        f"where one step's time goes (least CPU time per env-step of {rounds} interleaved rounds, "
        f"each phase the difference of consecutive cuts; us):"
    )
    print(f"  {'phase':<58}" + "".join(f"{lb:>12}" for lb in done))
    prev = dict.fromkeys(done, 0.0)
    for (what, _, _), pkg in zip(_CUTS, pkgs):
        line = f"  {what:<58}"
        for lb in done:
            t = min(cpu[(lb, pkg)])
            line += f"{(t - prev[lb]) * 1e6:12.2f}"
            prev[lb] = t
        print(line)
    print(f"  {'whole step':<58}" + "".join(f"{prev[lb] * 1e6:12.2f}" for lb in done))


def coupling(rounds: int, block_s: float) -> None:
    """CPU time per env-step with the coupling impulses computed in every step against on
    demand (the step's residual pass skipped; see the module doc)."""
    runs = {}
    for label, mech, n in _rows():
        for every in (True, False):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = P.make("step_many", mech, n)
            r.solver.set_options(coupling_every_step=every)
            r.timed(2)
            est = max(r.timed(4)[1] / 4, 1e-7)
            runs[(label, every)] = (r, n, int(max(2, round(block_s / 3 / est))))
    cpu = {key: [] for key in runs}
    for _ in range(rounds):
        for key, (r, n, steps) in runs.items():
            cpu[key].append(r.timed(steps)[1] / steps / n)
    print(
        f"coupling impulses in every step vs on demand (step_many, one thread; CPU time per env-step, "
        f"median of {rounds} interleaved rounds):"
    )
    for label, _, n in _ROWS:
        if (label, True) not in cpu:
            continue
        a, b = statistics.median(cpu[(label, True)]), statistics.median(cpu[(label, False)])
        print(
            f"  {label:<9} N = {n:<5} every step {a * 1e6:8.3f} us   on demand {b * 1e6:8.3f} us   "
            f"the step {1 - b / a:6.1%} cheaper"
        )
    for r, _, _ in runs.values():
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
    cmd = one.solver._launch(s0, s1, ctl, M.DT)  # the recorded launch Solver.step replays
    reps = 2000
    rows = {
        "Solver.step + target write (the benchmark's ours)": [],
        "Solver.step": [],
        "recorded launch alone (cmd.launch())": [],
        "one env's arithmetic (N=1024 per env)": [],
    }
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
