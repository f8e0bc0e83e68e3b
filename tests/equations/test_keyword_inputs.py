"""Input names that are Python keywords (`lambda`, a wavelength; `yield`): Python cannot parse
them as names, so they are parsed under an alias and shown as written (issue #30, item 5)."""

from __future__ import annotations

import keyword

import numpy as np
import pytest
from pydantic import ValidationError

from pytest_lsrb.equations import EquationError, keyword_aliases, parse_expression, parse_function
from pytest_lsrb.equations.parser import STRUCTURAL_KEYWORDS
from pytest_lsrb.srbench.data.problem import Problem, output_first

X = {"lambda": np.array([0.5, 2.0]), "x": np.array([3.0, 4.0])}


def test_only_keywords_get_aliases() -> None:
    assert keyword_aliases(["lambda", "print", "x", "yield", "if", "return"]) == {
        "lsrb_kw_lambda": "lambda",
        "lsrb_kw_yield": "yield",
        "lsrb_kw_if": "if",
    }  # builtins parse as names already; `return` is refused (every program is written with it)


@pytest.mark.parametrize("word", sorted(set(keyword.kwlist) - STRUCTURAL_KEYWORDS))
def test_every_other_keyword_reads_as_an_input(word: str) -> None:
    """A problem whose input is named `in`, `is`, `None`... loaded, then every attempt was a
    harness error (issue #38, item 9): each is aliased like `lambda`."""
    prog = parse_expression(f"c0*{word}*x + x", [word, "x"], free_params=True)
    assert prog.used_variables == {word, "x"}
    assert np.allclose(
        prog.evaluate({word: X["lambda"], "x": X["x"]}, [2.0]), 2.0 * X["lambda"] * X["x"] + X["x"]
    )


@pytest.mark.parametrize("word", sorted(STRUCTURAL_KEYWORDS))
def test_a_structural_keyword_is_refused_as_a_symbol_at_load(word: str) -> None:
    with pytest.raises(ValidationError, match="rename the symbol"):
        Problem(
            name="kw",
            symbols=["y", word, "x"],
            symbol_descs=["y", "w", "x"],
            symbol_properties=output_first(2),
            problem_set="llmsr",
            train=np.ones((4, 3)),
            test=np.ones((4, 3)),
        )


@pytest.mark.parametrize("text", ["c0*lambda*x + sin(lambda)", "params[0]*lambda*x + np.sin(lambda)"])
def test_an_expression_reads_a_keyword_input(text: str) -> None:
    prog = parse_expression(text, ["lambda", "x"], free_params=True)
    assert prog.variables == ("lambda", "x") and prog.used_variables == {"lambda", "x"}
    assert prog.to_expression() == "c0*lambda*x + sin(lambda)"
    assert np.allclose(prog.evaluate(X, [2.0]), 2.0 * X["lambda"] * X["x"] + np.sin(X["lambda"]))
    again = parse_expression(prog.to_expression(), ["lambda", "x"], free_params=True)
    assert again.to_expression() == prog.to_expression()


def test_a_function_with_a_keyword_argument_and_builtin_names() -> None:
    prog = parse_function(
        "def equation(lambda, print, params):\n    k = params[0]*lambda\n    return k*print\n",
        ["lambda", "print"],
    )
    assert prog.to_expression() == "c0*lambda*print"
    assert np.allclose(
        prog.evaluate({"lambda": X["lambda"], "print": X["x"]}, [1.5]), 1.5 * X["lambda"] * X["x"]
    )


def test_a_keyword_that_is_not_an_input_is_still_refused() -> None:
    with pytest.raises(EquationError):
        parse_expression("lambda*x", ["x"], free_params=True)
