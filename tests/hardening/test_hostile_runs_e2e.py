"""Hostile inputs end to end, as a user meets them: `pytest` and `lsrb` in a subprocess against a
real HTTP model endpoint (the local fake Ollama server, which counts every chat request).

Each case: exit status 4 (pytest's usage error; `lsrb` exits 2), one `ERROR:` sentence on stderr
naming the file, no traceback, no model call, and the output directory of the previous run
byte-for-byte as it was, even with --lsrb-overwrite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.ollama_server import FakeOllama

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "suites" / "goal_to_tactic_proposal_v1"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOllama]:
    with FakeOllama() as server:
        yield server


def pytest_run(cwd: Path, fake: FakeOllama, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(SUITE),
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:benchmark",
        "--lsrb-adapter=ollama",
        "--lsrb-model=qwen2.5:7b",
        f"--lsrb-base-url={fake.url}",
        "--lsrb-max-items=4",
        "--lsrb-outcome=record",
        f"--lsrb-output-dir={out}",
        *extra,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def lsrb(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_lsrb", *args], capture_output=True, text=True, cwd=cwd, timeout=300
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def previous(tmp_path_factory: pytest.TempPathFactory, fake: FakeOllama) -> Path:
    """A finished run through the endpoint: the directory hostile runs must leave alone."""
    out = tmp_path_factory.mktemp("prev") / "out"
    proc = pytest_run(out.parent, fake, out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def one_error_sentence(proc: subprocess.CompletedProcess[str], names: Path, prefix: str = "ERROR: ") -> str:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(prefix) and str(names) in lines[0], lines[0]
    return lines[0]


def damaged_copy(previous: Path, dst: Path, name: str, edit) -> Path:
    shutil.copytree(previous, dst)
    path = dst / name
    path.write_bytes(edit(path.read_bytes()))
    return dst


CASES = [
    "index_row",
    "index_bytes",
    "resume_line",
    "resume_field",
    "resume_header",
    "profile",
    "baseline",
    "manifest",
    "index_row_xdist",
]


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_input_stops_the_run_before_any_model_call(
    case: str, tmp_path: Path, fake: FakeOllama, previous: Path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(previous, out)
    before = snapshot(out)
    good_row = (SUITE / "index.jsonl").read_text("utf-8").splitlines()[0]
    args: list[str] = ["--lsrb-overwrite"]
    named: Path
    if case.startswith("index"):
        named = tmp_path / "index.jsonl"
        bad = (
            (b'{"item_id": "x", ' + b"[" * 5000)
            if case == "index_bytes"
            else json.dumps({**json.loads(good_row), "item_id": "other", "start_line": "12"}).encode()
        )
        named.write_bytes(good_row.encode() + b"\n" + bad + b"\n")
        args.append(f"--lsrb-index={named}")
        if case.endswith("xdist"):
            args += ["-n", "2"]
    elif case.startswith("resume"):
        args = ["--lsrb-resume"]
        if case == "resume_header":
            named = out / "run.json"
            header = json.loads(named.read_text("utf-8"))
            named.write_text(json.dumps({**header, "config": "seed=0"}), "utf-8")
        else:
            named = out / "attempts.jsonl"
            lines = named.read_text("utf-8").splitlines()
            if case == "resume_line":
                lines[1] = lines[1][: len(lines[1]) // 2]  # a torn line that is not the last one
            else:
                lines[1] = json.dumps({**json.loads(lines[1]), "generation_error_kind": ["timeout"]})
            named.write_text("\n".join(lines) + "\n", "utf-8")
        before = snapshot(out)
    elif case == "profile":
        named = tmp_path / "bad.toml"
        named.write_text('schema_version = 1\nmemory_mb = "lots"\n', "utf-8")
        args += ["--lsrb-verification=synthetic", f"--lsrb-profiles={named}"]
    elif case == "baseline":
        base = damaged_copy(previous, tmp_path / "base", "run.json", lambda raw: raw[:-20])
        named = base / "run.json"
        args.append(f"--lsrb-baseline={base}")
    else:
        named = tmp_path / "split_manifest.json"
        named.write_text(
            json.dumps(
                {
                    "kind": "lsrb_split_manifest",
                    "source_index_sha256": "0" * 64,
                    "splits": {"test": {"items": [{"id": 1}]}},
                }
            ),
            "utf-8",
        )
        args.append(f"--lsrb-split-policy=manifest:{named}#test")
    calls = len(fake.chat_requests())
    proc = pytest_run(tmp_path, fake, out, *args)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    one_error_sentence(proc, named)
    assert len(fake.chat_requests()) == calls  # no model was called
    assert snapshot(out) == before  # nothing of the previous run was overwritten


def test_lsrb_commands_refuse_damaged_run_dirs_in_one_sentence(tmp_path: Path, previous: Path) -> None:
    broken = damaged_copy(
        previous,
        tmp_path / "broken",
        "attempts.jsonl",
        lambda raw: raw.replace(b'"sample_index":0', b'"sample_index":"0"', 1),
    )
    before = snapshot(broken)
    for args, named in (
        (["compare", str(broken), str(previous)], broken / "attempts.jsonl"),
        (["merge", str(broken), "--out", str(tmp_path / "merged")], broken / "attempts.jsonl"),
        (["split", str(broken / "attempts.jsonl"), "--out", str(tmp_path / "split")], broken),
    ):
        proc = lsrb(tmp_path, *args)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        one_error_sentence(proc, named, prefix="lsrb: error: ")
    assert snapshot(broken) == before
    assert not (tmp_path / "merged").exists() and not (tmp_path / "split").exists()
