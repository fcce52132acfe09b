"""The summaries of a run folder, built from the stored results (``store``), one asset at a time.

A catalogue of thousands of assets cannot be one page of inline plots or one JSON held in
memory. So the summaries are written streaming: each asset's results are read, its own page
written (tables and plots: the only place plots are), and what the summaries need kept as a
few small numbers; the parts of each summary go to temporary files and are joined at the end.
Memory is bounded by one asset's results (with their samples) plus a row of text per asset.

Written (``write_summaries``; ``mimic-ext report RUN_DIR`` runs it on its own):

* ``fet022_report.html``: the index: counts by status and engine, failure reasons, the worst
  followers, the unjudged units, a table of every asset linked to its page (a run of at most
  ``INLINE_ASSETS`` assets also has each asset's section inline, as the single-page report);
* ``fet022_assets/<n>.html``: one page per asset;
* ``fet022_report.json``: the JSON report (``report.schema.json``) without samples, plus a
  ``catalogue`` section (reused, retried, workers lost, unjudged);
* ``fet022_junit.xml``: one suite per stage and engine.
"""

from __future__ import annotations

import datetime as _dt
import heapq
import itertools
import json
import os
import re
import shutil
import socket
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from ... import __version__
from ...atomic_write import write_atomically
from ..identity import TEST_NAME
from ..result import ERROR, FAIL, STATUSES, TIMEOUT, RunResult, SweepResult, decided_exit_code, finite_or_none
from ..store import read_manifest, stored_stages
from .common import num, worst_status
from .headline import headlines
from .html import CSS, _badge, _path, asset_page, stage_section
from .json_report import conformance, disagreement_data, report_identity
from .junit import _suite

#: a run of at most this many assets also gets every asset's section on the index page
INLINE_ASSETS = 20
#: rows of the worst-followers table
WORST = 25
#: failure reasons listed on the index (the rest counted as "other")
REASONS = 30
NAMES = {"json": "fet022_report.json", "junit": "fet022_junit.xml", "html": "fet022_report.html"}
ASSETS_DIR = "fet022_assets"
NOT_STORED = "not stored: the run ended before this unit finished"


def reason_class(text: str, asset: str = "") -> str:
    """A failure reason with what differs between assets taken out (the asset's path, prim paths,
    numbers), so that one cause is counted once across a catalogue."""
    if asset:
        text = re.sub(r"(/[\w.-]+)*/" + re.escape(asset.lstrip("/")), "<asset>", text) if "/" in asset else text
        text = text.replace(asset, "<asset>")
    text = re.sub(r"(?<![\w>])/[\w./-]+", "<path>", text)
    text = re.sub(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?", "#", text)
    return text.strip()[:160]


@dataclass
class _Tally:
    """What the summaries need of the assets read so far: small, whatever the catalogue's size."""

    engines: list[str]
    by_status: Counter = field(default_factory=Counter)  # (engine, status) -> stages
    summary: Counter = field(default_factory=Counter)
    reasons: Counter = field(default_factory=Counter)
    example: dict[str, tuple[str, int]] = field(default_factory=dict)  # reason -> (asset, page)
    worst: list[tuple[float, int, dict[str, Any]]] = field(default_factory=list)
    unjudged: list[dict[str, str]] = field(default_factory=list)
    assets: int = 0
    exit_code: int = 0
    statuses: set = field(default_factory=set)
    versions: dict[str, str] = field(default_factory=dict)
    seq: itertools.count = field(default_factory=itertools.count)

    #: NVIDIA's verdicts, (asset, engine) -> status, and ``--strict``: the run's exit code follows
    #: them where they ran (``RunResult.decided_exit_code``)
    nvidia: dict[tuple[str, str], str] = field(default_factory=dict)
    strict: bool = False
    decided: int = 0

    def add(self, asset: str, page: int, stages: dict[str, SweepResult]) -> None:
        self.assets += 1
        part = RunResult(stages=list(stages.values())).summary()
        self.summary.update(part)
        for e, st in stages.items():
            self.by_status[(e, st.status)] += 1
            self.statuses.add(st.status)
            self.exit_code = max(self.exit_code, st.exit_code)
            self.decided = max(self.decided, decided_exit_code(st, self.nvidia.get((asset, e)), self.strict))
            self.versions = self.versions or dict(st.versions)
            causes = []
            if st.status in (ERROR, TIMEOUT) or (st.status == FAIL and not st.followers):
                causes.append(f"{st.status}: {reason_class(st.reason, asset)}")
            for f in st.followers:
                if f.status in (FAIL, ERROR):
                    causes.append(f"{f.status}: {reason_class(f.messages[0] if f.messages else 'no message', asset)}")
                rel = f.ratio_error_relative
                if f.measured and rel == rel:  # NaN-safe: only measured, finite errors rank
                    row = {
                        "asset": asset,
                        "page": page,
                        "engine": e,
                        "follower": f.follower,
                        "gearing": f.abs_gearing,
                        "motion_ratio": f.motion_ratio,
                        "error_relative": rel,
                        "status": f.status,
                    }
                    item = (rel, next(self.seq), row)
                    if len(self.worst) < WORST:
                        heapq.heappush(self.worst, item)
                    elif rel > self.worst[0][0]:
                        heapq.heapreplace(self.worst, item)
            for c in dict.fromkeys(causes):
                self.reasons[c] += 1
                self.example.setdefault(c, (asset, page))


class _Parts:
    """Temporary files in the output folder that the summaries are assembled from."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.dir = Path(tempfile.mkdtemp(prefix=".fet022-summary-", dir=folder))
        self.files: dict[str, Any] = {}

    def write(self, name: str, text: str) -> None:
        fh = self.files.get(name)
        if fh is None:
            fh = self.files[name] = open(self.dir / name, "w", encoding="utf-8")
        fh.write(text)

    def copy_into(self, name: str, out) -> None:
        fh = self.files.get(name)
        if fh is None:
            return
        fh.flush()
        with open(self.dir / name, encoding="utf-8") as src:
            shutil.copyfileobj(src, out)

    def close(self) -> None:
        for fh in self.files.values():
            fh.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def _assets(folder: str | os.PathLike):
    """(asset, engine -> stored result, units not stored) per asset, in run order."""
    for asset, group in itertools.groupby(stored_stages(folder), key=lambda pair: pair[0]["asset"]):
        stages: dict[str, SweepResult] = {}
        missing = []
        for unit, st in group:
            if st is None:
                missing.append(unit)
            else:
                stages[unit["engine"]] = st
        yield asset, stages, missing


def _row(asset: str, href: str, stages: dict[str, SweepResult], engines: list[str]) -> str:
    cells = "".join(f"<td>{_badge(stages[e].status) if e in stages else '-'}</td>" for e in engines)
    followers = max((len(s.followers) for s in stages.values()), default=0)
    failed = sum(s.counts()[FAIL] for s in stages.values())
    note = "; ".join(escape(s.reason) for s in stages.values() if s.reason)
    return (
        f'<tr><td><a href="{escape(href)}">{_path(asset)}</a></td>{cells}<td class="num">{followers}</td>'
        f'<td class="num">{failed}</td><td>{note}</td></tr>\n'
    )


def write_summaries(
    folder: str | os.PathLike,
    json_path: str | os.PathLike | None = None,
    junit_path: str | os.PathLike | None = None,
    html_path: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """Write the summaries of the run folder ``folder`` from its stored results (paths default to
    ``NAMES`` in ``folder``; the asset pages go beside the HTML). Returns the paths written, the
    counts and the run's exit code (2 when a unit is unjudged)."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    run_info = manifest.get("run") or {}
    config = manifest.get("config") or {}
    engines = list(manifest.get("engines") or [])
    mode = config.get("tolerance_mode", "absolute")
    tol = float(config.get("gear_ratio_tolerance", 0.1))
    targets = {
        "json": Path(json_path or folder / NAMES["json"]),
        "junit": Path(junit_path or folder / NAMES["junit"]),
        "html": Path(html_path or folder / NAMES["html"]),
    }
    pages = targets["html"].parent / ASSETS_DIR
    pages.mkdir(parents=True, exist_ok=True)
    inline = len({u["asset"] for u in manifest["units"]}) <= INLINE_ASSETS
    lost_reason = {(u["asset"], u["engine"]): u["reason"] for u in run_info.get("unjudged", [])}
    created = _dt.datetime.now(_dt.UTC)
    stamp = created.strftime("%Y-%m-%dT%H:%M:%S")
    host = socket.gethostname()
    verdicts = list(run_info.get("simready") or [])
    # a run that did not finish (its client killed) recorded no verdicts: NVIDIA's phase ran in its
    # units, so they are in the stored results (``SweepResult.nvidia``), collected as they are read
    from_units = "simready" not in run_info
    tally = _Tally(
        engines,
        nvidia={(v["asset"], v["engine"]): v["status"] for v in verdicts if v.get("status") != "not_run"},
        strict=bool(run_info.get("strict")),
    )
    parts = _Parts(targets["json"].parent)
    first = {"stages": True, "conformance": True, "disagreements": True}
    junit_counts: Counter = Counter()

    def json_item(name: str, item: Any) -> None:
        parts.write(name, ("" if first[name] else ",\n") + "    " + json.dumps(item, allow_nan=False))
        first[name] = False

    try:
        for n, (asset, stages, missing) in enumerate(_assets(folder)):
            for unit in missing:
                tally.unjudged.append(
                    {
                        "asset": asset,
                        "engine": unit["engine"],
                        "reason": lost_reason.get((asset, unit["engine"]), NOT_STORED),
                    }
                )
            if not stages:
                continue
            if from_units:
                for e, st in stages.items():
                    if st.nvidia is not None:
                        verdicts.append({"asset": asset, "engine": e, **st.nvidia["verdict"]})
                        if verdicts[-1]["status"] != "not_run":
                            tally.nvidia[(asset, e)] = verdicts[-1]["status"]
            href = f"{ASSETS_DIR}/{n:05d}.html"
            page = asset_page(asset, stages, engines, mode, tol, os.path.relpath(targets["html"], pages))
            (pages / f"{n:05d}.html").write_text(page, encoding="utf-8")
            tally.add(asset, n, stages)
            parts.write("rows", _row(asset, href, stages, engines))
            if inline:
                parts.write("sections", stage_section(asset, stages, engines, n, mode, tol) + "\n")
            part = RunResult(stages=list(stages.values()), config=config)
            for st in stages.values():
                json_item("stages", st.to_dict(samples=False))
                suite = _suite(st, stamp, host, len(engines) > 1)
                for key in ("tests", "failures", "errors", "skipped"):
                    junit_counts[key] += int(suite.get(key, "0"))
                ET.indent(suite, level=1)
                parts.write("suites", "  " + ET.tostring(suite, encoding="unicode").rstrip() + "\n")
            for item in conformance(part):
                json_item("conformance", item)
            for item in disagreement_data(part):
                json_item("disagreements", item)
            del stages, part, page
        if from_units and verdicts:
            run_info = {**run_info, "simready": verdicts}
        written = [
            _write_json(targets["json"], parts, manifest, run_info, tally, created),
            _write_junit(targets["junit"], parts, junit_counts, run_info),
            _write_index(targets["html"], parts, manifest, run_info, tally, created, inline),
        ]
    finally:
        parts.close()
    exit_code = 2 if tally.unjudged else tally.decided
    return {"written": written, "summary": dict(tally.summary), "unjudged": tally.unjudged, "exit_code": exit_code}


def _status(tally: _Tally) -> str:
    return worst_status(tally.statuses)


def _catalogue(run_info: dict[str, Any], tally: _Tally) -> dict[str, Any]:
    return {
        "assets": tally.assets,
        "reused": int(run_info.get("reused", 0)),
        "retried": int(run_info.get("retried", 0)),
        "workers_lost": run_info.get("workers_lost", []),
        "unjudged": tally.unjudged,
        "failure_reasons": dict(tally.reasons.most_common()),
        "assets_dir": ASSETS_DIR,
    }


def _headlines(run_info: dict[str, Any]) -> list[str]:
    """NVIDIA's SimReady verdict per engine, as every view puts it first (``headline``)."""
    return headlines(RunResult(simready=list(run_info.get("simready") or []), strict=bool(run_info.get("strict"))))


def _write_json(path: Path, parts: _Parts, manifest, run_info, tally: _Tally, created) -> Path:
    summary = {k: int(tally.summary.get(k, 0)) for k in RunResult().summary()}
    head = {
        **report_identity(created.strftime("%Y-%m-%dT%H:%M:%SZ")),
        "status": _status(tally),
        "exit_code": 2 if tally.unjudged else tally.decided,
        "config": manifest.get("config") or {},
        "versions": run_info.get("versions") or tally.versions,
        "timings": {
            "wall_s": float(run_info.get("wall_s", 0.0)),
            "jobs": max(1, int(run_info.get("jobs", 1))),
            "executor": run_info.get("executor", "local"),
            "retried": int(run_info.get("retried", 0)),
        },
        "summary": summary,
        "engines": tally.engines,
        "catalogue": finite_or_none(_catalogue(run_info, tally)),
        "simready": {
            "headline": _headlines(run_info),
            "strict": tally.strict,
            "port_exit_code": 2 if tally.unjudged else tally.exit_code,
            "verdicts": finite_or_none(run_info.get("simready") or []),
        },
    }

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as out:
            out.write(json.dumps(head, indent=2, allow_nan=False)[:-2] + ",\n")
            for i, name in enumerate(("stages", "conformance", "disagreements")):
                out.write(f'  "{name}": [\n')
                parts.copy_into(name, out)
                out.write("\n  ]" + ("\n" if i == 2 else ",\n"))
            out.write("}\n")

    return write_atomically(path, write, make_parent=True)


def _write_junit(path: Path, parts: _Parts, counts: Counter, run_info) -> Path:
    attrs = " ".join(f'{k}="{counts.get(k, 0)}"' for k in ("tests", "failures", "errors", "skipped"))
    wall = float(run_info.get("wall_s", 0.0))

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as out:
            out.write('<?xml version="1.0" encoding="utf-8"?>\n')
            out.write(f'<testsuites name="FET022 {TEST_NAME}" {attrs} time="{wall:.6f}">\n')
            parts.copy_into("suites", out)
            out.write("</testsuites>\n")

    return write_atomically(path, write, make_parent=True)


def _write_index(path: Path, parts: _Parts, manifest, run_info, tally: _Tally, created, inline: bool) -> Path:
    engines = tally.engines
    s = tally.summary
    status = _status(tally) if tally.assets else "error"
    counts_head = "".join(f"<th>{escape(st)}</th>" for st in STATUSES)
    counts_rows = "".join(
        f"<tr><td>{escape(e)}</td>"
        + "".join(f'<td class="num">{tally.by_status.get((e, st), 0)}</td>' for st in STATUSES)
        + "</tr>"
        for e in engines
    )
    reasons = "".join(
        f'<tr><td class="num">{count}</td><td>{escape(reason)}</td><td><a href="{ASSETS_DIR}/'
        f'{tally.example[reason][1]:05d}.html">{_path(tally.example[reason][0])}</a></td></tr>'
        for reason, count in tally.reasons.most_common(REASONS)
    )
    others = sum(tally.reasons.values()) - sum(c for _, c in tally.reasons.most_common(REASONS))
    worst = "".join(
        f'<tr><td><a href="{ASSETS_DIR}/{r["page"]:05d}.html">{_path(r["asset"])}</a></td>'
        f'<td>{escape(r["engine"])}</td><td>{_path(r["follower"])}</td><td class="num">{num(r["gearing"])}</td>'
        f'<td class="num">{num(r["motion_ratio"])}</td><td class="num">{100 * r["error_relative"]:.3g}%</td>'
        f"<td>{_badge(r['status'])}</td></tr>"
        for _, _, r in sorted(tally.worst, key=lambda item: -item[0])
    )
    lost = "".join(
        f"<li>{escape(w['worker'])}: {len(w['units'])} unit(s) in flight, run again"
        f"{': ' + escape(', '.join(w['units'][:10])) if w['units'] else ''}</li>"
        for w in run_info.get("workers_lost", [])
    )
    unjudged = "".join(
        f"<li>{_path(u['asset'])} [{escape(u['engine'])}]: {escape(u['reason'])}</li>" for u in tally.unjudged[:200]
    )
    where = (
        f"on a Dask cluster of {run_info.get('jobs', '?')} worker(s)"
        if run_info.get("executor") == "dask"
        else f"with {run_info.get('jobs', 1)} process(es)"
    )
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>FET022 {TEST_NAME} catalogue: {escape(status)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>FET022 {TEST_NAME} {_badge(status)}</h1>",
        *(f'<p class="simready"><strong>{escape(h)}</strong></p>' for h in _headlines(run_info)),
        f'<p class="meta">mimic-ext {escape(__version__)}, {created:%Y-%m-%d %H:%M:%S} UTC; engines '
        f"{escape(', '.join(engines))}; run started {escape(str(manifest.get('started')))}, "
        f"wall time {float(run_info.get('wall_s', 0.0)):.1f} s {escape(where)}</p>",
        f'<p id="summary">{tally.assets} asset(s) with results; {s.get("stages", 0)} stage run(s): '
        + ", ".join(f"{s.get('stages_' + st, 0)} {st.replace('_', ' ')}" for st in STATUSES)
        + f". {s.get('followers', 0)} follower result(s): {s.get('followers_pass', 0)} pass, "
        f"{s.get('followers_fail', 0)} fail. Reused from an earlier run: {int(run_info.get('reused', 0))}; "
        f"run again after a lost worker: {int(run_info.get('retried', 0))}; unjudged: {len(tally.unjudged)}.</p>",
        f'<table class="counts"><caption>stage runs by status</caption><thead><tr><th>engine</th>{counts_head}'
        f"</tr></thead><tbody>{counts_rows}</tbody></table>",
    ]
    if reasons:
        head.append(
            '<table class="reasons"><caption>failure reasons (numbers and paths taken out)</caption><thead><tr>'
            f"<th>stage runs</th><th>reason</th><th>first asset</th></tr></thead><tbody>{reasons}</tbody></table>"
            + (f'<p class="note">{others} more in rarer reasons</p>' if others else "")
        )
    if worst:
        head.append(
            f'<table class="worst"><caption>the {len(tally.worst)} worst followers (relative ratio error)</caption>'
            "<thead><tr><th>asset</th><th>engine</th><th>follower</th><th>|gearing|</th><th>motion ratio</th>"
            f"<th>error</th><th>status</th></tr></thead><tbody>{worst}</tbody></table>"
        )
    if lost:
        head.append(f'<h2>Dask workers lost</h2><ul class="lost">{lost}</ul>')
    if unjudged:
        head.append(
            f'<h2>Unjudged ({len(tally.unjudged)}): no verdict, resume with --resume</h2><ul class="unjudged">'
            f"{unjudged}</ul>"
        )
    cols = "".join(f"<th>{escape(e)}</th>" for e in engines)
    head.append(
        f'<table class="stages"><thead><tr><th>asset</th>{cols}<th>followers</th><th>failed</th><th>note</th>'
        "</tr></thead><tbody>"
    )

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as out:
            out.write("\n".join(head) + "\n")
            parts.copy_into("rows", out)
            out.write("</tbody></table>\n")
            if inline:
                parts.copy_into("sections", out)
            out.write("</body></html>\n")

    return write_atomically(path, write, make_parent=True)


__all__ = ["ASSETS_DIR", "INLINE_ASSETS", "NAMES", "reason_class", "write_summaries"]
