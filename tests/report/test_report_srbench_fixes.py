"""The llm_srbench report: predicted-vs-true plots from a real run's records (in headless
Chromium), no false index warning, distinct tick labels, what the model wrote, and the baseline's
answer beside the current one."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_report_browser import CHROMIUM, chromium, png_distinct_row_share

from pytest_lsrb.report import write_report
from pytest_lsrb.report.charts import nice_ticks, tick_labels
from pytest_lsrb.report.data import _read_index
from pytest_lsrb.report.items import answers_text
from pytest_lsrb.tools.significance import paired_bootstrap_ci

SRBENCH_SUITE = Path(__file__).resolve().parents[2] / "suites" / "llm_srbench"


def test_tick_labels_never_repeat_and_say_the_tick() -> None:
    ticks = nice_ticks(129_000, 139_000, 4)
    labels = tick_labels(ticks)
    assert labels == ["1.3e+05", "1.325e+05", "1.35e+05", "1.375e+05"]
    assert tick_labels([0.0, 0.5, 1.0]) == ["0", "0.5", "1"]  # plain ones stay plain


def test_a_problem_index_is_keyed_by_name(tmp_path: Path) -> None:
    index = tmp_path / "index.jsonl"
    index.write_text('{"name": "I.10.7_0_0", "problem_set": "lsr_transform"}\n{"item_id": "t1"}\n', "utf-8")
    warnings: list[str] = []
    rows = _read_index(index, {"I.10.7_0_0", "t1"}, warnings)
    assert set(rows) == {"I.10.7_0_0", "t1"} and warnings == []
    _read_index(index, {"other"}, warnings)
    assert warnings and "holds none of this run's items" in warnings[0]


def test_the_answer_log_reads_as_text() -> None:
    text = answers_text(
        [{"call": 1, "status": "parse_error", "answer": "y = ?"}, {"call": 2, "status": "valid"}]
    )
    assert text == "--- call 1 [parse_error]\ny = ?\n\n--- call 2 [valid]\n"
    assert answers_text([]) is None and answers_text("junk") is None


def payload(html: str) -> dict[str, Any]:
    match = re.search(r"<script type='application/json' id='lsrb-items'>(.*?)</script>", html, re.S)
    assert match is not None
    data: dict[str, Any] = json.loads(match.group(1))
    return data


@pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install -y chromium)"
)
def test_a_real_run_report_shows_predicted_vs_true_plots_and_no_false_warning(
    run_suite: Any, tmp_path: Path
) -> None:
    common = ("--lsrb-max-items=6", "--lsrb-outcome=record", "--lsrb-seed=1")
    base = run_suite(*common, "--lsrb-sr-budget=1", suite=SRBENCH_SUITE, out=tmp_path / "base")
    cur = run_suite(*common, suite=SRBENCH_SUITE, out=tmp_path / "cur")
    assert base.returncode == cur.returncode == 0, cur.stdout + cur.stderr
    assert all(r["pred_sample_id"] for r in cur.attempts() if r["valid"])
    page = write_report(cur.out_dir, tmp_path / "report.html", baseline_dir=base.out_dir)
    html = page.read_text("utf-8")
    assert "holds none of this run" not in html
    # the change of the per-item success rate with its paired bootstrap interval
    base_ok = {r["item_id"]: float(bool(r["verification_success"])) for r in base.attempts()}
    cur_ok = {r["item_id"]: float(bool(r["verification_success"])) for r in cur.attempts()}
    low, high = paired_bootstrap_ci([cur_ok[i] - base_ok[i] for i in sorted(cur_ok)]) or (0.0, 0.0)
    assert f"95% CI [{low:+.3f}, {high:+.3f}], paired bootstrap over 6 items" in html
    assert "Predicted vs true" in html and html.count("<figure class='scatter'>") >= 6
    data = payload(html)
    cols = {name: i for i, name in enumerate(data["columns"])}
    base_answers = {r["item_id"]: r["equation"] or r["proposal"] for r in base.attempts()}
    for row in data["rows"]:
        assert row[cols["base_answer"]] == (base_answers[row[cols["item"]]] or None)
        assert row[cols["raw"]]  # what the model wrote, always
    shot = tmp_path / "report.png"
    dom, console = chromium(page.as_uri(), tmp_path / "profile", "--dump-dom")
    assert console == [] and dom.count("<circle") >= 6 * 10
    chromium(page.as_uri(), tmp_path / "profile2", f"--screenshot={shot}", size=(1280, 4000))
    assert png_distinct_row_share(shot)[2] > 0.2
