"""One reader of run directories, one validation: a tampered attempts.jsonl is refused in the same
sentence (file, line, field) by `lsrb report`, `lsrb compare`, `lsrb merge` and the reader that
resume and --lsrb-baseline use (issue #14 item 7, issue #15)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_lsrb.cli import main as lsrb
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.output.reader import read_run

GOOD = {"item_id": "a", "sample_index": 0, "valid": True, "latency_ms": 3, "config_hash": "c" * 64}


def run_dir(path: Path, second: dict[str, Any]) -> Path:
    path.mkdir(parents=True)
    lines = [GOOD, {**GOOD, "item_id": "b", **second}]
    (path / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), "utf-8")
    (path / "run.json").write_text(json.dumps({"suite": "s", "config": {"samples": 1}}), "utf-8")
    return path


@pytest.mark.parametrize(
    ("tamper", "field", "said"),
    [
        ({"latency_ms": "3"}, "latency_ms", "valid number"),
        ({"valid": "yes"}, "valid", "valid boolean"),
        ({"generation_error_kind": ["timeout"]}, "generation_error_kind", "valid string"),
        ({"model_calls": -1}, "model_calls", "greater than or equal to 0"),
        ({"verification_success": 1}, "verification_success", "valid boolean"),
    ],
)
def test_every_reader_refuses_a_tampered_record_naming_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tamper: dict[str, Any], field: str, said: str
) -> None:
    out = run_dir(tmp_path / "run", tamper)
    where = f"{out / 'attempts.jsonl'}:2: field '{field}'"
    with pytest.raises(LsrbUsageError) as err:
        read_run(out, "baseline")
    assert str(err.value).startswith(where) and said in str(err.value)
    for argv in (["report", str(out)], ["compare", str(out), str(out)]):
        assert lsrb(argv) == 2
        message = capsys.readouterr().err.strip()
        assert message.count("\n") == 0 and where in message and "Traceback" not in message


def test_a_lax_but_honest_record_is_read(tmp_path: Path) -> None:
    """Integers are fine numbers; absent optional fields are fine."""
    run = read_run(run_dir(tmp_path / "run", {"latency_ms": 2.5}), "run")
    assert [r["item_id"] for r in run.records] == ["a", "b"] and run.samples == 1


def test_a_run_is_named_with_its_lean_protocol() -> None:
    """One index under one-shot, proof, feedback and search runs: never shown under one name."""
    from pytest_lsrb.output.reader import run_name

    base = {"adapter": "openai", "model": "m"}
    assert run_name(base) == "openai/m"
    assert run_name({**base, "answer": "tactic", "feedback_rounds": 0}) == "openai/m"
    assert run_name({**base, "answer": "search"}) == "openai/m [search]"
    assert run_name({**base, "answer": "proof", "feedback_rounds": 2}) == "openai/m [proof, feedback 2]"
    assert run_name({"adapter": "mock"}) == "mock/default"
