"""The report in a real browser: headless Chromium (Debian's `chromium` package) opens the page.

Checks: no console output at all (errors, CSP violations), the item table renders, hostile model
output stays text, the screenshot is not blank, and 10,000 attempts keep the DOM small (virtual
rows). Skipped with a reason where Chromium is not installed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from headless_chromium import CHROMIUM, NO_CHROMIUM, body_attrs, chromium, png_distinct_row_share
from synthetic_runs import tactic_run

from pytest_lsrb.report import write_report

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)


def rendered_rows(dom: str) -> list[int]:
    """The payload indices of the table rows in the DOM, in display order."""
    return [int(i) for i in re.findall(r'<div class="it-row[^"]*"[^>]*data-idx="(\d+)"', dom)]


def payload(html: str) -> dict:
    match = re.search(r"<script type='application/json' id='lsrb-items'>(.*?)</script>", html, re.S)
    assert match is not None
    data: dict = json.loads(match.group(1))
    return data


@pytest.fixture(scope="module")
def comparison_page(tactic_pair: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    base, cur = tactic_pair
    return write_report(cur, tmp_path_factory.mktemp("page") / "report.html", base)


def test_the_page_renders_without_console_output_and_hostile_output_stays_text(
    comparison_page: Path, tmp_path: Path
) -> None:
    url = comparison_page.as_uri() + "#attempt=" + quote("hostile<script>item:0", safe="")
    dom, console = chromium(url, tmp_path / "profile", "--dump-dom")
    assert console == []
    attrs = body_attrs(dom)
    assert attrs.get("data-lsrb-ready") == "1"
    assert "data-lsrb-errors" not in attrs and "data-pwned" not in attrs
    assert attrs["data-lsrb-detail"] == "hostile&lt;script&gt;item#s0"
    # The hostile output is shown as text in the detail view and never became elements.
    raw = re.search(r'<pre class="raw">(.*?)</pre>', dom, re.S)
    assert raw is not None and raw.group(1).startswith("&lt;/script&gt;&lt;script&gt;document.body")
    assert "<img" not in dom and "<b>bold</b>" not in dom
    assert '<pre class="answer">&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</pre>' in dom
    prompt = re.search(r'<pre class="prompt">(.*?)</pre>', dom, re.S)
    assert prompt is not None and "── user ──" in prompt.group(1)


def test_the_fragment_filters_and_sorts_the_item_table(comparison_page: Path, tmp_path: Path) -> None:
    data = payload(comparison_page.read_text(encoding="utf-8"))
    cols = {name: i for i, name in enumerate(data["columns"])}
    fails = [i for i, r in enumerate(data["rows"]) if r[cols["outcome"]] == "fail"]
    slowest = max(fails, key=lambda i: data["rows"][i][cols["latency"]])
    dom, console = chromium(
        comparison_page.as_uri() + "#outcome=fail&sort=-latency", tmp_path / "profile", "--dump-dom"
    )
    assert console == []
    assert body_attrs(dom)["data-lsrb-rows-shown"] == str(len(fails))
    shown = rendered_rows(dom)
    assert shown and set(shown) <= set(fails)
    assert shown[0] == slowest
    latencies = [data["rows"][i][cols["latency"]] for i in shown]
    assert latencies == sorted(latencies, reverse=True)


def test_the_screenshot_shows_the_charts(comparison_page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    _, console = chromium(
        comparison_page.as_uri(), tmp_path / "profile", f"--screenshot={shot}", size=(1280, 1600)
    )
    assert console == []
    width, height, share = png_distinct_row_share(shot)
    assert (width, height) == (1280, 1600)
    # A blank page has ~0.1% distinct scanlines, a page with one heading ~1%; this one has charts.
    assert share > 0.2


def test_ten_thousand_attempts_render_only_the_visible_rows(tmp_path: Path) -> None:
    run = tactic_run(tmp_path / "big", items=2500, samples=4, seed=11)
    page = write_report(run, tmp_path / "big.html")
    dom, console = chromium(page.as_uri(), tmp_path / "profile", "--dump-dom")
    assert console == []
    attrs = body_attrs(dom)
    assert attrs.get("data-lsrb-ready") == "1" and "data-lsrb-errors" not in attrs
    assert attrs["data-lsrb-rows-total"] == "10000" and attrs["data-lsrb-rows-shown"] == "10000"
    in_dom = rendered_rows(dom)
    assert 10 <= len(in_dom) == int(attrs["data-lsrb-rows-dom"]) <= 100
    data = payload(page.read_text(encoding="utf-8"))
    item, k = data["columns"].index("item"), data["columns"].index("k")
    by_item = sorted(range(len(data["rows"])), key=lambda i: (data["rows"][i][item], data["rows"][i][k]))
    assert in_dom == by_item[: len(in_dom)]  # the default order: item, then sample
