"""Process time of a one-stage ``mimic-ext sweep`` against another checkout (issue 43).

    python benchmarks/sweep_startup.py --against CHECKOUT [--rounds 7] [--engines warp,newton]
                                       [--stage data/geared_pair.usda] [--bytecode]
    python benchmarks/sweep_startup.py --floor [--inline] [--rounds 9] [--bytecode] [--checkout DIR]

A one-stage sweep simulates for milliseconds; the rest of its second or two is the interpreter,
imports and set-up, which is what this measures. Each round runs ``python -m mimic_ext sweep
STAGE --engine E`` once with this checkout and once with ``--against`` first on PYTHONPATH
(alternating which goes first, so machine load hits both alike), in a fresh process from a
temporary folder. Printed per engine: medians (and minimum) over the rounds of the CPU time
(user + system of the CLI process and the children it waited for, from ``os.wait4``: a physx,
newton or mujoco sweep's worker is forked by multiprocessing's forkserver and not counted, so
read its wall time too) and of the wall time, and the ratios this / against.

``--against`` is a checkout of the tree before the change, e.g. made with ``git archive REF |
tar -x -C DIR`` (never edited). Python writes no bytecode where ``PYTHONDONTWRITEBYTECODE`` is
set (the shared machine sets it), so every run compiles the project's modules from source;
``--bytecode`` lets both sides cache it in a temporary ``PYTHONPYCACHEPREFIX`` (a user's install).

``--floor`` (this checkout, or ``--checkout DIR``; no ``--against``): what a warp sweep's process
time is made of, as fresh processes that each do a prefix of its start-up and end the way the CLI
does (``os._exit``, no interpreter teardown), interleaved over the rounds; each row's increment is the difference of
medians: the interpreter, the peers' imports (numpy, Warp, the pxr modules a sweep loads) with
Warp's init, the solver's kernel namespace and Warp's module hash (``solver_kernels_cached``, the
call a sweep makes before its first launch), the imports of NVIDIA's phase (``available()``), the
other modules the sweep loads (listed by one untimed sweep: the standard library's and other
packages', then mimic_ext's), the stage opened and its relations read, our solver's first step on
it, NVIDIA's phase on warp, and the whole sweep. ``--floor --inline``: the same steps timed one
after the other (``time.process_time()`` between them) in one fresh process per round, with our
port's sweep (``--no-simready``) before NVIDIA's phase as the CLI runs them: a finer split than
the differences of medians of separate processes, whose noise on a busy machine is 0.02-0.05 s.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(
    checkout: Path, argv: list[str], env_extra: dict[str, str], code: str | None = None
) -> tuple[int, float, float]:
    """(exit code, wall s, CPU s) of ``python -m mimic_ext ARGV`` (``python -c CODE`` when given) with
    ``checkout`` first on the path."""
    env = {**os.environ, **env_extra, "PYTHONPATH": os.pathsep.join([str(checkout), os.environ.get("PYTHONPATH", "")])}
    if "PYTHONPYCACHEPREFIX" in env_extra:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.perf_counter()
    p = subprocess.Popen(  # outside any checkout: ``-m`` puts the working folder first on the path
        [sys.executable, "-m", "mimic_ext", *argv] if code is None else [sys.executable, "-c", code],
        env=env,
        cwd=tempfile.gettempdir(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


#: a warp sweep's start-up, prefix by prefix: each step's code runs after the ones above it
FLOOR_STEPS = (
    (
        "interpreter (python -c, site)",
        "import gc, os\ngc.disable()  # as the CLI holds it off while a sweep starts\n"
        "try:  # and asks for one OpenBLAS thread before numpy loads (a checkout that has blas_threads)\n"
        "    from mimic_ext.blas_threads import one_thread_unless_set\n"
        "    one_thread_unless_set()\n"
        "except ImportError:\n"
        "    pass",
    ),
    (
        "numpy, Warp, the pxr modules a sweep loads; Warp's init",
        "import numpy, pxr.Usd, pxr.UsdGeom, pxr.UsdPhysics, pxr.UsdShade\n"
        "from mimic_ext.warp_runtime import init_warp\ninit_warp()",
    ),
    (
        "mimic_ext.solver's import (ours: the model, the schema package, the kernels' modules)",
        "import mimic_ext.solver",
    ),
    (
        "the solver's kernel namespace and Warp's module hash (Warp parses and hashes each function)",
        "from mimic_ext.warp_runtime import solver_kernels_cached\nsolver_kernels_cached('cpu')",
    ),
    (
        "NVIDIA's phase's imports (simready_benchmark, tier-core)",
        "from mimic_ext.simready.verdicts import available\navailable()",
    ),
    (
        "the other modules a sweep loads that are not mimic_ext's (standard library and other packages')",
        "import importlib\nfor _m in OTHERS:\n    try:\n        importlib.import_module(_m)\n"
        "    except Exception:\n        pass",
    ),
    (
        "mimic_ext's other modules a sweep loads (the CLI, FET022's runner, warp engine, reports; colliders)",
        "for _m in OURS:\n    importlib.import_module(_m)",
    ),
    (
        "the stage opened and its relations read (USD parses it; its schema registry is built on first use)",
        "from mimic_ext.schema import open_stage, read_relations\n_st = open_stage(STAGE).stage\nread_relations(_st)",
    ),
    (
        "our solver's first step on it (a model; Warp loads the cached kernels' binary)",
        "from mimic_ext.solver import Solver, build_model\n_md = build_model(_st, fix_base=True, contacts=False)\n"
        "_x = _md.state()\nSolver(_md).step(_x, _x, _md.control(), 1.0 / 240.0)",
    ),
    (
        "NVIDIA's phase on warp (its scene checks, its model, 720 steps)",
        "from mimic_ext.simready.phase import run_nvidia_mimic\nrun_nvidia_mimic(STAGE, 'warp')",
    ),
)

#: one untimed warp sweep in a process that then prints its modules in the order they were
#: imported: the FLOOR_STEPS' ``OURS`` (mimic_ext's) and ``OTHERS``
_LOADED = (
    "import sys, io, contextlib\nfrom mimic_ext.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n    main(['sweep', {stage!r}, '--engine', 'warp'])\n"
    "print(repr(list(sys.modules)))"
)


def _loaded_modules(checkout: Path, stage: Path) -> tuple[list[str], list[str]]:
    """(mimic_ext's, the others') modules a warp sweep of ``stage`` loads, in import order."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", _LOADED.format(stage=str(stage))],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=True,
    )
    names = [m for m in ast.literal_eval(out.stdout.strip().splitlines()[-1]) if m != "__main__"]
    ours = [m for m in names if m == "mimic_ext" or m.startswith("mimic_ext.")]
    return ours, [m for m in names if m not in ours]


def _floor(checkout: Path, stage: Path, rounds: int, env_extra: dict[str, str]) -> None:
    """Print the medians of each start-up prefix (``FLOOR_STEPS``, then the whole sweep) and the increments."""
    ours, others = _loaded_modules(checkout, stage)
    head = f"STAGE = {str(stage)!r}\nOURS = {ours!r}\nOTHERS = {others!r}\n"
    runs = []
    for i in range(len(FLOOR_STEPS)):
        code = head + "\n".join(c for _, c in FLOOR_STEPS[: i + 1]) + "\nos._exit(0)"
        runs.append((FLOOR_STEPS[i][0], [], code))
    runs.append(
        (
            "the rest of the sweep (ours: argparse, checks, validation, plan, models, simulation, reports)",
            ["sweep", str(stage), "--engine", "warp"],
            None,
        )
    )
    for _, argv, code in runs:  # untimed: Warp's kernel cache, the bytecode
        _run(checkout, argv, env_extra, code)
    cpu: list[list[float]] = [[] for _ in runs]
    for r in range(rounds):
        order = list(range(len(runs))) if r % 2 == 0 else list(range(len(runs)))[::-1]
        for i in order:
            rc, _, c = _run(checkout, runs[i][1], env_extra, runs[i][2])
            if rc != 0:
                raise SystemExit(f"{runs[i][0]}: exit code {rc}")
            cpu[i].append(c)
    before = 0.0
    for (label, _, _), xs in zip(runs, cpu):
        m = statistics.median(xs)
        print(f"  {m:.3f} s CPU cumulative, +{m - before:.3f} s  {label}")
        before = m


def _inline(checkout: Path, stage: Path, rounds: int, env_extra: dict[str, str]) -> None:
    """``--floor --inline``: each round one fresh process does the steps one after the other and
    stamps ``time.process_time()`` between them: ``FLOOR_STEPS`` but NVIDIA's phase, then our
    port's sweep (``main([... '--no-simready'])``, in the process that already did all that), then
    NVIDIA's phase. Medians of each step's CPU, and of the whole process's (``os.wait4``)."""
    ours, others = _loaded_modules(checkout, stage)
    sweep = (
        "import io as _io, contextlib as _cl\nfrom mimic_ext.cli import main as _main\n"
        "with _cl.redirect_stdout(_io.StringIO()), _cl.redirect_stderr(_io.StringIO()):\n"
        "    _main(['sweep', STAGE, '--engine', 'warp', '--no-simready'])"
    )
    steps = [
        *FLOOR_STEPS[:-1],
        ("our port's sweep after those (argparse, checks, validation, plan, model, simulation, report)", sweep),
        FLOOR_STEPS[-1],
    ]
    lines = [
        f"STAGE = {str(stage)!r}\nOURS = {ours!r}\nOTHERS = {others!r}",
        "import time as _time",
        "_t = [_time.process_time()]",
    ]
    for _, c in steps:
        lines += [c, "_t.append(_time.process_time())"]
    lines.append("os.write(1, repr(_t).encode())\nos._exit(0)")
    code = "\n".join(lines)
    env = {**os.environ, **env_extra, "PYTHONPATH": os.pathsep.join([str(checkout), os.environ.get("PYTHONPATH", "")])}
    if "PYTHONPYCACHEPREFIX" in env_extra:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    per_step: list[list[float]] = [[] for _ in range(len(steps) + 1)]
    total: list[float] = []
    for r in range(rounds + 1):  # the first untimed: Warp's kernel cache, the bytecode
        p = subprocess.Popen(
            [sys.executable, "-c", code],
            env=env,
            cwd=tempfile.gettempdir(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        out = p.stdout.read() if p.stdout else b""
        _, status, usage = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"--inline: exit code {os.waitstatus_to_exitcode(status)}")
        stamps = ast.literal_eval(out.decode())
        if r == 0:
            continue
        per_step[0].append(stamps[0])
        for i in range(1, len(stamps)):
            per_step[i].append(stamps[i] - stamps[i - 1])
        total.append(usage.ru_utime + usage.ru_stime)
    labels = [
        "interpreter (python -c, site), before the first line",
        "gc.disable(), one OpenBLAS thread (as the checkout's CLI does)",
        *(label for label, _ in steps[1:]),
    ]
    for label, xs in zip(labels, per_step):
        print(f"  {statistics.median(xs):.3f} s CPU  {label}")
    print(f"  {statistics.median(total):.3f} s CPU  the whole process (os.wait4)")


def _med(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f} s (min {min(xs):.3f})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=Path, help="the checkout to compare with (the tree before)")
    ap.add_argument("--floor", action="store_true", help="what this checkout's warp sweep is made of (no --against)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--engines", default="warp", help="comma-separated; each timed on its own")
    ap.add_argument("--stage", type=Path, default=ROOT / "data" / "geared_pair.usda")
    ap.add_argument("--bytecode", action="store_true", help="let Python cache bytecode (a temporary prefix)")
    ap.add_argument(
        "--inline",
        action="store_true",
        help="with --floor: the steps timed one after the other in one process each round",
    )
    ap.add_argument(
        "--checkout",
        type=Path,
        default=ROOT,
        help="with --floor: the checkout whose start-up is split (default: this one)",
    )
    args = ap.parse_args(argv)
    if (args.against is None) != args.floor:
        ap.error("give --against CHECKOUT or --floor")
    sides = {"this": ROOT} if args.floor else {"this": ROOT, "against": args.against.resolve()}
    with tempfile.TemporaryDirectory(prefix="sweep_startup_") as tmp:
        extra = {label: {} for label in sides}
        if args.bytecode:
            extra = {label: {"PYTHONPYCACHEPREFIX": str(Path(tmp) / label)} for label in sides}
        print(
            f"`python -m mimic_ext sweep {args.stage.name} --engine E`, a fresh process each, {args.rounds} "
            f"interleaved rounds; "
            + (
                "bytecode cached (PYTHONPYCACHEPREFIX, PYTHONDONTWRITEBYTECODE unset)"
                if args.bytecode
                else f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}"
            )
            + f"; load average "
            f"{os.getloadavg()[0]:.1f} at the start"
        )
        if args.floor and args.inline:
            _inline(args.checkout.resolve(), args.stage.resolve(), args.rounds, extra["this"])
            print(f"load average {os.getloadavg()[0]:.1f} at the end")
            return 0
        if args.floor:
            _floor(args.checkout.resolve(), args.stage.resolve(), args.rounds, extra["this"])
            print(f"load average {os.getloadavg()[0]:.1f} at the end")
            return 0
        for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
            cmd = ["sweep", str(args.stage.resolve()), "--engine", engine]
            for label, checkout in sides.items():  # untimed: Warp's kernel cache, the bytecode
                _run(checkout, cmd, extra[label])
            got: dict[str, dict[str, list[float]]] = {label: {"wall": [], "cpu": []} for label in sides}
            codes: dict[str, set[int]] = {label: set() for label in sides}
            for r in range(args.rounds):
                order = list(sides) if r % 2 == 0 else list(sides)[::-1]
                for label in order:
                    code, wall, cpu = _run(sides[label], cmd, extra[label])
                    codes[label].add(code)
                    got[label]["wall"].append(wall)
                    got[label]["cpu"].append(cpu)
            cpu_ratio = statistics.median(got["this"]["cpu"]) / statistics.median(got["against"]["cpu"])
            wall_ratio = statistics.median(got["this"]["wall"]) / statistics.median(got["against"]["wall"])
            for label in sides:
                print(
                    f"  {engine:7s} {label:8s} CPU {_med(got[label]['cpu'])}, wall {_med(got[label]['wall'])}, "
                    f"exit codes {sorted(codes[label])}"
                )
            print(f"  {engine:7s} this / against: CPU {cpu_ratio:.2f}, wall {wall_ratio:.2f}", flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
