"""Tactic-by-tactic proof search (issue #41 item 2; tactic/search.py), SorryDB's protocol: the
model answers `[state_id] tactic`, each step is one REPL `tactic` request on the stand-in REPL
(tests/fakes/stand_in_repl.py: the real REPL's request and reply shapes), and a proof found is
re-checked as a whole file by the acceptance rule."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsrb_testing import kimina_row

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.verifier import VerifierConfig
from pytest_lsrb.tactic.lean.proofstate import ProofStart
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.search import (
    EMPTY_TACTIC,
    Asked,
    bounded_history,
    check_search_options,
    parse_choice,
    parse_lenient,
    parser_for,
    search,
)
from pytest_lsrb.tactic.verifiers.synthetic import SyntheticVerifier

STAND_IN = Path(__file__).resolve().parents[1] / "fakes" / "stand_in_repl.py"
GOAL = "p q : Prop\nhp : p\nhq : q\n⊢ p ∧ q"


# SorryDB's `_generate_tactic` (sorrydb/strategies/tactic_strategy.py at 71959ed), case by case.
@pytest.mark.parametrize(
    ("answer", "choice"),
    [
        ("[12] rfl", (12, "rfl")),
        ("  [3] simp  ", (3, "simp")),  # the answer is stripped first
        ("[3]\nsimp", (3, "simp")),  # `\s*` after `[n]` crosses the line
        ("```\n[5] intro h\n```", (5, "intro h")),
        ("```lean\n[5] intro h\n```", (5, "intro h")),  # `lean` cut off the block
        ("```lean4\n[8] apply Nat.le_antisymm\n```", None),  # `4` is left before `[8]`
        ("```tactic\n[8] simp\n```", None),
        ("Here:\n```\n[1] simp\n```\nor\n```\n[2] ring\n```", (1, "simp")),  # the first block
        ("```\n[1] simp", (1, "simp")),  # an unclosed fence still splits
        ("<think>state 3 looks easiest</think>\n[3] simp", None),  # no reasoning step in SorryDB's
        ("[0] exact hp\nbecause hp proves p", (0, "exact hp")),  # the rest of the line
        ("I would use [2] simp", None),  # not at the start
        ("[2]", (2, "")),  # SorryDB sends the empty tactic (a failed step here)
        ("simp", None),
        ("", None),
    ],
)
def test_answers_are_read_as_sorrydb_reads_them(answer: str, choice: tuple[int, str] | None) -> None:
    assert parse_choice(answer) == choice
    assert parser_for(None) is parse_choice and parser_for("sorrydb") is parse_choice


@pytest.mark.parametrize(
    ("answer", "choice"),
    [
        ("```lean4\n[8] apply Nat.le_antisymm\n```", (8, "apply Nat.le_antisymm")),
        ("```tactic\n[8] simp\n```", (8, "simp")),
        ("<think>state 3 looks easiest</think>\n[3] simp", (3, "simp")),
        ("[2]", None),
        ("I would use [2] simp", None),
    ],
)
def test_the_lenient_reader_takes_any_fence_and_drops_reasoning(
    answer: str, choice: tuple[int, str] | None
) -> None:
    assert parse_lenient(answer) == choice and parser_for("lenient") is parse_lenient


@given(st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=60), st.integers(400, 4000))
def test_the_history_is_bounded_and_keeps_the_start_and_the_newest(entries: list[str], limit: int) -> None:
    shown = bounded_history(entries, limit)
    assert len(shown) <= max(limit, len(entries[0]) + 40 + limit // 2)
    if len("\n".join(entries)) <= limit:
        assert shown == "\n".join(entries)
    elif len(entries) > 1:
        assert shown.startswith(entries[0])
        if len(entries[0]) + len(entries[-1]) + 64 <= limit:
            assert shown.endswith(entries[-1])


def test_a_search_needs_a_checker_and_budgets() -> None:
    with pytest.raises(LsrbUsageError, match="needs --lsrb-verification"):
        check_search_options({"answer": "search", "verification": "none"})
    with pytest.raises(LsrbUsageError, match="search-failures"):
        check_search_options({"answer": "search", "verification": "synthetic", "search_failures": 0})
    check_search_options({"answer": "search", "verification": "synthetic"})


def _row() -> TacticRow:
    row: TacticRow = kimina_row(GOAL, item="s1")
    return row


@pytest.fixture
def verifier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SyntheticVerifier]:
    monkeypatch.setenv("STAND_IN_LOG", str(tmp_path / "requests.log"))
    profile = tmp_path / "repl.toml"
    profile.write_text(
        'schema_version = 1\nreplay_method = "repl"\nsynthetic_header = "core"\n'
        f'repl_command = ["{sys.executable}", "{STAND_IN}"]\n'
    )
    v = SyntheticVerifier(
        VerifierConfig(mode="synthetic", options={"profiles": str(profile), "answer": "search"})
    )
    yield v
    v.close()


def scripted(answers: list[str]) -> tuple[Any, list[tuple[str, int, str]]]:
    """`ask` answering from a list; what it was asked (prompt, newest state, its goals)."""
    asked: list[tuple[str, int, str]] = []

    def ask(prompt: str, state: int, goal: str) -> Asked:
        asked.append((prompt, state, goal))
        return Asked(answers[len(asked) - 1], True)

    return ask, asked


def run(v: SyntheticVerifier, answers: list[str], **kw: Any) -> tuple[Any, list[tuple[str, int, str]]]:
    start = v.proof_start(_row())
    assert isinstance(start, ProofStart), start
    ask, asked = scripted(answers)
    options = {"file_context": None, "max_iterations": 100, "max_failures": 3, "refuse": lambda t: None, **kw}
    return search(start, ask, **options), asked


@pytest.mark.slow
def test_a_proof_is_found_step_by_step_and_re_checked_whole(
    verifier: SyntheticVerifier, tmp_path: Path
) -> None:
    # (the failed step made state 2 too: the REPL keeps a state for Lean's error recovery)
    found, asked = run(verifier, ["[0] constructor", "[1] exact hq", "[1] exact hp", "[3] exact hq"])
    assert (found.stop, found.iterations, found.proof) == ("completed", 4, "constructor\nexact hp\nexact hq")
    steps = found.steps
    assert [s["tactic"] for s in steps] == ["constructor", "exact hq", "exact hp", "exact hq"]
    assert steps[0]["goals"] == 2 and "type mismatch" in steps[1]["error"] and steps[3]["goals"] == 0
    # the model was shown the initial state, then each result: the new goals, or Lean's error
    assert "Initial state (ID: 0):\n```\np q : Prop\nhp : p\nhq : q\n⊢ p ∧ q\n```" in asked[0][0]
    assert "State 0: Applied tactic 'constructor' → State 1" in asked[1][0]
    assert "New goal(s) (State ID: 1):\n```\np q : Prop\nhp : p\nhq : q\n⊢ p\n\n" in asked[1][0]
    assert "State 1: Applied tactic 'exact hq' → Failed: type mismatch" in asked[2][0]
    assert "No file context available." in asked[0][0] and asked[1][1] == 1
    # the REPL loaded the control script once; every step was one `tactic` request
    sent = [json.loads(x) for x in (tmp_path / "requests.log").read_text().splitlines()]
    assert [e["tactic"] for e in sent if "tactic" in e] == ["constructor", "exact hq", "exact hp", "exact hq"]
    assert sum(1 for e in sent if "lsrb_goal" in e.get("cmd", "")) == 1
    verdict = verifier.verify(_row(), found.proof, attempt_seed=0)
    assert (verdict.outcome, verdict.success) == ("closed", True), verdict.detail


@pytest.mark.slow
def test_completed_on_the_repl_is_not_a_verdict(verifier: SyntheticVerifier) -> None:
    """`native_decide` completes the proof state; the whole file's axioms refuse it."""
    found, _ = run(verifier, ["[0] native_decide"])
    assert (found.stop, found.proof) == ("completed", "native_decide")
    verdict = verifier.verify(_row(), found.proof, attempt_seed=0)
    assert (verdict.outcome, verdict.subkind) == ("lean_error", "native_decide")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("answers", "kw", "stop", "iterations"),
    [
        # three consecutive failures (SorryDB's max_consecutive_failures); a success in between resets
        (
            ["[0] exact no_such_a", "[0] simp", "[0] exat 1", "[0] exact hq", "[0] exact no_such_b"],
            {},
            "failures",
            5,
        ),
        (["[0] exact no_such_a", "[0] exact no_such_b"], {"max_failures": 2}, "failures", 2),
        (["[0] simp"] * 5, {"max_iterations": 5}, "iterations", 5),
        (["[7] simp"], {}, "invalid_state", 1),  # not an open state: SorryDB stops
        (["simp"], {}, "unparsed", 1),
    ],
)
def test_the_search_stops_as_sorrydb_s_does(
    verifier: SyntheticVerifier, answers: list[str], kw: dict[str, Any], stop: str, iterations: int
) -> None:
    found, _ = run(verifier, answers, **kw)
    assert (found.stop, found.iterations, found.proof) == (stop, iterations, None)


@pytest.mark.slow
def test_a_refused_tactic_is_a_failure_never_run(verifier: SyntheticVerifier, tmp_path: Path) -> None:
    found, _ = run(
        verifier, ["[0] sorry", "[0] exact ⟨hp, hq⟩"], refuse=lambda t: "sorry" if "sorry" in t else None
    )
    assert found.steps[0]["error"] == "sorry" and found.proof == "exact ⟨hp, hq⟩"
    sent = [json.loads(x) for x in (tmp_path / "requests.log").read_text().splitlines()]
    assert [e["tactic"] for e in sent if "tactic" in e] == ["exact ⟨hp, hq⟩"]


@pytest.mark.slow
def test_an_empty_tactic_is_a_failed_step(verifier: SyntheticVerifier, tmp_path: Path) -> None:
    """`[0]` alone: SorryDB sends the empty tactic, which Lean cannot parse: a failure, and the
    search goes on (it does not stop as at an answer not of the form)."""
    found, _ = run(verifier, ["[0]", "[0] exact ⟨hp, hq⟩"])
    assert found.steps[0] == {"state": 0, "tactic": "", "error": EMPTY_TACTIC}
    assert (found.stop, found.proof) == ("completed", "exact ⟨hp, hq⟩")


@pytest.mark.slow
def test_a_search_run_with_the_mock_model_offline(run_suite_here: Any, tmp_path: Path) -> None:
    """The whole run: the mock adapter answers each step `[state] tactic` (the task's mock answer),
    the stand-in REPL runs it; every attempt records its tree and a verdict, the protocol is in
    the run's identity, and the same run twice gives the same records."""
    profile = tmp_path / "repl.toml"
    profile.write_text(
        'schema_version = 1\nreplay_method = "repl"\nsynthetic_header = "core"\n'
        f'repl_command = ["{sys.executable}", "{STAND_IN}"]\n'
    )
    args = (
        "--lsrb-answer=search",
        "--lsrb-verification=synthetic",
        f"--lsrb-profiles={profile}",
        "--lsrb-max-items=4",
        "--lsrb-search-iterations=6",
        "--lsrb-outcome=record",
    )
    first = run_suite_here(*args, out=tmp_path / "a")
    attempts = first.attempts()
    assert len(attempts) == 4, first.stdout[-2000:]
    for a in attempts:
        tree = a["search_tree"]
        assert a["answer_mode"] == "search" and tree["stop"] in {"completed", "failures", "iterations"}, a
        assert 1 <= tree["iterations"] <= 6 and a["model_calls"] == tree["iterations"]
        assert a["verification_outcome"] is not None
        if tree["stop"] == "completed":  # the proof found was checked whole
            assert a["tactic"] and a["verification_attempted"]
        else:
            assert (a["verification_outcome"], a["verification_error_subkind"]) == (
                "lean_error",
                "no_proof_found",
            )
    run_json = json.loads((tmp_path / "a" / "run.json").read_text())
    assert run_json["config"]["answer"] == "search"
    assert run_json["config"]["search"] == {
        "protocol": "sorrydb-tactic-by-tactic",
        "iterations": 6,
        "failures": 3,
        "parse": "sorrydb",
    }
    again = run_suite_here(*args, out=tmp_path / "b").attempts()
    keep = ("item_id", "tactic", "search_tree", "verification_outcome")
    assert [{k: a[k] for k in keep} for a in again] == [{k: a[k] for k in keep} for a in attempts]


def test_a_search_without_a_repl_is_refused_before_any_model_call(tmp_path: Path) -> None:
    profile = tmp_path / "file.toml"
    profile.write_text('schema_version = 1\nreplay_method = "file"\nsynthetic_header = "core"\n')
    v = SyntheticVerifier(
        VerifierConfig(mode="synthetic", options={"profiles": str(profile), "answer": "search"})
    )
    with pytest.raises(LsrbUsageError, match=r"replay_method.*search.*nothing was sent"):
        v.preflight()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("parse", "stop", "steps"), [("sorrydb", "unparsed", 0), ("lenient", "completed", 1)]
)
def test_a_lean4_fence_stops_sorrydbs_search_and_not_the_lenient_one(
    run_suite: Any, tmp_path: Path, parse: str, stop: str, steps: int
) -> None:
    """A prover's habit, the step in a ```lean4 fence, through a whole run against a fake server:
    SorryDB's parser (the default) stops the search at the first answer; `lenient` reads it."""
    from fakes.ollama_server import FakeOllama

    profile = tmp_path / "repl.toml"
    profile.write_text(
        'schema_version = 1\nreplay_method = "repl"\nsynthetic_header = "core"\n'
        f'repl_command = ["{sys.executable}", "{STAND_IN}"]\n'
    )
    with FakeOllama(reply="```lean4\n[0] exact ⟨hp, hq⟩\n```") as fake:
        res = run_suite(
            "--lsrb-answer=search",
            "--lsrb-verification=synthetic",
            f"--lsrb-profiles={profile}",
            "-k",
            "logic_and_intro",
            "--lsrb-adapter=ollama",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={fake.url}",
            f"--lsrb-search-parse={parse}",
            "--lsrb-outcome=record",
        )
    (attempt,) = res.attempts()
    tree = attempt["search_tree"]
    assert tree["stop"] == stop and len([s for s in tree["steps"] if "tactic" in s]) == steps, tree
    assert json.loads((res.out_dir / "run.json").read_text())["config"]["search"]["parse"] == parse
