"""Tab-indented answers are refused as Lean refuses tabs (issue #47 item 3): before, the reader lined
a tab-indented proof up without its tabs and Lean closed it, where SorryDB splices the text as
written and Lean stops at the first tab with "tabs are not allowed; please configure your editor
to expand them" (src/Lean/Parser/Basic.lean `whitespace`). Whole runs through pytest with a fake
Ollama (the model) and a fake `lean` (the checker) at the process edge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes.ollama_server import FakeOllama
from hypothesis import given
from hypothesis import strategies as st
from lean_fakes import install_toolchain, path_with

from pytest_lsrb.tactic.lean.outcome import error_subkind
from pytest_lsrb.tactic.lean.tabs import TAB_MESSAGE, tab_in_code, tab_indented


@pytest.mark.parametrize(
    ("raw", "answer", "tabbed"),
    [
        ("```lean\n\tconstructor\n\t· trivial\n\t· trivial\n```", "constructor\n· trivial\n· trivial", True),
        ("```lean\nconstructor\n\t· trivial\n```", "constructor\n· trivial", True),
        ("```lean\nsimp\t[h]\n```", "simp\t[h]", True),  # a tab between tokens
        ("```lean\nsimp -- a\ttab in a comment\n```", "simp -- a\ttab in a comment", False),
        ('```lean\nexact "a\\tb"\n```', 'exact "a\\tb"', False),
        ('```lean\nexact "a\tb"\n```', 'exact "a\tb"', False),  # inside a string literal
        ("Here is\tthe proof:\n```lean\n  simp\n```", "simp", False),  # the tab is in the prose
        ("```lean\n  intro h\n  exact h\n```", "intro h\nexact h", False),
    ],
)
def test_a_tab_in_the_code_the_model_wrote_is_found(raw: str, answer: str, tabbed: bool) -> None:
    assert tab_indented(raw, answer) is tabbed


@given(st.text(alphabet=st.characters(blacklist_characters="\t"), max_size=200))
def test_text_without_a_tab_is_never_refused(text: str) -> None:
    assert not tab_in_code(text) and not tab_indented(text, text)


def test_lean_s_tab_error_is_a_parse_error() -> None:
    assert error_subkind(TAB_MESSAGE) == "parse"
    assert error_subkind("isolated carriage returns are not allowed") == "parse"


TABBED = "```lean\nconstructor\n\t· exact hp\n\t· exact hq\n```"
SPACED = "```lean\nconstructor\n  · exact hp\n  · exact hq\n```"


def _run(run_suite: Any, tmp_path: Path, reply: str) -> tuple[Any, list[dict[str, Any]]]:
    install_toolchain(tmp_path / "bin")
    log = tmp_path / "lean.log"
    with FakeOllama(reply=reply) as fake:
        res = run_suite(
            "--lsrb-verification=synthetic",
            "--lsrb-answer=proof",
            "--lsrb-goal-slice=tag:logic",
            "--lsrb-max-items=1",
            "--lsrb-adapter=ollama",
            "--lsrb-model=qwen2.5:7b",
            f"--lsrb-base-url={fake.url}",
            "--lsrb-outcome=record",
            out=tmp_path / "out",
            env={"PATH": path_with(tmp_path / "bin"), "FAKE_LEAN_LOG": str(log)},
        )
    checked = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    return res, checked


@pytest.mark.smoke  # the feature's one end-to-end test in the default run
def test_a_tab_indented_proof_is_lean_s_parse_error(run_suite: Any, tmp_path: Path) -> None:
    res, checked = _run(run_suite, tmp_path / "tabs", TABBED)
    (attempt,) = res.attempts()
    assert (attempt["verification_outcome"], attempt["verification_error_subkind"]) == ("lean_error", "parse")
    assert TAB_MESSAGE in attempt["verification_detail"] and attempt["verification_success"] is False
    assert not any("exact hq" in entry.get("text", "") for entry in checked)  # refused as Lean would
    spaced, checked = _run(run_suite, tmp_path / "spaces", SPACED)
    (attempt,) = spaced.attempts()
    assert attempt["verification_outcome"] == "closed", (attempt["tactic"], attempt["verification_detail"])
    assert any("exact hq" in entry.get("text", "") for entry in checked)
