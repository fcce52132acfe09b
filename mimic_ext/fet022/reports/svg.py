"""Inline SVG plots of follower vs reference displacement, written by hand (no JS, no network).

Each plot shows the samples (one series per engine, overlaid, each its own colour), the
line the authored relation predicts (PhysX: slope -gearing) and the band the tolerance
allows around it: a wedge through the origin between slopes |g|(1 -+ tol) in relative
mode, |g| -+ tol in absolute mode. A fainter mirrored band marks the opposite direction,
which the magnitude check also accepts (with a direction warning); the axes always hold
both bands.
"""

from __future__ import annotations

import math
from html import escape

W, H = 420, 300
LEFT, RIGHT, TOP, BOTTOM = 62, 14, 14, 44
#: one colour per engine, in the order the engines ran (the first is the single-engine colour)
SERIES_COLOURS = ("#e76f51", "#3a86ff", "#8338ec", "#2a9d55", "#fb8500", "#6c757d")


def nice_ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """About ``count`` round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    v = first
    while v <= hi + 1e-9 * step:
        ticks.append(0.0 if abs(v) < 1e-12 * step else v)
        v += step
    return ticks


def _fmt(v: float) -> str:
    return f"{v:.2f}"


def _label(v: float) -> str:
    return f"{v:.4g}"


def _extent(values: list[float]) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    if hi - lo < 1e-12:
        pad = max(abs(hi), 1.0) * 0.1
        return lo - pad, hi + pad
    pad = 0.06 * (hi - lo)
    return lo - pad, hi + pad


def ratio_plot(
    series: list[tuple[str, list[float], list[float]]],
    expected: float,
    tolerance: float,
    mode: str,
    x_label: str,
    y_label: str,
    plot_id: str,
    title: str = "",
) -> str:
    """One plot as an ``<svg>`` element string; ``series`` is [(label, x, y)], one per engine."""
    sets = [[(a, b) for a, b in zip(x, y) if math.isfinite(a) and math.isfinite(b)] for _, x, y in series]
    xs = [p[0] for pts in sets for p in pts] or [0.0, 1.0]
    x0, x1 = _extent(xs + [0.0])
    g = abs(expected)
    sign = 1.0 if expected >= 0 else -1.0
    if mode == "relative":
        slopes = (sign * g * (1 - tolerance), sign * g * (1 + tolerance))
    else:
        slopes = (sign * max(g - tolerance, 0.0), sign * (g + tolerance))
    # both bands (and the expected line) fit: the mirrored band is the same slopes negated
    ys = [p[1] for pts in sets for p in pts] + [
        k * s * v for s in (expected,) + slopes for k in (1, -1) for v in (x0, x1)
    ]
    y0, y1 = _extent(ys + [0.0])
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(v: float) -> float:
        return LEFT + (v - x0) / (x1 - x0) * pw

    def sy(v: float) -> float:
        return TOP + (1 - (v - y0) / (y1 - y0)) * ph

    out = [
        f'<svg class="ratio-plot" id="{escape(plot_id)}" xmlns="http://www.w3.org/2000/svg" width="{W}" '
        f'height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{escape(title or y_label)}">'
    ]
    if title:
        out.append(f"<title>{escape(title)}</title>")
    clip = f"{plot_id}-clip"
    out.append(
        f'<defs><clipPath id="{escape(clip)}"><rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}"/></clipPath></defs>'
    )
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>')
    # grid and tick labels
    for t in nice_ticks(x0, x1):
        px = sx(t)
        out.append(f'<line x1="{_fmt(px)}" y1="{TOP}" x2="{_fmt(px)}" y2="{TOP + ph}" stroke="#eee"/>')
        out.append(
            f'<text x="{_fmt(px)}" y="{TOP + ph + 14}" font-size="10" text-anchor="middle">{escape(_label(t))}</text>'
        )
    for t in nice_ticks(y0, y1):
        py = sy(t)
        out.append(f'<line x1="{LEFT}" y1="{_fmt(py)}" x2="{LEFT + pw}" y2="{_fmt(py)}" stroke="#eee"/>')
        out.append(
            f'<text x="{LEFT - 4}" y="{_fmt(py + 3)}" font-size="10" text-anchor="end">{escape(_label(t))}</text>'
        )
    out.append(f'<g clip-path="url(#{escape(clip)})">')
    # tolerance band: from the origin to both x ends, between the two slopes
    band = [
        (x0, slopes[0] * x0),
        (0.0, 0.0),
        (x1, slopes[0] * x1),
        (x1, slopes[1] * x1),
        (0.0, 0.0),
        (x0, slopes[1] * x0),
    ]
    mirror = [(a, -b) for a, b in band]  # the magnitude check accepts the opposite direction too
    out.append(
        '<polygon class="tolerance-band-mirror" fill="#2a9d8f" fill-opacity="0.07" stroke="#2a9d8f" '
        'stroke-opacity="0.3" stroke-dasharray="3 3" points="'
        + " ".join(f"{_fmt(sx(a))},{_fmt(sy(b))}" for a, b in mirror)
        + '"/>'
    )
    out.append(
        '<polygon class="tolerance-band" fill="#2a9d8f" fill-opacity="0.18" stroke="none" points="'
        + " ".join(f"{_fmt(sx(a))},{_fmt(sy(b))}" for a, b in band)
        + '"/>'
    )
    out.append(
        f'<line class="expected-line" x1="{_fmt(sx(x0))}" y1="{_fmt(sy(expected * x0))}" '
        f'x2="{_fmt(sx(x1))}" y2="{_fmt(sy(expected * x1))}" stroke="#264653" stroke-width="1.5" '
        f'stroke-dasharray="6 4"/>'
    )
    for k, ((label, _, _), pts) in enumerate(zip(series, sets)):
        if not pts:
            continue
        colour = SERIES_COLOURS[k % len(SERIES_COLOURS)]
        out.append(
            f'<g class="samples" data-engine="{escape(label)}" fill="{colour}">'
            f'<polyline class="samples-line" fill="none" stroke="{colour}" stroke-width="1" points="'
            + " ".join(f"{_fmt(sx(a))},{_fmt(sy(b))}" for a, b in pts)
            + '"/>'
            + "".join(f'<circle cx="{_fmt(sx(a))}" cy="{_fmt(sy(b))}" r="2.2"/>' for a, b in pts)
            + "</g>"
        )
    out.append("</g>")
    out.append(
        f'<text x="{LEFT + pw / 2:.1f}" y="{H - 8}" font-size="11" text-anchor="middle">{escape(x_label)}</text>'
    )
    out.append(
        f'<text transform="translate(14 {TOP + ph / 2:.1f}) rotate(-90)" font-size="11" '
        f'text-anchor="middle">{escape(y_label)}</text>'
    )
    out.append("</svg>")
    return "".join(out)
