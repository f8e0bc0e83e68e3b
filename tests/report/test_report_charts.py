"""The SVG charts: well-formed, escaped, and honest about their data."""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.report import charts

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_bar_labels_from_a_run_are_escaped() -> None:
    svg = charts.bar_chart(
        [charts.Bar("<script>alert(1)</script>", 3), charts.Bar("a&b\"'", 1, baseline=2)], "errors"
    )
    root = parse(svg)  # well-formed XML despite hostile labels
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "<script>alert(1)</script>" in texts
    assert "<script>" not in svg
    # Once one bar has a baseline every bar gets a (possibly empty) baseline bar above it.
    assert len(root.findall(f".//{SVG}rect")) == 4


def test_bar_lengths_are_proportional() -> None:
    root = parse(charts.bar_chart([charts.Bar("a", 10), charts.Bar("b", 5), charts.Bar("c", 0)], "t"))
    widths = [float(r.get("width", "0")) for r in root.iter(f"{SVG}rect")]
    assert widths[0] == 2 * widths[1] and widths[2] == 0


def test_histogram_counts_every_value_once() -> None:
    values = [1.0, 2.0, 2.5, 3.0, 10.0, 10.0]
    root = parse(charts.histogram(values, "latency", x_label="ms", bins=5))
    tips = [r.find(f"{SVG}title") for r in root.iter(f"{SVG}rect")]
    total = sum(int(t.text.rsplit(": ", 1)[1]) for t in tips if t is not None and t.text)
    assert total == len(values)


def test_histogram_switches_to_log_bins_for_wide_ranges() -> None:
    svg = charts.histogram([1.0, 10.0, 100.0, 10_000.0], "latency", x_label="ms")
    assert "log scale" in svg
    assert "log scale" not in charts.histogram([1.0, 2.0, 3.0], "latency", x_label="ms")


def test_empty_inputs_draw_a_note_not_a_crash() -> None:
    for svg in (
        charts.bar_chart([], "errors"),
        charts.histogram([], "h", x_label="x"),
        charts.line_chart([charts.Series("s", [])], "p", x_label="k", y_label="p"),
        charts.scatter([(math.nan, 1.0)], "s"),
    ):
        assert "no" in parse(svg).findtext(f"{SVG}text", "")


def test_line_chart_points_sit_where_their_values_say() -> None:
    root = parse(
        charts.line_chart(
            [charts.Series("run", [(1, 0.0), (2, 0.5), (3, 1.0)])], "pass@k", x_label="k", y_label="pass@k"
        )
    )
    ys = [float(c.get("cy", "0")) for c in root.iter(f"{SVG}circle")]
    assert ys[0] > ys[1] > ys[2]
    assert abs((ys[0] + ys[2]) / 2 - ys[1]) < 0.11


@given(st.floats(-1e6, 1e6), st.floats(1e-3, 1e6))
def test_nice_ticks_cover_the_range_in_even_steps(lo: float, span: float) -> None:
    hi = lo + span
    ticks = charts.nice_ticks(lo, hi)
    assert 1 <= len(ticks) <= 12
    assert all(lo - 1e-6 * span <= t <= hi + 1e-6 * span for t in ticks)
    steps = {round(b - a, 6) for a, b in itertools.pairwise(ticks)}
    assert len(steps) <= 1 or max(steps) - min(steps) <= 1e-6 * max(1.0, max(abs(s) for s in steps))
