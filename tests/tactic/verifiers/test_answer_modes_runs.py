"""Prover outputs through a whole run (pytest in a subprocess, a fake Ollama answering with a
published format, a fake Lean): the tactic and the proof modes, and the soundness holes.

The answers follow Goedel-Prover-V2's and Kimina-Prover's published format (tests/tactic/
test_published_formats.py names the sources): reasoning, then a ```lean4 block with imports,
options and the theorem, whose proof opens with `have h_main ... := by`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakes.ollama_server import FakeOllama
from lean_fakes import install_toolchain, path_with

PROVER_ANSWER = (
    "<think>\nThe goal follows from its hypotheses.\n</think>\n"
    "### Complete Lean 4 Proof\n\n```lean4\nimport Mathlib\nimport Aesop\n\n"
    "set_option maxHeartbeats 400000\n\n"
    "open BigOperators Real Nat Topology Rat\n\ntheorem lsrb_item : True := by\n"
    "  have h_main : True := by\n    trivial\n  exact h_main\n```"
)
KERNEL_BYPASS = "```lean\nset_option debug.skipKernelTC true in exact (by decide +kernel : False).elim\n```"


def _run(run_suite: Any, tmp_path: Path, reply: str, *args: str, name: str) -> tuple[Any, list[Any]]:
    install_toolchain(tmp_path / "bin")
    with FakeOllama(reply=reply) as server:
        res = run_suite(
            "--lsrb-verification=synthetic",
            "--lsrb-max-items=3",
            "--lsrb-adapter=ollama",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={server.url}",
            "--lsrb-outcome=record",
            *args,
            out=tmp_path / name,
            env={"PATH": path_with(tmp_path / "bin")},
        )
        chats = list(server.chat_requests())
    return res, chats


def test_a_prover_answer_is_read_and_closes_in_both_modes(run_suite: Any, tmp_path: Path) -> None:
    tactic_run, tactic_chats = _run(run_suite, tmp_path, PROVER_ANSWER, name="tactic")
    attempts = tactic_run.attempts()
    assert len(attempts) == 3, tactic_run.stdout[-2000:]
    for a in attempts:
        assert a["tactic"] == "have h_main : True := by\n  trivial"
        assert (a["answer_mode"], a["answer_format"]) == ("tactic", "think+fence+header")
        assert (a["valid"], a["verification_outcome"]) == (True, "closed"), a.get("verification_detail")
    assert tactic_run.summary()["verification_pass_at_k_1"] == 1.0
    assert "one Lean 4 tactic" in tactic_chats[0].body["messages"][0]["content"]

    proof_run, proof_chats = _run(run_suite, tmp_path, PROVER_ANSWER, "--lsrb-answer=proof", name="proof")
    attempts = proof_run.attempts()
    assert len(attempts) == 3, proof_run.stdout[-2000:]
    for a in attempts:
        assert a["tactic"] == "have h_main : True := by\n  trivial\nexact h_main"
        assert a["answer_mode"] == "proof" and a["verification_outcome"] == "closed"
    assert proof_run.summary()["verification_pass_at_k_1"] == 1.0
    asked = proof_chats[0].body
    assert "complete Lean 4 proof" in asked["messages"][0]["content"]
    assert asked["options"]["num_predict"] == 2048  # a proof does not fit the suite's 128 tokens
    config = proof_run.summary()["config"]
    assert config["answer"] == "proof" and config["max_tokens"] == 2048


def test_the_kernel_bypass_never_closes_and_stays_the_models(run_suite: Any, tmp_path: Path) -> None:
    res, _ = _run(run_suite, tmp_path, KERNEL_BYPASS, name="bypass")
    attempts = res.attempts()
    assert len(attempts) == 3, res.stdout[-2000:]
    for a in attempts:
        assert "verification_outcome" in a, a
        verdict = (a["verification_outcome"], a["verification_error_subkind"], a["verification_error_domain"])
        assert verdict == ("forbidden_token", "option", "model")
    summary = res.summary()
    assert summary["verification_pass_at_k_1"] == 0.0
    assert summary["verification_unjudged"] == 0
