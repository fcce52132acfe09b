"""NVIDIA's FET022 verdict beside our port's, per asset and engine: the shared robots and samples.

For every robot with mimic relations in ``../shared/assets/mimic_relations.json`` (URDF and MJCF
imported twice: the default schema, NewtonMimicAPI, and ``--schema physx``; the USD assets read as
they are), and with ``--samples`` the project's data/*.usda and data/invalid/*.usda, it runs
NVIDIA's MIM phase (``mimic_ext.simready.run_nvidia_mimic``: its installed tier-core phase,
unmodified) and our port (``mimic_ext.fet022.run``) on each engine, with each one's default
settings, and prints one Markdown row per stage: NVIDIA's status per engine, ours per engine,
NVIDIA's pairs passed / detected, and the first line of NVIDIA's message where it did not pass.
A verdict that differs between the two is marked ``*``; docs/fet022.md explains each by the
difference (numbered as in its table) that causes it.

    python benchmarks/simready_verdicts.py                   # shared robots, warp and physx
    python benchmarks/simready_verdicts.py --samples --only MIMIC_
    python benchmarks/simready_verdicts.py --engines warp    # our solver only (no ovphysx)
    python benchmarks/simready_verdicts.py --engines mujoco  # MuJoCo (the mujoco extra)
    python benchmarks/simready_verdicts.py --engines newton  # Newton (the newton extra; phase on SolverSteel)

Needs the ``simready`` extra (and ovphysx for physx).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "assets"


def cases(samples: bool) -> list[tuple[str, Path, str | None]]:
    """(label, source file, import schema: "default" / "physx", or None for a USD file)."""
    out: list[tuple[str, Path, str | None]] = []
    listed = json.loads((SHARED / "mimic_relations.json").read_text())
    for rel, entry in listed.items():
        if not entry.get("relations"):
            continue
        src = SHARED / rel
        if entry["format"] in ("URDF", "MJCF"):
            out += [(rel, src, "default"), (rel, src, "physx")]
        else:
            out.append((rel, src, None))
    if samples:
        for p in sorted((ROOT / "data").glob("*.usda")) + sorted((ROOT / "data" / "invalid").glob("*.usda")):
            out.append((str(p.relative_to(ROOT)), p, None))
    return out


def stage_for(src: Path, schema: str | None, tmp: Path) -> Path:
    if schema is None:
        return src
    from mimic_ext.importers import import_robot

    out = tmp / f"{src.stem}_{schema}.usda"
    import_robot(src, out=out, **({} if schema == "default" else {"schema": schema}))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default="warp,physx", help="engines, comma-separated (warp, physx, mujoco, newton)")
    ap.add_argument("--samples", action="store_true", help="also data/*.usda and data/invalid/*.usda")
    ap.add_argument("--only", default="", help="only stages whose label contains this text")
    args = ap.parse_args(argv)

    from mimic_ext.fet022 import get_engine, run
    from mimic_ext.simready import run_nvidia_mimic

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    ours = {e: get_engine(e) for e in engines}
    head = ["stage", "import"] + [f"NVIDIA {e}" for e in engines] + [f"port {e}" for e in engines]
    head += ["NVIDIA pairs passed/detected", "NVIDIA's message (first line)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    t0 = time.perf_counter()
    differ = total = 0
    with tempfile.TemporaryDirectory() as tmpdir:
        for label, src, schema in cases(args.samples):
            if args.only not in label:
                continue
            if not src.is_file():
                print(f"| {label} | {schema or '-'} | absent |", flush=True)
                continue
            try:
                stage = stage_for(src, schema, Path(tmpdir))
            except Exception as exc:  # an import the importer refuses: say so in the row
                print(f"| {label} | {schema} | import refused: {str(exc).splitlines()[0]} |", flush=True)
                continue
            nv = {e: run_nvidia_mimic(stage, e) for e in engines}
            port = {e: run(stage, engine=ours[e], label=e).status for e in engines}
            cells = []
            for e in engines:
                mark = "" if nv[e].status == port[e] else "*"
                differ += bool(mark)
                total += 1
                cells.append(nv[e].status + mark)
            first = nv[engines[0]]
            counts = f"{first.metric('mim_pairs_passed') or 0}/{first.metric('mim_mimic_pairs_detected') or 0}"
            why = next((r.message.strip().splitlines()[0] for r in nv.values() if r.message), "")
            row = [label, schema or "-"] + cells + [port[e] for e in engines] + [counts, why.replace("|", "/")]
            print("| " + " | ".join(row) + " |", flush=True)
    print(
        f"\n{total} stage x engine verdicts, {differ} where NVIDIA's and our port's differ (*); "
        f"{time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
