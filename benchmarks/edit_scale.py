"""Wall and CPU time of ``mimic-ext export`` and ``mimic-ext convert`` on large stages (issue 43).

    python benchmarks/edit_scale.py [--export-joints 10000] [--convert-joints 56000]
                                    [--against CHECKOUT] [--keep DIR] [--timeout S]

Stages from ``benchmarks/mechanisms.scale_stage``, ``--export-joints`` or ``--convert-joints``
revolute joints in two-joint articulations (``sweep_scale.py``'s ``10000`` row: every second joint
a mimic follower), the first written as .usda and exported to URDF, the second as .usdc (the .usda
of 56,000 joints passes the 64 MiB cap on a text layer) converted to NewtonMimicAPI into another
file. Issue 43's targets: export of 10,000
joints under 30 s (it did not finish in 300 s), convert of 56,000 under 60 s (246 s).

Each command runs in a fresh process (``python -m mimic_ext``), wall time and the child's CPU
time (user + system, from ``os.wait4``: on a shared machine less disturbed than wall time) are
printed. ``--against CHECKOUT`` runs the same command with another checkout first on PYTHONPATH
(e.g. ``/work/main``), interleaved with this one, and prints the ratio of CPU times. A run past
``--timeout`` is killed and printed as such. ``--keep DIR`` keeps (and reuses) the stages there:
building 28,000 pairs takes minutes.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
TARGETS_S = {"export": 30.0, "convert": 60.0}


def _stage(folder: Path, kind: str, joints: int) -> Path:
    """The benchmark stage (made once per folder)."""
    from pxr import Sdf

    from benchmarks import mechanisms as M

    pairs = joints // 2
    path = folder / (f"export_{joints}.usda" if kind == "export" else f"convert_{joints}.usdc")
    if not path.exists():
        stage = M.scale_stage(pairs, per_articulation=1)
        layer = Sdf.Layer.CreateAnonymous(".usdc" if path.suffix == ".usdc" else ".usda")
        layer.TransferContent(stage.GetRootLayer())
        layer.Export(str(path))
    return path


def _run(checkout: Path, argv: list[str], timeout: float) -> tuple[str, float, float]:
    """(status, wall s, child CPU s) of ``python -m mimic_ext ARGV`` with ``checkout`` first on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(checkout), os.environ.get("PYTHONPATH", "")])}
    t0 = time.perf_counter()
    p = subprocess.Popen(  # run outside any checkout: ``-m`` puts the working folder first on the path
        [sys.executable, "-m", "mimic_ext", *argv],
        env=env,
        cwd=tempfile.gettempdir(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    status = "ok"
    deadline = t0 + timeout
    while True:
        pid, code, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            p.send_signal(signal.SIGKILL)
            pid, code, usage = os.wait4(p.pid, 0)
            status = f"killed after {timeout:g} s"
            break
        time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(code)
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    if status == "ok" and p.returncode != 0:
        status = f"exit {p.returncode}: {err.strip().splitlines()[-1] if err.strip() else ''}"
    return status, time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--export-joints", type=int, default=10_000)
    ap.add_argument("--convert-joints", type=int, default=56_000)
    ap.add_argument("--against", type=Path, help="another checkout to time the same commands with (e.g. /work/main)")
    ap.add_argument("--keep", type=Path, help="keep the stages in this folder (and reuse them)")
    ap.add_argument("--timeout", type=float, default=600.0, help="kill a command running longer (s)")
    ap.add_argument("--rows", nargs="*", default=["export", "convert"], choices=["export", "convert"])
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="edit_scale_") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        out = Path(tmp)
        rows = {}
        if "export" in args.rows:
            rows["export"] = ["export", str(_stage(folder, "export", args.export_joints)), "-o", str(out / "x.urdf")]
        if "convert" in args.rows:
            stage = _stage(folder, "convert", args.convert_joints)
            rows["convert"] = ["convert", str(stage), "--to", "newton", "-o", str(out / "x.usdc")]
        joints = {"export": args.export_joints, "convert": args.convert_joints}
        print(f"fresh `python -m mimic_ext` per command; load average {os.getloadavg()[0]:.1f} at the start")
        for name, cmd in rows.items():
            peers = [("this", ROOT)] + ([("against", args.against)] if args.against else [])
            got = {}
            for label, checkout in peers if name == "export" else peers[::-1]:  # interleaved order
                got[label] = _run(checkout, cmd, args.timeout)
            status, wall, cpu = got["this"]
            line = (
                f"{name} {joints[name]:,} joints: {wall:.1f} s wall, {cpu:.1f} s CPU ({status}; "
                f"target < {TARGETS_S[name]:g} s)"
            )
            if args.against:
                s2, w2, c2 = got["against"]
                line += f"; {args.against}: {w2:.1f} s wall, {c2:.1f} s CPU ({s2})"
                if s2 == "ok":
                    line += f"; CPU ratio this/against {cpu / c2:.2f}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
