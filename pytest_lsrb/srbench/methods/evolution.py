"""A small PySR-style evolutionary search over equation-language trees (LaSR's engine here).

SymbolicRegression.jl's scheme, in Python over `srbench.methods.expression_tree`:

- `populations` islands of `population_size` members; one *iteration* runs, on every island,
  `cycles` regularized-evolution cycles (each ceil(population_size / tournament_size) events: a
  tournament picks a parent, a weighted mutation — or with `crossover_probability` a crossover of
  two winners — makes a child that replaces the oldest member when it satisfies the constraints);
- after its cycles an island's members get their constants optimised with probability
  `optimizer_probability` (BFGS, `optimizer_iterations` steps, exact gradients), the hall of fame
  (best member per size) is updated and a few members are replaced by migrants from the hall of
  fame and from the other islands' best;
- the answer is PySR's `model_selection="best"`: on the Pareto front, among equations with a loss
  within 1.5x the lowest, the one with the steepest drop of log-loss per unit of size.

The loss is the mean squared error on the fitting rows. Hooks (`EvolutionHooks`) may replace a
mutation, a random tree or a crossover (LaSR's model calls) and run at the end of each iteration.
The generator is the run's own (`numpy.random.Generator`), so runs in parallel threads stay
reproducible; nothing global is touched.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

import numpy as np
from scipy.optimize import minimize

from pytest_lsrb.equations import Program
from pytest_lsrb.equations.ir import Node
from pytest_lsrb.srbench.methods.expression_tree import (
    MUTATION_WEIGHTS,
    TreeOps,
    admissible,
    evaluate,
    parametrise,
    size,
    with_constants,
)

SELECTION_LOSS_FACTOR: Final = 1.5  # PySR's model_selection="best": losses within 1.5x the best


@dataclass(frozen=True)
class EvolutionConfig:
    iterations: int = 25  # LLM-SRBench's LaSR config
    populations: int = 10  # LLM-SRBench's LaSR config
    population_size: int = 33  # LLM-SRBench's LaSR config
    cycles: int = 550  # ncyclesperiteration in LLM-SRBench's LaSR config
    maxsize: int = 30  # LLM-SRBench's LaSR config
    tournament_size: int = 15  # PySR's defaults from here on
    tournament_p: float = 0.982
    crossover_probability: float = 0.066
    optimizer_probability: float = 0.14
    optimizer_iterations: int = 8
    fraction_replaced: float = 0.00036
    fraction_replaced_hof: float = 0.0614
    topn: int = 12
    max_rows: int = 2000  # LLM-SRBench's LaSR searcher fits on 2000 rows (its first 2000)


@dataclass
class Member:
    tree: Node
    loss: float
    birth: int
    size: int = 0  # the tree's size, filled in when 0

    def __post_init__(self) -> None:
        if not self.size:
            self.size = size(self.tree)


@dataclass
class EvolutionHooks:
    """Where a model may stand in for a random operator. Each returns None to fall back to the
    symbolic operator; `llm_mutate_rate` etc. are the probabilities of asking."""

    mutate: Callable[[Node], Node | None] | None = None
    randomize: Callable[[], Node | None] | None = None
    crossover: Callable[[Node, Node], tuple[Node, Node] | None] | None = None
    mutate_rate: float = 0.0  # weight of llm_mutate relative to the symbolic mutations' mean
    randomize_rate: float = 0.0  # share of `randomize` handed to the model
    crossover_rate: float = 0.0  # share of crossovers handed to the model
    end_of_iteration: Callable[[int, list[Member], list[Member]], None] | None = None
    stop: Callable[[], bool] | None = None  # the run's time cap
    on_new_best: Callable[[Member], None] | None = None


@dataclass
class EvolutionResult:
    best: Member  # PySR's "best" model selection
    lowest: Member  # the lowest loss found
    pareto: list[Member]
    iterations: int
    evaluations: int
    stopped: bool = False
    operator_counts: dict[str, int] = field(default_factory=dict)


class Evolution:
    """One search on one dataset."""

    def __init__(
        self,
        X: Mapping[str, np.ndarray],
        y: np.ndarray,
        variables: tuple[str, ...],
        rng: random.Random,
        config: EvolutionConfig | None = None,
        hooks: EvolutionHooks | None = None,
    ) -> None:
        self.config = config or EvolutionConfig()
        # A seeded subset of the rows (sorted): the reference takes the first max_rows, which
        # assumes shuffled rows; LLM-SR's CSV problems are ordered along a trajectory.
        take = (
            sorted(rng.sample(range(len(y)), self.config.max_rows)) if len(y) > self.config.max_rows else None
        )
        self.X = {k: _rows(v, take) for k, v in X.items()}
        self.y = _rows(y, take)
        self.variables = variables
        self.rng = rng
        self.ops = TreeOps(variables, rng)
        self.hooks = hooks or EvolutionHooks()
        self.evaluations = 0
        self.clock = 0
        self.hall: dict[int, Member] = {}
        self.lowest: Member | None = None
        self.counts: dict[str, int] = {}
        kinds = list(MUTATION_WEIGHTS)
        weights = [MUTATION_WEIGHTS[k] for k in kinds]
        # LaSR's set_llm_mutation_weights: llm_mutate gets rate x the mean symbolic weight (and
        # the others shrink by 1 - rate); llm_randomize takes its rate's share of randomize.
        rate = self.hooks.mutate_rate if self.hooks.mutate is not None else 0.0
        others = [k for k in kinds if k != "randomize"]
        mean_other = sum(MUTATION_WEIGHTS[k] for k in others) / len(others)
        weights = [w * (1 - rate) if k != "randomize" else w for k, w in zip(kinds, weights, strict=True)]
        r_rate = self.hooks.randomize_rate if self.hooks.randomize is not None else 0.0
        i_rand = kinds.index("randomize")
        llm_random_w = weights[i_rand] * r_rate
        weights[i_rand] *= 1 - r_rate
        kinds += ["llm_mutate", "llm_randomize"]
        weights += [rate * mean_other, llm_random_w]
        self.kinds = kinds
        self.cum_weights = list(itertools.accumulate(weights))

    # -- scoring ------------------------------------------------------------------------------

    def loss(self, tree: Node) -> float:
        self.evaluations += 1
        with np.errstate(all="ignore"):
            r = np.broadcast_to(evaluate(tree, self.X), self.y.shape) - self.y
            value = float(r @ r) / r.shape[0]
        return value if math.isfinite(value) else math.inf

    def member(self, tree: Node) -> Member:
        self.clock += 1
        m = Member(tree, self.loss(tree), self.clock)
        self._record(m)
        return m

    def _record(self, m: Member) -> None:
        if not math.isfinite(m.loss):
            return
        s = m.size
        held = self.hall.get(s)
        if held is None or m.loss < held.loss:
            self.hall[s] = Member(m.tree, m.loss, m.birth, m.size)
        if self.lowest is None or m.loss < self.lowest.loss:
            self.lowest = Member(m.tree, m.loss, m.birth, m.size)
            if self.hooks.on_new_best is not None:
                self.hooks.on_new_best(self.lowest)

    def optimise_constants(self, m: Member) -> Member:
        """BFGS on the member's constants from their current values (exact gradients)."""
        skeleton, values = parametrise(m.tree)
        if not values:
            return m
        program = Program.from_ir(skeleton, self.variables, len(values))
        bound = program.bind(self.X)

        def objective(p: np.ndarray) -> tuple[float, np.ndarray]:
            with np.errstate(all="ignore"):
                mse, grad = bound.mse_and_grad(p, self.y)
            if not math.isfinite(mse) or not np.all(np.isfinite(grad)):
                return math.inf, np.zeros_like(p)
            return float(mse), np.asarray(grad, dtype=np.float64)

        self.evaluations += 1
        with np.errstate(all="ignore"):
            found = minimize(
                objective,
                np.asarray(values),
                jac=True,
                method="BFGS",
                options={"maxiter": self.config.optimizer_iterations},
            )
        if not (math.isfinite(found.fun) and found.fun < m.loss):
            return m
        tree = with_constants(skeleton, [float(v) for v in found.x])
        better = Member(tree, float(found.fun), m.birth)
        self._record(better)
        return better

    # -- the search ---------------------------------------------------------------------------

    def run(self) -> EvolutionResult:
        cfg = self.config
        islands = [
            [
                self.member(self.ops.random_tree(self.rng.randint(1, cfg.maxsize)))
                for _ in range(cfg.population_size)
            ]
            for _ in range(cfg.populations)
        ]
        done = 0
        stopped = False
        for iteration in range(cfg.iterations):
            worst: list[Member] = []
            for i, island in enumerate(islands):
                if self._stop():
                    stopped = True
                    break
                self._cycles(island)
                island[:] = [
                    self.optimise_constants(m) if self.rng.random() < cfg.optimizer_probability else m
                    for m in island
                ]
                for m in island:
                    self._record(m)
                front = self.pareto()
                worst_member = max(island, key=lambda m: m.loss)
                if front and worst_member.loss > front[-1].loss:
                    worst.append(worst_member)
                self._migrate(
                    island, [m for j, isl in enumerate(islands) if j != i for m in _top(isl, cfg.topn)]
                )
            if stopped:
                break
            done = iteration + 1
            if self.hooks.end_of_iteration is not None:
                self.hooks.end_of_iteration(iteration, self.pareto(), worst)
        front = self.pareto()
        assert self.lowest is not None
        return EvolutionResult(
            best=select_best(front) if front else self.lowest,
            lowest=self.lowest,
            pareto=front,
            iterations=done,
            evaluations=self.evaluations,
            stopped=stopped,
            operator_counts=dict(sorted(self.counts.items())),
        )

    def _stop(self) -> bool:
        return self.hooks.stop is not None and self.hooks.stop()

    def _cycles(self, island: list[Member]) -> None:
        cfg = self.config
        events = math.ceil(cfg.population_size / cfg.tournament_size)
        for _ in range(cfg.cycles):
            if self._stop():
                return
            for _ in range(events):
                if self.rng.random() < cfg.crossover_probability:
                    a, b = self._tournament(island), self._tournament(island)
                    children = self._crossover(a.tree, b.tree)
                    if children is not None:
                        for child in children:
                            self._replace_oldest(island, self.member(child))
                else:
                    mutated = self._mutate(self._tournament(island).tree)
                    if mutated is not None:
                        self._replace_oldest(island, self.member(mutated))

    def _tournament(self, island: list[Member]) -> Member:
        cfg = self.config
        k = min(cfg.tournament_size, len(island))
        ranked = sorted(self.rng.sample(island, k), key=lambda m: (m.loss, m.size))
        for m in ranked[:-1]:
            if self.rng.random() < cfg.tournament_p:
                return m
        return ranked[-1]

    def _mutate(self, tree: Node) -> Node | None:
        kind = self.rng.choices(self.kinds, cum_weights=self.cum_weights)[0]
        child: Node | None = None
        if kind == "llm_mutate" and self.hooks.mutate is not None:
            child = self.hooks.mutate(tree)
        elif kind == "llm_randomize" and self.hooks.randomize is not None:
            child = self.hooks.randomize()
        if child is None:
            kind = {"llm_mutate": "mutate_operator", "llm_randomize": "randomize"}.get(kind, kind)
            child = self.ops.mutate(tree, kind, self.config.maxsize)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return child if admissible(child, self.config.maxsize) else None

    def _crossover(self, a: Node, b: Node) -> tuple[Node, Node] | None:
        pair: tuple[Node, Node] | None = None
        kind = "crossover"
        if self.hooks.crossover is not None and self.rng.random() < self.hooks.crossover_rate:
            pair = self.hooks.crossover(a, b)
            kind = "llm_crossover"
        if pair is None:
            pair = self.ops.crossover(a, b)
            kind = "crossover"
        self.counts[kind] = self.counts.get(kind, 0) + 1
        ok = all(admissible(t, self.config.maxsize) for t in pair)
        return pair if ok else None

    def _replace_oldest(self, island: list[Member], child: Member) -> None:
        oldest = min(range(len(island)), key=lambda i: island[i].birth)
        island[oldest] = child

    def _migrate(self, island: list[Member], elsewhere: list[Member]) -> None:
        cfg = self.config
        for pool, frac in ((elsewhere, cfg.fraction_replaced), (self.pareto(), cfg.fraction_replaced_hof)):
            if not pool:
                continue
            for _ in range(_poisson(self.rng, frac * len(island))):
                src = pool[self.rng.randrange(len(pool))]
                self.clock += 1
                island[self.rng.randrange(len(island))] = Member(src.tree, src.loss, self.clock, src.size)

    def pareto(self) -> list[Member]:
        """The hall of fame's members that beat every smaller one (by size)."""
        front: list[Member] = []
        for s in sorted(self.hall):
            m = self.hall[s]
            if not front or m.loss < front[-1].loss:
                front.append(m)
        return front


def _rows(values: np.ndarray, take: list[int] | None) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    return arr if take is None else arr[take]


def _top(island: list[Member], n: int) -> list[Member]:
    return sorted(island, key=lambda m: m.loss)[:n]


def _poisson(rng: random.Random, lam: float) -> int:
    """A Poisson draw (Knuth's method; the means here are small)."""
    limit, k, prod = math.exp(-lam), 0, rng.random()
    while prod > limit:
        k += 1
        prod *= rng.random()
    return k


def select_best(front: list[Member]) -> Member:
    """PySR's model_selection="best": among Pareto members with loss <= 1.5x the lowest, the
    highest score, score = -d log(loss) / d size between consecutive front members."""
    lowest = min(m.loss for m in front)
    best, best_score = front[0], -math.inf
    prev: tuple[float, int] | None = None
    for m in front:
        loss = max(m.loss, 1e-300)
        score = 0.0 if prev is None else -(math.log(loss) - math.log(prev[0])) / (m.size - prev[1])
        prev = (loss, m.size)
        if m.loss <= SELECTION_LOSS_FACTOR * lowest and score > best_score:
            best, best_score = m, score
    return best


def deadline_stop(deadline: float | None) -> Callable[[], bool]:
    return lambda: deadline is not None and time.perf_counter() >= deadline
