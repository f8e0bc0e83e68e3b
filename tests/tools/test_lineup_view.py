"""The terminal of `lsrb run` with models at once (tools/lineup_view.py): each model's latest
progress line as it changes, labelled, with the logs named once."""

from __future__ import annotations

from pathlib import Path

from pytest_lsrb.tools.lineup_view import LineupView, child_progress_args, last_progress


def test_the_last_progress_line_is_found_among_a_runs_output() -> None:
    text = "....\nlsrb 1/4 (25%)\n..\nlsrb 3/4 (75%) · 0.50/s · ETA 2s\nF.\nwarnings\n"
    assert last_progress(text) == "lsrb 3/4 (75%) · 0.50/s · ETA 2s"
    assert last_progress("no line here\n  lsrb 1/2 indented is not one\n") is None


def test_each_model_gets_its_own_line_when_it_changes(tmp_path: Path) -> None:
    shown: list[str] = []
    view = LineupView(tmp_path, ["a", "bbb"], interval_s=1.0, write=shown.append)
    view.intro()
    view.tick()
    assert shown == [f"lsrb: 2 models at once, one per server; each run's output: {tmp_path}/<label>.log"]
    (tmp_path / "a.log").write_text("lsrb 1/4 (25%)\n", encoding="utf-8")
    view.tick()
    view.tick()  # nothing new: nothing printed
    (tmp_path / "bbb.log").write_text("lsrb 2/4 (50%)\n", encoding="utf-8")
    (tmp_path / "a.log").write_text("lsrb 1/4 (25%)\nlsrb 4/4 (100%)\nsummary\n", encoding="utf-8")
    view.finished("a", tmp_path / "a", 0)
    view.tick()
    assert shown[1:] == [
        "  a    lsrb 1/4 (25%)",
        "  a    lsrb 4/4 (100%)",
        "  bbb  lsrb 2/4 (50%)",
        f"lsrb: model a -> {tmp_path / 'a'} (exit 0)",
        "  lsrb 1/4 (25%)",
        "  lsrb 4/4 (100%)",
        "  summary",
    ]
    assert sum(".log" in line for line in shown) == 1


def test_runs_print_progress_often_unless_the_user_chose() -> None:
    assert child_progress_args(["-q"]) == ["--lsrb-progress=5"]
    assert child_progress_args(["--lsrb-progress=0"]) == []
    assert child_progress_args(["--lsrb-progress", "10"]) == []
