"""The tactic suite end to end against a real model: llama.cpp's server with SmolLM2-135M-Instruct.

A few items with a small token limit (the model writes ~24 tokens/s on 2 cores).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_lsrb.core.errors import GENERATION_ERROR_DOMAINS
from pytest_lsrb.engine.outcomes import generation_infrastructure
from pytest_lsrb.engine.records import strip_timing

pytestmark = [pytest.mark.llama, pytest.mark.slow]

ITEMS = 3


def llama_args(server: Any, *extra: str) -> list[str]:
    return [
        "--lsrb-adapter=openai",
        f"--lsrb-base-url={server.url}",
        f"--lsrb-model={server.model}",
        f"--lsrb-max-items={ITEMS}",
        "--lsrb-max-tokens=16",
        "--lsrb-outcome=record",
        "--lsrb-concurrency=2",
        # Generous: on 2 shared cores a 16-token answer can wait minutes behind the other request
        # in llama.cpp's one slot, and a timeout here would be retried (model_calls 2), which is
        # the adapter working, not what these tests check.
        "--lsrb-timeout=600",
        *extra,
    ]


def test_the_suite_runs_end_to_end_and_a_seed_makes_sampling_repeatable(
    llama_server: Any, run_suite: Any, tmp_path: Any
) -> None:
    args = llama_args(llama_server, "--lsrb-temperature=0.8", "--lsrb-seed=5")
    first = run_suite(*args, out=tmp_path / "a")
    assert first.returncode == 0, first.stdout + first.stderr
    records = first.attempts()
    assert len(records) == ITEMS
    for rec in records:
        assert rec["adapter"] == "openai" and rec["model"] == llama_server.model
        assert rec["model_calls"] == 1, rec  # one request per attempt: no retry was needed
        kind = rec["generation_error_kind"]
        # A 135M model may ramble, but every answer is text or a classified model_output error.
        assert kind is None or GENERATION_ERROR_DOMAINS[kind] == "model_output", rec
        if kind is None:
            assert rec["raw_output"].strip()
    summary = first.summary()
    assert summary["complete"] and summary["attempts"] == ITEMS

    second = run_suite(*args, out=tmp_path / "b")
    assert second.returncode == 0, second.stdout + second.stderr
    a = {(r["item_id"], r["sample_index"]): strip_timing(r) for r in records}
    b = {(r["item_id"], r["sample_index"]): strip_timing(r) for r in second.attempts()}
    assert a == b  # same seed, temperature 0.8: the very same attempts


def test_records_carry_tokens_finish_reason_and_the_model_that_really_answered(
    llama_server: Any, run_suite: Any
) -> None:
    """llama.cpp answers with its one loaded model whatever the request names: the record says so."""
    args = llama_args(llama_server, "--lsrb-price=in=0.15,out=0.6", "--lsrb-allow-model-alias")
    args[2] = "--lsrb-model=gpt-4o"
    result = run_suite(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    records = [r for r in result.attempts() if not r["generation_error_kind"]]
    assert records
    for rec in records:
        assert rec["model"] == "gpt-4o" and rec["served_model"] == llama_server.model
        assert rec["prompt_tokens"] > 0 and 0 < rec["completion_tokens"] <= 16
        assert rec["finish_reason"] in ("stop", "length") and rec["system_fingerprint"]
    summary = result.summary()
    assert summary["prompt_tokens"] == sum(r["prompt_tokens"] or 0 for r in result.attempts())
    # Every answer the server gave names the model that gave it: also an answer the model left
    # empty or unreadable (the model's own failure, engine/outcomes.unreadable), not only the good ones.
    answered = [r for r in result.attempts() if not generation_infrastructure(r)]
    assert summary["served_models"] == {llama_server.model: len(answered)}
    assert summary["cost"] > 0
    assert "tokens in/out" in result.stdout and "asked for gpt-4o" in result.stdout


def test_a_model_the_server_does_not_serve_stops_the_run_before_any_call(
    llama_server: Any, run_suite: Any
) -> None:
    """llama.cpp would answer "gpt-4o" with SmolLM2: without --lsrb-allow-model-alias that is refused."""
    args = llama_args(llama_server)
    args[2] = "--lsrb-model=gpt-4o"
    result = run_suite(*args)
    assert result.returncode == 4, result.stdout + result.stderr  # pytest's usage error
    (line,) = [x for x in (result.stdout + result.stderr).splitlines() if "--lsrb-model:" in x]
    assert "does not serve 'gpt-4o'" in line and f"it serves: {llama_server.model}" in line
    assert "--lsrb-allow-model-alias" in line
    assert not result.attempts()


def test_feedback_rounds_against_the_real_server(llama_server: Any, run_suite: Any, tmp_path: Any) -> None:
    """The feedback loop's prompting path against llama.cpp (issue #41, item 1): every answer is
    refused by a fake `lean` (tests/tactic/lean/lean_fakes.py), so each attempt makes 1 + 2 rounds,
    each later request carries Lean's reply, and every round is recorded."""
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tactic" / "lean"))
    from lean_fakes import install_toolchain, path_with

    install_toolchain(tmp_path / "bin")
    rules = [
        {  # every answer, never the goal's own check (whose proof is `sorry`)
            "contains": ":= by",
            "absent": "  sorry",
            "messages": [{"severity": "error", "data": "no: fake Lean", "at": ":= by"}],
        }
    ]
    res = run_suite(
        *llama_args(llama_server, "--lsrb-feedback-rounds=2", "--lsrb-verification=synthetic"),
        out=tmp_path / "fb",
        env={"PATH": path_with(tmp_path / "bin"), "FAKE_LEAN_RULES": json.dumps(rules)},
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    for rec in res.attempts():
        rounds = rec["feedback_rounds"]
        assert len(rounds) == 3 and rec["model_calls"] >= 3, rec
        assert all(r["outcome"] != "closed" for r in rounds)
        assert rounds[0]["prompt_hash"] != rounds[1]["prompt_hash"] != rounds[2]["prompt_hash"]


def test_search_against_the_real_server(llama_server: Any, run_suite: Any, tmp_path: Any) -> None:
    """The tactic-by-tactic search's prompting path against llama.cpp (issue #41, item 2): each
    step asks the model with SorryDB's prompt for `[state_id] tactic` and runs the answer on the
    stand-in REPL (tests/fakes/stand_in_repl.py). A 135M model rarely keeps the format: however
    it answers, every attempt ends with its tree recorded and a verdict or a reason."""
    import sys
    from pathlib import Path

    stand_in = Path(__file__).resolve().parents[1] / "fakes" / "stand_in_repl.py"
    profile = tmp_path / "repl.toml"
    profile.write_text(
        'schema_version = 1\nreplay_method = "repl"\nsynthetic_header = "core"\n'
        f'repl_command = ["{sys.executable}", "{stand_in}"]\n'
    )
    res = run_suite(
        *llama_args(
            llama_server,
            "--lsrb-answer=search",
            "--lsrb-verification=synthetic",
            f"--lsrb-profiles={profile}",
            "--lsrb-search-iterations=3",
        ),
        out=tmp_path / "search",
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    records = res.attempts()
    assert len(records) == ITEMS
    for rec in records:
        tree = rec["search_tree"]
        assert 1 <= tree["iterations"] <= 3 and rec["model_calls"] >= tree["iterations"], rec
        assert tree["stop"] in {"completed", "failures", "iterations", "unparsed", "invalid_state"}, tree
        assert rec["prompt"][0]["content"].startswith("You are an advanced AI")  # SorryDB's prompt
        if tree["stop"] == "completed":
            assert rec["tactic"] and rec["verification_attempted"]
