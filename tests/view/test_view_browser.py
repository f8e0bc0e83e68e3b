"""`lsrb view` in a real browser (headless Chromium): the list, a run while it is written, and two
runs compared render without a console message (no script error, no CSP violation), a hostile
model's answers stay text, and the run's page follows the run as attempts land.

Following a run: the run's records are written step by step, one step before each answer to the
page's request for news (the server's `on_api`), so what the page saw after each of its requests
is known; Chromium's virtual time (`--virtual-time-budget`) runs the page's clock without waiting,
and stops it while a request is out. Screenshots go to bench/out/view-screenshots/ (CI keeps
bench/out as an artifact).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from headless_chromium import CHROMIUM, NO_CHROMIUM, body_attrs, chromium, png_distinct_row_share
from lsrb_testing import REPO

from pytest_lsrb.core.processes import process_start
from pytest_lsrb.output.owner import LOCK_FILE, Holder, this_host

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)

SHOTS = REPO / "bench" / "out" / "view-screenshots"
CUR = "we<i>rd & 'name'/cur"


def shoot(url: str, tmp_path: Path, name: str, *args: str) -> tuple[dict[str, str], str]:
    """The page's DOM and body attributes once its clock has run 12 s, and its screenshot."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    dom, console = chromium(url, tmp_path / f"profile-{name}", "--virtual-time-budget=12000", "--dump-dom")
    assert console == [], console
    shot = SHOTS / f"{name}.png"
    _, console = chromium(
        url, tmp_path / f"profile-{name}-shot", "--virtual-time-budget=12000", f"--screenshot={shot}",
        size=(1280, 1000),
    )  # fmt: skip
    assert console == [], console
    width, _, share = png_distinct_row_share(shot)
    assert width == 1280 and share > 0.1, f"{shot} looks blank"
    attrs = body_attrs(dom)
    assert "data-pwned" not in attrs and "data-lsrb-errors" not in attrs
    return attrs, dom


def test_the_list_and_a_comparison_render_and_keep_hostile_text_text(
    runs_folder: Path, serve: Any, tmp_path: Path
) -> None:
    server = serve(runs_folder)
    _, dom = shoot(server.url, tmp_path, "runs")
    assert "we&lt;i&gt;rd &amp; 'name'/cur" in dom
    _, dom = shoot(f"{server.url}compare?a=base&b={quote(CUR)}", tmp_path, "compare")
    assert "&lt;script&gt;document.body.setAttribute" in dom and "<img" not in dom
    assert "regressed: 6" in dom  # the mock passed every item; the hostile model none


def test_a_runs_page_follows_the_run_as_it_is_written(runs_folder: Path, serve: Any, tmp_path: Path) -> None:
    """A run copied record by record into a folder as if its command were writing it, with an
    llm_srbench-like search in flight; then it finishes, and the page stops asking."""
    source = runs_folder / "we<i>rd & 'name'" / "cur"
    records = (source / "attempts.jsonl").read_text("utf-8").splitlines(keepends=True)
    folder = tmp_path / "folder"
    run = folder / "live"
    run.mkdir(parents=True)
    shutil.copy(source / "run.json", run / "run.json")
    (run / "attempts.jsonl").write_text("", "utf-8")
    me = Holder(os.getpid(), this_host(), "2026-01-01T00:00:00+00:00", "t", process_start(os.getpid()))
    (run / LOCK_FILE).write_text(me.to_text(), "utf-8")  # a live command holds the run
    steps = iter([2, 2, 2])
    written = [0]

    def write_next(path: str) -> None:
        if path != "/api/run":
            return
        step = next(steps, None)
        if step is None:  # every record is written: the run ends as a command ends it
            shutil.copy(source / "summary.json", run / "summary.json")
            (run / LOCK_FILE).write_text("", "utf-8")
            (run / ".lsrb-live-gw0.json").unlink(missing_ok=True)
            return
        with (run / "attempts.jsonl").open("a", encoding="utf-8") as fh:
            fh.writelines(records[written[0] : written[0] + step])
        written[0] += step
        live = {
            "pid": os.getpid(),
            "updated": 4102444800,  # (far ahead: never stale while the page looks)
            "attempts": [
                {"item_id": "feynman_<b>I</b>", "sample_index": 0, "started": time.time() - 70, "calls": 3,
                 "budget": 5, "best_label": "train NMSE", "best": 0.0123},
            ],
        }  # fmt: skip
        (run / ".lsrb-live-gw0.json").write_text(json.dumps(live), "utf-8")

    server = serve(folder, on_api=write_next)
    attrs, dom = shoot(f"{server.url}run?name=live", tmp_path, "run-live")
    seen = [int(n) for n in attrs["data-lsrb-seen"].split(",")]
    assert seen[0] == 0 and seen[-1] == 6, seen  # drawn with nothing, then as records landed
    assert seen == sorted(seen) and len(set(seen)) >= 3, seen
    assert attrs["data-lsrb-status"] == "finished"
    polls = int(attrs["data-lsrb-polls"])
    assert polls >= 4  # three steps written, one more to see the run finished; then it stops asking
    assert "&lt;script&gt;" in dom and "<img" not in dom  # the hostile answers, as text


def test_a_search_in_flight_is_on_the_page(tmp_path: Path, serve: Any, runs_folder: Path) -> None:
    run = tmp_path / "folder" / "searching"
    run.mkdir(parents=True)
    shutil.copy(runs_folder / "base" / "run.json", run / "run.json")
    (run / "attempts.jsonl").write_text("", "utf-8")
    me = Holder(os.getpid(), this_host(), "2026-01-01T00:00:00+00:00", "t", process_start(os.getpid()))
    (run / LOCK_FILE).write_text(me.to_text(), "utf-8")
    live = {
        "pid": os.getpid(),
        "updated": 4102444800,
        "attempts": [
            {"item_id": "feynman_<b>I</b>_6_2", "sample_index": 0, "started": time.time() - 70, "calls": 3,
             "budget": 5,
             "prompt_tokens": 900, "completion_tokens": 2100, "best_label": "train NMSE", "best": 0.0123},
        ],
    }  # fmt: skip
    (run / ".lsrb-live-gw0.json").write_text(json.dumps(live), "utf-8")
    _, dom = shoot(f"{serve(tmp_path / 'folder').url}run?name=searching", tmp_path, "run-in-flight")
    assert "feynman_&lt;b&gt;I&lt;/b&gt;_6_2#s0  3/5 calls  best train NMSE 0.0123  1m1" in dom
    assert 'id="status" class="running"' in dom
