"""Backends and the REPL client at the process boundary: fake `lean`/`repl` executables that
answer, hang, die or flood memory. A hang must end as `timeout`, a killed or out-of-memory
process as `oom_or_crash`, a missing executable as `toolchain_missing`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_lsrb.tactic.lean.backend import FileBackend, ReplBackend, make_repl_backend, split_imports
from pytest_lsrb.tactic.lean.outcome import LeanMessage, parse_lean_output
from pytest_lsrb.tactic.lean.process import run_bounded
from pytest_lsrb.tactic.lean.repl import (
    ReplClient,
    ReplCrashed,
    ReplMemoryLimit,
    ReplMissing,
    ReplTimeout,
    read_transcript,
)

SOURCE = "set_option autoImplicit false\n\nexample (n : Nat) :\n    n + 0 = n := by\n  omega\n"


def backend(tmp_path: Path, **kw: object) -> FileBackend:
    args: dict[str, object] = {
        "project": None,
        "timeout_s": 20.0,
        "memory_mb": 1024,
        "scratch_root": tmp_path,
    }
    args.update(kw)
    return FileBackend(**args)


def test_file_backend_reads_lean_json_messages(
    fake_toolchain: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = [
        {
            "contains": "omega",
            "messages": [{"severity": "error", "data": "omega could not prove the goal", "at": "omega"}],
        }
    ]
    monkeypatch.setenv("FAKE_LEAN_RULES", json.dumps(rules))
    run = backend(tmp_path).check(SOURCE, rel_path="Dir/File.lean")
    assert run.status == "ok"
    assert [(m.severity, m.pos, m.end_pos) for m in run.messages] == [("error", (5, 2), (5, 7))]
    call = json.loads((tmp_path / "lean.log").read_text().splitlines()[0])
    assert call["argv"][0] == "--json" and call["argv"][-1].endswith("Dir/File.lean")
    assert not list(tmp_path.glob("lsrb-lean-*")), "the scratch copy is removed"


def test_file_backend_in_a_project_runs_lake_env_lean(
    fake_toolchain: dict[str, Path], tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    run = backend(tmp_path, project=project).check(SOURCE.replace("omega", "sorry"), rel_path="A.lean")
    assert run.status == "ok"
    assert [m.data for m in run.messages] == ["declaration uses 'sorry'"]
    call = json.loads((tmp_path / "lean.log").read_text().splitlines()[0])
    assert Path(call["cwd"]) == project


def test_hang_is_timeout(
    fake_toolchain: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LEAN_MODE", "hang")
    run = backend(tmp_path, timeout_s=1.0).check(SOURCE, rel_path="A.lean")
    assert run.status == "timeout"
    assert "killed" in run.detail


def test_killed_process_is_oom_or_crash(
    fake_toolchain: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LEAN_MODE", "die")
    run = backend(tmp_path).check(SOURCE, rel_path="A.lean")
    assert run.status == "oom_or_crash"
    assert "SIGKILL" in run.detail


def test_memory_flood_hits_the_cap(
    fake_toolchain: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LEAN_MODE", "flood")
    run = backend(tmp_path, memory_mb=400).check(SOURCE, rel_path="A.lean")
    assert run.status == "memory_limit"  # the cap's, so the environment's: not the model's fault
    assert "hit the memory cap of 400 MiB" in run.detail and "MemoryError" in run.detail


def test_missing_lean_is_toolchain_missing(tmp_path: Path) -> None:
    b = backend(tmp_path, lean_command=str(tmp_path / "no-such-lean"))
    assert b.unavailable() is not None and "not on PATH" in (b.unavailable() or "")
    assert b.check(SOURCE, rel_path="A.lean").status == "toolchain_missing"


def test_run_bounded_missing_executable() -> None:
    assert run_bounded(["definitely-not-a-lean-binary"], timeout_s=5, memory_mb=None).status == "missing"


def test_plain_lean_output_is_parsed() -> None:
    out = (
        "A.lean:3:2: error: unsolved goals\nn : Nat\n⊢ n = n\nA.lean:7:0: warning: declaration uses 'sorry'\n"
    )
    msgs = parse_lean_output(out)
    assert [(m.severity, m.pos) for m in msgs] == [("error", (3, 2)), ("warning", (7, 0))]
    assert msgs[0].data == "unsolved goals\nn : Nat\n⊢ n = n"
    assert msgs[1].is_sorry_warning


def test_split_imports() -> None:
    assert split_imports("import Mathlib\nimport Foo.Bar\n\nexample : True := trivial\n") == 2
    assert split_imports("/- doc\n-/\nimport A\n-- c\ntheorem x : True := trivial") == 3
    assert split_imports("theorem x : True := trivial") == 0


# -- the REPL client -------------------------------------------------------------------------


def repl_argv(tools: dict[str, Path], transcripts: Path, name: str) -> list[str]:
    return [str(tools["repl"]), str(transcripts / name)]


def test_repl_hang_is_timeout_and_the_process_is_gone(
    fake_toolchain: dict[str, Path], transcripts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_REPL_MODE", "hang-at:1")
    client = ReplClient(repl_argv(fake_toolchain, transcripts, "readme"), memory_mb=1024)
    client.send({"cmd": "def f (x : Unit) : Nat := by sorry"}, timeout_s=20)
    with pytest.raises(ReplTimeout):
        client.send({"tactic": "apply Int.natAbs", "proofState": 0}, timeout_s=1)
    assert not client.alive
    client.close()


def test_repl_death_is_a_crash(
    fake_toolchain: dict[str, Path], transcripts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_REPL_MODE", "die-at:0")
    with (
        ReplClient(repl_argv(fake_toolchain, transcripts, "readme")) as client,
        pytest.raises(ReplCrashed, match="SIGKILL"),
    ):
        client.send({"cmd": "def f (x : Unit) : Nat := by sorry"}, timeout_s=20)


def test_repl_memory_flood_is_a_crash(
    fake_toolchain: dict[str, Path], transcripts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_REPL_MODE", "flood-at:0")
    with (
        ReplClient(repl_argv(fake_toolchain, transcripts, "readme"), memory_mb=400) as client,
        pytest.raises(ReplMemoryLimit, match="hit the memory cap of 400 MiB"),
    ):
        client.send({"cmd": "def f (x : Unit) : Nat := by sorry"}, timeout_s=30)


def test_repl_missing_executable(tmp_path: Path) -> None:
    with pytest.raises(ReplMissing):
        ReplClient([str(tmp_path / "no-repl")]).start()


def numbertheory(transcripts: Path) -> tuple[str, list[str]]:
    """The header (imports and `open`s) and the three theorems of Mathlib's H20231020 transcript."""
    requests = read_transcript(transcripts / "Mathlib__test__H20231020.in")
    return str(requests[0]["cmd"]), [str(r["cmd"]) for r in requests[1:]]


def test_repl_backend_maps_failures_and_restarts(
    fake_toolchain: dict[str, Path], transcripts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A timeout restarts the REPL (generation bumps, cached environments are dropped): the next
    check sends the imports again to the new process."""
    monkeypatch.setenv("FAKE_REPL_MODE", "hang-at:1")
    header, theorems = numbertheory(transcripts)
    b = make_repl_backend(
        project=None,
        timeout_s=1.0,
        memory_mb=1024,
        repl_command=repl_argv(fake_toolchain, transcripts, "Mathlib__test__H20231020"),
        lake_command="lake",
    )
    assert isinstance(b, ReplBackend) and b.name == "repl" and b.unavailable() is None
    lines = header.count("\n") + 1
    hung = b.check(f"{header}\n{theorems[0]}", rel_path="A.lean", header_lines=lines)
    assert hung.status == "timeout" and b.generation == 1
    monkeypatch.delenv("FAKE_REPL_MODE")
    again = b.check(f"{header}\n{theorems[0]}", rel_path="A.lean", header_lines=lines)
    assert again.status == "ok" and again.errors == [], again
    b.close()


def test_repl_backend_reuses_the_imports_environment(
    fake_toolchain: dict[str, Path], transcripts: Path
) -> None:
    """The header runs once: the later theorems are sent alone, in its env (the fake REPL answers
    `unexpected request` to anything but the recorded sequence); message lines shift back."""
    header, theorems = numbertheory(transcripts)
    b = make_repl_backend(
        project=None,
        timeout_s=20,
        memory_mb=1024,
        lake_command="lake",
        repl_command=repl_argv(fake_toolchain, transcripts, "Mathlib__test__H20231020"),
    )
    lines = header.count("\n") + 1
    runs = [b.check(f"{header}\n{t}", rel_path="A.lean", header_lines=lines) for t in theorems]
    assert [r.status for r in runs] == ["ok"] * 3
    assert all("unexpected request" not in str(r.reply) for r in runs)
    assert all(m.pos[0] > lines for r in runs for m in r.messages)
    b.close()


def test_repl_backend_protocol_refusal_is_a_harness_failure(
    fake_toolchain: dict[str, Path], transcripts: Path
) -> None:
    """`Unknown environment.` is the REPL refusing the request: `failed`, never a clean run the
    acceptance rule could read as closed."""
    b = make_repl_backend(
        project=None,
        timeout_s=20,
        memory_mb=1024,
        lake_command="lake",
        repl_command=repl_argv(fake_toolchain, transcripts, "unknown_environment"),
    )
    b._envs["import X"] = 5  # an environment a restarted REPL no longer has
    run = b.check("import X\ndef f : Nat := by sorry", rel_path="A.lean")
    assert run.status == "failed" and "Unknown environment" in run.detail
    b.close()


def test_repl_backend_without_executable_is_toolchain_missing(tmp_path: Path) -> None:
    b = make_repl_backend(
        project=None,
        timeout_s=5,
        memory_mb=None,
        lake_command="lake",
        repl_command=[str(tmp_path / "no-repl")],
    )
    assert b.unavailable() is not None


@pytest.mark.parametrize(
    ("data", "severity", "counts"),
    [
        ("declaration uses 'sorry'", "warning", True),
        ("declaration uses `sorry`", "warning", True),
        ("declaration `Foo.bar` uses `sorry`", "warning", True),  # lean4#11414's wording
        ("declaration uses 'sorry'", "error", False),
        ("declaration uses 'sorry' -- and more", "warning", False),
        ("unused variable `sorry`", "warning", False),
    ],
)
def test_the_sorry_warning_in_each_wording_lean_has_used(data: str, severity: str, counts: bool) -> None:
    assert LeanMessage(severity, (1, 0), None, data).is_sorry_warning is counts
