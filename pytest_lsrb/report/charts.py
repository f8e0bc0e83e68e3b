"""Charts as inline SVG, drawn here so the report needs no plotting library and no network.

Every function returns one `<svg>` element as a string. Every label that came from a run (error
kinds, item ids, group names) is escaped; numbers are formatted, never interpolated raw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d")
BASELINE_COLOR = "#b8b8b8"
# Error domains keep one colour everywhere in the report.
DOMAIN_COLORS = {
    "transport": "#f58518",
    "provider": "#e45756",
    "model_output": "#4c78a8",
    "model": "#4c78a8",
    "harness": "#b279a2",
    "environment": "#9d755d",
    "none": "#54a24b",
}
FONT = "font-family='system-ui,-apple-system,Segoe UI,sans-serif' font-size='12'"


def esc(text: object) -> str:
    """Text for HTML and SVG, attribute values included (the report's one escaping rule)."""
    return escape(str(text), quote=True)


def fmt_num(value: float) -> str:
    if value == 0:
        return "0"
    mag = abs(value)
    if float(value).is_integer() and mag < 1e5:
        return str(int(value))
    if mag >= 1e5 or mag < 1e-2:
        return f"{value:.2g}"
    if mag >= 100:
        return f"{value:.0f}"
    if mag >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def tick_labels(ticks: Sequence[float]) -> list[str]:
    """Each tick's label, with as many significant digits as it takes for no two to read the same
    (1.3e+05 four times said nothing: 1.3e+05, 1.33e+05, 1.35e+05, 1.38e+05 does)."""
    labels = [fmt_num(t) for t in ticks]
    if len(set(labels)) == len(set(ticks)):
        return labels
    for digits in range(3, 16):  # the shortest labels that are distinct and say the tick exactly
        labels = [fmt_num(t) if float(t).is_integer() and abs(t) < 1e5 else f"{t:.{digits}g}" for t in ticks]
        exact = all(
            abs(float(lab) - t) <= 1e-9 * max(1.0, abs(t)) for lab, t in zip(labels, ticks, strict=True)
        )
        if exact and len(set(labels)) == len(set(ticks)):
            break
    return labels


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    start = math.ceil(lo / step - 1e-9) * step
    ticks = []
    value = start
    while value <= hi + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks


def _svg(width: int, height: int, label: str, body: list[str]) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' class='chart' viewBox='0 0 {width} {height}' "
        f"width='{width}' height='{height}' role='img' aria-label='{esc(label)}' {FONT}>"
        f"<title>{esc(label)}</title>" + "".join(body) + "</svg>"
    )


def empty_chart(message: str, width: int = 520, height: int = 60) -> str:
    return _svg(
        width,
        height,
        message,
        [
            f"<text x='{width / 2:.0f}' y='{height / 2 + 4:.0f}' text-anchor='middle' fill='#777'>"
            f"{esc(message)}</text>"
        ],
    )


# -- bars --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    color: str = PALETTE[0]
    baseline: float | None = None  # drawn as a thin grey bar above, when comparing runs
    note: str = ""  # shown in the tooltip


def bar_chart(
    bars: Sequence[Bar],
    title: str,
    *,
    value_max: float | None = None,
    percent: bool = False,
    width: int = 520,
    max_bars: int = 30,
) -> str:
    """Horizontal bars with the value printed at the end of each bar."""
    if not bars:
        return empty_chart(f"{title}: none")
    shown = list(bars[:max_bars])
    hidden = len(bars) - len(shown)
    label_w = min(220, 12 + 7 * max(len(b.label) for b in shown))
    has_base = any(b.baseline is not None for b in shown)
    row_h = 30 if has_base else 22
    top, right = 8, 70
    height = top + row_h * len(shown) + (22 if hidden else 8)
    top_value = (
        value_max
        if value_max is not None
        else max([b.value for b in shown] + [b.baseline or 0.0 for b in shown] + [1e-12])
    )
    plot_w = width - label_w - right

    def length(v: float) -> float:
        return max(0.0, min(1.0, v / top_value)) * plot_w if top_value > 0 else 0.0

    def text(v: float) -> str:
        return f"{v * 100:.1f}%" if percent else fmt_num(v)

    body = []
    for i, b in enumerate(shown):
        y = top + i * row_h
        label = b.label if len(b.label) <= 32 else b.label[:31] + "…"
        tip = (
            f"{b.label}: {text(b.value)}"
            + (f" (baseline {text(b.baseline)})" if b.baseline is not None else "")
            + (f" — {b.note}" if b.note else "")
        )
        body.append(f"<g><title>{esc(tip)}</title>")
        body.append(f"<text x='{label_w - 6}' y='{y + 15}' text-anchor='end' fill='#333'>{esc(label)}</text>")
        bar_y, bar_h = y + 3, 14
        if has_base:
            base = b.baseline or 0.0
            body.append(
                f"<rect x='{label_w}' y='{y + 2}' width='{length(base):.1f}' height='6' "
                f"fill='{BASELINE_COLOR}'/>"
            )
            bar_y, bar_h = y + 10, 14
        body.append(
            f"<rect x='{label_w}' y='{bar_y}' width='{length(b.value):.1f}' height='{bar_h}' "
            f"fill='{esc(b.color)}' rx='2'/>"
        )
        body.append(
            f"<text x='{label_w + length(b.value) + 5:.1f}' y='{bar_y + 11}' fill='#333'>"
            f"{esc(text(b.value))}</text></g>"
        )
    if hidden:
        body.append(f"<text x='{label_w}' y='{height - 6}' fill='#777'>… and {hidden} more</text>")
    return _svg(width, height, title, body)


# -- axes --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """A plot area with linear (or log10) scales."""

    width: int
    height: int
    x0: float
    x1: float
    y0: float
    y1: float
    left: int = 54
    right: int = 16
    top: int = 14
    bottom: int = 40
    x_log: bool = False

    def sx(self, x: float) -> float:
        lo, hi, v = self.x0, self.x1, x
        if self.x_log:
            lo, hi, v = math.log10(lo), math.log10(hi), math.log10(max(x, self.x0))
        span = hi - lo or 1.0
        return self.left + (v - lo) / span * (self.width - self.left - self.right)

    def sy(self, y: float) -> float:
        span = self.y1 - self.y0 or 1.0
        return self.height - self.bottom - (y - self.y0) / span * (self.height - self.top - self.bottom)

    def axes(
        self,
        x_label: str,
        y_label: str,
        x_ticks: Sequence[float],
        y_ticks: Sequence[float],
        y_fmt: str = "num",
    ) -> list[str]:
        out = []
        bottom, left = self.height - self.bottom, self.left
        y_labels = tick_labels(y_ticks)
        for t, label in zip(y_ticks, y_labels, strict=True):
            y = self.sy(t)
            text = f"{t * 100:.0f}%" if y_fmt == "pct" else label
            out.append(
                f"<line x1='{left}' x2='{self.width - self.right}' y1='{y:.1f}' y2='{y:.1f}' "
                "stroke='#e5e5e5'/>"
            )
            out.append(f"<text x='{left - 6}' y='{y + 4:.1f}' text-anchor='end' fill='#555'>{text}</text>")
        for t, label in zip(x_ticks, tick_labels(x_ticks), strict=True):
            x = self.sx(t)
            out.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{bottom}' y2='{bottom + 4}' stroke='#555'/>")
            out.append(f"<text x='{x:.1f}' y='{bottom + 16}' text-anchor='middle' fill='#555'>{label}</text>")
        out.append(
            f"<line x1='{left}' x2='{self.width - self.right}' y1='{bottom}' y2='{bottom}' stroke='#555'/>"
        )
        out.append(f"<line x1='{left}' x2='{left}' y1='{self.top}' y2='{bottom}' stroke='#555'/>")
        mid_x = (left + self.width - self.right) / 2
        out.append(
            f"<text x='{mid_x:.0f}' y='{self.height - 6}' text-anchor='middle' fill='#333'>"
            f"{esc(x_label)}</text>"
        )
        mid_y = (self.top + bottom) / 2
        out.append(
            f"<text transform='translate(13 {mid_y:.0f}) rotate(-90)' text-anchor='middle' "
            f"fill='#333'>{esc(y_label)}</text>"
        )
        return out


# -- line chart (pass@k over k) ----------------------------------------------------------------


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[tuple[float, float]]
    color: str = PALETTE[0]
    dashed: bool = False


def line_chart(
    series: Sequence[Series],
    title: str,
    *,
    x_label: str,
    y_label: str,
    y_range: tuple[float, float] = (0.0, 1.0),
    percent: bool = True,
    width: int = 520,
    height: int = 280,
    x_name: str = "k",
    whole_x: bool = True,
) -> str:
    """Lines through each series' points; `x_name` names x in the points' tooltips, `whole_x`
    keeps only whole-number ticks on x (samples), else any (minutes since the start)."""
    series = [s for s in series if s.points]
    if not series:
        return empty_chart(f"{title}: no data")
    xs = [x for s in series for x, _ in s.points]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    frame = Frame(width, height, x0, x1, *y_range)
    if whole_x:
        x_ticks = [t for t in nice_ticks(x0, x1, min(10, int(x1 - x0) or 1)) if t == int(t)]
    else:
        x_ticks = nice_ticks(x0, x1, 6)
    body = frame.axes(x_label, y_label, x_ticks, nice_ticks(*y_range, 5), "pct" if percent else "num")
    for s in series:
        pts = " ".join(f"{frame.sx(x):.1f},{frame.sy(y):.1f}" for x, y in s.points)
        dash = " stroke-dasharray='5 4'" if s.dashed else ""
        body.append(f"<polyline points='{pts}' fill='none' stroke='{esc(s.color)}' stroke-width='2'{dash}/>")
        for x, y in s.points if len(s.points) <= 60 else ():  # (a long series: the line alone)
            value = f"{y * 100:.1f}%" if percent else fmt_num(y)
            body.append(
                f"<circle cx='{frame.sx(x):.1f}' cy='{frame.sy(y):.1f}' r='3.5' "
                f"fill='{esc(s.color)}'><title>{esc(s.name)}: {esc(x_name)}={fmt_num(x)} → {value}</title>"
                "</circle>"
            )
    if len(series) > 1:
        # The legend goes under the plot, where no line can run through it.
        for i, s in enumerate(series):
            y = height + 8 + i * 18
            dash = " stroke-dasharray='5 4'" if s.dashed else ""
            body.append(
                f"<line x1='{frame.left}' x2='{frame.left + 24}' y1='{y}' y2='{y}' "
                f"stroke='{esc(s.color)}' stroke-width='2'{dash}/>"
            )
            name = s.name if len(s.name) <= 60 else s.name[:59] + "…"
            body.append(f"<text x='{frame.left + 30}' y='{y + 4}' fill='#333'>{esc(name)}</text>")
        return _svg(width, height + 10 + 18 * len(series), title, body)
    return _svg(width, height, title, body)


# -- histogram ---------------------------------------------------------------------------------


def histogram(
    values: Sequence[float],
    title: str,
    *,
    x_label: str,
    bins: int = 30,
    baseline: Sequence[float] | None = None,
    width: int = 520,
    height: int = 260,
    y_label: str = "attempts",
) -> str:
    """Counts per bin (of `y_label`); bins are logarithmic when the values span more than two
    decades."""
    finite = [v for v in values if math.isfinite(v) and v >= 0]
    base = [v for v in (baseline or []) if math.isfinite(v) and v >= 0]
    every = finite + base
    if not every:
        return empty_chart(f"{title}: no data")
    lo, hi = min(every), max(every)
    log = lo > 0 and hi / lo > 100
    if hi == lo:
        lo, hi = (lo * 0.9, hi * 1.1) if lo > 0 else (0.0, 1.0)
        log = False
    edges = (
        [10 ** (math.log10(lo) + i * (math.log10(hi) - math.log10(lo)) / bins) for i in range(bins + 1)]
        if log
        else [lo + i * (hi - lo) / bins for i in range(bins + 1)]
    )

    def counts(vals: Sequence[float]) -> list[int]:
        out = [0] * bins
        for v in vals:
            if log:
                pos = (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
            else:
                pos = (v - lo) / (hi - lo)
            out[min(bins - 1, max(0, int(pos * bins)))] += 1
        return out

    cur, old = counts(finite), counts(base) if base else None
    top = max(cur + (old or []) + [1])
    frame = Frame(width, height, edges[0], edges[-1], 0, top * 1.05, x_log=log)
    x_ticks = (
        [10.0**e for e in range(math.ceil(math.log10(lo)), math.floor(math.log10(hi)) + 1)]
        if log
        else nice_ticks(lo, hi, 6)
    )
    y_ticks = [t for t in nice_ticks(0, top, 4) if t == int(t)]
    body = frame.axes(x_label + (" (log scale)" if log else ""), y_label, x_ticks, y_ticks)
    for i in range(bins):
        x_a, x_b = frame.sx(edges[i]), frame.sx(edges[i + 1])
        tip = f"{fmt_num(edges[i])}–{fmt_num(edges[i + 1])}: {cur[i]}" + (
            f" (baseline {old[i]})" if old is not None else ""
        )
        if cur[i]:
            y = frame.sy(cur[i])
            body.append(
                f"<rect x='{x_a + 0.5:.1f}' y='{y:.1f}' width='{max(0.5, x_b - x_a - 1):.1f}' "
                f"height='{frame.sy(0) - y:.1f}' fill='{PALETTE[0]}'>"
                f"<title>{esc(tip)}</title></rect>"
            )
    if old is not None:
        # The baseline as a step outline over the bars.
        steps = [f"{frame.sx(edges[0]):.1f},{frame.sy(0):.1f}"]
        for i in range(bins):
            y = frame.sy(old[i])
            steps += [f"{frame.sx(edges[i]):.1f},{y:.1f}", f"{frame.sx(edges[i + 1]):.1f},{y:.1f}"]
        steps.append(f"{frame.sx(edges[-1]):.1f},{frame.sy(0):.1f}")
        body.append(
            f"<polyline points='{' '.join(steps)}' fill='none' stroke='#333' stroke-width='1.5' "
            "stroke-dasharray='4 2'><title>baseline</title></polyline>"
        )
        body.append(
            f"<text x='{frame.width - frame.right}' y='{frame.top + 4}' text-anchor='end' "
            "fill='#333'>bars: this run · dashed: baseline</text>"
        )
    return _svg(width, height, title, body)


# -- scatter (predicted vs true) ---------------------------------------------------------------


def scatter(
    points: Sequence[tuple[float, float]],
    title: str,
    *,
    x_label: str = "true",
    y_label: str = "predicted",
    width: int = 260,
    height: int = 240,
) -> str:
    """Predicted against true values with the y = x line a perfect equation would sit on."""
    pts = [(x, y) for x, y in points if math.isfinite(x) and math.isfinite(y)]
    if not pts:
        return empty_chart(f"{title}: no points", width, 60)
    vals = [v for p in pts for v in p]
    lo, hi = min(vals), max(vals)
    if hi == lo:
        lo, hi = lo - 1, hi + 1
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad
    frame = Frame(width, height, lo, hi, lo, hi, left=50, bottom=36, top=10)
    ticks = nice_ticks(lo, hi, 4)
    body = frame.axes(x_label, y_label, ticks, ticks)
    body.append(
        f"<line x1='{frame.sx(lo):.1f}' y1='{frame.sy(lo):.1f}' x2='{frame.sx(hi):.1f}' "
        f"y2='{frame.sy(hi):.1f}' stroke='#999' stroke-dasharray='4 3'/>"
    )
    for x, y in pts:
        body.append(
            f"<circle cx='{frame.sx(x):.1f}' cy='{frame.sy(y):.1f}' r='2.5' fill='{PALETTE[0]}' "
            "fill-opacity='0.7'/>"
        )
    return _svg(width, height, title, body)
