"""A self-contained HTML page: summary, per-stage tables and one plot per follower.

No scripts, fonts or images from elsewhere: the page opens from a CI artifact store or an
air-gapped machine the same way.
"""

from __future__ import annotations

import datetime as _dt
import re
from html import escape
from pathlib import Path

from ... import __version__
from ..disagreement import AGREEMENT, disagreements
from ..identity import TEST_NAME
from ..result import RunResult, SweepResult
from .common import (
    as_run,
    by_asset,
    direction_text,
    engines_of,
    follower_rows,
    gearing_text,
    num,
    overall_status,
    ratio_error_text,
    read_text,
    short,
    worst_status,
    write_text,
)
from .headline import findings_line, headlines
from .sign_rule import SIGN_NOTE, sign_rule_note
from .svg import SERIES_COLOURS, ratio_plot

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 6px;overflow-wrap:break-word}
table{border-collapse:collapse;margin:8px 0;font-size:13px} th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;
vertical-align:top;overflow-wrap:break-word} th{background:#f3f3f3;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap} .nowrap{white-space:nowrap}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;color:#fff;font-weight:600;font-size:12px;white-space:nowrap}
.pass{background:#2a9d55} .fail{background:#c0392b} .skipped{background:#888} .error{background:#8e44ad}
.not_applicable{background:#5d7b91} .timeout{background:#d35400}
.warn{color:#a15c00} .msg{color:#b00} .note{color:#555} ul{margin:4px 0 4px 18px;padding:0;font-size:13px}
.plots{display:flex;flex-wrap:wrap;gap:14px} figure{margin:0;border:1px solid #ddd;padding:6px;background:#fafafa}
figcaption{font-size:12px;max-width:420px;overflow-wrap:break-word} .meta{font-size:12px;color:#555}
.legend span{margin-right:12px;font-size:12px;white-space:nowrap} .cell div{white-space:nowrap}
"""


def _badge(status: str) -> str:
    return f'<span class="badge {escape(status)}">{escape(status.upper())}</span>'


def _anchor(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", text).strip("-") or "x"


def _path(text: str) -> str:
    """A path that may wrap at its separators only (never inside a name or a number)."""
    return "/<wbr>".join(escape(part) for part in text.split("/"))


def _value(v) -> str:
    """A config value as a person writes it in YAML: true/false, [a, b], plain numbers."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def _config_rows(config: dict) -> str:
    rows = []
    for k, v in config.items():
        if isinstance(v, dict):
            rows += [(f"{k}.{kk}", vv) for kk, vv in v.items()]
        else:
            rows.append((k, v))
    return "".join(f'<tr><th>{escape(k)}</th><td class="num">{escape(_value(v))}</td></tr>' for k, v in rows)


def _range_cells(r) -> str:
    limits = "unlimited" if r.limits is None else f"{num(r.limits[0], 4)} .. {num(r.limits[1], 4)} {escape(r.unit)}"
    swept = f"{num(r.lo, 4)} .. {num(r.hi, 4)} {escape(r.unit)}"
    how = "limits less the margin" if r.range_source == "limits" else r.range_source
    return (
        f'<td class="nowrap">{limits}</td><td><span class="nowrap">{swept}</span> '
        f'<span class="note">({escape(how)})</span></td>'
    )


def _references(stages: dict[str, SweepResult], multi: bool) -> str:
    rows = [(e, r) for e, st in stages.items() for r in st.references]
    if not rows:
        return ""
    head = ("<th>engine</th>" if multi else "") + (
        "<th>swept joint</th><th>limits</th><th>swept range</th>"
        "<th>drive</th><th>stiffness (SI)</th><th>damping (SI)</th>"
        "<th>measured excursion</th>"
    )
    out = [f'<table class="references"><thead><tr>{head}</tr></thead><tbody>']
    for e, r in rows:
        out.append(
            "<tr>" + (f"<td>{escape(e)}</td>" if multi else "") + f"<td>{_path(r.path)}</td>{_range_cells(r)}"
            f"<td>{escape(r.drive_source)}</td>"
            f'<td class="num">{num(r.stiffness, 4)}</td><td class="num">{num(r.damping, 4)}</td>'
            f'<td class="num">{num(r.excursion, 4)} {escape(r.unit)}</td></tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def _notes(f) -> str:
    """A follower's messages, warnings and notes; the sign-rule note is the report's one paragraph
    (``#sign-rule``), linked from here."""
    return (
        "".join(f'<div class="msg">{escape(m)}</div>' for m in f.messages)
        + "".join(f'<div class="warn">{escape(w)}</div>' for w in f.warnings)
        + "".join(
            '<div class="note"><a href="#sign-rule">harness sign rule</a></div>'
            if n.startswith(SIGN_NOTE)
            else f'<div class="note">{escape(n)}</div>'
            for n in f.notes
        )
    )


def _follower_table(stage: SweepResult, mode: str) -> str:
    out = [
        '<table class="followers"><thead><tr><th>follower</th><th>reference</th><th>|gearing|</th>'
        "<th>motion ratio</th><th>fit slope</th><th>error</th><th>max error</th><th>direction</th>"
        "<th>dir_matches_gear</th><th>status</th></tr></thead><tbody>"
    ]
    for f in stage.followers:
        out.append(
            f'<tr class="follower-row" data-follower="{escape(f.follower)}" data-engine="{escape(f.engine)}" '
            f'data-status="{escape(f.status)}">'
            f'<td title="{escape(f.follower)}"><span class="nowrap">{escape(f.name)}</span>{_notes(f)}</td>'
            f'<td title="{escape(f.reference)}" class="nowrap">{escape(short(f.reference))}</td>'
            f'<td class="num">{escape(gearing_text(f))}</td><td class="num">{num(f.motion_ratio)}</td>'
            f'<td class="num">{num(f.measured_ratio)}</td>'
            f'<td class="num">{escape(ratio_error_text(f, mode))}</td>'
            f'<td class="num">{num(f.relation_max_error, 3)} {escape(f.max_error_unit)}</td>'
            f'<td class="nowrap">{escape(direction_text(f))}</td><td class="num">{f.dir_matches_gear if f.measured else "-"}</td>'
            f"<td>{_badge(f.status)}</td></tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def _matrix(stages: dict[str, SweepResult], engines: list[str]) -> str:
    head = "".join(f"<th>{escape(e)}</th>" for e in engines if e in stages)
    out = [f'<table class="conformance"><thead><tr><th>follower</th><th>|gearing|</th>{head}</tr></thead><tbody>']
    for path, name, cells in follower_rows(stages):
        any_f = next(iter(cells.values()))
        out.append(
            f'<tr class="matrix-row" data-follower="{escape(path)}"><td title="{escape(path)}" class="nowrap">'
            f'{escape(name)}</td><td class="num">{escape(gearing_text(any_f))}</td>'
        )
        for e in engines:
            if e not in stages:
                continue
            f = cells.get(e)
            if f is None:
                out.append("<td>-</td>")
                continue
            out.append(
                f'<td class="cell" data-engine="{escape(e)}" data-status="{escape(f.status)}">'
                f"<div>{_badge(f.status)} ratio {num(f.motion_ratio, 5)}</div>"
                f'<div class="note">read: {escape(read_text(f))}</div></td>'
            )
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _legend(engines: list[str], tol: float, mode: str) -> str:
    dots = "".join(
        f'<span style="color:{SERIES_COLOURS[k % len(SERIES_COLOURS)]}">&#9679; {escape(e)} samples</span>'
        for k, e in enumerate(engines)
    )
    return (
        '<div class="legend">' + dots + '<span style="color:#264653">- - expected (authored relation)</span>'
        f'<span style="color:#2a9d8f">&#9632; tolerance band ({num(tol, 3)} {escape(mode)})</span>'
        '<span style="color:#7cc4bb">&#9633; same magnitude, opposite direction (passes with a warning)</span>'
        "</div>"
    )


def _plots(stages: dict[str, SweepResult], engines: list[str], index: int, mode: str, tol: float) -> str:
    out = ['<div class="plots">']
    for j, (path, name, cells) in enumerate(follower_rows(stages)):
        pid = f"plot-{index}-{j}-{_anchor(name)}"
        order = [e for e in engines if e in cells]
        shown = [cells[e] for e in order if cells[e].sample_reference]
        f = cells[order[0]]
        if shown:
            series = [
                (e, cells[e].sample_reference, cells[e].sample_follower) if cells[e].sample_reference else (e, [], [])
                for e in order
            ]
            svg = ratio_plot(
                series,
                f.expected_ratio,
                tol,
                mode,
                f"{short(f.reference)} displacement ({f.reference_unit})",
                f"follower displacement ({f.follower_unit})",
                pid,
                title=f"{name} vs {short(f.reference)}",
            )
        else:
            svg = (
                f'<svg class="ratio-plot empty" id="{escape(pid)}" xmlns="http://www.w3.org/2000/svg" '
                f'width="420" height="60"><text x="10" y="34" font-size="12">not simulated: '
                f"{escape(', '.join(cells[e].status for e in order))}</text></svg>"
            )
        verdicts = " ".join(
            f"{escape(e) + ' ' if len(order) > 1 else ''}ratio {num(cells[e].motion_ratio, 5)} "
            f"{_badge(cells[e].status)}"
            for e in order
        )
        out.append(
            f'<figure class="plot" data-follower="{escape(path)}">{svg}<figcaption>'
            f"{_path(path)}: |gearing| {escape(gearing_text(f, 5))}; {verdicts}</figcaption></figure>"
        )
    out.append("</div>")
    return "".join(out)


def _disagreements(stages: dict[str, SweepResult]) -> str:
    found = disagreements(stages)
    if not found:
        return (
            f'<p class="agree">engines agree on every follower (verdict; motion ratio and offset check within '
            f"{AGREEMENT:g})</p>"
        )

    def values(d) -> str:
        return ", ".join(f"{e} {v:.5g}" if isinstance(v, float) else f"{e} {v}" for e, v in d.values.items())

    rows = "".join(
        f'<tr data-follower="{escape(d.follower)}"><td>{_path(d.follower)}</td><td>{escape(d.who())}</td>'
        f'<td>{escape(d.measure)}</td><td>{escape(values(d))}</td><td class="num">{num(d.difference, 3)}</td>'
        f"<td>{escape(d.cause)}</td><td>{escape(d.explanation)}</td></tr>"
        for d in found
    )
    return (
        '<table class="disagreements"><caption>disagreements between engines</caption><thead><tr><th>follower</th>'
        "<th>engines</th><th>measure</th><th>values</th><th>apart</th><th>likely cause</th><th>why</th></tr>"
        f"</thead><tbody>{rows}</tbody></table>"
    )


def _stage(asset: str, stages: dict[str, SweepResult], engines: list[str], index: int, mode: str, tol: float) -> str:
    multi = len(engines) > 1
    status = worst_status(s.status for s in stages.values())
    out = [f'<section class="stage" id="stage-{index}"><h2>{_path(asset)} {_badge(status)}</h2>']
    for e, st in stages.items():
        tag = f"{escape(e)}: " if multi else ""
        if st.reason:
            out.append(f'<p class="reason">{tag}{escape(st.reason)}</p>')
        if st.warnings:
            out.append("<ul>" + "".join(f'<li class="warn">{tag}{escape(w)}</li>' for w in st.warnings) + "</ul>")
    out.append(_references(stages, multi))
    if not any(st.followers for st in stages.values()):
        return "".join(out) + "</section>"
    if multi:
        out.append(_matrix(stages, engines))
        out.append(_disagreements(stages))
        for e, st in stages.items():
            out.append(
                f'<details class="engine-detail" data-engine="{escape(e)}"><summary>{escape(e)}: every '
                f"measure</summary>{_follower_table(st, mode)}</details>"
            )
    else:
        out.append(_follower_table(next(iter(stages.values())), mode))
    out.append(_legend([e for e in engines if e in stages], tol, mode))
    out.append(_plots(stages, engines, index, mode, tol))
    out.append("</section>")
    return "".join(out)


def asset_page(
    asset: str, stages: dict[str, SweepResult], engines: list[str], mode: str, tol: float, index_href: str
) -> str:
    """One asset's own page of a catalogue report: its tables and plots (the plots live only here)."""
    status = worst_status(s.status for s in stages.values())
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>FET022 {TEST_NAME}: {escape(asset)}: {escape(status)}</title>",
            f"<style>{CSS}</style></head><body>",
            f'<p class="meta"><a href="{escape(index_href)}">&larr; catalogue index</a></p>',
            _stage(asset, stages, [e for e in engines if e in stages], 0, mode, tol),
            "</body></html>\n",
        ]
    )


def stage_section(
    asset: str, stages: dict[str, SweepResult], engines: list[str], index: int, mode: str, tol: float
) -> str:
    """One asset's section of the single-page report (tables and plots)."""
    return _stage(asset, stages, engines, index, mode, tol)


def _where(run: RunResult) -> str:
    if run.executor == "dask":
        return f"on a Dask cluster of {run.jobs} worker(s)"
    return f"with {run.jobs} process(es)"


def format_html(result: RunResult | SweepResult, created: str | None = None) -> str:
    run = as_run(result)
    created = created or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    mode = run.config.get("tolerance_mode", "absolute")
    tol = float(run.config.get("gear_ratio_tolerance", 0.1))
    measure = run.config.get("ratio_measure", "motion_ratio").replace("_", " ")
    s = run.summary()
    status = overall_status(run)
    engines = engines_of(run)
    assets = by_asset(run)
    ver = ", ".join(f"{escape(k)} {escape(str(v))}" for k, v in run.versions.items())
    head = "".join(f"<th>{escape(e)}</th>" for e in engines)
    stage_rows = "".join(
        f'<tr><td><a href="#stage-{i}">{_path(asset)}</a></td>'
        + "".join(f"<td>{_badge(st[e].status) if e in st else '-'}</td>" for e in engines)
        + f'<td class="num">{max(len(x.followers) for x in st.values())}</td>'
        f'<td class="num">{sum(x.counts()["fail"] for x in st.values())}</td>'
        f"<td>{'; '.join(escape(x.reason) for x in st.values() if x.reason)}</td></tr>"
        for i, (asset, st) in enumerate(assets.items())
    )
    sign_note = sign_rule_note(run)
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>FET022 {TEST_NAME} report: {escape(status)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>FET022 {TEST_NAME} {_badge(status)}</h1>",
        "".join(f'<p class="simready"><strong>{escape(h)}</strong></p>' for h in headlines(run))
        + f'<p class="meta">{escape(findings_line(run))}</p>',
        f'<p class="meta">mimic-ext {escape(__version__)}, {escape(created)}; engines {escape(", ".join(engines))}; '
        f"{ver}; wall time {run.wall_seconds:.3f} s {escape(_where(run))}</p>",
        f'<p id="summary">{len(assets)} stage(s)'
        + (f" on {len(engines)} engines" if len(engines) > 1 else "")
        + f": {s['stages_pass']} pass, {s['stages_fail']} fail, "
        f"{s['stages_skipped']} skipped, {s['stages_error']} error, {s['stages_not_applicable']} not applicable. "
        f"{s['followers']} follower result(s): {s['followers_pass']} pass, {s['followers_fail']} fail, "
        f"{s['followers_error']} error, {s['followers_not_applicable']} not applicable; "
        f"{s['warnings']} warning(s). A follower passes when its {escape(measure)} is within {num(tol, 3)} "
        f"({escape(mode)}) of |gearing| and its offset check holds; direction, rest offset and the bounding box are "
        f"warnings; not applicable: the engine cannot represent the relation (no verdict, not a failure).</p>",
        *([f'<p id="sign-rule" class="note">{escape(sign_note)}</p>'] if sign_note else []),
        f'<table class="stages"><thead><tr><th>stage</th>{head}<th>followers</th><th>failed</th>'
        f"<th>note</th></tr></thead><tbody>{stage_rows}</tbody></table>",
        f'<details><summary>configuration</summary><table class="config">{_config_rows(run.config)}</table></details>',
    ]
    body += [_stage(asset, st, engines, i, mode, tol) for i, (asset, st) in enumerate(assets.items())]
    body.append("</body></html>\n")
    return "\n".join(body)


def write_html(result: RunResult | SweepResult, path: str | Path) -> Path:
    return write_text(path, format_html(result))
