"""Lean's lexical rules (tactic/lean/lexer.py) and the laws the reader and the guard keep with them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.tactic.answer import read_answer
from pytest_lsrb.tactic.guard import refuse
from pytest_lsrb.tactic.lean.lexer import code_view, spans, strip_comments, without_comments


@pytest.mark.parametrize(
    ("text", "code"),
    [
        # finishCommentBlock: comments nest
        ("/- a /- b -/ sorry -/ x", "x"),
        # whitespace: `--` to the end of the line, the newline stays
        ("simp -- sorry\nring", "simp\nring"),
        # `/--` and `/-!` doc comments are comments too
        ("/-- doc -/ a /-! mod -/ b", "a b"),
        # quotes mean nothing inside a comment
        ('/- " -/ c', "c"),
        # strLitFnAux: `--` and `/-` inside a string are string; `\"` does not close it
        ('exact "a -- b \\" /- c" d', "exact d"),
        # identFnAux: `'` inside a name (`h'`) is the name's; `'a'` a character literal
        ("exact h' 'a' '\\n'", "exact h'"),
        # tokenFnCore: `''` is not a character literal (Mathlib's image `f '' s`)
        ("f '' s", "f '' s"),
        # «» names hide nothing: `--` inside is part of the name
        ("exact «a -- b» c", "exact «a -- b» c"),
        # raw strings: no escapes, closed by `"` and as many `#`
        ('r#"a "sorry" b"# x', "x"),
        # interpolation: `{...}` is a term
        ('s!"a {sorry} b"', "s! sorry"),
        # an unterminated comment runs to the end
        ("simp /- never closed\nring", "simp"),
    ],
)
def test_code_is_what_lean_reads_as_code(text: str, code: str) -> None:
    assert " ".join(code_view(text).split()) == " ".join(code.split())


def test_spans_cover_the_text_in_order() -> None:
    text = "a /- b -/ \"c\" 'd' -- e\nf"
    parts = spans(text)
    assert "".join(text[s.start : s.end] for s in parts) == text
    kinds = ["code", "comment", "code", "string", "code", "char", "code", "comment", "code"]
    assert [s.kind for s in parts] == kinds


def test_lines_keep_their_numbers_and_comment_lines_go() -> None:
    text = "/-\n  \\[ x \\]\n-/\n  -- we get:\n  simp\n\n  ring"
    assert strip_comments(text).count("\n") == text.count("\n")
    assert without_comments(text) == "  simp\n\n  ring"


# -- laws --------------------------------------------------------------------------------------

_TACTICS = ["simp", "ring", "norm_num [h₀]", "linarith", "omega", "nlinarith [sq_nonneg (a - b)]", "rfl"]
# what a comment or a string may hold: prose, LaTeX, sorry, commands, options, a line ending in `:`
# (not a ``` line: markdown closes a fence there whatever Lean would read)
_SAFE = st.sampled_from(
    [
        "sorry",
        "we get:",
        "\\[ x^2 \\]",
        "theorem t : False := sorry",
        "set_option debug.skipKernelTC true in",
        "namespace Foo",
        "admit",
        "end",
        "#eval 1",
        "Step 1:",
    ]
)
_COMMENT_TEXT = st.lists(_SAFE, min_size=1, max_size=3).map(" ".join)


@st.composite
def _commented(draw: st.DrawFn) -> tuple[str, str]:
    """A proof body (two-space indent) and the same body with comments put in."""
    tactics = draw(st.lists(st.sampled_from(_TACTICS), min_size=1, max_size=5))
    plain, commented = [], []
    for tactic in tactics:
        line = "  " + tactic
        plain.append(line)
        where = draw(st.sampled_from(["none", "line", "end", "block", "nested"]))
        text = draw(_COMMENT_TEXT)
        if where == "line":
            commented += ["  -- " + text, line]
        elif where == "end":
            commented.append(f"{line} -- {text}")
        elif where == "block":
            commented += ["  /-", "  " + text, "  -/", line]
        elif where == "nested":
            commented += [f"  /- {text} /- {text} -/ {text} -/", line]
        else:
            commented.append(line)
    return "\n".join(plain), "\n".join(commented)


@given(_commented(), st.sampled_from(["", "\n```"]))
def test_comments_never_change_the_answer_or_the_verdict(pair: tuple[str, str], tail: str) -> None:
    plain, commented = pair
    for mode in ("proof", "tactic"):
        read_plain = read_answer(plain + tail, mode)
        read_commented = read_answer(commented + tail, mode)
        assert read_commented.tactic == read_plain.tactic
        assert read_commented.valid == read_plain.valid
        assert refuse(commented, proof=True) == refuse(plain, proof=True)


@given(st.lists(_SAFE, min_size=1, max_size=3).map(" ".join), st.sampled_from(_TACTICS))
def test_a_string_literal_never_changes_the_verdict(content: str, tactic: str) -> None:
    def answer(text: str) -> str:
        return f'{tactic}\nhave hs : "{text}".length = "{text}".length := rfl'

    assert refuse(answer(content), proof=True) == refuse(answer("x"), proof=True)
    read = read_answer(answer(content), "proof").tactic
    assert read == read_answer(answer("x"), "proof").tactic.replace('"x"', f'"{content}"')


@st.composite
def _well_indented(draw: st.DrawFn) -> str:
    """A proof of at least two tactics at one column, some with a nested block, as a prover
    writes it after `:= by`."""
    base = " " * draw(st.sampled_from([2, 4]))
    lines: list[str] = []
    for index in range(draw(st.integers(2, 5))):
        kind = draw(st.sampled_from(["one", "have", "bracket", "bullet"]))
        if kind == "have":
            lines += [f"{base}have h{index} : 0 ≤ {index} := by", f"{base}  positivity"]
        elif kind == "bracket":
            lines += [f"{base}nlinarith [sq_nonneg (a - b),", f"{base}  sq_nonneg (a + b)]"]
        elif kind == "bullet" and index:
            lines += [f"{base}· simp", f"{base}  ring"]
        else:
            lines.append(base + draw(st.sampled_from(_TACTICS)))
    return "\n".join(lines)


@given(_well_indented(), st.sampled_from(["", "\n```", "\n```\n\nThe proof uses simp."]))
def test_a_stripped_first_indent_does_not_change_the_answer(proof: str, tail: str) -> None:
    """What a client's `.strip()` does to a completion (issue #41: DeepSeek-Prover-V2 read wrong)."""
    for mode in ("proof", "tactic"):
        original = read_answer(proof + tail, mode).tactic
        assert read_answer(proof.lstrip() + tail, mode).tactic == original
