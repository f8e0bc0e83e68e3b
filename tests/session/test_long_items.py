"""Long items you can watch (issue #50, item 3): an llm_srbench search of several model calls says
how far it has got on the progress line while it runs (calls made of its budget, its best score so
far, how long it has run and about how long it has left), under -n too; `--lsrb-dry-run` says what
the selection would cost from one measured call, and writes nothing."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from fakes.ollama_server import FakeOllama
from lsrb_testing import SUITES

from pytest_lsrb.adapters.base import AdapterConfig, GenerationRequest, SamplingConfig
from pytest_lsrb.adapters.mock import MockAdapter
from pytest_lsrb.engine.watch import WATCH, WatchedAdapter, Watches, note_best
from pytest_lsrb.output.live import LivePublisher, live_path, read_live
from pytest_lsrb.session.dryrun import FirstCall, estimate_lines
from pytest_lsrb.session.progress import live_note

SRBENCH = SUITES / "llm_srbench"
IN_FLIGHT = re.compile(r"in flight: (\S+)#s0 (\d+)/5 calls, (?:best train NMSE [\d.e+-]+, )?\S+")


def request() -> GenerationRequest:
    return GenerationRequest(messages=(), seed=0, sampling=SamplingConfig(temperature=0.0, max_tokens=8))


def test_the_engine_counts_an_attempts_calls_and_the_method_notes_its_best() -> None:
    watches = Watches()
    adapter = WatchedAdapter(MockAdapter(AdapterConfig(name="mock", model="m", answers=lambda r: "x")))
    note_best("train NMSE", 0.5)  # outside an attempt: nothing to note on, nothing raised
    with watches.watching("item", 0, budget=5) as watch:
        assert WATCH.get() is watch
        adapter.generate(request())
        adapter.generate(request())
        note_best("train NMSE", 0.25)
        note_best("train NMSE", float("nan"))  # not finite: the last finite best stays
        [shown] = watches.snapshot()
    assert WATCH.get() is None and watches.snapshot() == []
    assert (shown["calls"], shown["budget"], shown["best"], shown["best_label"]) == (2, 5, 0.25, "train NMSE")


def test_the_line_names_the_longest_running_attempt_with_its_pace() -> None:
    now = 1000.0
    attempts = [
        {"item_id": "feynman", "sample_index": 0, "started": now - 70, "calls": 2, "budget": 5,
         "last_call": now - 10, "best_label": "train NMSE", "best": 0.01234},
        {"item_id": "other", "sample_index": 1, "started": now - 5, "calls": 0, "budget": 5, "best": None},
    ]  # fmt: skip
    note = live_note(attempts, now)
    # 2 calls in the first 60 s: 30 s each; 3 to go, the third 10 s along: ~80 s left
    assert note == "in flight: feynman#s0 2/5 calls, best train NMSE 0.0123, 1m10s, ~1m20s left (+1 more)"
    assert live_note(attempts[1:], now) == "in flight: other#s1 0/5 calls, 5s"  # no call back yet: no pace
    assert live_note([], now) is None


def test_live_files_are_read_leniently_and_only_while_their_process_lives(tmp_path: Path) -> None:
    watches = Watches()
    publisher = LivePublisher(tmp_path, "gw0", watches)
    with watches.watching("a<script>", 0, budget=5):
        publisher.publish()
        [entry] = read_live(tmp_path)
        assert entry["item_id"] == "a<script>" and entry["budget"] == 5  # (text: escaped where shown)
    publisher.stop()
    assert not live_path(tmp_path, "gw0").exists()
    now = time.time()
    write = lambda name, obj: (tmp_path / name).write_text(json.dumps(obj), "utf-8")  # noqa: E731
    one = {"item_id": "x", "started": now, "calls": "3", "best": "nan", "best_label": 5}
    write(
        ".lsrb-live-ok.json", {"pid": os.getpid(), "updated": now, "attempts": [one, "junk", {"started": 1}]}
    )
    write(".lsrb-live-stale.json", {"pid": os.getpid(), "updated": now - 3600, "attempts": [one]})
    write(".lsrb-live-gone.json", {"pid": 2**22 + 12345, "updated": now, "attempts": [one]})
    (tmp_path / ".lsrb-live-bad.json").write_text("{not json", "utf-8")
    (tmp_path / ".lsrb-live-link.json").symlink_to(tmp_path / ".lsrb-live-ok.json")
    [entry] = read_live(tmp_path)  # the good file's one good entry, its bad fields made safe
    assert entry["calls"] == 0 and entry["best"] is None and entry["best_label"] is None


def progress_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("lsrb ") and "in flight:" in line]


SEARCH = (
    "--lsrb-adapter=openai",
    "--lsrb-model=qwen2.5:7b",
    "--lsrb-max-items=2",
    "--lsrb-concurrency=1",
    "--lsrb-outcome=record",
    "--lsrb-progress=0.2",
)


def check_progress(result: Any) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    lines = progress_lines(result.stdout)
    assert lines, result.stdout
    seen = [IN_FLIGHT.search(line) for line in lines]
    assert all(seen), lines
    calls = {int(m.group(2)) for m in seen if m}
    assert max(calls) >= 2, lines  # the count moved while the attempt ran
    assert any("left" in line for line in lines), lines  # once a call is back: a pace
    assert not list(result.out_dir.glob(".lsrb-live-*")), "the live files go with their sessions"


def test_a_long_search_shows_its_progress_while_it_runs(run_suite_here: Any) -> None:
    with FakeOllama(latency_s=0.25) as fake:  # 5 calls of 0.25 s per attempt
        check_progress(run_suite_here(*SEARCH, f"--lsrb-base-url={fake.url}/v1", suite=SRBENCH))


def test_a_long_search_shows_its_progress_under_xdist(run_suite: Any) -> None:
    """The workers run the attempts: the controller reads their live files."""
    with FakeOllama(latency_s=0.25) as fake:
        check_progress(run_suite(*SEARCH, f"--lsrb-base-url={fake.url}/v1", "-n", "2", suite=SRBENCH))


def test_a_dry_run_measures_one_call_estimates_and_writes_nothing(
    tmp_path: Path, run_suite_here: Any
) -> None:
    with FakeOllama() as fake:
        result = run_suite_here(
            "--lsrb-adapter=openai",
            f"--lsrb-base-url={fake.url}/v1",
            "--lsrb-model=qwen2.5:7b",
            "--lsrb-max-items=6",
            "--lsrb-dry-run",
            suite=SRBENCH,
        )
        assert len(fake.chat_requests()) == 1  # one call measured, no more
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "lsrb: dry run: 6 attempts x at most 5 model call(s) = at most 30 model calls" in out
    assert re.search(
        r"lsrb: the first call \(\S+#s0\) took \S+ m?s and \d+ prompt \+ \d+ completion tokens", out
    )
    assert re.search(r"lsrb: tokens: ~[\d,]+ if every call is like the first; at most [\d,]+ with every", out)
    assert re.search(r"lsrb: time: ~\S+ for at most 30 calls like the first, \d+ at a time", out)
    assert not result.out_dir.exists()  # nothing written


def test_a_dry_run_whose_call_fails_writes_nothing_either(tmp_path: Path, run_suite_here: Any) -> None:
    """A server that answers 503 to every chat: the measured call fails, and the run's folder was
    made anyway, holding the server's outage state (`.lsrb-outage`)."""
    with FakeOllama(fault_rate=1.0, faults=("busy_503",)) as fake:
        result = run_suite_here(
            "--lsrb-adapter=openai",
            f"--lsrb-base-url={fake.url}/v1",
            "--lsrb-model=qwen2.5:7b",
            "--lsrb-max-items=2",
            "--lsrb-retry-time=0.2",
            "--lsrb-dry-run",
        )
    assert "lsrb: the first call" in result.stdout and "failed" in result.stdout, result.stdout
    assert not result.out_dir.exists()  # nothing written
    assert result.returncode == 1  # a CI job's smoke test of the server fails (rv46's review)


def test_the_estimate_is_calls_times_the_measured_call() -> None:
    lines = estimate_lines(12, 5, FirstCall(42.0, 300, 700, None), 2, 1024, "p#s0")
    assert lines[0] == "lsrb: dry run: 12 attempts x at most 5 model call(s) = at most 60 model calls"
    assert lines[1] == "lsrb: the first call (p#s0) took 42.00 s and 300 prompt + 700 completion tokens"
    assert lines[2] == (
        "lsrb: tokens: ~60,000 if every call is like the first; at most 79,440 with every answer at "
        "--lsrb-max-tokens"
    )
    assert lines[3].startswith("lsrb: time: ~21m00s for at most 60 calls like the first, 2 at a time")
    slow = estimate_lines(5, 5, FirstCall(46.0, 300, 256, None), 1, 1024, "p#s0", timeout=120)
    assert slow[-2] == (
        "lsrb: WARNING: at 5.6 tokens/s an answer of --lsrb-max-tokens 1024 takes ~3m04s, past "
        "--lsrb-timeout 120 s: such calls would time out (raise --lsrb-timeout, or lower --lsrb-max-tokens)"
    )
    failed = estimate_lines(1, 1, FirstCall(0.1, None, None, "connection: refused"), 1, None, "p#s0")
    assert failed[-1] == "lsrb: the first call (p#s0) failed: connection: refused"
