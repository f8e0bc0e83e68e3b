"""The mock baselines LaSR and SGA ship (`DiscoveryMethod.mock_answer`): the mock adapter's answers
to their prompts (the general baseline, for the others, is `srbench.mock.baseline`).

Like `srbench.mock.baseline`, it answers from what the prompt shows (the request context mirrors it),
never from the data, and every choice comes from the call's seed, so mock runs are reproducible:

- LaSR, equation prompts (`mutate`, `crossover`, `gen_random`): a commentary line and a JSON list
  of N expressions in LaSR's syntax (`C` constants, `^` powers), each a variation of the
  reference expression(s) shown — their additive terms, with a term added, replaced or dropped,
  or two references crossed over. Terms the concept library names (`the term \\`sin(v)\\``) are
  favoured, so concepts steer the mock the way they are meant to steer a model.
- LaSR, concept prompts: ideas naming the terms common to the good expressions (and, for the
  bad ones, the terms to avoid); concept evolution recombines the ideas shown.
- SGA: the three sections SGA asks for (analysis, plan, code), the code a variation of the best
  hypothesis shown whose initial parameter values are the fitted values the feedback reported.
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytest_lsrb.equations import EquationError, parse_expression
from pytest_lsrb.srbench.methods.expression_tree import read_expression
from pytest_lsrb.srbench.mock.baseline import (
    P,
    canonical,
    canonical_library,
    propose_terms,
    read_terms,
    summand_terms,
    write_function,
)

_TERM_IN_IDEA: Final = re.compile(r"term `([^`]+)`")
FAVOURED_WEIGHT: Final = 4.0  # how much likelier a term the concepts name is


def lasr_text(term: str) -> str:
    """A library term in LaSR's syntax: inner parameters as C, ^ for powers, no `np.`."""
    return term.replace(P, "C").replace("np.", "").replace("**", "^")


def from_lasr_text(text: str, inputs: tuple[str, ...]) -> str:
    """LaSR's spelling of a term back to the library's canonical one."""
    body = re.sub(r"\bC\b", P, text.replace("^", "**"))
    return canonical(body, inputs)


@functools.lru_cache(maxsize=256)
def lasr_library(inputs: tuple[str, ...]) -> list[tuple[str, float]]:
    """The library's terms LaSR's operator set can write (no abs, tanh, ...)."""
    lib = []
    for term, weight in canonical_library(inputs):
        try:
            read_expression(lasr_text(term), inputs)
        except EquationError:
            continue
        lib.append((term, weight))
    return lib


def expression_terms(text: str, inputs: tuple[str, ...]) -> list[str]:
    """The additive terms of an expression in LaSR's syntax ([] when it does not read); every
    `C` is a parameter, as in the library's terms."""
    body = re.sub(
        r"\b[cC]\d*\b",
        lambda m: m.group(0) if m.group(0) in inputs else "c0",
        text.strip().replace("^", "**"),
    )
    try:
        program = parse_expression(body, list(inputs))
    except EquationError:
        return []
    return summand_terms(program.root)


def _favoured(
    lib: list[tuple[str, float]], ideas: Sequence[str], inputs: tuple[str, ...]
) -> list[tuple[str, float]]:
    named = {from_lasr_text(m, inputs) for idea in ideas for m in _TERM_IN_IDEA.findall(str(idea))}
    return [(t, w * FAVOURED_WEIGHT if t in named else w) for t, w in lib]


def write_lasr_expression(terms: Sequence[str]) -> str:
    return " + ".join(["C", *(f"C * {lasr_text(t)}" for t in terms)])


def _json_answer(items: Sequence[str], what: str, rng: random.Random) -> str:
    listing = json.dumps(list(items), indent=1)
    notes = [f"{i + 1}. {what} {item}" for i, item in enumerate(items)] if rng.random() < 0.5 else []
    return "\n".join([f"Here are {len(items)} {what}s.", *notes, "```json", listing, "```"]) + "\n"


def mock_lasr_answer(context: Mapping[str, Any], seed: int) -> str:
    """The answer to one of LaSR's prompts (`context['lasr_op']` says which)."""
    inputs = tuple(str(v) for v in context.get("inputs", ()))
    n = max(1, int(context.get("n", 5)))
    rng = random.Random(seed)
    op = context.get("lasr_op")
    if op == "concepts":
        return _json_answer(_ideas(context, inputs, n, rng), "hypothesis", rng)
    if op == "concept_evolution":
        return _json_answer(_evolved_ideas(context, n, rng), "hypothesis", rng)
    lib = _favoured(lasr_library(inputs), [str(c) for c in context.get("concepts", ())], inputs)
    parents = [expression_terms(str(e), inputs) for e in context.get("expressions", ())]
    exprs = []
    for i in range(n):
        terms = propose_terms(parents, lib, seed * 7919 + i)[:4]
        exprs.append(write_lasr_expression(terms))
    return _json_answer(exprs, "expression", rng)


def _ideas(context: Mapping[str, Any], inputs: tuple[str, ...], n: int, rng: random.Random) -> list[str]:
    good = Counter(t for e in context.get("good", ()) for t in expression_terms(str(e), inputs))
    bad = Counter(t for e in context.get("bad", ()) for t in expression_terms(str(e), inputs))
    ideas = [f"The output involves the term `{lasr_text(t)}`." for t, _ in good.most_common()]
    ideas += [f"Expressions built on the term `{lasr_text(t)}` fit poorly." for t in bad if t not in good]
    if not ideas:
        term = rng.choice(lasr_library(inputs))[0] if lasr_library(inputs) else inputs[0]
        ideas = [f"The output involves the term `{lasr_text(term)}`."]
    return ideas[:n]


def _evolved_ideas(context: Mapping[str, Any], n: int, rng: random.Random) -> list[str]:
    named = list(
        dict.fromkeys(m for idea in context.get("ideas", ()) for m in _TERM_IN_IDEA.findall(str(idea)))
    )
    rng.shuffle(named)
    ideas = []
    for i in range(0, len(named), 2):
        pair = named[i : i + 2]
        ideas.append(" and ".join(f"the term `{t}`" for t in pair).capitalize() + " belong together.")
    return ideas[:n] or ["The output is a sum of a few simple terms."]


def mock_sga_answer(context: Mapping[str, Any], seed: int) -> str:
    """SGA's three sections; the code varies the hypotheses shown (best last), its initial
    parameters are the best one's fitted values where the terms line up (exploitation), and at
    the exploration temperature it sometimes changes two things at once."""
    inputs = [str(v) for v in context.get("inputs", ())]
    hyps = list(context.get("hypotheses", ()))
    parents = [read_terms(_function_body(str(h.get("code", ""))), inputs) for h in hyps]
    lib = canonical_library(tuple(inputs))
    terms = propose_terms(parents, lib, seed)
    rng = random.Random(seed)
    if float(context.get("temperature", 0.0)) >= 1.0 and rng.random() < 0.5:
        terms = propose_terms([*parents, terms], lib, seed + 1)
    fitted = [float(v) for v in hyps[-1].get("params", ())] if hyps else []
    function = write_function(terms, inputs)
    n = function.count("params[")
    initial = [fitted[i] if i < len(fitted) else 1.0 for i in range(n)]
    code = f"import numpy as np\n\nINITIAL_PARAMS = {json.dumps(initial)}\n\n\n{function}"
    shown = ", ".join(lasr_text(t) for t in terms)
    return (
        "### Analysis\n#### Iteration 1\nThe best hypothesis so far leaves structure unexplained.\n\n"
        f"### Step-by-Step Plan\nUse the terms {shown}, starting from the fitted values.\n\n"
        f"### Code\n```python\n{code}```\n"
    )


def _function_body(code: str) -> str:
    """The lines after the first `def` header of a code block ('' when there is none)."""
    lines = code.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith("def "):
            return "\n".join(lines[i + 1 :]) + "\n"
    return ""
