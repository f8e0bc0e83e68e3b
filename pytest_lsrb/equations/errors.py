"""Why an equation was refused: one exception type carrying a classified kind."""

from __future__ import annotations

from typing import Final

# kind -> what it means. One spelling, used in records (`proposal_error_kind`) and tests.
EQUATION_ERROR_KINDS: Final[dict[str, str]] = {
    "parse_error": "not valid Python syntax, or empty",
    "forbidden_construct": "a construct outside the equation language (import, attribute walk, "
    "lambda, comprehension, loop, string, dunder name, ...)",
    "unknown_name": "a name that is neither an input variable, a parameter, a local nor a "
    "whitelisted function or constant",
    "too_many_params": "a parameter index beyond the allowed number of parameters",
    "too_complex": "too long, too deeply nested, too many nodes, or a huge constant exponent",
    "bad_signature": "the function's arguments do not match the problem's variables, or its "
    "body has no final return",
    "bad_call": "a whitelisted function called with the wrong number of arguments or keywords",
    "bad_constant": "a numeric literal that is not a finite real number",
    # Not the model's: a program the reference (LLM-SR runs it with numpy) would run, in a form
    # the safe equation language does not express; counted apart from the model's own errors.
    "unsupported_form": "valid numpy/Python the reference would run, in a form this equation "
    "language does not express (a loop, a numpy function not in the language, ...)",
}
# The kinds that are the harness's limits, not the model's mistakes.
UNSUPPORTED_KINDS: Final = frozenset({"unsupported_form"})


class EquationError(ValueError):
    """A model-proposed equation was refused. `kind` is one of `EQUATION_ERROR_KINDS`."""

    def __init__(self, kind: str, message: str) -> None:
        if kind not in EQUATION_ERROR_KINDS:
            raise ValueError(f"unknown equation error kind {kind!r}")
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.detail = message
