"""The mock adapter's equation behaviour: a deterministic local baseline that proposes skeletons.

It answers the way a modest model would, from what the prompt shows and nothing else (never the
data): the problem's input names, and, when the request shows earlier skeletons (LLM-SR's
prompt), a variation of them. A skeleton here is a constant plus a sum of terms, each with its
own coefficient: `params[0] + params[1]*x + params[2]*np.sin(params[3]*v) + ...` (at most ten
parameters). Terms come from a library over the inputs (powers, products, ratios, sin/cos,
exp, tanh, log, and forms with parameters inside such as `exp(-p*x)` or `|x|**p`).

The shown skeletons are cut out of the prompt text (the `def equation_vN(...)` functions LLM-SR's
prompt lists) and read back with the safe equation parser (their additive terms, with
coefficients stripped), so the baseline varies whatever the prompt shows, model-written or its
own: add a term, replace one, drop one, or cross two skeletons over. A prompt that shows no
skeleton (another prompt, or garbage) gets a fresh small skeleton, so the search depends on it.
The seed picks every choice, so a search run on the mock adapter is reproducible and a real
search: the llmsr buffer keeps what fits better, and the fit improves with the budget.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytest_lsrb.equations import EquationError, parse_expression, parse_function
from pytest_lsrb.equations.ir import Node, Num, Op, Param, dag_nodes
from pytest_lsrb.equations.sympy_bridge import to_text

MAX_PARAMS: Final = 10
# Placeholder for a parameter inside a term (`exp(-{p}*x)`); numbered when a skeleton is written.
P: Final = "{p}"


def term_library(inputs: Sequence[str]) -> list[tuple[str, float]]:
    """(term, weight): simple terms are likelier. Terms are texts in the equation language, with
    `{p}` where a parameter sits inside the term."""
    lib: list[tuple[str, float]] = []
    for u in inputs:
        lib += [
            (u, 4.0),
            (f"{u}**2", 3.0),
            (f"{u}**3", 2.0),
            (f"1/{u}", 1.0),
            (f"np.sin({u})", 1.0),
            (f"np.cos({u})", 1.0),
            (f"np.exp({u})", 0.7),
            (f"np.exp(-{u})", 0.7),
            (f"np.tanh({u})", 0.7),
            (f"np.abs({u})", 0.7),
            (f"{u}*np.abs({u})", 1.0),
            (f"np.sqrt(np.abs({u}))", 0.7),
            (f"np.log(np.abs({u}) + 1)", 0.5),
            (f"1/(1 + {u}**2)", 0.5),
            (f"np.sin({P}*{u})", 1.0),
            (f"np.cos({P}*{u})", 0.7),
            (f"np.exp(-{P}*{u})", 1.0),
            (f"np.exp(-{P}*{u}**2)", 0.5),
            (f"np.abs({u})**{P}", 0.7),
            (f"np.tanh({P}*{u})", 0.5),
        ]
    for i, u in enumerate(inputs):
        for w in inputs[i + 1 :]:
            lib += [
                (f"{u}*{w}", 3.0),
                (f"{u}**2*{w}", 1.5),
                (f"{u}*{w}**2", 1.5),
                (f"{u}/{w}", 1.0),
                (f"{w}/{u}", 1.0),
                (f"np.sin({u})*{w}", 0.5),
                (f"{u}*np.exp(-{P}*{w})", 0.5),
                (f"{u}*np.exp({w})", 0.3),
            ]
    return lib


def _n_inner(term: str) -> int:
    return term.count(P)


def skeleton_params(terms: Sequence[str]) -> int:
    return 1 + sum(1 + _n_inner(t) for t in terms)


def write_function(terms: Sequence[str], inputs: Sequence[str]) -> str:
    """`def equation(<inputs>, params)` summing the terms, parameters numbered in order."""
    lines = [f"def equation({', '.join(inputs)}, params):", "    output = params[0]"]
    k = 1
    for term in terms:
        coef, k = k, k + 1
        text = term
        while P in text:
            text = text.replace(P, f"params[{k}]", 1)
            k += 1
        lines.append(f"    output = output + params[{coef}] * {_wrap(text)}")
    lines.append("    return output")
    return "\n".join(lines) + "\n"


def _wrap(text: str) -> str:
    """Parenthesised when it has a top-level sum (a product factor must not split)."""
    return f"({text})" if _has_top_level_sum(text) else text


@functools.lru_cache(maxsize=4096)
def canonical(term: str, inputs: tuple[str, ...]) -> str:
    """One spelling per term (`np.sin(x)` and `sin(x)` are the same term)."""
    text = term.replace(P, "params[0]")
    try:
        program = parse_expression(text, list(inputs))
    except EquationError:
        return term
    return to_text(program.root, lambda _i: P)


def read_terms(body: str, inputs: Sequence[str]) -> list[str]:
    """The additive terms of a shown skeleton body, coefficients and constants stripped; [] when
    it does not parse."""
    return list(_read_terms(body, tuple(inputs)))


@functools.lru_cache(maxsize=4096)
def _read_terms(body: str, inputs: tuple[str, ...]) -> tuple[str, ...]:
    # Cached: a search shows the same skeletons again and again.
    header = f"def equation({', '.join(inputs)}, params):\n"
    try:
        program = parse_function(header + body, list(inputs))
    except EquationError:
        return ()
    return tuple(summand_terms(program.root))


def summand_terms(root: Node) -> list[str]:
    """The distinct additive terms of an equation, coefficients and constants stripped."""
    terms: list[str] = []
    for node in _summands(root):
        text = _term_text(node)
        if text and text not in terms:
            terms.append(text)
    return terms


def _summands(node: Node) -> list[Node]:
    if isinstance(node, Op) and node.name in ("add", "sub"):
        return _summands(node.args[0]) + _summands(node.args[1])
    if isinstance(node, Op) and node.name == "neg":
        return _summands(node.args[0])
    return [node]


def _has_param(node: Node) -> bool:
    return any(isinstance(n, Param) for n in dag_nodes(node))


def _factors(node: Node) -> list[Node]:
    if isinstance(node, Op) and node.name == "mul":
        return _factors(node.args[0]) + _factors(node.args[1])
    if isinstance(node, Op) and node.name == "neg":
        return _factors(node.args[0])
    return [node]


def _term_text(node: Node) -> str | None:
    """A summand without its coefficient: params and numbers dropped from the top-level product;
    parameters left inside become `{p}`. None for a constant."""
    if not _has_param(node) and not any(not isinstance(n, (Num, Op)) for n in dag_nodes(node)):
        return None  # a number
    kept = [f for f in _factors(node) if not isinstance(f, (Param, Num))]
    if not kept:
        return None
    texts = [to_text(f, lambda _i: P) for f in kept]
    text = texts[0] if len(texts) == 1 else "*".join(_wrap(t) for t in texts)
    if _n_inner(text) + 2 > MAX_PARAMS:
        return None
    return text


def _has_top_level_sum(text: str) -> bool:
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and ch in "+-" and 0 < i < len(text) - 1 and text[i - 1] == " " and text[i + 1] == " ":
            return True
    return False


def propose(inputs: Sequence[str], shown: Sequence[str], seed: int) -> list[str]:
    """The terms of the next skeleton: a variation of the shown ones (the best is last), or a
    fresh small skeleton when nothing is shown."""
    parents = [terms for terms in (read_terms(body, inputs) for body in shown) if terms]
    return propose_terms(parents, _canonical_library(tuple(inputs)), seed)


def propose_terms(parents: Sequence[Sequence[str]], lib: list[tuple[str, float]], seed: int) -> list[str]:
    """A variation of the parents' terms (the best parent is last) drawn from the weighted term
    library `lib`: add, replace or drop a term, or cross two parents over; a fresh small set
    when there are no parents."""
    rng = random.Random(seed)
    lists = [list(p) for p in parents if p]
    if not lists:
        return _fresh(lib, rng)
    base = list(lists[-1] if rng.random() < 0.7 or len(lists) == 1 else rng.choice(lists[:-1]))
    op = rng.choices(["add", "replace", "drop", "cross"], weights=[0.45, 0.3, 0.1, 0.15])[0]
    if op == "cross" and len(lists) > 1:
        pool = list(dict.fromkeys(lists[-1] + lists[0]))
        rng.shuffle(pool)
        base = pool[: max(1, rng.randint(len(pool) // 2, len(pool)))]
    elif op == "drop" and len(base) > 1:
        base.pop(rng.randrange(len(base)))
    elif op == "replace" and base:
        base[rng.randrange(len(base))] = _pick(lib, rng, exclude=base)
    else:
        base.append(_pick(lib, rng, exclude=base))
    while skeleton_params(base) > MAX_PARAMS and len(base) > 1:
        base.pop(rng.randrange(len(base) - 1))  # keep the newest term
    return base if skeleton_params(base) <= MAX_PARAMS else base[-1:]


@functools.lru_cache(maxsize=256)
def canonical_library(inputs: tuple[str, ...]) -> list[tuple[str, float]]:
    """The term library with every term in its canonical spelling (`canonical`)."""
    return _canonical_library(inputs)


@functools.lru_cache(maxsize=256)
def _canonical_library(inputs: tuple[str, ...]) -> list[tuple[str, float]]:
    return [(canonical(t, inputs), w) for t, w in term_library(inputs)]


def _fresh(lib: list[tuple[str, float]], rng: random.Random) -> list[str]:
    terms: list[str] = []
    for _ in range(rng.randint(1, 3)):
        terms.append(_pick(lib, rng, exclude=terms))
    return terms


def _pick(lib: list[tuple[str, float]], rng: random.Random, exclude: Sequence[str]) -> str:
    options = [(t, w) for t, w in lib if t not in exclude] or lib
    return rng.choices([t for t, _ in options], weights=[w for _, w in options])[0]


_SHOWN = re.compile(r"^def equation_v\d+\(.*?$\n(.*?)(?=^def |\Z)", re.M | re.S)
_DOCSTRING = re.compile(r'^\s*"""(?:.*?)"""[ \t]*\n', re.S)


def shown_bodies(prompt: str) -> list[str]:
    """The bodies of the `def equation_vN(...)` functions a prompt shows, in order (the last
    header, left for the model to complete, has none)."""
    bodies = []
    for block in _SHOWN.findall(prompt):
        body = _DOCSTRING.sub("", block, count=1).rstrip()
        if body.strip():
            bodies.append(body + "\n")
    return bodies


def mock_equation_answer(context: Mapping[str, Any], seed: int) -> str:
    """What the mock adapter answers to an equation-discovery request.

    `context`: `Problem.context()` fields (`inputs` is required), plus `prompt`: the request's
    text, whose skeletons (worst to best) the answer varies. Some seeds add a line of chatter or a
    code fence, as real models do, so the answer extraction is exercised on mock runs too.
    """
    inputs = [str(v) for v in context.get("inputs", [])]
    if not inputs:
        return "def equation(params):\n    return params[0]\n"
    terms = propose(inputs, shown_bodies(str(context.get("prompt") or "")), seed)
    function = write_function(terms, inputs)
    style = seed % 3
    if style == 1:
        return f"```python\n{function}```\n"
    if style == 2:
        return f"Here is an improved skeleton:\n\n{function}\nIt adds physically motivated terms.\n"
    return function
