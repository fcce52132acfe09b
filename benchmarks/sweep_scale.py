"""Wall time and peak memory of the FET022 sweep (``mimic_ext.fet022.run``) on large stages.

    python benchmarks/sweep_scale.py [--rows 200 200tree 2000 10000] [--engine warp] [--mem-cap-gb 4]
                                     [--timeout S] [--distinct]

Stages from ``benchmarks/mechanisms.scale_stage``: ``200`` is 100 two-joint mechanisms
(100 mimic pairs, 200 revolute joints) in one stage, ``200tree`` the same pairs on one
articulation, ``2000`` 1,000 mechanisms, ``10000`` 5,000 (10,000 joints). Issue 13's
targets: a 200-joint stage under 5 s; 10,000 joints under 2 GB and 60 s.

The warp engine simulates each independent part of a stage (here: each finger) on its own,
a part that is a translated copy of one already simulated only once, and parts of one shape
in one model. ``--distinct`` also runs every row on a stage whose pairs all differ
(``distinct_pairs``: every leader's drive stiffness and every body's mass differ), so
nothing is shared: each part is built and stepped, the cost of a stage of distinct
mechanisms. It then prints, per row, the cost per joint against the smallest row's, and
the fitted growth exponent in joints (1: linear), from CPU time (``time.process_time`` of
the sweep: on a shared machine less disturbed by other jobs than wall time; the targets are
judged on wall time).

Each sweep runs in a fresh Python process (default FET022 configuration, warm Warp
kernel cache: one small sweep first) watched from here: its resident memory is read from
``/proc`` every 50 ms and the process is killed once it passes ``--mem-cap-gb`` or runs
past its time cap (``--timeout``; default 6 x the row's target, within 30-120 s), so a sweep that asks for far more than the machine has (the dense
solve on 10,000 joints asked for 134 GiB) prints "exceeded" instead of taking the machine
down; an address-space limit (``RLIMIT_AS``, cap + 8 GiB) stops a single huge allocation
before it is touched. Printed per row: status, wall time of ``run`` (inside the child,
without interpreter start-up), its own timings, and peak resident memory (the child's
``ru_maxrss``, or the last reading before it was killed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import mechanisms as M

#: row -> (mimic pairs, pairs per articulation, wall target s, memory target GB)
ROWS = {
    "200": (100, 1, 5.0, None),
    "200tree": (100, 100, 5.0, None),
    "2000": (1000, 1, None, None),
    "10000": (5000, 1, 60.0, 2.0),
}
POLL_S = 0.05


def distinct_pairs(stage):
    """Make every mimic pair of a ``scale_stage`` stage differ from every other: pair ``i``'s
    leader drive stiffness is 0.05 (1 + i / n) N m/deg and its bodies' masses (1 + i / n)
    times the original, so no part is a translated copy of another (all keep one shape)."""
    from pxr import UsdPhysics

    leaders = [
        p for p in stage.Traverse() if p.GetName().startswith("lead") and p.HasAPI(UsdPhysics.DriveAPI, "angular")
    ]
    n = max(len(leaders), 1)
    for i, lead in enumerate(leaders):
        f = 1.0 + i / n
        UsdPhysics.DriveAPI(lead, "angular").GetStiffnessAttr().Set(0.05 * f)
        joint = UsdPhysics.RevoluteJoint(lead)
        for target in joint.GetBody1Rel().GetTargets():
            body = stage.GetPrimAtPath(target)
            mass = UsdPhysics.MassAPI(body).GetMassAttr()
            mass.Set(mass.Get() * f)
    return stage


def child(stage_path: str, engine: str, timeout_s: float) -> None:
    """Inside the watched process: one sweep, its figures as one JSON line on stdout.

    Shortly before the watcher's timeout the Python stack is dumped to stderr
    (``faulthandler``), so a sweep that is stopped says where it was."""
    import faulthandler
    import warnings

    warnings.simplefilter("ignore")
    faulthandler.dump_traceback_later(max(1.0, timeout_s - 3.0), exit=False)
    from mimic_ext.fet022 import run

    counts: dict = {}
    sweeper = engine
    if engine == "warp":  # the engine's own counts (parts, parts simulated, models)
        from mimic_ext.fet022.engines.warp import WarpEngine

        class Counted(WarpEngine):
            def simulate(self, *args, **kwargs):
                trace = super().simulate(*args, **kwargs)
                counts.update({k: int(v) for k, v in trace.timings.items() if not k.endswith("_s")})
                return trace

        sweeper = Counted()
    t0, c0 = time.perf_counter(), time.process_time()
    result = run(stage_path, None, sweeper, label=engine)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    followers = result.followers
    print(
        json.dumps(
            {
                "wall_s": wall,
                "cpu_s": cpu,
                "maxrss_gb": rss_kb / 2**20,
                "status": result.status,
                "followers": len(followers),
                "passed": sum(1 for f in followers if f.status == "pass"),
                "num_envs": result.num_envs,
                "counts": counts,
                "timings": {k: round(v, 3) for k, v in result.timings.items() if k.endswith("_s")},
            }
        )
    )


def _rss_gb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def _where(stderr: str) -> str:
    """The innermost frames of the main thread's dump (``faulthandler``), or ''."""
    lines = stderr.splitlines()
    start = max((i for i, ln in enumerate(lines) if "most recent call first" in ln), default=None)
    if start is None:
        return ""
    frames = []
    for ln in lines[start + 1 :]:
        ln = ln.strip()
        if not ln.startswith("File "):
            break
        path, _, rest = ln[len("File ") :].partition(", line ")
        frames.append(f"{Path(path.strip(chr(34))).name}:{rest}")
    return " <- ".join(frames[:4])


def watched(stage_path: Path, engine: str, mem_cap_gb: float, timeout_s: float) -> dict:
    """Run ``child`` in a subprocess under the caps; its JSON, or why it was stopped."""
    cap = int((mem_cap_gb + 8.0) * 2**30)

    def limit():  # in the child, before exec: no single giant allocation
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        str(stage_path),
        "--engine",
        engine,
        "--timeout",
        str(timeout_s),
    ]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit)  # noqa: PLW1509 (no threads yet: only setrlimit runs there)
    peak, why = 0.0, None
    while proc.poll() is None:
        peak = max(peak, _rss_gb(proc.pid))
        elapsed = time.perf_counter() - t0
        if peak > mem_cap_gb:
            why = f"exceeded {mem_cap_gb:g} GB resident after {elapsed:.1f} s"
        elif elapsed > timeout_s:
            why = f"exceeded {timeout_s:g} s"
        if why:
            os.kill(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            return {"stopped": why, "peak_gb": peak, "where": _where(err)}
        time.sleep(POLL_S)
    out, err = proc.communicate()
    if proc.returncode != 0:
        tail = " ".join(err.strip().splitlines()[-1:]) if err.strip() else f"exit {proc.returncode}"
        if "MemoryError" in err or "std::bad_alloc" in err or "Cannot allocate" in err:
            return {"stopped": f"exceeded the address-space cap ({(cap / 2**30):.0f} GB): {tail}", "peak_gb": peak}
        return {"stopped": f"failed: {tail}", "peak_gb": peak}
    data = json.loads(out.strip().splitlines()[-1])
    data["peak_gb"] = max(peak, data["maxrss_gb"])
    data["process_s"] = time.perf_counter() - t0
    return data


def _stage(row: str, distinct: bool, path: Path) -> float:
    """Write the row's stage (its pairs made distinct when asked) to ``path``; seconds taken."""
    pairs, per, _, _ = ROWS[row]
    t0 = time.perf_counter()
    stage = M.scale_stage(pairs, per_articulation=per)
    if distinct:
        distinct_pairs(stage)
    from mimic_ext.schema.stage_io import save_layer_atomically

    save_layer_atomically(stage.GetRootLayer(), path)
    return time.perf_counter() - t0


def growth_exponent(joints: list[int], seconds: list[float]) -> float:
    """Least-squares slope of log(seconds) against log(joints): 1 for cost linear in joints."""
    return float(np.polyfit(np.log(joints), np.log(seconds), 1)[0])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", nargs="*", default=list(ROWS), choices=list(ROWS))
    ap.add_argument("--engine", default="warp")
    ap.add_argument("--mem-cap-gb", type=float, default=4.0, help="kill a sweep whose resident memory passes this")
    ap.add_argument(
        "--timeout",
        type=float,
        help="kill a sweep running longer (s; default: 6 x the row's target, 30 s at least, 120 s at most)",
    )
    ap.add_argument("--distinct", action="store_true", help="also run every row on a stage whose pairs all differ")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.engine, args.timeout or 120.0)
        return 0
    with tempfile.TemporaryDirectory(prefix="fet022_scale_") as tmp:
        warm = Path(tmp) / "warm.usda"
        M.scale_stage(2, out=warm)
        warmed = watched(warm, args.engine, args.mem_cap_gb, 300.0)  # Warp kernel cache warm
        if "stopped" in warmed:
            print(f"the warm-up sweep on 2 pairs failed: {warmed['stopped']}")
            return 1
        print(
            f"FET022 sweep ({args.engine} engine, default configuration), one fresh process per row, killed past "
            f"{args.mem_cap_gb:g} GB resident or its time cap; phases in s (open, validate = the validator, "
            f"checks = stage checks and discovery, read = the solver's stage read and parts, build = models, "
            f"simulate = stepping, judge = the verdicts)"
        )
        cpu: dict[bool, dict[int, float]] = {False: {}, True: {}}
        for row in args.rows:
            pairs, per, wall_target, mem_target = ROWS[row]
            layout = "one articulation" if per >= pairs else f"{-(-pairs // per)} articulations"
            timeout = args.timeout or min(120.0, max(30.0, 6.0 * (wall_target or 20.0)))
            for distinct in [False, True] if args.distinct else [False]:
                path = Path(tmp) / f"scale_{row}{'_distinct' if distinct else ''}.usda"
                made = _stage(row, distinct, path)
                label = (
                    f"{2 * pairs:>6} joints ({pairs} {'distinct ' if distinct else ''}pairs, {layout}; "
                    f"stage written in {made:.1f} s):"
                )
                res = watched(path, args.engine, args.mem_cap_gb, timeout)
                targets = (
                    ", ".join(
                        ([f"target < {wall_target:g} s"] if wall_target else [])
                        + ([f"< {mem_target:g} GB"] if mem_target else [])
                    )
                    or "no target"
                )
                if "stopped" in res:
                    print(
                        f"{label} {res['stopped']} (peak resident {res['peak_gb']:.2f} GB; {targets}): NOT met",
                        flush=True,
                    )
                    if res.get("where"):
                        print(f"    stopped in {res['where']}", flush=True)
                    continue
                met = (wall_target is None or res["wall_s"] < wall_target) and (
                    mem_target is None or res["peak_gb"] < mem_target
                )
                verdict = "" if wall_target is None and mem_target is None else (": met" if met else ": NOT met")
                c = res["counts"]
                shared = (
                    f"; {c['parts']} parts, {c['parts_simulated']} simulated, {c['models']} models"
                    if "models" in c
                    else ""
                )
                print(
                    f"{label} {res['status']}, {res['passed']}/{res['followers']} followers pass, "
                    f"{res['num_envs']} environments{shared}; run() {res['wall_s']:.2f} s, {res['cpu_s']:.2f} s CPU (process "
                    f"{res['process_s']:.1f} s), peak resident {res['peak_gb']:.2f} GB ({targets}){verdict}",
                    flush=True,
                )
                t = res["timings"]
                print(
                    "    phases: " + ", ".join(f"{k[:-2]} {v:.2f}" for k, v in t.items() if k != "total_s"), flush=True
                )
                if per == 1:
                    cpu[distinct][2 * pairs] = res["cpu_s"]
        for distinct, rows in cpu.items():
            if len(rows) < 2:
                continue
            joints = sorted(rows)
            base = rows[joints[0]] / joints[0]
            per_joint = ", ".join(f"{j}: {1e3 * rows[j] / j:.2f} ms ({rows[j] / j / base:.2f}x)" for j in joints)
            print(
                f"{'distinct' if distinct else 'copied'} pairs, CPU time of run() per joint: {per_joint}; growth exponent "
                f"{growth_exponent(joints, [rows[j] for j in joints]):.2f} (1 = linear)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
