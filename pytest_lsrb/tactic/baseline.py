"""The mock adapter's tactic behaviour: a deterministic local baseline.

It reads the goal's shape (hypotheses and target) and proposes a plausible next tactic, chosen by
the attempt seed among the candidates that fit, so different samples explore different tactics.
Some seeds wrap the answer in a code fence or a line of chatter, as real models do, so the
extraction path is exercised on every mock run.

The rules are plain string heuristics over Lean's pretty-printed goal, most specific first: a
hypothesis that closes the goal, hypotheses to take apart, then what the target's head asks for.
Inaccessible names (`inst✝`, `x✝¹`) are never written into a tactic: Lean cannot refer to them.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
import threading
from dataclasses import dataclass

from pytest_lsrb.tactic.guard import contains_forbidden
from pytest_lsrb.tactic.lean.goal import parse_goal

_ARITH_TYPES = re.compile(r"\b(?:Nat|Int|ℕ|ℤ)\b")
_RELATIONS = ("=", "≠", "≤", "<", "≥", ">")
_PROP_MARKS = re.compile(r"[=≠<≤>≥∈∉∧∨¬↔∃∀⊆]|\bTrue\b|\bFalse\b")
_IDENT = re.compile(r"^[^\W\d][\w'₀-₉!?]*$")
_NAME = re.compile(r"[^\W\d][\w'₀-₉✝⁰¹²³⁴⁵⁶⁷⁸⁹]*")
_OMEGA_TOKEN = re.compile(r"\d+|" + _NAME.pattern + r"|[-+*/%=≠≤<≥>¬∧∨→↔()]|\s+")
_MAX_PATTERN_GROUPS = 4
_BINDER_GROUP = re.compile(r"[({]([^(){}:]+?)\s*:\s*[^(){}]*[)}]")


@dataclass(frozen=True)
class _Hyp:
    name: str  # the first accessible name of the group, or "" when none is
    type: str


def hypotheses_and_target(goal_text: str) -> tuple[list[tuple[str, str]], str]:
    """(hypotheses as (names, type), target) of a single pretty-printed goal, read by the one
    goal parser (`lean.goal.parse_goal`, leniently: any text gets an answer). A let-bound
    hypothesis reads as `T := v`, the shape the rules below match on."""
    goal = parse_goal(goal_text, lenient=True)
    hyps = [
        (" ".join(h.names), h.type if h.value is None else f"{h.type} := {h.value}") for h in goal.hypotheses
    ]
    return hyps, goal.target


def accessible(name: str) -> bool:
    """Whether a tactic may mention `name` (`inst✝`, `a✝¹` are inaccessible to the user)."""
    return bool(name) and "✝" not in name and bool(_IDENT.match(name))


def candidate_tactics(goal_text: str) -> list[str]:
    """Tactics that fit the goal's shape, most specific first; never empty."""
    raw_hyps, target = hypotheses_and_target(goal_text)
    prop_heads = {
        n for names, typ in raw_hyps for n in names.split() if typ == "Prop" or typ.endswith("→ Prop")
    }
    hyps = [
        _Hyp(next((n for n in names.split() if accessible(n)), ""), typ)
        for names, typ in raw_hyps
        if _is_prop(typ, prop_heads)
    ]
    taken = {n for names, _ in raw_hyps for n in names.split()}
    instances = [typ for names, typ in raw_hyps if names.startswith("inst")]
    numeric_vars = {n: typ for names, typ in raw_hyps if _ARITH_TYPES.fullmatch(typ) for n in names.split()}

    cands: list[str] = []
    cands += _closing_hyps(hyps, target)
    cands += _destructuring(hyps, target, taken)
    cands += _target_tactics(target, taken, instances, numeric_vars, has_hyps=bool(raw_hyps))
    if any(h.name for h in hyps):
        cands.append("simp_all")
    # A goal may itself mention `sorry` (SorryDB goals do); a proposal never repeats it.
    cands = [c for c in cands if not contains_forbidden(c)] or ["simp", "trivial"]
    return list(dict.fromkeys(cands))


def _is_prop(typ: str, prop_heads: set[str]) -> bool:
    if typ.startswith("Type") or typ in ("Prop", "Sort"):
        return False
    if typ.endswith("→ Prop"):
        return False
    return bool(_PROP_MARKS.search(typ)) or typ.split(" ", 1)[0].lstrip("(") in prop_heads


def _closing_hyps(hyps: list[_Hyp], target: str) -> list[str]:
    """Hypotheses that close the target outright, or with one application."""
    out: list[str] = []
    by_type = {h.type: h.name for h in hyps if h.name}
    if target in by_type:
        out.append(f"exact {by_type[target]}")
    elif any(h.type == target for h in hyps):
        out.append("assumption")  # only an inaccessible hypothesis matches
    for h in hyps:
        if not h.name:
            continue
        if h.type == "False":
            out += [f"exact {h.name}.elim", "contradiction"]
        if _is_negation(h.type):
            positive = _strip_parens(h.type[1:])
            if positive in by_type:
                pos = by_type[positive]
                out.append(f"exact {h.name} {pos}" if target == "False" else f"exact absurd {pos} {h.name}")
        parts = _split_conn(h.type, "→")
        if parts is not None and parts[1] == target:
            arg = by_type.get(parts[0])
            out.append(f"exact {h.name} {arg}" if arg else f"apply {h.name}")
        parts = _split_conn(h.type, "↔")
        if parts is not None:
            left, right = parts
            if left == target:
                arg = by_type.get(right)
                out += [f"exact {h.name}.mpr {arg}"] if arg else [f"apply {h.name}.mpr"]
                out.append(f"rw [{h.name}]")
            elif right == target:
                arg = by_type.get(left)
                out += [f"exact {h.name}.mp {arg}"] if arg else [f"apply {h.name}.mp"]
        if h.type.startswith("∀"):
            inst = _instantiate_forall(h.type, target)
            if inst is not None:
                out.append(f"exact {h.name} {' '.join(inst)}".rstrip())
                out.append(f"apply {h.name}")
    parts = _split_conn(target, "∧")
    if parts is not None and parts[0] in by_type and parts[1] in by_type:
        out.append(f"exact ⟨{by_type[parts[0]]}, {by_type[parts[1]]}⟩")
    parts = _split_conn(target, "∨")
    if parts is not None:
        left, right = parts
        if left in by_type:
            out.append(f"exact Or.inl {by_type[left]}")
        if right in by_type:
            out.append(f"exact Or.inr {by_type[right]}")
    return out


def _destructuring(hyps: list[_Hyp], target: str, local_names: set[str]) -> list[str]:
    """Take apart hypotheses that pack several facts: ∃, ∧, ∨, and rewrite with equations."""
    out: list[str] = []
    for h in hyps:
        if not h.name:
            continue
        if h.type.startswith("∃"):
            var = _exists_var(h.type)
            out.append(f"obtain ⟨{var}, h{var}⟩ := {h.name}")
        elif _split_conn(h.type, "∧") is not None:
            out.append(f"obtain ⟨{h.name}₁, {h.name}₂⟩ := {h.name}")
        elif _split_conn(h.type, "∨") is not None:
            out.append(f"rcases {h.name} with {h.name} | {h.name}")
        else:
            parts = _split_eq(h.type)
            if parts is not None:
                lhs = parts[0]
                mentioned = re.search(rf"(?<![\w.']){re.escape(lhs)}(?![\w'])", target)
                if lhs in local_names and accessible(lhs) and mentioned:
                    out.append(f"subst {h.name}")
                    out.append(f"rw [{h.name}]")
                elif lhs in target:
                    out.append(f"rw [{h.name}]")
    return out


def _target_tactics(
    target: str, taken: set[str], instances: list[str], numeric_vars: dict[str, str], *, has_hyps: bool
) -> list[str]:
    out: list[str] = []
    fresh = "h" if "h" not in taken else "h'"
    if target.startswith("∀"):
        names = _forall_names(target)
        out += [f"intro {' '.join(names)}"] if names else []
        out += ["intros"]
    elif _split_conn(target, "→") is not None:
        out += [f"intro {fresh}", "intros"]
    if _is_negation(target):
        inner = _strip_parens(target[1:])
        if _split_conn(inner, "∧") is not None:
            out.append("rintro ⟨h₁, h₂⟩")
        out.append(f"intro {fresh}")
    parts = _split_conn(target, "↔")
    if parts is not None:
        if parts[0] == parts[1]:
            out += ["exact Iff.rfl", "rfl"]
        out += ["constructor"]
    if _split_conn(target, "∧") is not None:
        out += ["constructor"]
    parts = _split_conn(target, "∨")
    if parts is not None:
        left, right = parts
        if right in (f"¬{left}", f"¬({left})"):
            out.append(f"exact Decidable.em {left}" if _IDENT.match(left) else "exact Decidable.em _")
            if f"Decidable {left}" in instances:
                out.append(f"by_cases {fresh} : {left}")
        out += ["left", "right"]
    if target.startswith("∃"):
        body = target.split(",", 1)[1].strip() if "," in target else ""
        if any(t.startswith("Inhabited") for t in instances):
            out.append("exists default")
        if _top_relation(body) == "=":
            out.append("exact ⟨_, rfl⟩")
        out += ["refine ⟨?_, ?_⟩", "constructor"]
    if target == "False":
        out += ["contradiction"]
    if target == "True":
        out += ["trivial"]
    relation = _top_relation(target)
    if relation == "≠" and not target.startswith("¬"):
        out.append(f"intro {fresh}")
    if relation is not None:
        if _omega_shaped(target, numeric_vars):
            out += _commute_rewrite(target, numeric_vars)
            out += ["omega"]
        out += ["simp"]
        if relation == "=":
            out += ["rfl"]
        if not has_hyps and not re.search(r"[∀∃]", target):
            out += ["decide"]  # closed goals only: decide cannot see through free variables
    if any(mark in target for mark in ("[", "++", "::", ".length", "List.")):
        out += ["simp"]
    return out


def _omega_shaped(target: str, numeric_vars: dict[str, str]) -> bool:
    """Linear arithmetic over Nat/Int variables and numerals: what omega decides."""
    tokens = _OMEGA_TOKEN.findall(target)
    if "".join(tokens).replace(" ", "") != target.replace(" ", ""):
        return False  # something omega cannot read: a function, a list, an `if`
    return all(not _NAME.fullmatch(t) or t in numeric_vars or t in ("max", "min") for t in tokens)


def _commute_rewrite(target: str, numeric_vars: dict[str, str]) -> list[str]:
    """`a * b = b * a` asks for the commutativity lemma of its type."""
    m = re.fullmatch(r"(\w+) ([+*]) (\w+) = (\w+) ([+*]) (\w+)", target)
    if not m or m.group(2) != m.group(5) or (m.group(1), m.group(3)) != (m.group(6), m.group(4)):
        return []
    typ = "Int" if numeric_vars.get(m.group(1)) in ("Int", "ℤ") else "Nat"
    lemma = f"{typ}.{'add' if m.group(2) == '+' else 'mul'}_comm"
    return [f"rw [{lemma}]", f"exact {lemma} {m.group(1)} {m.group(3)}"]


def _top_relation(text: str) -> str | None:
    """The relation at the top of `text` (`¬a < b` counts as `<`), if it is one."""
    body = text[1:] if text.startswith("¬") else text
    if body.startswith(("∀", "∃")):
        return None
    for op in ("↔", "→", "∧", "∨"):
        if _top_level(body, op):
            return None
    for op in _RELATIONS:
        if _top_level(body, op):
            return op
    return None


def _forall_names(target: str) -> list[str]:
    """Binder names of the leading `∀ (a b : T) {c : U}, ...` or `∀ x y, ...`."""
    head = target[1:].split(",", 1)[0].strip()
    groups = _BINDER_GROUP.findall(head)
    names = [n for g in groups for n in g.split()] if groups else head.split()
    if not names or not all(accessible(n) for n in names):
        return []
    return names


def _exists_var(text: str) -> str:
    head = text[1:].split(",", 1)[0].strip()
    groups = _BINDER_GROUP.findall(head)
    first = (groups[0].split() if groups else head.split() or ["x"])[0]
    return first if accessible(first) else "x"


def _instantiate_forall(hyp: str, target: str) -> list[str] | None:
    """Arguments that make `∀ (x : T), body` equal to `target`, matching the body as a pattern."""
    head, _, body = hyp[1:].partition(",")
    body = body.strip()
    groups = _BINDER_GROUP.findall(head)
    names = [n for g in groups for n in g.split()] if groups else head.split()
    if not names or not all(accessible(n) for n in names):
        return None
    # Each occurrence of a bound variable is a group; Lean parenthesises a compound argument
    # (`f (a + 1) = a + 1`), so occurrences agree once their outer parentheses are dropped.
    pattern, order = "", []
    for token in re.split(r"([^\W\d][\w'₀-₉]*)", body):
        if token in names:
            pattern += "(.+?)"
            order.append(token)
        else:
            pattern += re.escape(token)
    if len(order) > _MAX_PATTERN_GROUPS or set(order) != set(names):
        return None  # lazy groups backtrack polynomially in their number; long bodies are skipped
    m = re.fullmatch(pattern, target)
    if m is None:
        return None
    values: dict[str, str] = {}
    for name, value in zip(order, m.groups(), strict=True):
        value = _strip_parens(value)
        if values.setdefault(name, value) != value:
            return None
    return [_paren(values[n]) for n in names]


def _paren(arg: str) -> str:
    return arg if _IDENT.match(arg) or arg.isdigit() else f"({arg})"


def _strip_parens(text: str) -> str:
    text = text.strip()
    if text.startswith("(") and text.endswith(")") and _balanced_inside(text[1:-1]):
        return text[1:-1]
    return text


def _balanced_inside(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch in "([{⟨"
        depth -= ch in ")]}⟩"
        if depth < 0:
            return False
    return depth == 0


@functools.lru_cache(maxsize=1024)  # bounded: the same sub-terms recur across rules
def _split_top(text: str, op: str) -> tuple[str, str] | None:
    """(left, right) around the first top-level `op` outside brackets, or None.

    A quantifier or `fun` binds everything after its comma, so an `op` after one is not at the top.
    """
    if op not in text:
        return None
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{⟨":
            depth += 1
        elif ch in ")]}⟩":
            depth -= 1
        elif depth == 0 and (ch in "∀∃λ" or text.startswith("fun ", i)):
            return None
        elif depth == 0 and text.startswith(op, i) and not _part_of_longer_op(text, i, op):
            return text[:i].strip(), text[i + len(op) :].strip()
    return None


def _part_of_longer_op(text: str, i: int, op: str) -> bool:
    """`=` inside `==`, `:=`, `>=`, `<` inside `<;>` or `<|`: not the relation we look for."""
    before = text[i - 1] if i > 0 else " "
    after = text[i + len(op)] if i + len(op) < len(text) else " "
    if op == "=":
        return before in "=:<>!" or after in "=>"
    if op in ("<", ">"):
        return before in "<>-=|" or after in "=|;>-<"
    return False


def _top_level(text: str, op: str) -> bool:
    """Whether `op` occurs outside parentheses/brackets in `text`."""
    return _split_top(text, op) is not None


# Loosest first: Lean's precedences are ↔ 20, → 25, ∨ 30, ∧ 35 (and ¬ takes its argument at 40).
_CONNECTIVES = ("↔", "→", "∨", "∧")


def _split_conn(text: str, op: str) -> tuple[str, str] | None:
    """(left, right) when `op` is the connective at the top of `text` (`a ↔ b ∨ c` is an iff)."""
    for conn in _CONNECTIVES:
        parts = _split_top(text, conn)
        if parts is not None:
            return parts if conn == op else None
    return None


def _is_negation(text: str) -> bool:
    """`¬p` at the top: `¬a = b` is one, `¬a ∧ b` is a conjunction."""
    return text.startswith("¬") and not any(_top_level(text, conn) for conn in _CONNECTIVES)


def _split_eq(text: str) -> tuple[str, str] | None:
    """(lhs, rhs) of an equation at the top of `text`."""
    if text.startswith("¬") or _top_relation(text) != "=":
        return None
    return _split_top(text, "=")


@functools.lru_cache(maxsize=4096)
def _cached_candidates(goal_text: str) -> tuple[str, ...]:
    # Samples of one item (and repeated goals) read the goal once.
    return tuple(candidate_tactics(goal_text))


@functools.lru_cache(maxsize=64)
def _cum_weights(n: int) -> tuple[float, ...]:
    """The running sums `choices` makes of the weights 1, 1/2, ..., 1/n (the same floats)."""
    return tuple(itertools.accumulate(1.0 / (i + 1) for i in range(n)))


# One generator per thread, re-seeded per attempt: the same draws as a new Random(seed), without
# allocating and dropping its 2.5 KB state on every attempt.
_RNG = threading.local()


def mock_tactic_answer(goal_text: str, seed: int) -> str:
    """The mock model's full answer text for one attempt (deterministic in goal and seed)."""
    rng: random.Random | None = getattr(_RNG, "rng", None)
    if rng is None:
        rng = _RNG.rng = random.Random()
    rng.seed(seed)
    cands = _cached_candidates(goal_text)
    # Favour the most specific candidates (weight 1/rank) without ever fixing one answer for
    # every seed.
    tactic = rng.choices(cands, cum_weights=_cum_weights(len(cands)), k=1)[0]
    style = rng.random()
    if style < 0.15:
        return f"```lean\n{tactic}\n```"
    if style < 0.25:
        return f"The next tactic is:\n{tactic}"
    return tactic
