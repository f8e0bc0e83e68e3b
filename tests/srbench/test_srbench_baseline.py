"""The mock adapter's equation baseline: valid skeletons, seeded variety, variations of the shown."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_lsrb.srbench.methods.skeleton import MAX_NPARAMS, Spec, read_skeleton
from pytest_lsrb.srbench.mock.baseline import (
    mock_equation_answer,
    propose,
    read_terms,
    shown_bodies,
    write_function,
)

NAMES = st.lists(
    st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
        lambda s: (
            s
            not in {
                "params",
                "np",
                "pi",
                "e",
                "exp",
                "log",
                "sin",
                "cos",
                "abs",
                "tan",
                "sqrt",
                "max",
                "min",
                "where",
                "numpy",
                "math",
                "ln",
                "sign",
                "tanh",
                "sinh",
                "cosh",
                "output",
                "hypot",
                "pow",
                "power",
                "square",
                "cbrt",
                "if",
                "in",
                "is",
                "or",
                "and",
                "not",
                "for",
                "def",
                "as",
                "del",
            }
            and not s.startswith(("arc", "log", "exp", "a", "fabs"))
        )
    ),
    min_size=1,
    max_size=5,
    unique=True,
)


def _spec(inputs: list[str]) -> Spec:
    return Spec(output="y", output_desc="y", inputs=tuple(inputs), input_descs=tuple(inputs))


@settings(max_examples=60, deadline=None)
@given(NAMES, st.integers(0, 2**31 - 1), st.integers(0, 2))
def test_every_answer_is_a_valid_skeleton(inputs: list[str], seed: int, shown: int) -> None:
    spec = _spec(inputs)
    bodies = [spec.initial_body()]
    for s in range(shown):  # earlier answers of the baseline itself, as the buffer would show
        bodies.append(
            read_skeleton(
                mock_equation_answer({"inputs": inputs, "prompt": spec.prompt(bodies)}, seed + s), spec
            ).body
        )
    answer = mock_equation_answer({"inputs": inputs, "prompt": spec.prompt(bodies)}, seed)
    skeleton = read_skeleton(answer, spec)
    assert 1 <= skeleton.program.n_params <= MAX_NPARAMS
    assert answer == mock_equation_answer(
        {"inputs": inputs, "prompt": spec.prompt(bodies)}, seed
    )  # deterministic


def test_seeds_give_different_skeletons() -> None:
    context = {"inputs": ["x", "v"], "prompt": _spec(["x", "v"]).prompt([_spec(["x", "v"]).initial_body()])}
    answers = {
        read_skeleton(mock_equation_answer(context, s), _spec(["x", "v"])).program.to_expression()
        for s in range(20)
    }
    assert len(answers) >= 8


def test_terms_round_trip_through_the_written_function() -> None:
    terms = ["x", "sin({p}*v)", "x*v", "exp(-{p}*x**2)"]
    function = write_function(terms, ["x", "v"])
    body = function.split("\n", 1)[1]
    assert read_terms(body, ["x", "v"]) == terms


def test_a_variation_keeps_most_of_the_best_shown_skeleton() -> None:
    spec = _spec(["x", "v"])
    best = write_function(["x", "v", "x*v", "sin({p}*x)"], ["x", "v"]).split("\n", 1)[1]
    worse = spec.initial_body()
    kept = 0
    for seed in range(40):
        terms = propose(["x", "v"], [worse, best], seed)
        kept += len(set(terms) & {"x", "v", "x*v", "sin({p}*x)"}) >= 2
    assert kept >= 30


def test_shown_skeletons_written_by_a_model_are_varied_too() -> None:
    model_body = "    damping = params[0] * v\n    return -damping - params[1] * x ** 3 + params[2]\n"
    terms = read_terms(model_body, ["x", "v"])
    assert terms == ["v", "x**3"]
    variants = [propose(["x", "v"], [model_body], s) for s in range(10)]
    assert all(set(v) & {"v", "x**3"} for v in variants)


def test_no_inputs_still_answers_something_parseable() -> None:
    answer = mock_equation_answer({}, 3)
    assert "def equation" in answer


def test_the_mock_reads_the_skeletons_from_the_prompt_text() -> None:
    spec = _spec(["x", "v"])
    shown = "    return params[0] * x ** 3 + params[1] * np.sin(v)\n"
    prompt = "Complete the function.\n\n" + spec.prompt([spec.initial_body(), shown])
    assert shown_bodies(prompt) == [spec.initial_body(), shown]
    varied = [
        read_terms(
            read_skeleton(mock_equation_answer({"inputs": ["x", "v"], "prompt": prompt}, s), spec).body,
            ["x", "v"],
        )
        for s in range(10)
    ]
    # Most answers build on what the prompt shows (the best skeleton is listed last).
    assert sum(bool({"x**3", "sin(v)"} & set(terms)) for terms in varied) >= 6
    # The same context with a garbage prompt gives other answers: the prompt is what is read.
    garbage = [mock_equation_answer({"inputs": ["x", "v"], "prompt": "lorem ipsum"}, s) for s in range(10)]
    assert garbage != [mock_equation_answer({"inputs": ["x", "v"], "prompt": prompt}, s) for s in range(10)]
    assert shown_bodies("lorem ipsum") == []
