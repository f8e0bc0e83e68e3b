"""Several models in one command (issue #34): `lsrb run SUITE --lsrb-model a --lsrb-model b
--lsrb-model c` against local servers speaking the OpenAI API writes three ordinary runs and one
comparison; each run resumes alone with the command its own last line prints, and the command
printed at the end resumes them all. A models file puts models on different servers, which run at
once. The paired test printed is the gate's own (`lsrb compare`) on the same two runs."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.ollama_server import FakeOllama
from lsrb_testing import REPO

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.tools.lineup import by_server, label_of, read_models_file, split_models

MODELS = ("smollm2:135m", "qwen2.5:7b", "llama3.2:1b")
ITEMS = 8


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama(models=MODELS) as fake:
        yield fake


def lsrb(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    return subprocess.run(
        [sys.executable, "-m", "pytest_lsrb", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=600,
    )


def shared(fake: FakeOllama, *extra: str) -> list[str]:
    return [
        "--lsrb-adapter=openai",
        f"--lsrb-base-url={fake.url}/v1",
        "--lsrb-allow-model-alias",
        f"--lsrb-max-items={ITEMS}",
        "--lsrb-samples=2",
        "--lsrb-temperature=0.8",
        "--lsrb-outcome=record",
        "-q",
        *extra,
    ]


def test_three_models_write_three_runs_and_one_comparison(server: FakeOllama, tmp_path: Path) -> None:
    group = tmp_path / "group"
    models = [w for m in MODELS for w in ("--lsrb-model", m)]
    done = lsrb(
        tmp_path, "run", "goal_to_tactic_proposal_v1", *models, *shared(server), f"--lsrb-output-dir={group}"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    labels = [label_of(m) for m in MODELS]
    assert labels == ["smollm2-135m", "qwen2.5-7b", "llama3.2-1b"]
    for label, model in zip(labels, MODELS, strict=True):
        summary = json.loads((group / label / "summary.json").read_text())
        assert summary["complete"] is True and summary["config"]["model"] == model
    sent = {r.body["model"] for r in server.chat_requests()}
    assert sent == set(MODELS)
    text = (group / "comparison.txt").read_text()
    assert text in done.stdout + "\n"
    table = text.split("\n\n")[0].splitlines()
    assert [row.split()[0] for row in table[2:]] == labels
    pairs = [line for line in text.splitlines() if " vs " in line]
    assert len(pairs) == 3
    assert (group / "report.html").is_file()
    # the paired test printed is the gate's: the same p-value `lsrb compare` gives for the pair
    gate = lsrb(
        tmp_path,
        "compare",
        str(group / labels[0]),
        str(group / labels[1]),
        "--json",
        str(tmp_path / "g.json"),
    )
    check = json.loads((tmp_path / "g.json").read_text())["checks"][0]
    assert gate.returncode in (0, 6)
    first = pairs[0]
    assert first.startswith(f"  {labels[0]} vs {labels[1]}: ")
    assert f" on {check['items']} items, {check['test']} p=" in first
    assert f"p={check['p_value']:.3g}" in first or check["p_value"] < 0.001


def test_each_run_resumes_alone_and_the_last_line_resumes_them_all(
    server: FakeOllama, tmp_path: Path
) -> None:
    group = tmp_path / "group"
    models = [w for m in MODELS for w in ("--lsrb-model", m)]
    # Each model's run has its own budget of 3 answers: all three stop early. Priced by completion
    # tokens alone (3 an answer), a request's worst case is its max_tokens (128): the third goes
    # at 6 + 128 <= 134, the fourth would not fit (9 + 128).
    budget = ["--lsrb-price=in=0,out=1000000", "--lsrb-max-cost=134"]
    first = lsrb(
        tmp_path,
        "run",
        "goal_to_tactic_proposal_v1",
        *models,
        *shared(server, *budget),
        f"--lsrb-output-dir={group}",
    )
    assert first.returncode == 2, first.stdout + first.stderr
    labels = [label_of(m) for m in MODELS]
    for label in labels:
        assert len((group / label / "attempts.jsonl").read_text().splitlines()) == 3
    # One run alone, with the command its own last line printed (a larger budget in it).
    own = [
        line
        for line in first.stdout.splitlines()
        if "to continue it with a larger budget, run:" in line and f"/{labels[1]}" in line
    ]
    assert len(own) == 1
    words = shlex.split(own[0].split("run: ", 1)[1])
    assert words[:3] == ["python", "-m", "pytest"]
    alone = subprocess.run(
        [sys.executable, *words[1:]], capture_output=True, text=True, cwd=tmp_path, timeout=600
    )
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert json.loads((group / labels[1] / "summary.json").read_text())["complete"] is True
    for label in (labels[0], labels[2]):  # the others are as they were
        assert len((group / label / "attempts.jsonl").read_text().splitlines()) == 3
    # Then all of them, with the command the whole command's last line printed.
    last = [line for line in first.stdout.splitlines() if "to resume them all, run:" in line]
    assert len(last) == 1
    again = shlex.split(last[0].split("run: ", 1)[1])
    assert again[:2] == ["lsrb", "run"] and "--lsrb-resume-or-start" in again
    # with a budget that should let each finish (the largest of the runs' own suggestions), used as is
    budgets = [w for w in again if w.startswith("--lsrb-max-cost")]
    assert len(budgets) == 1 and float(budgets[0].split("=")[1]) > 134
    server.reset()
    rest = lsrb(tmp_path, *again[1:])
    assert rest.returncode == 0, rest.stdout + rest.stderr
    for label in labels:
        assert json.loads((group / label / "summary.json").read_text())["complete"] is True
    # nothing finished was asked again: 2 runs x (16 - 3) attempts
    assert len(server.chat_requests()) == 2 * (2 * ITEMS - 3)


def test_a_models_file_puts_models_on_their_own_servers_at_once(tmp_path: Path) -> None:
    group = tmp_path / "group"
    with FakeOllama(models=MODELS) as one, FakeOllama(models=MODELS) as two:
        path = tmp_path / "models.toml"
        path.write_text(
            f'[[model]]\nmodel = "{MODELS[0]}"\nadapter = "openai"\nbase_url = "{one.url}/v1"\n\n'
            f'[[model]]\nlabel = "qwen-hot"\nmodel = "{MODELS[1]}"\nadapter = "ollama"\n'
            f'base_url = "{two.url}"\ntemperature = 0.9\nmax_tokens = 64\n',
            encoding="utf-8",
        )
        done = lsrb(
            tmp_path,
            "run",
            "goal_to_tactic_proposal_v1",
            f"--lsrb-models={path}",
            f"--lsrb-max-items={ITEMS}",
            "--lsrb-outcome=record",
            "-q",
            f"--lsrb-output-dir={group}",
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert {r.path for r in one.chat_requests()} == {"/v1/chat/completions"}
        assert {r.path for r in two.chat_requests()} == {"/api/chat"}
        sampling = two.chat_requests()[0].body["options"]
        assert sampling["temperature"] == 0.9 and sampling["num_predict"] == 64
    # two servers: the runs went at once, each writing its own log, named once on the terminal,
    # which showed each model's progress line as it went
    assert (group / "smollm2-135m.log").is_file() and (group / "qwen-hot.log").is_file()
    assert done.stdout.count(".log") == 1, done.stdout
    assert f"each run's output: {group}/<label>.log" in done.stdout
    for label in ("smollm2-135m", "qwen-hot"):
        assert re.search(rf"^  {re.escape(label)} +lsrb {ITEMS}/{ITEMS} \(100%\)", done.stdout, re.M), (
            done.stdout
        )
    header = json.loads((group / "qwen-hot" / "run.json").read_text())
    assert header["config"]["adapter"] == "ollama"


# -- the command line and the models file, hostile ones included ----------------------------------


def test_one_model_is_an_ordinary_run() -> None:
    assert split_models(["--lsrb-model", "a", "-q"]) is None
    runs, rest = split_models(["--lsrb-model", "a", "-q", "--lsrb-model=b"]) or ([], [])
    assert [r.label for r in runs] == ["a", "b"] and rest == ["-q"]


def test_the_same_model_twice_gets_two_folders() -> None:
    runs, _ = split_models(["--lsrb-model=a:1", "--lsrb-model=a/1"]) or ([], [])
    assert [r.label for r in runs] == ["a-1", "a-1-2"]


def test_runs_on_one_server_go_one_after_another() -> None:
    runs, _ = split_models(["--lsrb-model=a", "--lsrb-model=b"]) or ([], [])
    assert len(by_server(runs)) == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[model]]\nmodel = 'a'\nbase_urll = 'x'\n", "model 1: unknown field 'base_urll'"),
        ("[[model]]\nadapter = 'openai'\n", "model 1: field 'model' must be a non-empty string"),
        ("[[model]]\nmodel = 'a'\ntemperature = [1]\n", "model 1: field 'temperature' must be"),
        ('[[model]]\nmodel = "a"\n[[model]]\nmodel = "b\\nc"\n', "model 2: field 'model' holds a line break"),
        ("model = 'a'\n", "'model' must be a list of tables"),
        ("[[modle]]\nmodel = 'a'\n", "unknown top-level key(s) modle"),
        ("[[model]\n", "not valid TOML"),
    ],
)
def test_a_bad_models_file_is_one_sentence_naming_file_entry_and_field(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "models.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LsrbUsageError) as exc:
        read_models_file(path)
    assert str(path) in str(exc.value) and message in str(exc.value)


def test_a_huge_models_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_bytes(b"#" * (2 << 20))
    with pytest.raises(LsrbUsageError, match="at most"):
        read_models_file(path)


def test_a_bad_models_file_stops_the_command_before_any_run(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text("[[model]]\nmodel = 1\n", encoding="utf-8")
    done = lsrb(tmp_path, "run", "goal_to_tactic_proposal_v1", f"--lsrb-models={path}")
    assert done.returncode == 2
    assert done.stderr.strip() == f"lsrb: error: {path}: model 1: field 'model' must be a non-empty string."
    assert not (tmp_path / "lsrb-out").exists()


def test_llm_srbench_models_compare_by_table_1_with_one_row_per_model(tmp_path: Path) -> None:
    group = tmp_path / "group"
    done = lsrb(
        tmp_path,
        "run",
        "llm_srbench",
        "--lsrb-model=a",
        "--lsrb-model=b",
        "--lsrb-max-items=2",
        "--lsrb-outcome=record",
        "-q",
        f"--lsrb-output-dir={group}",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    text = (group / "comparison.txt").read_text()
    table = text[text.index("Table 1 (the paper's layout)") :].splitlines()
    rows = [line.split("|")[0].strip() for line in table[3:5]]
    assert rows == ["a", "b"]
    assert "  a vs b: " in text


def test_pytest_refuses_a_second_model_instead_of_dropping_the_first(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    suite = REPO / "suites" / "goal_to_tactic_proposal_v1"
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(suite),
        "-p",
        "no:cacheprovider",
        "--lsrb-model=a",
        "--lsrb-model",
        "b",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 4
    assert "--lsrb-model is given 2 times; one pytest run evaluates one model" in done.stderr
