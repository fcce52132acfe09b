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
from ..result import RunResult, SweepResult
from ..identity import TEST_NAME
from .common import as_run, num, overall_status, ratio_error_text, short, write_text
from .svg import ratio_plot

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 6px;word-break:break-all}
table{border-collapse:collapse;margin:8px 0;font-size:13px} th,td{border:1px solid #ccc;padding:3px 7px;text-align:left}
th{background:#f3f3f3} td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;color:#fff;font-weight:600;font-size:12px}
.pass{background:#2a9d55} .fail{background:#c0392b} .skipped{background:#888} .error{background:#8e44ad}
.warn{color:#a15c00} .msg{color:#b00} ul{margin:4px 0 4px 18px;padding:0;font-size:13px}
.plots{display:flex;flex-wrap:wrap;gap:14px} figure{margin:0;border:1px solid #ddd;padding:6px;background:#fafafa}
figcaption{font-size:12px;max-width:420px;word-break:break-all} .meta{font-size:12px;color:#555}
.legend span{margin-right:12px;font-size:12px}
"""


def _badge(status: str) -> str:
    return f'<span class="badge {escape(status)}">{escape(status.upper())}</span>'


def _anchor(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", text).strip("-") or "x"


def _stage(stage: SweepResult, index: int, mode: str, tol: float) -> str:
    out = [f'<section class="stage" id="stage-{index}"><h2>{escape(stage.asset)} {_badge(stage.status)}</h2>']
    if stage.reason:
        out.append(f'<p class="reason">{escape(stage.reason)}</p>')
    if stage.warnings:
        out.append("<ul>" + "".join(f'<li class="warn">{escape(w)}</li>' for w in stage.warnings) + "</ul>")
    if stage.references:
        out.append('<table class="references"><thead><tr><th>swept joint</th><th>range</th><th>drive</th>'
                   "<th>stiffness (SI)</th><th>damping (SI)</th><th>measured excursion</th></tr></thead><tbody>")
        for r in stage.references:
            out.append(f"<tr><td>{escape(r.path)}</td><td>{num(r.lo, 4)} .. {num(r.hi, 4)} {escape(r.unit)} "
                       f"({escape(r.range_source)})</td><td>{escape(r.drive_source)}</td>"
                       f'<td class="num">{num(r.stiffness, 4)}</td><td class="num">{num(r.damping, 4)}</td>'
                       f'<td class="num">{num(r.excursion, 4)} {escape(r.unit)}</td></tr>')
        out.append("</tbody></table>")
    if not stage.followers:
        return "".join(out) + "</section>"
    out.append('<table class="followers"><thead><tr><th>follower</th><th>reference</th><th>|gearing|</th>'
               "<th>measured ratio</th><th>error</th><th>max error</th><th>direction</th><th>status</th>"
               "</tr></thead><tbody>")
    for f in stage.followers:
        notes = "".join(f'<div class="msg">{escape(m)}</div>' for m in f.messages)
        notes += "".join(f'<div class="warn">{escape(w)}</div>' for w in f.warnings)
        out.append(
            f'<tr class="follower-row" data-follower="{escape(f.follower)}" data-status="{escape(f.status)}">'
            f'<td title="{escape(f.follower)}">{escape(f.name)}{notes}</td>'
            f'<td title="{escape(f.reference)}">{escape(short(f.reference))}</td>'
            f'<td class="num">{num(f.abs_gearing)}</td><td class="num">{num(f.motion_ratio)}</td>'
            f'<td class="num">{escape(ratio_error_text(f, mode))}</td>'
            f'<td class="num">{num(f.max_error, 3)} {escape(f.max_error_unit)}</td>'
            f"<td>{escape(f.direction)}</td><td>{_badge(f.status)}</td></tr>")
    out.append("</tbody></table>")
    out.append('<div class="legend"><span style="color:#e76f51">&#9679; samples</span>'
               '<span style="color:#264653">- - expected (authored relation)</span>'
               f'<span style="color:#2a9d8f">&#9632; tolerance band ({num(tol, 3)} {escape(mode)})</span>'
               '<span style="color:#7cc4bb">&#9633; same magnitude, opposite direction (passes with a warning)'
               "</span></div>")
    out.append('<div class="plots">')
    for j, f in enumerate(stage.followers):
        pid = f"plot-{index}-{j}-{_anchor(f.name)}"
        if f.sample_reference:
            svg = ratio_plot(f.sample_reference, f.sample_follower, f.expected_ratio, tol, mode,
                             f"{short(f.reference)} displacement ({f.reference_unit})",
                             f"follower displacement ({f.follower_unit})", pid,
                             title=f"{f.name} vs {short(f.reference)}")
        else:
            svg = (f'<svg class="ratio-plot empty" id="{escape(pid)}" xmlns="http://www.w3.org/2000/svg" '
                   f'width="420" height="60"><text x="10" y="34" font-size="12">not simulated: '
                   f"{escape(f.status)}</text></svg>")
        out.append(f'<figure class="plot" data-follower="{escape(f.follower)}">{svg}<figcaption>'
                   f"{escape(f.follower)}: ratio {num(f.motion_ratio, 5)} vs |gearing| {num(f.abs_gearing, 5)} "
                   f"{_badge(f.status)}</figcaption></figure>")
    out.append("</div></section>")
    return "".join(out)


def format_html(result: RunResult | SweepResult, created: str | None = None) -> str:
    run = as_run(result)
    created = created or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    mode = run.config.get("tolerance_mode", "relative")
    tol = float(run.config.get("gear_ratio_tolerance", 0.1))
    s = run.summary()
    status = overall_status(run)
    cfg_rows = "".join(f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>" for k, v in run.config.items())
    ver = ", ".join(f"{escape(k)} {escape(str(v))}" for k, v in run.versions.items())
    stage_rows = "".join(
        f'<tr><td><a href="#stage-{i}">{escape(st.asset)}</a></td><td>{_badge(st.status)}</td>'
        f'<td class="num">{len(st.followers)}</td><td class="num">{st.counts()["fail"]}</td>'
        f"<td>{escape(st.reason)}</td></tr>" for i, st in enumerate(run.stages))
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>FET022 {TEST_NAME} report: {escape(status)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>FET022 {TEST_NAME} {_badge(status)}</h1>",
        f'<p class="meta">mimic-ext {escape(__version__)}, {escape(created)}; {ver}; wall time '
        f"{run.wall_seconds:.3f} s with {run.jobs} process(es)</p>",
        f'<p id="summary">{s["stages"]} stage(s): {s["stages_pass"]} pass, {s["stages_fail"]} fail, '
        f'{s["stages_skipped"]} skipped, {s["stages_error"]} error. {s["followers"]} follower(s): '
        f'{s["followers_pass"]} pass, {s["followers_fail"]} fail, {s["followers_error"]} error; '
        f'{s["warnings"]} warning(s). A follower passes when |measured ratio| is within {num(tol, 3)} '
        f"({escape(mode)}) of |gearing|; direction and rest offset are warnings.</p>",
        '<table class="stages"><thead><tr><th>stage</th><th>status</th><th>followers</th><th>failed</th>'
        f"<th>note</th></tr></thead><tbody>{stage_rows}</tbody></table>",
        f'<details><summary>configuration</summary><table class="config">{cfg_rows}</table></details>',
    ]
    body += [_stage(st, i, mode, tol) for i, st in enumerate(run.stages)]
    body.append("</body></html>\n")
    return "\n".join(body)


def write_html(result: RunResult | SweepResult, path: str | Path) -> Path:
    return write_text(path, format_html(result))
