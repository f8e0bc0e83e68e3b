"""A record cut short while other processes append (xdist workers): the next record is kept.

Each xdist worker appends whole lines to the run's one attempts.jsonl. A worker killed in the
middle of its write (or refused by a full disk) leaves the start of its line behind, and the next
worker's record lands right after it, on the same line. Every reader keeps that record and names
the line in a warning; the cut-short attempt is not in the file, so a resume runs it again.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.output.files import RECORD_START, AttemptsReadReport, iter_attempts, record_line
from pytest_lsrb.output.reader import iter_records

TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    [RECORD_START.decode(), '"}\n{"', "{", "\\", "é\u2028"]
)


def record(i: int, text: str) -> dict[str, object]:
    # The key order every record has (engine.runner.Runner.build_record puts this one first).
    return {"record_schema_version": 1, "item_id": f"item{i}", "sample_index": i % 3, "raw_output": text}


def lines_of(texts: list[str]) -> list[bytes]:
    return [record_line(record(i, t))[0] for i, t in enumerate(texts)]


@given(
    texts=st.lists(TEXT, min_size=2, max_size=6),
    torn=st.integers(min_value=0),
    cut=st.integers(min_value=1),
)
@example(texts=[RECORD_START.decode(), ""], torn=0, cut=30)  # the marker inside a string value
@example(texts=["a", "b"], torn=0, cut=1)  # only the first byte written
def test_a_record_cut_short_mid_file_loses_only_itself(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], torn: int, cut: int
) -> None:
    lines = lines_of(texts)
    torn %= len(lines) - 1  # a line after it: another process went on appending
    cut = 1 + cut % (len(lines[torn]) - 2)  # some bytes written, not the whole JSON text
    path = tmp_path_factory.mktemp("torn") / "attempts.jsonl"
    path.write_bytes(b"".join(lines[:torn]) + lines[torn][:cut] + b"".join(lines[torn + 1 :]))

    report = AttemptsReadReport()
    got = [r["item_id"] for r in iter_records(path, report)]

    assert got == [f"item{i}" for i in range(len(lines)) if i != torn]
    assert report.glued_lines == [torn + 1]
    assert f"attempts.jsonl:{torn + 1}: the line starts with a record cut short" in report.warnings[0]


def test_a_bad_line_that_is_not_a_cut_short_record_is_still_an_error(tmp_path: Path) -> None:
    a, b = lines_of(["a", "b"])
    path = tmp_path / "attempts.jsonl"
    # something other than a record before a whole one: not what a killed writer leaves
    path.write_bytes(a + b"garbage" + b + a)
    with pytest.raises(LsrbUsageError, match=r"attempts\.jsonl:2: not a valid attempt record"):
        list(iter_attempts(path))
    path.write_bytes(a + b[:20] + b"\n" + a)  # a cut-short record alone on its line: who cut it?
    with pytest.raises(LsrbUsageError, match=r"attempts\.jsonl:2: not a valid attempt record"):
        list(iter_attempts(path))


WRITE_PAST_LIMIT = textwrap.dedent(
    """
    import json, resource, signal, sys
    from pathlib import Path
    from pytest_lsrb.output.files import AttemptsWriter

    path, shared = Path(sys.argv[1]), sys.argv[2] == "shared"
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the kernel then cuts the write short
    first = AttemptsWriter(path, repair_tail=not shared)
    first.write({"record_schema_version": 1, "item_id": "a", "sample_index": 0})
    size = path.stat().st_size
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 30, resource.RLIM_INFINITY))
    try:
        first.write({"record_schema_version": 1, "item_id": "b", "sample_index": 0, "x": "y" * 80})
    except OSError as exc:
        print(json.dumps({"error": str(exc), "size": path.stat().st_size - size}))
    """
)


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE cuts writes short on Linux")
def test_beside_other_writers_a_write_cut_short_is_an_error_not_finished_later(tmp_path: Path) -> None:
    """Finishing it with a second write could put the rest after another worker's line."""
    path = tmp_path / "attempts.jsonl"
    proc = subprocess.run(
        [sys.executable, "-c", WRITE_PAST_LIMIT, str(path), "shared"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout)
    assert "only 30 of" in outcome["error"] and outcome["size"] == 30
    # another worker appends after the fragment; every reader keeps its record
    with path.open("ab") as fh:
        fh.write(record_line({"record_schema_version": 1, "item_id": "c", "sample_index": 0})[0])
    report = AttemptsReadReport()
    assert [r["item_id"] for r in iter_attempts(path, report)] == ["a", "c"]
    assert report.glued_lines == [2]


def test_the_controller_following_workers_keeps_the_record_after_a_cut_short_one(tmp_path: Path) -> None:
    """`RunOutput.follow` (the xdist controller reading what workers appended) reads the file
    like every other reader: the record glued after a cut-short one counts, the line is named."""
    from pytest_lsrb.engine.option_table import dest
    from pytest_lsrb.output.rundir import RunOutput
    from pytest_lsrb.session.prepare import prepare_suite_run

    repo = Path(__file__).resolve().parents[2]
    values = {dest("max-items"): "3", dest("output-dir"): str(tmp_path / "out")}
    run = prepare_suite_run(repo / "suites" / "goal_to_tactic_proposal_v1", values.get, repo)
    output = RunOutput.open(run)
    a, b, c = lines_of(["a", "b", "c"])
    with output.writer.path.open("ab") as fh:  # two workers: the second's line after the cut
        fh.write(a + b[:50] + c)
    assert [r["item_id"] for r in output.follow()] == ["item0", "item2"]
    assert output.write_error is None
    assert output.warnings == [
        f"{output.writer.path}:2: the line starts with a record cut short (a process was killed "
        "while writing it) followed by a complete record; the cut-short part is ignored and its "
        "attempt is run again by --lsrb-resume."
    ]
    with output.writer.path.open("ab") as fh:  # anything else still stops the run, naming it
        fh.write(b"garbage" + a)
    assert list(output.follow()) == []
    assert output.write_error is not None and ":3: not a valid attempt record" in output.write_error


def test_the_controller_following_a_run_folder_deleted_mid_run_stops_it_in_one_sentence(
    tmp_path: Path,
) -> None:
    """`rm -rf` of the run folder while `-n 2` workers write it: the controller's next look at
    attempts.jsonl ended the run in an INTERNALERROR traceback (FileNotFoundError)."""
    import shutil

    from pytest_lsrb.engine.option_table import dest
    from pytest_lsrb.output.rundir import RunOutput
    from pytest_lsrb.session.prepare import prepare_suite_run

    repo = Path(__file__).resolve().parents[2]
    values = {dest("max-items"): "3", dest("output-dir"): str(tmp_path / "out")}
    run = prepare_suite_run(repo / "suites" / "goal_to_tactic_proposal_v1", values.get, repo)
    output = RunOutput.open(run)
    shutil.rmtree(tmp_path / "out")
    assert list(output.follow()) == []
    assert output.write_error is not None
    assert str(output.writer.path) in output.write_error and "deleted or moved" in output.write_error
