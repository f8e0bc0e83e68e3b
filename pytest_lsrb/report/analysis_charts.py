"""Inline SVG charts for the equation-discovery analyses (search progress, Figs. 4-6).

`category_chart` draws series over named categories (checkpoints, domains, complexity buckets),
on a log10 scale for NMSE or a 0-100 % scale for accuracies; `labelled_scatter` draws one labelled
point per method and group. Labels are escaped; numbers are formatted, never interpolated raw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_lsrb.report.charts import PALETTE, _svg, empty_chart, esc, fmt_num


@dataclass(frozen=True)
class CategorySeries:
    name: str
    values: Sequence[float | None]  # one per category; None: no value there
    color: str = PALETTE[0]
    dashed: bool = False


def _y_scale(values: Sequence[float], log: bool) -> tuple[float, float]:
    if not log:
        return 0.0, 100.0
    logs = [math.log10(v) for v in values]
    lo, hi = math.floor(min(logs)), math.ceil(max(logs))
    return (lo - 1.0, hi + 1.0) if lo == hi else (float(lo), float(hi))


def _fmt_y(value: float, log: bool) -> str:
    return f"1e{int(value)}" if log else f"{value:.0f}%"


def category_chart(
    categories: Sequence[str],
    series: Sequence[CategorySeries],
    title: str,
    *,
    x_label: str,
    y_label: str,
    log: bool = True,
    width: int = 560,
    height: int = 260,
) -> str:
    """Lines with markers over categories; log10 y for NMSE (values <= 0 dropped), else percent."""

    def usable(v: float | None) -> bool:
        return v is not None and math.isfinite(v) and (v > 0 if log else True)

    values = [float(v) for s in series for v in s.values if usable(v)]  # type: ignore[arg-type]
    if not categories or not values:
        return empty_chart(f"{title}: no data")
    y0, y1 = _y_scale(values, log)
    left, right, top, bottom = 58, 16, 14, 44
    plot_w, plot_h = width - left - right, height - top - bottom

    def sx(i: int) -> float:
        return left + (i + 0.5) * plot_w / len(categories)

    def sy(v: float) -> float:
        y = math.log10(v) if log else v
        return top + plot_h - (y - y0) / (y1 - y0 or 1.0) * plot_h

    body: list[str] = []
    steps = int(y1 - y0) if log else 5
    for k in range(steps + 1):
        tick = y0 + k * (y1 - y0) / steps
        y = top + plot_h - k * plot_h / steps
        body.append(f"<line x1='{left}' x2='{width - right}' y1='{y:.1f}' y2='{y:.1f}' stroke='#eee'/>")
        body.append(
            f"<text x='{left - 6}' y='{y + 4:.1f}' text-anchor='end' fill='#555'>{_fmt_y(tick, log)}</text>"
        )
    for i, name in enumerate(categories):
        body.append(
            f"<text x='{sx(i):.1f}' y='{height - bottom + 16}' text-anchor='middle' fill='#555'>"
            f"{esc(name)}</text>"
        )
    body.append(
        f"<text x='{left + plot_w / 2:.0f}' y='{height - 6}' text-anchor='middle'>{esc(x_label)}</text>"
    )
    body.append(
        f"<text transform='translate(14 {top + plot_h / 2:.0f}) rotate(-90)' text-anchor='middle'>"
        f"{esc(y_label)}</text>"
    )
    for s in series:
        pts = [(sx(i), sy(float(v)), float(v)) for i, v in enumerate(s.values) if usable(v)]  # type: ignore[arg-type]
        if not pts:
            continue
        dash = " stroke-dasharray='5 4'" if s.dashed else ""
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in pts)
        body.append(f"<polyline points='{line}' fill='none' stroke='{esc(s.color)}' stroke-width='2'{dash}/>")
        for x, y, v in pts:
            shown = fmt_num(v) if log else f"{v:.1f}%"
            body.append(
                f"<circle cx='{x:.1f}' cy='{y:.1f}' r='3.5' fill='{esc(s.color)}'>"
                f"<title>{esc(s.name)}: {shown}</title></circle>"
            )
    for i, s in enumerate(series):
        y = height + 8 + i * 18
        dash = " stroke-dasharray='5 4'" if s.dashed else ""
        body.append(
            f"<line x1='{left}' x2='{left + 24}' y1='{y}' y2='{y}' stroke='{esc(s.color)}' "
            f"stroke-width='2'{dash}/>"
        )
        body.append(f"<text x='{left + 30}' y='{y + 4}' fill='#333'>{esc(s.name)}</text>")
    return _svg(width, height + 10 + 18 * len(series), title, body)


@dataclass(frozen=True)
class LabelledPoint:
    x: float
    y: float
    label: str
    color: str = PALETTE[0]
    legend: str = ""  # the legend entry (one per colour); the label when empty


def labelled_scatter(
    points: Sequence[LabelledPoint],
    title: str,
    *,
    x_label: str,
    y_label: str,
    width: int = 420,
    height: int = 320,
) -> str:
    """Points on 0-100 % axes, each with its label as a tooltip and a legend per colour."""
    pts = [p for p in points if math.isfinite(p.x) and math.isfinite(p.y)]
    if not pts:
        return empty_chart(f"{title}: no data")
    left, right, top, bottom = 50, 16, 14, 40
    plot_w, plot_h = width - left - right, height - top - bottom

    def sx(v: float) -> float:
        return left + v / 100.0 * plot_w

    def sy(v: float) -> float:
        return top + plot_h - v / 100.0 * plot_h

    body: list[str] = []
    for k in range(6):
        t = 20.0 * k
        body.append(
            f"<line x1='{left}' x2='{width - right}' y1='{sy(t):.1f}' y2='{sy(t):.1f}' stroke='#eee'/>"
        )
        body.append(f"<text x='{left - 6}' y='{sy(t) + 4:.1f}' text-anchor='end' fill='#555'>{t:.0f}%</text>")
        body.append(
            f"<text x='{sx(t):.1f}' y='{height - bottom + 16}' text-anchor='middle' fill='#555'>"
            f"{t:.0f}%</text>"
        )
    body.append(
        f"<text x='{left + plot_w / 2:.0f}' y='{height - 6}' text-anchor='middle'>{esc(x_label)}</text>"
    )
    body.append(
        f"<text transform='translate(14 {top + plot_h / 2:.0f}) rotate(-90)' text-anchor='middle'>"
        f"{esc(y_label)}</text>"
    )
    for p in pts:  # the label is the tooltip: points of several groups often coincide (0 %, 0 %)
        body.append(
            f"<circle cx='{sx(p.x):.1f}' cy='{sy(p.y):.1f}' r='4.5' fill='{esc(p.color)}' fill-opacity='0.6'>"
            f"<title>{esc(p.label)}: {p.x:.1f}%, {p.y:.1f}%</title></circle>"
        )
    legend = list(dict.fromkeys((p.legend or p.label, p.color) for p in pts))
    for i, (name, color) in enumerate(legend):
        y = height + 8 + i * 18
        body.append(f"<circle cx='{left + 12}' cy='{y}' r='4.5' fill='{esc(color)}'/>")
        body.append(f"<text x='{left + 24}' y='{y + 4}' fill='#333'>{esc(name)}</text>")
    return _svg(width, height + 10 + 18 * len(legend), title, body)
