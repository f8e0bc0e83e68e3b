"""A baseline that is not there fails the gate unless the first run is declared (issue #50, item
6): `--lsrb-baseline-missing=fail|pass` in a run, `--baseline-missing` for `lsrb compare`. A CI
cache that lost its baseline must not turn the gate into a pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_lsrb import api
from pytest_lsrb.cli import main
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.tools.gate import compare_dirs, gate_config, result_lines, title


def write_run(path: Path, valid: list[bool]) -> Path:
    path.mkdir(parents=True)
    records = [
        {"item_id": f"i{k}", "sample_index": 0, "valid": v, "nonempty": True} for k, v in enumerate(valid)
    ]
    (path / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    (path / "run.json").write_text(json.dumps({"suite": "s", "config": {"samples": 1}}), "utf-8")
    return path


@pytest.mark.parametrize("absent", ["no_such_folder", "empty_folder"])
def test_a_missing_baseline_fails_by_default_and_passes_when_declared(tmp_path: Path, absent: str) -> None:
    where = tmp_path / absent
    if absent == "empty_folder":
        where.mkdir()  # what a cache restore that found nothing, or a `mkdir baseline`, leaves
    with pytest.raises(
        LsrbUsageError, match=r"there is no baseline run at .*declare it with --lsrb-baseline-missing=pass"
    ):
        gate_config(str(where), "pass_at_1=0", None, None)
    config = gate_config(str(where), "pass_at_1=0", None, None, missing="pass")
    assert config.active and config.baseline is None and config.missing_baseline == where
    result = compare_dirs(config, write_run(tmp_path / "cur", [True, False]))
    assert not result.regressed and result.checks == []  # nothing to compare: no drop is tested
    assert title(result) == "lsrb gate: ok without a baseline (the first run, declared)"
    assert result_lines(result)[0].startswith(f"no baseline at {where}: this run is declared the first")


def test_a_declared_first_run_still_holds_its_floors(tmp_path: Path) -> None:
    config = gate_config(str(tmp_path / "none"), None, "valid_rate=0.9", None, missing="pass")
    result = compare_dirs(config, write_run(tmp_path / "cur", [True, False]))
    assert result.regressed and result.exit_status == 6
    assert "the floors and ceilings below still hold" in result_lines(result)[0]


def test_something_there_that_is_no_run_is_an_error_whatever_the_option(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.txt").write_text("not a run", "utf-8")
    for missing in ("fail", "pass"):
        with pytest.raises(LsrbUsageError, match=r"holds no attempts\.jsonl"):
            gate_config(str(junk), None, None, None, missing=missing)
    with pytest.raises(LsrbUsageError, match="baseline-missing must be fail or pass"):
        gate_config(str(junk), None, None, None, missing="skip")


def test_lsrb_compare_fails_with_exit_2_or_passes_when_declared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cur = write_run(tmp_path / "cur", [True, True])
    assert main(["compare", str(tmp_path / "lost"), str(cur)]) == 2
    assert "declare it with --baseline-missing=pass" in capsys.readouterr().err
    out = tmp_path / "gate.json"
    assert (
        main(["compare", str(tmp_path / "lost"), str(cur), "--baseline-missing=pass", "--json", str(out)])
        == 0
    )
    said = capsys.readouterr().out
    assert "lsrb gate: ok without a baseline" in said and "runs: (no baseline) -> " in said
    assert json.loads(out.read_text("utf-8"))["missing_baseline"] == str(tmp_path / "lost")


def test_a_run_with_a_lost_baseline_stops_before_any_call_or_goes_on_when_declared(tmp_path: Path) -> None:
    lost = tmp_path / "lost"
    with pytest.raises(LsrbUsageError, match="there is no baseline run at"):
        api.run("goal_to_tactic_proposal_v1", max_items=2, baseline=str(lost), output_dir=tmp_path / "a")
    assert not (tmp_path / "a").exists()  # refused before the run began
    result = api.run(
        "goal_to_tactic_proposal_v1",
        max_items=2,
        baseline=str(lost),
        baseline_missing="pass",
        output_dir=tmp_path / "b",
    )
    assert result.exit_code == 0
    gate = json.loads((result.run_dir / "gate.json").read_text("utf-8"))
    assert gate["missing_baseline"] == str(lost) and gate["regressed"] is False
