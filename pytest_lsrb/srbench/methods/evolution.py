"""A small PySR-style evolutionary search over equation-language trees (LaSR's engine here).

The reference is LaSR as LLM-SRBench ran it: LaSR's PySR fork and SymbolicRegression.jl on LaSR's
`lasr-experiments` branch, called with LLM-SRBench's `LasrSearcher` settings. Its scheme, in
Python over `srbench.methods.expression_tree`:

- `populations` islands of `population_size` members, each starting from random trees of three
  operators; one *iteration* runs, on every island, `cycles` regularized-evolution cycles, each
  ceil(population_size / tournament_size) events. An event is a tournament (a sample of
  `tournament_size` members, ranked by score, place k chosen with probability p(1-p)^k) and either
  a mutation of the winner (the kind drawn from `MUTATION_WEIGHTS`, conditioned on the tree as
  SymbolicRegression.jl's `condition_mutation_weights!` does; up to 10 tries to satisfy the
  constraints) or, with `crossover_probability`, a crossover of two winners. The child replaces
  the oldest member; a mutation that fails its constraints, or that the adaptive-parsimony
  acceptance (old size's frequency / new size's frequency) rejects, is skipped.
- The score is the loss normalised by the baseline (the loss of predicting the mean) plus
  `parsimony` x size; tournaments weigh it by exp(`adaptive_parsimony_scaling` x the size's
  share of recent populations) (`use_frequency_in_tournament`).
- After its cycles an island's members are simplified (constant folding, `should_simplify`) and
  get their constants optimised with probability `optimizer_probability` (BFGS, 8 steps, from the
  current constants and `optimizer_restarts` perturbed copies; kept when better); the hall of
  fame (best member per size) is updated, the size frequencies counted, and a few members are
  replaced by migrants from the islands' best and from the hall of fame's Pareto front.
- The answer is PySR's `model_selection="best"`: on the Pareto front, among equations with a loss
  within 1.5x the lowest, the one with the steepest drop of log-loss per unit of size.

The reference fits the FIRST `max_rows` = 2000 rows (`task.samples[:2000]`); `rows="seeded"`
takes a seeded spread of rows instead. Hooks (`EvolutionHooks`) may stand in for a mutation, a
random tree or a crossover (LaSR's model calls, tried with their probabilities before the
symbolic operator, as that version does) and run at the end of each iteration. The generator is
the run's own, so runs in parallel threads stay reproducible; nothing global is touched.

Where this differs from SymbolicRegression.jl (README, LaSR): float64 instead of the fork's
float32; constants are optimised by scipy's BFGS with exact gradients (Optim.jl's BFGS with
finite differences there) and small integer exponents stay fixed; the loss is the MSE (the
searcher's loss is 10^6 x the MSE, which the baseline normalisation cancels); populations run
one after another, not in parallel workers.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np
from scipy.optimize import minimize

from pytest_lsrb.equations import Program
from pytest_lsrb.equations.ir import Node, Num, Op
from pytest_lsrb.srbench.methods.expression_tree import (
    MUTATION_WEIGHTS,
    TreeOps,
    admissible,
    evaluate,
    is_constant,
    parametrise,
    simplify,
    size,
    with_constants,
)

SELECTION_LOSS_FACTOR: Final = 1.5  # PySR's model_selection="best": losses within 1.5x the best
# SymbolicRegression.jl's `loss_to_score`: the baseline loss normalises the score unless it is
# below 0.01. The searcher's loss is 10^6 x the MSE, so in MSE units the floor is 1e-8.
BASELINE_FLOOR_MSE: Final = 0.01 / 1e6


@dataclass(frozen=True)
class EvolutionConfig:
    iterations: int = 25  # LLM-SRBench's LaSR config (niterations)
    populations: int = 10  # LLM-SRBench's LaSR config
    population_size: int = 33  # LLM-SRBench's LaSR searcher
    cycles: int = 550  # ncyclesperiteration in LLM-SRBench's LaSR searcher
    maxsize: int = 30  # LLM-SRBench's LaSR searcher
    tournament_size: int = 10  # LaSR's PySR fork defaults from here on (pysr/sr.py)
    tournament_p: float = 0.86
    crossover_probability: float = 0.066
    parsimony: float = 0.0032
    adaptive_parsimony_scaling: float = 20.0
    use_frequency: bool = True
    use_frequency_in_tournament: bool = True
    should_simplify: bool = True  # the searcher sets it
    optimizer_probability: float = 0.14
    optimizer_iterations: int = 8
    optimizer_restarts: int = 2
    perturbation_factor: float = 0.076
    probability_negate_constant: float = 0.01
    fraction_replaced: float = 0.000364
    fraction_replaced_hof: float = 0.035
    topn: int = 12
    max_attempts: int = 10  # SymbolicRegression.jl's tries per mutation / crossover
    weights: Mapping[str, float] = field(default_factory=lambda: dict(MUTATION_WEIGHTS))
    max_rows: int = 2000  # LLM-SRBench's LaSR searcher fits on task.samples[:2000]
    rows: Literal["first", "seeded"] = "first"
    # LaSR's main loop keeps an island's worst member for the concept prompt when its loss is
    # above 100 on the searcher's 10^6 x MSE scale.
    worst_loss_above: float = 100 / 1e6


@dataclass
class Member:
    tree: Node
    loss: float
    birth: int
    size: int = 0  # the tree's size, filled in when 0
    score: float = math.inf  # loss / baseline + parsimony * size (set by the search)

    def __post_init__(self) -> None:
        if not self.size:
            self.size = size(self.tree)


@dataclass
class EvolutionHooks:
    """Where a model may stand in for a random operator. Each returns None to fall back to the
    symbolic operator; the rates are the probabilities of asking (LaSR's `llm_mutate`: per
    mutation event, before the drawn mutation; `llm_gen_random`: per random-tree mutation;
    `llm_crossover`: per crossover)."""

    mutate: Callable[[Node], Node | None] | None = None
    randomize: Callable[[], Node | None] | None = None
    crossover: Callable[[Node, Node], tuple[Node, Node] | None] | None = None
    mutate_rate: float = 0.0
    randomize_rate: float = 0.0
    crossover_rate: float = 0.0
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


def fitting_rows(n: int, config: EvolutionConfig, rng: random.Random) -> list[int] | None:
    """The rows the search fits (None: all of them): the first `max_rows`, as the reference
    takes them, or a seeded sorted sample (`rows="seeded"`)."""
    if n <= config.max_rows:
        return None
    if config.rows == "seeded":
        return sorted(rng.sample(range(n), config.max_rows))
    return list(range(config.max_rows))


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
        self.config = cfg = config or EvolutionConfig()
        take = fitting_rows(len(y), cfg, rng)
        self.X = {k: _rows(v, take) for k, v in X.items()}
        self.y = _rows(y, take)
        self.variables = variables
        self.rng = rng
        self.ops = TreeOps(variables, rng, cfg.perturbation_factor, cfg.probability_negate_constant)
        self.hooks = hooks or EvolutionHooks()
        self.evaluations = 0
        self.clock = 0
        self.hall: dict[int, Member] = {}
        self.lowest: Member | None = None
        self.counts: dict[str, int] = {}
        baseline = float(np.mean((self.y - np.mean(self.y)) ** 2)) if self.y.size else 0.0
        self.normalization = baseline if baseline >= BASELINE_FLOOR_MSE else BASELINE_FLOOR_MSE
        # RunningSearchStatistics: counts of member sizes 1..maxsize, each starting at 1 (its
        # window of 100,000 is never reached at these settings, so no window moves here).
        self.frequencies = [1.0] * cfg.maxsize
        self.size_weight = [1.0] * (cfg.maxsize + 1)  # exp(scaling * normalised frequency)
        self.normalized = [1.0 / cfg.maxsize] * (cfg.maxsize + 1)
        self._normalize()
        place = [cfg.tournament_p * (1 - cfg.tournament_p) ** k for k in range(cfg.tournament_size)]
        self.place_weights = [w / sum(place) for w in place]

    # -- scoring ------------------------------------------------------------------------------

    def loss(self, tree: Node) -> float:
        self.evaluations += 1
        with np.errstate(all="ignore"):
            r = np.broadcast_to(evaluate(tree, self.X), self.y.shape) - self.y
            value = float(r @ r) / r.shape[0]
        return value if math.isfinite(value) else math.inf

    def member(self, tree: Node, loss: float | None = None) -> Member:
        self.clock += 1
        m = Member(tree, self.loss(tree) if loss is None else loss, self.clock)
        m.score = self.score(m.loss, m.size)
        return m

    def score(self, loss: float, tree_size: int) -> float:
        """SymbolicRegression.jl's `loss_to_score`."""
        return loss / self.normalization + self.config.parsimony * tree_size

    def _record(self, m: Member) -> None:
        if not math.isfinite(m.loss) or m.size > self.config.maxsize:
            return
        held = self.hall.get(m.size)
        if held is None or m.loss < held.loss:
            self.hall[m.size] = Member(m.tree, m.loss, m.birth, m.size, m.score)
        if self.lowest is None or m.loss < self.lowest.loss:
            self.lowest = Member(m.tree, m.loss, m.birth, m.size, m.score)
            if self.hooks.on_new_best is not None:
                self.hooks.on_new_best(self.lowest)

    def _normalize(self) -> None:
        """`normalize_frequencies!`, and the tournament's size weights from them."""
        total = sum(self.frequencies)
        scaling = self.config.adaptive_parsimony_scaling
        for s in range(1, self.config.maxsize + 1):
            self.normalized[s] = self.frequencies[s - 1] / total
            self.size_weight[s] = math.exp(scaling * self.normalized[s])

    def _frequency(self, tree_size: int) -> float:
        return self.normalized[tree_size] if 0 < tree_size <= self.config.maxsize else 1e-6

    def optimise_constants(self, m: Member) -> Member:
        """SymbolicRegression.jl's `optimize_constants`: BFGS (`optimizer_iterations` steps) from
        the member's constants and from `optimizer_restarts` copies perturbed by x(1 + N(0, 1/2));
        the best kept when it beats the member (then it is reborn)."""
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

        x0 = np.asarray(values, dtype=np.float64)
        starts = [x0] + [
            x0 * (1.0 + 0.5 * np.array([self.rng.gauss(0.0, 1.0) for _ in values]))
            for _ in range(self.config.optimizer_restarts)
        ]
        best_fun, best_x = math.inf, x0
        for start in starts:
            self.evaluations += 1
            with np.errstate(all="ignore"):
                found = minimize(
                    objective,
                    start,
                    jac=True,
                    method="BFGS",
                    options={"maxiter": self.config.optimizer_iterations},
                )
            if math.isfinite(found.fun) and found.fun < best_fun:
                best_fun, best_x = float(found.fun), found.x
        if not best_fun < m.loss:
            return m
        return self.member(with_constants(skeleton, [float(v) for v in best_x]))

    # -- the search ---------------------------------------------------------------------------

    def run(self) -> EvolutionResult:
        cfg = self.config
        islands = [
            [self.member(self.ops.initial_tree()) for _ in range(cfg.population_size)]
            for _ in range(cfg.populations)
        ]
        for island in islands:
            for m in island:
                self._record(m)
        best_of = [_top(island, cfg.topn) for island in islands]
        done = 0
        stopped = False
        for iteration in range(cfg.iterations):
            worst: list[Member] = []
            for i, island in enumerate(islands):
                if self._stop():
                    stopped = True
                    break
                self._normalize()
                self._cycles(island)
                self._simplify_and_optimise(island)
                for m in island:
                    self._record(m)
                    if 0 < m.size <= cfg.maxsize:
                        self.frequencies[m.size - 1] += 1.0
                worst_member = max(island, key=lambda m: m.loss)
                if worst_member.loss > cfg.worst_loss_above:
                    worst.append(worst_member)
                best_of[i] = _top(island, cfg.topn)
                self._migrate(island, [m for top in best_of for m in top])
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

    def _count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def _cycles(self, island: list[Member]) -> None:
        cfg = self.config
        events = math.ceil(cfg.population_size / cfg.tournament_size)
        for _ in range(cfg.cycles):
            if self._stop():
                return
            for _ in range(events):
                if self.rng.random() > cfg.crossover_probability:
                    child = self._next_generation(self._tournament(island))
                    if child is not None:
                        self._replace_oldest(island, child)
                else:
                    pair = self._crossover(self._tournament(island), self._tournament(island))
                    if pair is not None:
                        for child in pair:
                            self._replace_oldest(island, child)

    def _tournament(self, island: list[Member]) -> Member:
        """`best_of_sample`: `tournament_size` members without replacement, ranked by their score
        times exp(scaling x their size's frequency); place k wins with probability ~ p(1-p)^k."""
        cfg = self.config
        k = min(cfg.tournament_size, len(island))
        sample = self.rng.sample(island, k)
        if cfg.use_frequency_in_tournament:
            keys = [
                m.score * (self.size_weight[m.size] if 0 < m.size <= cfg.maxsize else 1.0) for m in sample
            ]
        else:
            keys = [m.score for m in sample]
        ranked = sorted(range(k), key=lambda j: keys[j])
        place = self.rng.choices(range(k), weights=self.place_weights[:k])[0]
        return sample[ranked[place]]

    def _conditioned_weights(self, m: Member) -> tuple[list[str], list[float]]:
        """`condition_mutation_weights!`: no operator mutations on a leaf (and no constant ones on
        a variable), swaps only with a binary operator, constant mutations scaled by
        min(8, constants) / 8, no growth at the maximum size, no simplify unless enabled."""
        cfg = self.config
        w = dict(cfg.weights)
        tree = m.tree
        if not isinstance(tree, Op):
            for k in ("mutate_operator", "swap_operands", "delete_node", "simplify"):
                w[k] = 0.0
            if not isinstance(tree, Num):
                w["mutate_constant"] = 0.0
        else:
            nodes = _nodes(tree)
            if not any(isinstance(n, Op) and len(n.args) == 2 for n in nodes):
                w["swap_operands"] = 0.0
            constants = sum(isinstance(n, Num) for n in nodes)
            w["mutate_constant"] = w.get("mutate_constant", 0.0) * min(8, constants) / 8.0
        if m.size >= cfg.maxsize:
            w["add_node"] = w["insert_node"] = 0.0
        if not cfg.should_simplify:
            w["simplify"] = 0.0
        kinds = [k for k, v in w.items() if v > 0]
        return kinds, [w[k] for k in kinds]

    def _next_generation(self, parent: Member) -> Member | None:
        """SymbolicRegression.jl's `next_generation`: the child, or None when it is skipped."""
        cfg = self.config
        kinds, weights = self._conditioned_weights(parent)
        choice = self.rng.choices(kinds, weights=weights)[0] if kinds else "do_nothing"
        tree: Node | None = None
        if self.hooks.mutate is not None and self.rng.random() < self.hooks.mutate_rate:
            start = parent.tree
            if is_constant(start):
                start = self.ops.random_tree(self.rng.randint(1, cfg.maxsize))
            self._count("llm_mutate")
            proposed = self.hooks.mutate(start)
            if proposed is not None:
                proposed = simplify(proposed)
                if not is_constant(proposed) and admissible(proposed, cfg.maxsize):
                    tree = proposed
        if tree is None:
            self._count(choice)
            if choice == "do_nothing":
                return self.member(parent.tree, parent.loss)
            if choice == "simplify":
                return self.member(simplify(parent.tree), parent.loss)
            for _ in range(cfg.max_attempts):
                candidate = self._randomize() if choice == "randomize" else None
                if candidate is None:
                    candidate = self.ops.mutate(parent.tree, choice, cfg.maxsize)
                if admissible(candidate, cfg.maxsize):
                    tree = candidate
                    break
            if tree is None:
                return None
        child = self.member(tree)
        if cfg.use_frequency:
            accept = self._frequency(parent.size) / self._frequency(child.size)
            if accept < self.rng.random():
                return None
        self._record(child)
        return child

    def _randomize(self) -> Node | None:
        """A random tree: the model's (LaSR's `llm_gen_random`, with its probability, simplified;
        a constant answer falls back) or None for the symbolic operator."""
        if self.hooks.randomize is None or not self.rng.random() < self.hooks.randomize_rate:
            return None
        self._count("llm_randomize")
        proposed = self.hooks.randomize()
        if proposed is None:
            return None
        proposed = simplify(proposed)
        return None if is_constant(proposed) else proposed

    def _crossover(self, a: Member, b: Member) -> tuple[Member, Member] | None:
        """`crossover_generation`: the model's recombination (with its probability) or a subtree
        swap, retried up to 10 times until both children satisfy the constraints."""
        cfg = self.config
        pair: tuple[Node, Node] | None = None
        if self.hooks.crossover is not None and self.rng.random() < self.hooks.crossover_rate:
            self._count("llm_crossover")
            pair = self.hooks.crossover(a.tree, b.tree)
        if pair is None:
            self._count("crossover")
            pair = self.ops.crossover(a.tree, b.tree)
        tries = 1
        while not all(admissible(t, cfg.maxsize) for t in pair):
            if tries > cfg.max_attempts:
                return None
            pair = self.ops.crossover(a.tree, b.tree)
            tries += 1
        children = (self.member(pair[0]), self.member(pair[1]))
        for child in children:
            self._record(child)
        return children

    def _simplify_and_optimise(self, island: list[Member]) -> None:
        """`optimize_and_simplify_population`: each member simplified (`should_simplify`), and
        with `optimizer_probability` its constants optimised; the scores recomputed."""
        cfg = self.config
        optimise = [self.rng.random() < cfg.optimizer_probability for _ in island]
        for j, m in enumerate(island):
            if cfg.should_simplify:
                tree = simplify(m.tree)
                if tree != m.tree:
                    m = Member(tree, self.loss(tree), m.birth)
                    m.score = self.score(m.loss, m.size)
            if optimise[j]:
                m = self.optimise_constants(m)
            island[j] = m

    def _replace_oldest(self, island: list[Member], child: Member) -> None:
        oldest = min(range(len(island)), key=lambda i: island[i].birth)
        island[oldest] = child

    def _migrate(self, island: list[Member], best_of_each: list[Member]) -> None:
        cfg = self.config
        for pool, frac in ((best_of_each, cfg.fraction_replaced), (self.pareto(), cfg.fraction_replaced_hof)):
            if not pool:
                continue
            for _ in range(_poisson(self.rng, frac * len(island))):
                src = pool[self.rng.randrange(len(pool))]
                self.clock += 1
                island[self.rng.randrange(len(island))] = Member(
                    src.tree, src.loss, self.clock, src.size, src.score
                )

    def pareto(self) -> list[Member]:
        """The hall of fame's members that beat every smaller one (by size)."""
        front: list[Member] = []
        for s in sorted(self.hall):
            m = self.hall[s]
            if not front or m.loss < front[-1].loss:
                front.append(m)
        return front


def _nodes(node: Node) -> list[Node]:
    out = [node]
    if isinstance(node, Op):
        for a in node.args:
            out += _nodes(a)
    return out


def _rows(values: np.ndarray, take: list[int] | None) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    return arr if take is None else arr[take]


def _top(island: list[Member], n: int) -> list[Member]:
    return sorted(island, key=lambda m: m.score)[:n]


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
