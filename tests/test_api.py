"""`pytest_lsrb.api`: `run` a suite from Python, `load_run` a run directory back.

The runs happen in a subprocess running a notebook-style script (no `__main__` guard, two runs
in one process), as a user's script would; nothing of the engine is mocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from pytest_lsrb import api
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.option_sets import every_option

OPTIONS = every_option()

# A notebook's cells, one after another, with no `if __name__ == "__main__":` guard: two runs
# of two suites in one process. llm_srbench's fits run in bounded children; a child that re-ran
# this script would start a third session and print a third RUN line.
NOTEBOOK = """
import json
from pytest_lsrb import api

tactic = api.run("goal_to_tactic_proposal_v1", max_items=3, samples=2, pytest_args=["-q"])
srbench = api.run("llm_srbench", max_items=2, outcome="record", pytest_args=["-q"])
for result in (tactic, srbench):
    again = api.load_run(result.run_dir)
    print("RUN " + json.dumps({
        "suite": result.suite,
        "exit_code": result.exit_code,
        "run_dir": str(result.run_dir),
        "records": len(result.records),
        "summary": result.summary,
        "files": sorted(p.name for p in result.run_dir.iterdir()),
        "reloaded_same": again.summary == result.summary and again.records == result.records,
    }))
# the same run again, in the same second: a run of its own beside the first
repeat = api.run("goal_to_tactic_proposal_v1", max_items=3, samples=2, pytest_args=["-q"])
print("REPEAT " + json.dumps({
    "own_dir": repeat.run_dir != tactic.run_dir,
    "same_hash": repeat.summary["selected_rows_hash"] == tactic.summary["selected_rows_hash"],
    "same_answers": [r["tactic"] for r in repeat.records] == [r["tactic"] for r in tactic.records],
}))
"""


def _script(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "notebook.py"
    script.write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-W", "error::pytest.PytestAssertRewriteWarning", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )


def test_an_unguarded_script_runs_two_suites_in_one_process(tmp_path: Path) -> None:
    proc = _script(tmp_path, NOTEBOOK)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    runs = [json.loads(line[4:]) for line in proc.stdout.splitlines() if line.startswith("RUN ")]
    assert [r["suite"] for r in runs] == ["goal_to_tactic_proposal_v1", "llm_srbench"]
    tactic, srbench = runs
    for run, attempts in ((tactic, 3 * 2), (srbench, 2)):
        assert run["exit_code"] == 0
        assert Path(run["run_dir"]).parent.parent == tmp_path / "lsrb-out"
        assert {"run.json", "attempts.jsonl", "summary.json"} <= set(run["files"])
        assert run["records"] == attempts
        summary = run["summary"]
        assert summary["suite"] == run["suite"]
        assert summary["attempts"] == summary["attempts_expected"] == attempts
        assert summary["complete"] is True
        assert run["reloaded_same"] is True
    assert tactic["summary"]["config"]["samples"] == 2
    assert srbench["summary"]["config"]["outcome"] == "record"
    # each session printed its own closing line, and only the three sessions asked for ran
    assert proc.stdout.count("lsrb: goal_to_tactic_proposal_v1 · mock/default") == 2
    assert proc.stdout.count("lsrb: llm_srbench · mock/default") == 1
    repeat = json.loads(next(line[7:] for line in proc.stdout.splitlines() if line.startswith("REPEAT ")))
    assert repeat == {"own_dir": True, "same_hash": True, "same_answers": True}


def test_a_bad_value_raises_the_runs_one_sentence_before_any_model_call(tmp_path: Path) -> None:
    proc = _script(
        tmp_path,
        "from pytest_lsrb import api\n"
        "try:\n"
        "    api.run('goal_to_tactic_proposal_v1', timeout=float('nan'))\n"
        "except api.LsrbUsageError as exc:\n"
        "    print('RAISED', exc)\n",
    )
    assert "RAISED --lsrb-timeout: expected a finite number of seconds" in proc.stdout, (
        proc.stdout + proc.stderr
    )
    assert not (tmp_path / "lsrb-out").exists()


def test_run_options_list_every_option_of_the_table_with_its_choices() -> None:
    hints = typing.get_type_hints(api.RunOptions)
    table = {o.name.replace("-", "_") for o in OPTIONS}
    missing = sorted(table - set(hints))
    assert not missing, f"add these options to pytest_lsrb.api.RunOptions: {missing}"
    assert not set(hints) - table, f"RunOptions names options the table lacks: {sorted(set(hints) - table)}"
    for opt in OPTIONS:
        hint = hints[opt.name.replace("-", "_")]
        if opt.choices:
            assert set(typing.get_args(hint)) == set(opt.choices), opt
        if opt.flag:
            assert hint is bool, opt


def test_options_become_the_same_command_line() -> None:
    args = api.option_args({"max_items": 5, "resume": True, "overwrite": False, "index": Path("a/b.jsonl")})
    assert args == ["--lsrb-max-items=5", "--lsrb-resume", "--lsrb-index=a/b.jsonl"]
    assert api.option_args({"base_url": None}) == []


@pytest.mark.parametrize(
    ("options", "sentence"),
    [
        ({"max_item": 5}, "run(): no option 'max_item' (did you mean max_items?)"),
        ({"resume": "yes"}, "run(): option 'resume' is a flag: True or False (got 'yes')."),
        ({"samples": True}, "run(): option 'samples' takes a value, not True."),
        (
            {"model": ["a", "b"]},
            "run(): option 'model' takes one value, not a list (several models: call run() once per "
            "model, or `lsrb run` with several --lsrb-model).",
        ),
        ({"max_items": (1, 2)}, "run(): option 'max_items' takes one value, not a tuple."),
    ],
)
def test_a_misspelled_or_mistyped_option_is_one_sentence(options: dict[str, object], sentence: str) -> None:
    with pytest.raises(LsrbUsageError) as info:
        api.option_args(options)
    assert str(info.value).startswith(sentence)


def test_load_run_reads_latest_and_refuses_what_is_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(LsrbUsageError, match="is not a directory"):
        api.load_run(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(LsrbUsageError, match="holds no lsrb run"):
        api.load_run(tmp_path / "empty")


def test_load_run_names_the_file_and_line_of_a_tampered_record(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "attempts.jsonl").write_text('{"item_id": 3}\n', encoding="utf-8")
    with pytest.raises(LsrbUsageError) as info:
        api.load_run(run_dir)
    assert f"{run_dir / 'attempts.jsonl'}:1" in str(info.value)
