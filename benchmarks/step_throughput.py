"""Step throughput of the mimic solver next to MuJoCo, Newton and real PhysX, on the same mechanisms.

    python benchmarks/step_throughput.py [--quick] [--rows ROW ...] [--threads T] [--rounds R]

Every engine gets the same mechanism from one geometry-free URDF (``benchmarks/mechanisms.py``:
DOFs, active mimics, limits, gravity and drive gains are printed), the same initial pose
and the same driven targets (a 1 Hz sinusoid on every independent joint, a per-environment
phase; ``benchmarks/peers.py`` steps each engine). Per row (a mechanism and N environments):

1. **Trajectory check.** Every engine runs the first ``--check-steps`` steps (fewer for an
   engine too slow for ``--check-budget`` seconds, at least 24); joint positions are sampled
   every 6 steps and compared with ours. ``dev`` is the largest |q - q_ours| over the samples,
   environments and joints; an engine with ``dev`` above ``TOLERANCE_SHARE`` of the
   mechanism's largest joint excursion (or a non-finite state) gets no ratio. ``rel`` is the
   largest mimic residual |q_f - m q_l - c| the engine itself shows over the window.
2. **Timing.** Rounds ``A B C .. A B C ..`` (``--rounds``, at least 5), each engine stepping a
   block sized to about ``--block-s`` seconds; medians of wall time (``perf_counter``) and of
   CPU time (``process_time``: every thread of this process, so a thread pool's work counts).
   A block's size comes from a probe grown 8x at a time until it takes an eighth of a block
   (``block_steps``), so an engine whose call has a fixed cost spread over its steps
   (``step_many``, ``rollout``) is sized by its cost per step at block length, not by that
   fixed cost: a 2-step probe of ``step_many`` at N = 1 measures mostly its per-call cost
   (tens of microseconds, against about 3 us a step) and would time blocks too short to
   amortise it, as every ``step_many`` block was sized before (about 48 steps).

Engines: ``ours`` (``Solver.step``, one thread as Warp runs a CPU launch; ``ours T`` when the
solver takes ``threads=``), ``ours step_many`` (``Solver.step_many``, the block in one call: at
N = 1, and on T threads at N > 1, one launch per slice for all the block's steps, as
``rollout`` runs all its steps in C per thread), MuJoCo ``mj_step`` (N = 1) and
``mujoco.rollout`` on the calling thread and on a
persistent pool of T threads, Newton 1.8 ``SolverFeatherstone`` and ``SolverXPBD`` (CPU;
XPBD's first compile takes minutes and is never timed: the check runs it first), and real
PhysX on the CPU through ovphysx (the robot cloned N times; its tasks on the calling thread,
and on T worker threads). A peer that is not installed is listed as such.

Rows: ``robotiq`` at N = 1, 64, 1024, 4096, ``inspire`` at 1 and 1024, ``chain8`` ..
``chain64`` and ``humanoid`` (53 DOFs, 12 mimics) at 256; ``--rows robotiq chains`` picks
groups, ``--rows humanoid:1`` any N. At the end: one line per target of issue 13 (the N = 1024
one compares ours ``step_many`` on T threads with rollout on T threads, and the other
variants of ours with the same rollout, then prints both engines' own thread scaling: wall,
CPU over wall, and the cores other processes kept busy meanwhile, which lower both alike),
and (not with ``--quick``) the cold compile time of the solver's Warp module.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import mechanisms as M
from benchmarks import peers as P

#: Largest trajectory deviation from ours, as a share of the mechanism's largest joint
#: excursion, for a peer to count as simulating the same motion. Measured here (dt 1/240):
#: peers that hold the relations agree with ours to 1-8 % (first-order integrators differ
#: by O(dt) in phase, and all converge together as dt shrinks); MuJoCo's soft joint
#: equalities let loaded followers lag by up to 15 % (its ``rel``). Unit errors, a resting
#: leader, wrong relations or a diverging step are many times this.
TOLERANCE_SHARE = 0.2
SAMPLE_EVERY = 6
MIN_CHECK_STEPS = 24

#: (mechanism, N) rows; ``--rows`` takes ``name`` (all its rows) or ``name:N`` (any N).
ROWS = [
    ("robotiq", 1),
    ("robotiq", 64),
    ("robotiq", 1024),
    ("robotiq", 4096),
    ("inspire", 1),
    ("inspire", 1024),
    ("chain8", 256),
    ("chain16", 256),
    ("chain32", 256),
    ("chain64", 256),
    ("humanoid", 256),
]
QUICK_ROWS = [("robotiq", 1), ("robotiq", 1024), ("chain8", 64), ("chain64", 64), ("humanoid", 64)]
CHAINS = ("chain8", "chain16", "chain32", "chain64")


@dataclass
class Measured:
    kind: str
    name: str
    threads: int
    num_envs: int
    wall: list[float] = field(default_factory=list)  # seconds per step, per round
    cpu: list[float] = field(default_factory=list)
    dev: float = math.nan
    rel: float = math.nan
    checked_steps: int = 0
    ok: bool = False
    note: str = ""

    @property
    def wall_step(self) -> float:
        return statistics.median(self.wall) if self.wall else math.nan

    @property
    def cpu_step(self) -> float:
        return statistics.median(self.cpu) if self.cpu else math.nan


def excursion(mech: M.Mechanism) -> float:
    """Largest amplitude of any joint's commanded motion (a follower moves |m| times its leader's)."""
    amp = dict(mech.amplitude)
    for m in mech.mimics:
        amp[m.follower] = abs(m.multiplier) * mech.amplitude[m.leader]
    return max(amp.values())


def relation_residual(mech: M.Mechanism, q: np.ndarray) -> float:
    """max |q_f - m q_l - c| over the samples (..., DOFs in mech.joints order)."""
    idx = {j: i for i, j in enumerate(mech.joints)}
    if not mech.mimics:
        return 0.0
    return max(
        float(np.max(np.abs(q[..., idx[m.follower]] - m.multiplier * q[..., idx[m.leader]] - m.offset)))
        for m in mech.mimics
    )


def engine_kinds(num_envs: int, threads: int, only: list[str] | None) -> list[str]:
    kinds = ["ours"]
    if threads > 1:
        kinds.append(f"ours:{threads}")
        if num_envs > 1:
            kinds.append(f"step_many:{threads}")
    if num_envs == 1:
        kinds += ["step_many", "mj_step"]
    kinds.append("rollout:0")
    if threads > 1:
        kinds.append(f"rollout:{threads}")
    kinds += ["featherstone", "xpbd", "remote:physx:0"]  # PhysX in processes of its own (peers.Remote)
    if threads > 1:
        kinds.append(f"remote:physx:{threads}")
    if only:
        kinds = [
            k
            for k in kinds
            if k.partition(":")[0] in ("ours", "step_many")
            or k.removeprefix("remote:").partition(":")[0] in only
            or k in only
        ]
    return kinds


def unavailable(kind: str) -> str | None:
    """Why an engine kind cannot be measured here, or None."""
    name = kind.partition(":")[0]
    if name == "ours" and ":" in kind and not P.solver_has_threads():
        return "Solver(model, threads=...) not available yet"
    if name == "step_many" and not P.solver_has_step_many():
        return "Solver.step_many not available yet"
    return P.peer_missing(kind)


def check(runners: dict, mech: M.Mechanism, steps: int, budget_s: float, out: dict[str, Measured]) -> None:
    """Trajectory check from the initial pose (untimed); each runner is left warm."""
    traj = {}
    for kind, r in runners.items():
        samples = [r.positions()]
        done, est = 0, None
        limit = steps
        while done < limit:
            t0 = time.perf_counter()
            r.prepare(SAMPLE_EVERY)
            r.advance(SAMPLE_EVERY)
            if done:  # the first block compiles or warms up: estimate from the second
                est = (time.perf_counter() - t0) / SAMPLE_EVERY
                if kind != "ours":
                    limit = int(min(steps, max(MIN_CHECK_STEPS, budget_s / est)))
            done += SAMPLE_EVERY
            samples.append(r.positions())
        traj[kind] = np.array(samples)
        out[kind].checked_steps = done
        out[kind].rel = relation_residual(mech, traj[kind])
    ref = traj["ours"]
    tol = TOLERANCE_SHARE * excursion(mech)
    for kind, q in traj.items():
        m = out[kind]
        common, envs = min(len(q), len(ref)), min(q.shape[1], ref.shape[1])  # environment e: the same phase
        d = np.abs(q[:common, :envs] - ref[:common, :envs])
        m.dev = float(np.max(d)) if np.all(np.isfinite(q)) else math.inf
        m.ok = bool(m.dev <= tol)
        if not m.ok:
            m.note = f"trajectory off by {m.dev:.3g} rad > {tol:.3g}: no ratio"


#: Most steps in one timed block (ours' ``step_many`` at N = 1 takes about 3 us a step).
MAX_BLOCK_STEPS = 20000


def block_steps(r, block_s: float) -> int:
    """Steps per timed block for about ``block_s`` seconds: probes of 2, 16, 128 .. steps until
    one takes an eighth of a block, sized from the last (so a fixed cost per call is spread
    over a block-length probe, as it is in the timed blocks)."""
    n = 2
    while True:
        wall = r.timed(n)[0]
        if wall >= block_s / 8 or n >= MAX_BLOCK_STEPS:
            break
        n = min(MAX_BLOCK_STEPS, n * 8)
    return int(min(MAX_BLOCK_STEPS, max(2, round(block_s * n / max(wall, 1e-9)))))


def machine_busy() -> tuple[float, float] | None:
    """(busy, total) CPU seconds of the whole machine since boot (``/proc/stat``), or None."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(v) - v[3] - v[4]) / tick, sum(v) / tick


#: Per row: cores the machine's other processes kept busy during its timed rounds.
OTHERS: dict[str, float] = {}


def time_rounds(runners: dict, out: dict[str, Measured], rounds: int, block_s: float, key: str = "") -> None:
    """Interleaved rounds; each engine's block sized by ``block_steps``. Also records in
    ``OTHERS[key]`` how many cores other processes kept busy meanwhile (machine busy time
    from ``/proc/stat`` less this process's CPU time, over the wall time)."""
    sizes = {kind: block_steps(r, block_s) for kind, r in runners.items()}
    m0, c0, t0, remote = machine_busy(), time.process_time(), time.perf_counter(), 0.0
    for _ in range(rounds):
        for kind, r in runners.items():
            n = sizes[kind]
            wall, cpu = r.timed(n)
            out[kind].wall.append(wall / n)
            out[kind].cpu.append(cpu / n)
            if isinstance(r, P.Remote):  # its process's CPU is ours too, not another job's
                remote += cpu
    m1, c1, t1 = machine_busy(), time.process_time(), time.perf_counter()
    if m0 and m1 and t1 > t0:
        OTHERS[key] = max(0.0, (m1[0] - m0[0]) - (c1 - c0) - remote) / (t1 - t0)
    for kind, r in runners.items():
        q = r.positions()
        if not np.all(np.isfinite(q)):
            out[kind].ok = False
            out[kind].note = "state became non-finite while timed: no ratio"


def _build(kind: str, mech: M.Mechanism, num_envs: int, max_step_s: float):
    """(runner, N): a peer whose step at ``num_envs`` takes over ``max_step_s`` (Newton's dense
    Featherstone on 64 joints: seconds) is measured on fewer environments, as many as fit;
    its figures are then per env-step like every other's."""

    def make(n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return P.make(kind, mech, n)

    r = make(num_envs)
    if kind.partition(":")[0] in ("ours", "step_many") or num_envs == 1:  # ours: not stepped before the check
        return r, num_envs
    r.timed(1)  # first step: compile / warm-up
    est = r.timed(1)[0]
    if est <= max_step_s:
        return r, num_envs
    r.close()
    n = max(1, int(num_envs * max_step_s / est))
    return make(n), n


def run_row(key: str, mech: M.Mechanism, num_envs: int, args) -> list[Measured]:
    kinds = engine_kinds(num_envs, args.threads, args.engines)
    out: dict[str, Measured] = {}
    runners = {}
    skipped = []
    for kind in kinds:
        why = unavailable(kind)
        if why:
            skipped.append(Measured(kind, kind, 0, num_envs, note=why))
            continue
        r, n = _build(kind, mech, num_envs, args.max_step_s)
        runners[kind] = r
        out[kind] = Measured(kind, r.name + (f" (N={n})" if n != num_envs else ""), r.threads, n)
    said = len(P.MUJOCO_WARNINGS)
    try:
        check(runners, mech, args.check_steps, args.check_budget, out)
        time_rounds(runners, out, args.rounds, args.block_s, key)
        for kind, r in runners.items():
            if isinstance(r, P.OursStepMany) and num_envs == 1:
                wall, cpu = r.call_cost()
                out[kind].note = f"a call of 1 step: {wall * 1e6:.0f} us wall, {cpu * 1e6:.0f} us CPU"
    finally:
        for r in runners.values():
            r.close()
    warned = list(dict.fromkeys(P.MUJOCO_WARNINGS[said:]))
    for m in out.values():
        if warned and m.kind.partition(":")[0] in ("mj_step", "rollout"):
            m.note = (m.note + "; " if m.note else "") + f"MuJoCo warned: {warned[0]}"
    return list(out.values()) + skipped


def fmt_row(key: str, m: Measured, ours: Measured) -> str:
    if not m.wall:
        return f"{key:<13} {m.name:<30} {'-':>3} {'':>10} {'':>9} {'':>9} {'':>11} {'':>7} {'':>7}  {m.note}"
    n = m.num_envs
    ratio_w = ratio_c = ""
    if m is not ours and m.ok and ours.ok:  # per env-step (a slow peer may run fewer environments)
        ratio_w = f"{(m.wall_step / n) / (ours.wall_step / ours.num_envs):7.2f}"
        ratio_c = f"{(m.cpu_step / n) / (ours.cpu_step / ours.num_envs):7.2f}"
    elif m is not ours:
        ratio_w = ratio_c = f"{'n/a':>7}"
    return (
        f"{key:<13} {m.name:<30} {m.threads:>3} {m.wall_step * 1e6:>10.1f} {m.wall_step / n * 1e6:>9.3f} "
        f"{m.cpu_step / n * 1e6:>9.3f} {n / m.wall_step:>11,.0f} {ratio_w:>7} {ratio_c:>7}  dev {m.dev:.1e} "
        f"rel {m.rel:.1e} ({m.checked_steps} st){'  ' + m.note if m.note else ''}"
    )


HEADER = (
    f"{'row':<13} {'engine':<30} {'thr':>3} {'us/step':>10} {'us/env-st':>9} {'cpu/env':>9} "
    f"{'env-steps/s':>11} {'x wall':>7} {'x cpu':>7}  trajectory check"
)


_COMPILE = """
import resource, sys, time, warnings
warnings.simplefilter('ignore')
import warp as wp
wp.config.quiet = True
wp.init()
from mimic_ext.solver.kernels import PRECISIONS, kernels
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
modules = [wp.get_module(kernels(p).module) for p in PRECISIONS]
if sys.argv[1] == 'at-once':        # one thread per module (Warp compiles outside its codegen lock)
    c, t = cpu(), time.perf_counter()
    wp.force_load(device='cpu', modules=modules, max_workers=len(modules))
    print('at-once', time.perf_counter() - t, cpu() - c)
else:                               # one after the other, float32 first
    for p, module in zip(PRECISIONS, modules):
        c, t = cpu(), time.perf_counter()
        module.load(wp.get_device('cpu'))
        print(p, time.perf_counter() - t, cpu() - c)
"""


def _compile_run(env: dict, mode: str) -> dict[str, list[float]]:
    out = subprocess.run([sys.executable, "-c", _COMPILE, mode], env=env, capture_output=True, text=True, check=True)
    return {
        ln.split()[0]: [float(x) for x in ln.split()[1:]]
        for ln in out.stdout.splitlines()
        if ln.split() and ln.split()[0] in ("float32", "float64", "at-once")
    }


def compile_times() -> tuple[dict[str, tuple[float, float, float]], tuple[float, float]]:
    """Per precision (float32 first, then float64 in the same process, as a user of both would):
    (wall s, CPU s) of compiling its solver module into an empty kernel cache, and wall s of
    loading it from the cache; and (wall s, CPU s) of compiling both into another empty cache at
    once, one thread each. The first compile of a thread also pays for Warp's precompiled header
    (about 3.5 s here)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, WARP_CACHE_PATH=tmp)
        first, cached = _compile_run(env, "serial"), _compile_run(env, "serial")
    with tempfile.TemporaryDirectory() as tmp:
        wall, cpu = _compile_run(dict(os.environ, WARP_CACHE_PATH=tmp), "at-once")["at-once"]
    return {p: (first[p][0], first[p][1], cached[p][0]) for p in first}, (wall, cpu)


def _get(results, key, kind) -> Measured | None:
    """The measurement of ``kind`` in row ``key`` (``(name, N)``, or a name: its largest N)."""
    if isinstance(key, str):
        ns = [n for (name, n) in results if name == key]
        if not ns:
            return None
        key = (key, max(ns))
    m = next((x for x in results.get(key, []) if x.kind == kind), None)
    return m if m is not None and m.wall else None


def _verdict(value: float, target: float) -> str:
    return "met" if value >= target else "NOT met"


def _per_env(m: Measured, attr: str) -> float:
    return getattr(m, attr) / m.num_envs


def _compare(ours: Measured, peer: Measured, attr: str, target: float) -> str:
    """'R x (target >= T): met', or why there is no ratio (with both times, which are measured)."""
    if not (peer.ok and ours.ok):
        bad = peer if not peer.ok else ours
        return (
            f"no ratio: {bad.name}'s trajectory is off by {bad.dev:.3g} rad (its own mimic residual "
            f"{bad.rel:.3g} rad); times alone {_per_env(ours, attr) * 1e6:.2f} us (ours) and "
            f"{_per_env(peer, attr) * 1e6:.2f} us ({peer.name}) per env-step"
        )
    r = _per_env(peer, attr) / _per_env(ours, attr)
    return f"{r:.2f}x (target >= {target:g}x): {_verdict(r, target)}"


def summary(results: dict, args) -> list[str]:
    """One line per target of issue 13."""
    T = args.threads
    lines = []
    key = ("robotiq", 1024)
    ours = _get(results, key, "ours")
    ro = _get(results, key, f"rollout:{T}") or _get(results, key, "rollout:0")
    if ours and ro:
        many = _get(results, key, f"step_many:{T}") if T > 1 else None
        main = many or _get(results, key, f"ours:{T}") or ours  # ours on all threads, its steps in one call
        others = [
            m
            for m in (_get(results, key, k) for k in ("ours", f"ours:{T}", f"step_many:{T}"))
            if m is not None and m is not main and m.ok and ro.ok
        ]
        lines.append(
            f"Robotiq N = 1024, wall time, {main.name} vs {ro.name}: {_compare(main, ro, 'wall_step', 4.0)}"
            + (
                f" (the other variants of ours vs {ro.name}: "
                + ", ".join(f"{m.name} {_per_env(ro, 'wall_step') / _per_env(m, 'wall_step'):.2f}x" for m in others)
                + ")"
                if others
                else ""
            )
        )
        scaling = []
        for one, many in (
            (ours, _get(results, key, f"step_many:{T}")),
            (ours, _get(results, key, f"ours:{T}")),
            (_get(results, key, "rollout:0"), _get(results, key, f"rollout:{T}")),
        ):
            if one and many and T > 1:
                scaling.append(
                    f"{many.name} {one.wall_step / many.wall_step:.2f}x {one.name}'s wall "
                    f"(CPU/wall {many.cpu_step / many.wall_step:.2f})"
                )
        if scaling:
            busy = OTHERS.get("robotiq:1024")
            lines.append(
                f"Robotiq N = 1024, thread scaling ({T} threads; CPU/wall: the cores kept busy, "
                f"{T} at most): {'; '.join(scaling)}; other processes kept "
                f"{'?' if busy is None else f'{busy:.2f}'} of the {P.cpu_count()} cores busy meanwhile"
            )
    else:
        lines.append("Robotiq N = 1024 vs MuJoCo rollout: row not run")
    ro1 = _get(results, key, "rollout:0")
    if ours and ro1:
        lines.append(
            f"Robotiq N = 1024, one thread each, ours vs {ro1.name}: wall "
            f"{_compare(ours, ro1, 'wall_step', 4.0)}; CPU {_compare(ours, ro1, 'cpu_step', 4.0)}"
        )
    chains = [
        (int(k[5:]), _get(results, k, "ours"), _get(results, k, "rollout:0"))
        for k in CHAINS
        if _get(results, k, "ours")
    ]
    if len(chains) >= 2:
        fit = lambda pts: float(np.polyfit(np.log([p[0] for p in pts]), np.log([p[1] for p in pts]), 1)[0])  # noqa: E731
        ex_o = fit([(n, _per_env(o, "cpu_step")) for n, o, _ in chains])
        mj = [(n, _per_env(m, "cpu_step")) for n, _, m in chains if m is not None]
        ex_m = fit(mj) if len(mj) >= 2 else math.nan
        off = [f"chain{n}" for n, _, m in chains if m is not None and not m.ok]
        lines.append(
            f"growth of CPU time per env-step with joints ({', '.join(str(c[0]) for c in chains)}): exponent "
            f"ours {ex_o:.2f}, MuJoCo rollout {ex_m:.2f} (target ours <= 1.4): "
            f"{'met' if ex_o <= 1.4 else 'NOT met'}"
            + (f" (MuJoCo's trajectory failed the check on {', '.join(off)})" if off else "")
        )
    else:
        lines.append("growth exponent: fewer than two chain rows run")
    for key, what in (("chain64", "64-joint chain"), ("humanoid", "53-DOF humanoid tree (12 mimics)")):
        o, mj = _get(results, key, "ours"), _get(results, key, "rollout:0")
        lines.append(
            f"{what}, CPU per env-step, one thread each, ours vs MuJoCo rollout: {_compare(o, mj, 'cpu_step', 1.5)}"
            if o and mj
            else f"{what}: row not run"
        )
    sm, mjs, o1 = (_get(results, ("robotiq", 1), k) for k in ("step_many", "mj_step", "ours"))
    if sm and mjs:
        lines.append(
            f"Robotiq N = 1 with step_many vs mj_step, wall: {_compare(sm, mjs, 'wall_step', 2.0)} "
            f"(step_many {sm.wall_step * 1e6:.2f} us/step in blocks of about {args.block_s:g} s; {sm.note})"
        )
    elif o1 and mjs:
        lines.append(
            f"Robotiq N = 1 with step_many: {unavailable('step_many') or 'not run'}; Solver.step vs "
            f"mj_step, wall: {_compare(o1, mjs, 'wall_step', 2.0)}"
        )
    else:
        lines.append("Robotiq N = 1: row not run")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="fewer rows (Robotiq N = 1, 1024; chain8, chain64, humanoid at N = 64), shorter check and "
        "blocks; still interleaved and checked",
    )
    ap.add_argument(
        "--rows",
        nargs="*",
        help=f"rows: a mechanism (its default rows), mechanism:N, or chains; mechanisms: {', '.join(M.MECHANISMS)}",
    )
    ap.add_argument(
        "--threads",
        type=int,
        default=P.cpu_count(),
        help="threads for the multi-threaded variants (default: all cores)",
    )
    ap.add_argument(
        "--engines",
        nargs="*",
        help="peer kinds to include (ours and its step_many always): mj_step rollout featherstone xpbd physx",
    )
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--block-s", type=float, default=0.25, help="seconds per timed block (per engine, per round)")
    ap.add_argument("--check-steps", type=int, default=120)
    ap.add_argument("--check-budget", type=float, default=5.0, help="seconds an engine may take for its check")
    ap.add_argument(
        "--max-step-s",
        type=float,
        default=0.25,
        help="a peer slower than this per step is measured on fewer environments",
    )
    ap.add_argument("--no-compile", action="store_true", help="skip the cold-compile subprocesses")
    args = ap.parse_args(argv)
    if args.rounds < 5:
        ap.error("--rounds must be at least 5 (medians of interleaved rounds)")
    from mimic_ext.warp_runtime import init_warp

    init_warp()
    rows = QUICK_ROWS if args.quick else ROWS
    if args.quick:
        args.check_steps, args.block_s, args.check_budget, args.max_step_s, args.no_compile = 48, 0.05, 1.5, 0.03, True
    if args.rows:
        picked = []
        for word in args.rows:
            name, _, n = word.partition(":")
            if name == "chains":
                picked += [r for r in rows if r[0] in CHAINS]
            elif name not in M.MECHANISMS or (n and not n.isdigit()):
                ap.error(f"--rows {word}: use one of {', '.join(M.MECHANISMS)} or chains, optionally :N")
            else:
                picked += [(name, int(n))] if n else [r for r in rows if r[0] == name]
        rows = list(dict.fromkeys(picked))
    print(
        f"dt {M.DT:.6g} s, {args.rounds} interleaved rounds, medians; {args.threads} threads for the T variants "
        f"({P.cpu_count()} cores here); trajectory tolerance {TOLERANCE_SHARE:g} x largest joint excursion"
    )
    print("x wall / x cpu: the peer's time over ours (above 1: ours is faster), given only when both pass the check")
    described, results = set(), {}
    print(HEADER, flush=True)
    for name, n in rows:
        key = f"{name}:{n}"
        try:
            mech = M.MECHANISMS[name]()
        except FileNotFoundError as exc:
            print(f"{key:<13} skipped: {exc}")
            continue
        if name not in described:
            described.add(name)
            print(f"# {mech.describe()}; largest excursion {excursion(mech):.3g} rad", flush=True)
        res = run_row(key, mech, n, args)
        results[(name, n)] = res
        ours = next(m for m in res if m.kind == "ours")
        for m in res:
            print(fmt_row(key, m, ours), flush=True)
    print()
    for line in summary(results, args):
        print(line)
    if not args.no_compile:
        times, (wall1, cpu1) = compile_times()
        for p, (wall, cpu, cached) in times.items():
            print(
                f"cold compile of the solver's Warp module, {p}: {wall:.2f} s ({cpu:.2f} s CPU), cached load "
                f"{cached * 1e3:.1f} ms"
            )
        print(
            f"cold compile of the float32 module (what one model without colliders compiles; target < 10 s): "
            f"{'met' if times['float32'][0] < 10 else 'NOT met'}"
        )
        total = sum(t[0] for t in times.values())
        print(
            f"cold compile of both modules, one after the other: {total:.2f} s "
            f"({sum(t[1] for t in times.values()):.2f} s CPU); at once on two threads: {wall1:.2f} s "
            f"({cpu1:.2f} s CPU; target < 10 s): {'met' if min(total, wall1) < 10 else 'NOT met'}; "
            f"machine load {os.getloadavg()[0]:.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
