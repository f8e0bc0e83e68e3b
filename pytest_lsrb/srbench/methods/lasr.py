"""LaSR (Grayeli et al. 2024): evolutionary symbolic regression guided by a learned concept library.

The search is `srbench.methods.evolution` (the scheme of LaSR's PySR fork / SymbolicRegression.jl, in
Python; PySR itself needs Julia, see `--lsrb-sr-lasr-backend`). With probability `llm_weight` a
mutation, a random tree or a crossover is first tried as a model call, prompted with LaSR's
published prompts and the current concept library; after every iteration the model abstracts
concepts from the best and worst hypotheses, two of them go to the FRONT of the library, and
once it holds more than `max_concepts` (30) ideas the model evolves five ideas drawn from beyond
the first 30 into a new one, also put first, twice (`update_idea_database` / `prompt_evol`).
Suggestions in the operator prompts come from the first 30 ideas.

Reference settings (LLM-SRBench's `configs/lasr_*.yaml` and `methods/lasr/searcher.py`, which
calls LaSR's `lasr-experiments` branch): 25 iterations, 10 populations of 33, 550 cycles per
iteration, llm_weight 0.001 for all three operators, operators + - * / ^ exp log sqrt sin cos,
maxsize 30, `weight_randomize` 0.1, `should_simplify`, parsimony 0.0032 with adaptive parsimony
(scaling 20), `num_pareto_context` 3, the first 2000 training rows (`EvolutionConfig`). The
budget counts model calls: once it is spent, operators fall back to their symbolic versions and
the concept library stops growing.

Model answers are data: the JSON list is read with `json`, each expression with the safe
equation parser (`expression_tree.read_expression`); nothing is executed.
"""

from __future__ import annotations

import json
import math
import random
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

import numpy as np

from pytest_lsrb.adapters.base import Adapter, GenerationRequest, Message, SamplingConfig
from pytest_lsrb.adapters.usage import CallTally
from pytest_lsrb.core.errors import FATAL_GENERATION_KINDS
from pytest_lsrb.core.excerpts import CONCEPT_TEXT, RECORD_TEXT, excerpt
from pytest_lsrb.core.seeds import SEED_BITS, stable_hash
from pytest_lsrb.engine.watch import note_best
from pytest_lsrb.equations import EquationError, Program
from pytest_lsrb.equations.ir import Node
from pytest_lsrb.srbench.data.problem import Problem
from pytest_lsrb.srbench.limits import out_of_tokens, run_limits
from pytest_lsrb.srbench.methods.base import TASK_NAME, DiscoveryMethod, DiscoveryResult, TracePoint
from pytest_lsrb.srbench.methods.baselines import mock_lasr_answer
from pytest_lsrb.srbench.methods.evolution import Evolution, EvolutionConfig, EvolutionHooks, Member
from pytest_lsrb.srbench.methods.expression_tree import OPERATORS_TEXT, parametrise, read_expression, render
from pytest_lsrb.srbench.options import SrOptions

METHOD_NAME: Final = "lasr"
DEFAULT_BUDGET: Final = 1000  # model calls; the reference settings make ~600 (0.001 x ~550k events)

# LaSR's published prompts (trishullab/LibraryAugmentedSymbolicRegression.jl `prompts/`, the
# versions LLM-SRBench ships), `{{name}}` placeholders filled as LaSR's `construct_prompt` does.
PROMPTS: Final[dict[str, str]] = {
    "gen_random_system": (
        "You are a helpful assistant that proposes a mathematical expression by following three "
        "provided suggestions.\nAn expression must consist of the following variables: {{variables}}. "
        "All constants will be represented with the symbol C. Each expression will only use these "
        "operators: {{operators}}."
    ),
    "gen_random_user": (
        "Suggestion 1: {{assump1}}\nSuggestion 2: {{assump2}}\nSuggestion 3: {{assump3}}\n\n"
        "Propose {{N}} expressions that would be appropriate given the suggestions. Provide short "
        "commentary for each of your decisions. End with a JSON list that enumerates the proposed "
        'expressions following this format:\n```json\n["expr1",\n "expr2",\n ...\n "expr{{N}}"\n]\n```'
    ),
    "mutate_system": (
        "You are a helpful assistant that mutates a mathematical expression by following a few "
        "provided suggestions. You will be given three suggestions and a single reference expression "
        "to mutate.\nAn expression must consist of the following variables: {{variables}}. All "
        "constants will be represented with the symbol C. Each expression will only use these "
        "operators: {{operators}}."
    ),
    "mutate_user": (
        "Suggestion 1: {{assump1}}\nSuggestion 2: {{assump2}}\nSuggestion 3: {{assump3}}\n"
        "Reference Expression: {{expr}}\n\n"
        "Propose {{N}} expressions that would be appropriate given the suggestions and references. "
        "Provide short commentary for each of your decisions. End with a JSON list that enumerates "
        'the proposed expressions following this format:\n```json\n["expr1",\n "expr2",\n ...\n '
        '"expr{{N}}"\n]\n```'
    ),
    "crossover_system": (
        "You are a helpful assistant that recombines two mathematical expressions by following a few "
        "provided suggestions. You will be given three suggestions and two reference expressions to "
        "recombine.\nAn expression must consist of the following variables: {{variables}}. All "
        "constants will be represented with the symbol C. Each expression will only use these "
        "operators: {{operators}}."
    ),
    "crossover_user": (
        "Suggestion 1: {{assump1}}\nSuggestion 2: {{assump2}}\nSuggestion 3: {{assump3}}\n"
        "Reference Expression 1: {{expr1}}\nReference Expression 2: {{expr2}}\n\n"
        "Propose {{N}} expressions that would be appropriate given the suggestions and references. "
        "Provide short commentary for each of your decisions. End with a JSON list that enumerates "
        'the proposed expressions following this format:\n```json\n["expr1",\n "expr2",\n ...\n '
        '"expr{{N}}"\n]\n```'
    ),
    "extract_idea_system": (
        "You are a helpful assistant that hypothesizes about the underlying assumptions that "
        "generated a list of good and bad mathematical expressions in detailed ways. My ultimate "
        "goal is to discover what assumptions generated the observed good mathematical expressions "
        "and excludes the bad mathematical expressions. Focus more on the good expressions, their "
        "mathematical structure, and any relation to physical concepts. Note that capital C "
        "represents an arbitrary constant."
    ),
    "extract_idea_user": (
        "Good Expression 1: {{gexpr1}}\nGood Expression 2: {{gexpr2}}\nGood Expression 3: {{gexpr3}}\n"
        "Good Expression 4: {{gexpr4}}\nGood Expression 5: {{gexpr5}}\n\n"
        "Bad Expression 1: {{bexpr1}}\nBad Expression 2: {{bexpr2}}\nBad Expression 3: {{bexpr3}}\n"
        "Bad Expression 4: {{bexpr4}}\nBad Expression 5: {{bexpr5}}\n\n"
        "Propose {{N}} hypotheses that would be appropriate given the expressions. Provide short "
        "commentary for each of your decisions. Do not talk about topics related to the simplicity "
        "or complexity of the expressions. I want ideas that are unique and interesting enough to "
        "amaze the world's best mathematicians. End with a JSON list that enumerates the proposed "
        'hypotheses following this format:\n```json\n["hyp1",\n "hyp2",\n ...\n "hyp{{N}}"\n]\n```'
    ),
    "prompt_evol_system": (
        "You are a helpful assistant that merges and refines ideas about a set of hidden "
        "mathematical expression in new, interesting, and diverse ways. My ultimate goal is to "
        "discover the underlying properties of these hidden expressions. The resulting ideas should "
        "be a nontrivial conclusion given the previous ideas."
    ),
    "prompt_evol_user": (
        "Idea 1: {{idea1}}\nIdea 2: {{idea2}}\nIdea 3: {{idea3}}\nIdea 4: {{idea4}}\nIdea 5: {{idea5}}\n\n"
        "Propose {{N}} hypotheses that would be appropriate given the ideas. Provide short commentary "
        "for each of your decisions. Do not talk about topics related to the simplicity or "
        "complexity of the expressions. I want ideas that are unique and interesting enough to "
        "amaze the world's best mathematicians. End with a JSON list that enumerates the proposed "
        'hypotheses following this format:\n```json\n["hyp1",\n "hyp2",\n ...\n "hyp{{N}}"\n]\n```'
    ),
}


def fill_list(template: str, items: Sequence[str], tag: str) -> str:
    """LaSR's `construct_prompt`: the lines `...: {{<tag>i}}` take the items in order ("None"
    items dropped); extra items get extra lines after the last one; unused lines go."""
    items = [i for i in items if i != "None"]
    lines = template.split("\n")
    pattern = re.compile(r"^.*: \{\{" + re.escape(tag) + r"\d+\}\}$")
    slots = [i for i, line in enumerate(lines) if pattern.match(line)]
    if len(slots) < len(items) and slots:
        last = slots[-1]
        for k in range(len(items), len(slots), -1):
            lines.insert(last + 1, lines[last].replace(str(len(slots)), str(k)))
    out: list[str] = []
    k = 0
    for line in lines:
        if pattern.match(line):
            if k >= len(items):
                continue
            slot = re.search(r"\{\{" + re.escape(tag) + r"\d+\}\}", line)
            assert slot is not None
            out.append(line[: slot.start()] + items[k] + line[slot.end() :])
            k += 1
        else:
            out.append(line)
    return "\n".join(out)


def fill(template: str, values: Mapping[str, str]) -> str:
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values.get(m.group(1), m.group(0)), template)


_LIST_PATTERNS: Final = (
    re.compile(r"```json(.*?)```", re.S),
    re.compile(r"```(.*?)```", re.S),
    re.compile(r"(\[.*?\])", re.S),
)


def read_list(text: str) -> list[str]:
    """LaSR's `parse_msg_content`: the JSON list of strings in an answer (fenced json, any fence,
    or the first bracketed list), else []."""
    for pattern in _LIST_PATTERNS:
        m = pattern.search(text)
        if m is None:
            continue
        try:
            value = json.loads(m.group(1))
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [v.strip().strip(" \n\"',.[]") for v in value]
    return []


def llm_context(problem: Problem) -> str:
    """LLM-SRBench's LaSR hint: `The expression represents <output>, given data on <inputs>.`"""
    descs = [f"{d} ({n})" for d, n in zip(problem.symbol_descs, problem.symbols, strict=True)]
    given = descs[-1] if len(descs) <= 2 else ", ".join(descs[1:-1]) + ", and " + descs[-1]
    return f"The expression represents {descs[0]}, given data on {given}.\n"


@dataclass(frozen=True)
class LaSRConfig:
    budget: int = DEFAULT_BUDGET
    llm_weight: float = 0.001  # llm_mutate, llm_crossover, llm_gen_random (LLM-SRBench)
    num_pareto_context: int = 3  # LLM-SRBench (LaSR's default is 5)
    num_generated_equations: int = 5  # LaSR's defaults from here on
    num_generated_concepts: int = 5
    num_concept_crossover: int = 2  # ideas kept per concept call, and prompt_evol calls after it
    max_concepts: int = 30  # `idea_threshold`
    time_limit_s: float | None = None
    token_budget: int | None = None  # reported tokens of the run's calls; once spent, as `budget`
    prompt_evol_ideas: int = 5  # ideas shown to `prompt_evol` (LaSR's lasr-experiments branch)
    evolution: EvolutionConfig = field(default_factory=EvolutionConfig)


class LaSRRun:
    """One LaSR discovery run on one problem."""

    def __init__(
        self,
        problem: Problem,
        adapter: Adapter,
        sampling: SamplingConfig,
        seed: int,
        config: LaSRConfig | None = None,
    ) -> None:
        self.problem = problem
        self.adapter = adapter
        self.sampling = sampling
        self.seed = int(seed)
        self.config = config or LaSRConfig()
        self.variables = tuple(problem.inputs)
        self.rng = random.Random(stable_hash(METHOD_NAME, self.seed))
        self.context = llm_context(problem)
        self.concepts: list[str] = []
        self.calls = 0
        self.latency_ms = 0.0
        self.tally = CallTally()  # tokens, finish reasons, served model
        self.calls_by_kind: Counter[str] = Counter()
        self.used_by_kind: Counter[str] = Counter()  # answers that gave a usable expression/idea
        self.candidate_errors: Counter[str] = Counter()
        self.generation_errors: Counter[str] = Counter()
        self.fatal: tuple[str, str] | None = None
        self.best_at_call: dict[int, Node] = {}  # the lowest-loss tree when each call was made
        self.deadline: float | None = None
        self.last_raw = ""

    # -- model calls ----------------------------------------------------------------------------

    def _ask(self, kind: str, system: str, user: str, shown: Mapping[str, Any]) -> str | None:
        if self.fatal is not None or self.calls >= self.config.budget or self._out_of_time():
            return None
        if out_of_tokens(self.config.token_budget, self.tally):
            return None
        self.calls += 1
        self.calls_by_kind[kind] += 1
        values = {"variables": ", ".join(self.variables), "operators": OPERATORS_TEXT, "N": ""}
        n = (
            self.config.num_generated_concepts
            if kind in ("concepts", "concept_evolution")
            else self.config.num_generated_equations
        )
        values["N"] = str(n)
        request = GenerationRequest(
            messages=(Message("system", fill(system, values)), Message("user", fill(user, values))),
            seed=stable_hash(METHOD_NAME, self.seed, self.calls) & ((1 << SEED_BITS) - 1),
            sampling=self.sampling,
            task=TASK_NAME,
            context={**self.problem.context(), "method": METHOD_NAME, "lasr_op": kind, "n": n, **shown},
        )
        result = self.adapter.generate(request)
        self.tally.add(result)
        self.latency_ms += result.latency_ms
        if not result.ok:
            self.generation_errors[str(result.error_kind)] += 1
            if result.error_kind in FATAL_GENERATION_KINDS:
                self.fatal = (str(result.error_kind), str(result.error_message))
            return None
        self.last_raw = excerpt(result.text, RECORD_TEXT)
        return result.text

    def _suggestions(self, n: int) -> list[str]:
        """LaSR's `sample_context`: n ideas from the first `max_concepts` of the library, None-padded
        when the library is smaller, with the problem's context first."""
        return [self.context, *pick_ideas(self.concepts, n, self.config.max_concepts, self.rng)]

    def _pick_tree(self, kind: str, text: str | None) -> Node | None:
        """LaSR picks a random one of the first N expressions that parses."""
        if text is None:
            return None
        options = read_list(text)[: self.config.num_generated_equations]
        for option in self.rng.sample(options, len(options)):
            try:
                tree = read_expression(option, self.variables)
            except EquationError as err:
                self.candidate_errors[err.kind] += 1
                continue
            self.used_by_kind[kind] += 1
            return tree
        if not options:
            self.candidate_errors["no_list"] += 1
        return None

    def llm_mutate(self, tree: Node) -> Node | None:
        expr = render(tree)
        user = fill_list(PROMPTS["mutate_user"], self._suggestions(self.config.num_pareto_context), "assump")
        text = self._ask(
            "mutate",
            PROMPTS["mutate_system"],
            fill(user, {"expr": expr}),
            {"expressions": [expr], "concepts": list(self.concepts)},
        )
        return self._pick_tree("mutate", text)

    def llm_randomize(self) -> Node | None:
        n = min(self.config.num_pareto_context, len(self.concepts))
        user = fill_list(PROMPTS["gen_random_user"], self._suggestions(n), "assump")
        text = self._ask(
            "gen_random",
            PROMPTS["gen_random_system"],
            user,
            {"expressions": [], "concepts": list(self.concepts)},
        )
        return self._pick_tree("gen_random", text)

    def llm_crossover(self, a: Node, b: Node) -> tuple[Node, Node] | None:
        e1, e2 = render(a), render(b)
        n = min(self.config.num_pareto_context, len(self.concepts))
        user = fill_list(PROMPTS["crossover_user"], self._suggestions(n), "assump")
        text = self._ask(
            "crossover",
            PROMPTS["crossover_system"],
            fill(user, {"expr1": e1, "expr2": e2}),
            {"expressions": [e1, e2], "concepts": list(self.concepts)},
        )
        if text is None:
            return None
        options = read_list(text)[: self.config.num_generated_equations]
        trees: list[Node] = []
        for item in options:
            try:
                trees.append(read_expression(item, self.variables))
            except EquationError as err:
                self.candidate_errors[err.kind] += 1
            if len(trees) == 2:
                break
        if not trees:
            return None
        self.used_by_kind["crossover"] += 1
        return (trees[0], trees[1] if len(trees) > 1 else b)

    def end_of_iteration(self, iteration: int, front: list[Member], worst: list[Member]) -> None:
        """LaSR's `update_idea_database` after each iteration: the concept call, two distinct
        ideas of its answer put first in the library, then `prompt_evol` twice."""
        cfg = self.config
        good = [render(m.tree) for m in self.rng.sample(front, min(len(front), cfg.num_pareto_context))]
        bad = [render(m.tree) for m in self.rng.sample(worst, min(len(worst), cfg.num_pareto_context))]
        user = fill_list(fill_list(PROMPTS["extract_idea_user"], good, "gexpr"), bad, "bexpr")
        text = self._ask("concepts", PROMPTS["extract_idea_system"], user, {"good": good, "bad": bad})
        ideas = read_list(text)[: cfg.num_generated_concepts] if text is not None else []
        ideas = [excerpt(idea, CONCEPT_TEXT) for idea in ideas]  # kept, and sent in later prompts
        if not ideas:
            return
        self.used_by_kind["concepts"] += 1
        for idea in chosen_ideas(len(ideas), self.rng):
            self.concepts.insert(0, ideas[idea])
        for _ in range(cfg.num_concept_crossover):
            evolved = self._evolve_concepts()
            if evolved is not None:
                self.concepts.insert(0, evolved)

    def _evolve_concepts(self) -> str | None:
        """LaSR's `prompt_evol`: five ideas drawn (with replacement) from beyond the first
        `max_concepts`, merged by the model; one of its answers is the new idea."""
        ideas = self.concepts
        if len(ideas) <= self.config.max_concepts:
            return None
        tail = ideas[self.config.max_concepts :]
        shown = [tail[self.rng.randrange(len(tail))] for _ in range(self.config.prompt_evol_ideas)]
        user = fill_list(PROMPTS["prompt_evol_user"], shown, "idea")
        text = self._ask("concept_evolution", PROMPTS["prompt_evol_system"], user, {"ideas": shown})
        options = read_list(text)[: self.config.num_generated_concepts] if text is not None else []
        if not options:
            return None
        self.used_by_kind["concept_evolution"] += 1
        return excerpt(options[self.rng.randrange(len(options))], CONCEPT_TEXT)

    # -- the run --------------------------------------------------------------------------------

    def _out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def _new_best(self, member: Member) -> None:
        self.best_at_call[self.calls] = member.tree
        note_best("train loss", member.loss)  # (the progress line and `lsrb view`)

    def _trace(self) -> list[TracePoint]:
        points = []
        for call, tree in sorted(self.best_at_call.items()):
            skeleton, values = parametrise(tree)
            points.append(
                TracePoint(call, Program.from_ir(skeleton, self.variables, len(values)), tuple(values))
            )
        return points

    def run(self) -> DiscoveryResult:
        start = time.perf_counter()
        cfg = self.config
        if cfg.time_limit_s is not None:
            self.deadline = start + cfg.time_limit_s
        X, y = self.problem.columns("train")
        w = cfg.llm_weight
        hooks = EvolutionHooks(
            mutate=self.llm_mutate,
            randomize=self.llm_randomize,
            crossover=self.llm_crossover,
            mutate_rate=w,
            randomize_rate=w,
            crossover_rate=w,
            end_of_iteration=self.end_of_iteration,
            stop=self._out_of_time,
            on_new_best=self._new_best,
        )
        evolution = Evolution(X, y, self.variables, self.rng, cfg.evolution, hooks)
        found = evolution.run()
        skeleton, values = parametrise(found.best.tree)
        program = Program.from_ir(skeleton, self.variables, len(values))
        with np.errstate(all="ignore"):
            yhat = program.evaluate(X, np.asarray(values) if values else None)
        r = np.broadcast_to(yhat, y.shape) - y
        mse = float(r @ r) / len(y)
        mse = mse if math.isfinite(mse) else math.inf
        var = float(np.var(y))
        stop = "fatal_error" if self.fatal else ("time_limit" if found.stopped else "iterations")
        # expressions the model proposed that read as search trees (mutate, gen_random, crossover)
        used = sum(self.used_by_kind[k] for k in ("mutate", "gen_random", "crossover"))
        result = DiscoveryResult(
            program=program,
            params=tuple(values),
            proposal=render(found.best.tree),
            raw_output=self.last_raw,
            train_mse=mse,
            train_nmse=mse / var if var > 0 and math.isfinite(mse) else math.inf,
            model_calls=self.calls,
            trace_length=found.evaluations,
            latency_ms=self.latency_ms,
            trace=self._trace(),
            # The search's best is PySR's whatever the model did (the reference returns it): the
            # model's part is only what its proposals put in the populations.
            fallback=used == 0,
            extra={
                "sr_method": METHOD_NAME,
                "stop_reason": stop,
                "iterations": found.iterations,
                "llm_calls_by_kind": dict(sorted(self.calls_by_kind.items())),
                "llm_used_by_kind": dict(sorted(self.used_by_kind.items())),
                "model_valid_candidates": used,
                "operator_counts": found.operator_counts,
                "candidate_errors": dict(sorted(self.candidate_errors.items())),
                "generation_errors": dict(sorted(self.generation_errors.items())),
                "concepts": self.concepts[: self.config.max_concepts],
                "pareto_front": [[m.size, m.loss] for m in found.pareto],
            },
        )
        result.extra["wall_time_s"] = round(time.perf_counter() - start, 3)
        result.note_generation_failure(self.fatal, self.calls, self.generation_errors)
        return result


class LaSRMethod(DiscoveryMethod):
    """`--lsrb-sr-method=lasr`: LaSR's search as a `DiscoveryMethod`."""

    name = METHOD_NAME
    default_budget = DEFAULT_BUDGET
    # LLM-SRBench's LaSR searcher: no temperature (the provider's default), max_tokens 1024.
    sampling_defaults: ClassVar[Mapping[str, Any]] = {"temperature": None, "max_tokens": 1024}

    def mock_answer(self, context: Mapping[str, Any], seed: int) -> str:
        """LaSR's own baseline: the concept and operator answers its prompts ask for."""
        return mock_lasr_answer(context, seed)

    def discover(
        self,
        problem: Problem,
        adapter: Adapter,
        sampling: SamplingConfig,
        seed: int,
        budget: int,
        *,
        options: Mapping[str, Any] | None = None,
    ) -> DiscoveryResult:
        limits = run_limits(options or {})
        sr = SrOptions.read(options or {})
        config = LaSRConfig(
            budget=max(0, int(budget)),
            time_limit_s=limits.time_limit_s,
            token_budget=limits.token_budget,
            evolution=EvolutionConfig(rows="seeded" if sr.lasr_rows == "seeded" else "first"),
        )
        if sr.lasr_backend == "pysr":
            from pytest_lsrb.adapters.http import api_key_from_env
            from pytest_lsrb.srbench.methods.lasr_pysr import discover_with_pysr

            values = options or {}
            return discover_with_pysr(
                problem,
                adapter,
                seed,
                context=llm_context(problem),
                weight=config.llm_weight,
                base_url=str(values.get("base_url") or ""),
                api_key=api_key_from_env(values.get("api_key_env")),
                config=config.evolution,
            )
        return LaSRRun(problem, adapter, sampling, seed, config).run()


def chosen_ideas(n: int, rng: random.Random) -> list[int]:
    """Which of a concept answer's n ideas join the library, in the order they are put first:
    LaSR's `a = rand(1:N)`, then, when N > 1, `b = rand(1:N-1)` moved past a when equal."""
    a = rng.randrange(n)
    if n == 1:
        return [a]
    b = rng.randrange(n - 1)
    if b == a:
        b += 1
    return [a, b]


def pick_ideas(ideas: Sequence[str], n: int, max_concepts: int, rng: random.Random) -> list[str]:
    """n ideas for a prompt: all of them, "None"-padded, when the library holds fewer than n;
    else n distinct ones drawn from its first `max_concepts`. The library is the model's own
    text, so it may hold one idea twice: the draw is over distinct ideas (as many as there are,
    at most n), or it would never end."""
    if len(ideas) < n:
        return list(ideas) + ["None"] * (n - len(ideas))
    pool = list(dict.fromkeys(ideas[:max_concepts]))
    chosen: list[str] = []
    while len(chosen) < min(n, len(pool)):
        idea = pool[rng.randrange(len(pool))]
        if idea not in chosen:
            chosen.append(idea)
    return chosen
