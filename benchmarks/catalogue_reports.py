"""The summaries of a catalogue run folder at SimReady size: time, peak memory, index page size.

    python benchmarks/catalogue_reports.py [--assets 5000] [--peer 300] [--rounds 3] [--keep DIR]

Builds a synthetic run folder of ``--assets`` assets (one per folder, as SimReady lays them
out): the sample stages of data/ are swept once for real, with their samples, and their stored
results copied under new names, one in 10 made to fail, one in 50 an error, one in 100 a
timeout (failure reasons and worst followers then have something to list). Then, each in a
fresh Python process (so that its peak resident memory, ``VmHWM``, is its own):

* ``write_summaries`` on the whole folder (``mimic-ext report RUN_DIR``): wall time, peak
  resident memory, and the same for a process that only imports the modules (the floor);
  the index page's size. Issue 38's targets: under 30 s and 300 MB, the index under 2 MB.
* at ``--peer`` assets, ``--rounds`` interleaved rounds of the streaming summaries against
  the single-document writers they replace (``write_json``/``write_html``/``write_junit`` on
  the whole run in memory, samples included, as ``sweep --report`` wrote before): median
  wall times and peak memory, printed as ratios (the old writers at 5,000 assets took 233 s
  and 1 GB for the JSON alone, too long to repeat here).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

#: peak resident memory of this process in kB: the kernel's high-water mark (VmHWM) of this
#: program, not ru_maxrss, which Linux carries over from the parent forked before exec
HWM = """
def _hwm():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
"""
CHILD_STREAM = (
    HWM
    + """
import sys, time
from mimic_ext.fet022.reports.catalogue import write_summaries
t, c = time.perf_counter(), time.process_time()
out = write_summaries(sys.argv[1])
print(time.process_time() - c, time.perf_counter() - t, _hwm())
"""
)
CHILD_FLOOR = (
    HWM
    + """
import time
from mimic_ext.fet022.reports.catalogue import write_summaries
from mimic_ext.fet022.reports import write_json, write_html, write_junit
print(0.0, 0.0, _hwm())
"""
)
CHILD_OLD = (
    HWM
    + """
import sys, time
from pathlib import Path
from mimic_ext.fet022.reports import write_json, write_html, write_junit
from mimic_ext.fet022.result import RunResult
from mimic_ext.fet022.store import read_manifest, stored_stages
t, c = time.perf_counter(), time.process_time()
stages = [st for _, st in stored_stages(sys.argv[1]) if st is not None]
run = RunResult(stages=stages, config=read_manifest(sys.argv[1])["config"])
out = Path(sys.argv[2])
write_json(run, out / "r.json"); write_html(run, out / "r.html"); write_junit(run, out / "r.xml")
print(time.process_time() - c, time.perf_counter() - t, _hwm())
"""
)


def _child(code: str, *args: str) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, peak resident MB) of ``code`` run in a fresh interpreter (CPU time:
    on a shared machine less disturbed by other jobs than wall time)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True)
    cpu, wall, rss_kb = out.stdout.split()[-3:]
    return float(cpu), float(wall), float(rss_kb) / 1024


def _variants(seed_records: list[dict], n: int):
    """``n`` stored records from the real ones: renamed, some made to fail, error or time out."""
    for i in range(n):
        record = json.loads(json.dumps(seed_records[i % len(seed_records)]))
        res = record["result"]
        if i % 100 == 7:
            res.update(
                status="timeout",
                followers=[],
                references=[],
                reason="not finished within the per-asset timeout of 300 s (sweep --timeout)",
            )
        elif i % 50 == 3:
            res.update(
                status="error",
                followers=[],
                references=[],
                reason=f"cat/robot_{i:05d}/robot.usda: cannot be read as USD",
            )
        elif i % 10 == 1 and res["followers"]:
            f = res["followers"][0]
            f["status"] = "fail"
            f["ratio_error_relative"] = 0.2 + (i % 97) / 100
            f["messages"] = [f"motion ratio {1 + (i % 13) / 10:.3f} differs from |gearing| 1 by more than 0.1"]
            res["status"] = "fail"
        yield f"cat/robot_{i:05d}/robot.usda", record


def build(folder: Path, n: int) -> None:
    """A run folder of ``n`` synthetic assets (see the module docs)."""
    from mimic_ext.fet022 import run_folder
    from mimic_ext.fet022.batch import sweep_paths
    from mimic_ext.fet022.store import MANIFEST_FORMAT, RunStore

    seed_dir = folder.parent / "seed"
    sweep_paths([ROOT / "data"], jobs=1, store=seed_dir)
    seed_records = [json.loads(p.read_text()) for p in sorted(seed_dir.rglob("mimic_ext/*/*.json"))]
    store = RunStore(folder, str(folder / "content"))
    units = []
    for asset, record in _variants(seed_records, n):
        key = asset
        record["result"]["asset"] = asset
        path = store.own_path(key, "warp")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record), encoding="utf-8")  # plain writes: building is not measured
        units.append({"asset": asset, "path": str(folder / "content" / asset), "key": key, "engine": "warp"})
    manifest = {
        "format": MANIFEST_FORMAT,
        "tool": {"name": "mimic-ext", "version": "bench"},
        "started": "2026-01-01T00:00:00Z",
        "finished": "2026-01-01T01:00:00Z",
        "content_root": store.root,
        "config": seed_records[0]["config"],
        "engines": ["warp"],
        "units": units,
        "run": {"wall_s": 3600.0, "jobs": 16, "executor": "dask", "retried": 0, "reused": 0},
    }
    run_folder.write_json(folder / "mimic_ext_run.json", manifest)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--assets", type=int, default=5000)
    ap.add_argument("--peer", type=int, default=300, help="assets of the comparison with the old writers (0: none)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", metavar="DIR", help="build in DIR and leave it there")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="catalogue-bench-"))
    try:
        big = work / "run"
        t = time.perf_counter()
        build(big, args.assets)
        print(f"built a {args.assets}-asset run folder in {time.perf_counter() - t:.1f} s: {big}")
        floor_mb = _child(CHILD_FLOOR)[2]
        cpu, seconds, mb = _child(CHILD_STREAM, str(big))
        index = big / "fet022_report.html"
        print(
            f"summaries of {args.assets} assets: {seconds:.1f} s wall ({cpu:.1f} s CPU), peak resident {mb:.0f} MB "
            f"(imports alone {floor_mb:.0f} MB; targets 30 s, 300 MB)"
        )
        print(
            f"index page {index.stat().st_size / 1e6:.2f} MB (target 2 MB); JSON "
            f"{(big / 'fet022_report.json').stat().st_size / 1e6:.1f} MB; JUnit "
            f"{(big / 'fet022_junit.xml').stat().st_size / 1e6:.1f} MB; "
            f"{len(list((big / 'fet022_assets').iterdir()))} asset pages"
        )
        if args.peer:
            small = work / "peer"
            build(small, args.peer)
            new, old = [], []
            for _ in range(args.rounds):  # interleaved rounds
                new.append(_child(CHILD_STREAM, str(small)))
                out = work / "old"
                out.mkdir(exist_ok=True)
                old.append(_child(CHILD_OLD, str(small), str(out)))
            nc, nw, nm = (statistics.median(x[k] for x in new) for k in range(3))
            oc, ow, om = (statistics.median(x[k] for x in old) for k in range(3))
            print(
                f"at {args.peer} assets, medians of {args.rounds} interleaved rounds: streaming summaries "
                f"{nc:.2f} s CPU ({nw:.2f} s wall), {nm:.0f} MB; single-document writers {oc:.2f} s CPU "
                f"({ow:.2f} s wall), {om:.0f} MB; streaming/old: CPU {nc / oc:.2f}, memory {nm / om:.2f}"
            )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
