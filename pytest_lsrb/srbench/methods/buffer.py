"""LLM-SR's experience buffer: islands of skeletons, clustered by score, sampled by softmax.

Faithful to the reference (deep-symbolic-mathematics/LLM-SR `llmsr/buffer.py`, itself FunSearch's
program database):

- `num_islands` (10) islands evolve independently; a prompt comes from one island chosen
  uniformly; the new skeleton goes back to that island;
- inside an island, skeletons with the same score form a cluster; clusters are drawn (with
  replacement) by a softmax over their scores whose temperature decays from
  `temperature_init` (0.1) to 0 over `temperature_period` (30,000) registrations;
- inside a cluster, shorter programs are preferred: softmax over -(normalised length);
- the prompt shows `functions_per_prompt` (2) skeletons sorted from worst to best;
- the weaker half of the islands is reset, each restarted from the best skeleton of a random
  surviving island, when `reset_seconds` (4 hours) of wall clock have passed since the last
  reset, checked at every registration, as in the reference (so almost never within a
  1000-call run). `reset_every` > 0 (`--lsrb-sr-reset-every N`) resets every N registrations
  instead: a schedule that does not depend on the machine's speed, but not the reference's.

One deliberate difference: all randomness comes from the run's own `numpy.random.Generator`
(seeded by the attempt seed) and all state lives in the instance, so runs are reproducible and can
proceed in parallel threads.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

T = TypeVar("T")


@dataclass(frozen=True)
class BufferConfig:
    functions_per_prompt: int = 2
    num_islands: int = 10
    reset_seconds: float = 4 * 60 * 60  # wall clock between resets of the weaker half (reference)
    reset_every: int = 0  # > 0: reset every this many registrations instead of by the clock
    temperature_init: float = 0.1
    temperature_period: int = 30_000


def softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    """The reference's tempered softmax (finite logits only); sums to exactly 1."""
    logits = np.asarray(logits, dtype=np.float64)
    if not np.all(np.isfinite(logits)):
        raise ValueError("softmax over non-finite scores")
    z = logits / max(temperature, 1e-300)
    z = z - np.max(z)
    p = np.exp(z)
    p /= p.sum()
    top = int(np.argmax(p))
    p[top] = 1.0 - (p[:top].sum() + p[top + 1 :].sum())
    return p


@dataclass
class Cluster(Generic[T]):
    score: float
    items: list[T] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)

    def add(self, item: T, length: int) -> None:
        self.items.append(item)
        self.lengths.append(length)

    def sample(self, rng: np.random.Generator) -> T:
        """Shorter programs are likelier (the reference's normalised-length softmax)."""
        lengths = np.asarray(self.lengths, dtype=np.float64)
        normalised = (lengths - lengths.min()) / (lengths.max() + 1e-6)
        return self.items[int(rng.choice(len(self.items), p=softmax(-normalised, 1.0)))]


class Island(Generic[T]):
    def __init__(self, config: BufferConfig) -> None:
        self.config = config
        self.clusters: dict[float, Cluster[T]] = {}
        self.num_programs = 0

    def register(self, item: T, score: float, length: int) -> None:
        cluster = self.clusters.get(score)
        if cluster is None:
            cluster = self.clusters[score] = Cluster(score)
        cluster.add(item, length)
        self.num_programs += 1

    def temperature(self) -> float:
        period = self.config.temperature_period
        return self.config.temperature_init * (1 - (self.num_programs % period) / period)

    def sample(self, rng: np.random.Generator) -> list[T]:
        """`functions_per_prompt` skeletons, worst score first (as the prompt lists them)."""
        if not self.clusters:
            return []
        keys = list(self.clusters)
        scores = np.array([self.clusters[k].score for k in keys])
        probabilities = softmax(scores, self.temperature())
        k = min(len(keys), self.config.functions_per_prompt)
        chosen = rng.choice(len(keys), size=k, p=probabilities)
        picked = [(self.clusters[keys[i]].score, self.clusters[keys[i]].sample(rng)) for i in chosen]
        order = np.argsort([score for score, _ in picked], kind="stable")
        return [picked[i][1] for i in order]


class ExperienceBuffer(Generic[T]):
    """Islands of skeletons (any item type: the llmsr method stores its candidates)."""

    def __init__(
        self, config: BufferConfig | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.config = config or BufferConfig()
        n = self.config.num_islands
        self.islands: list[Island[T]] = [Island(self.config) for _ in range(n)]
        self.best_score: list[float] = [-math.inf] * n
        self.best_item: list[tuple[T, float, int] | None] = [None] * n
        self.registered = 0
        self.clock = clock
        self.last_reset = clock()
        self.resets = 0

    def prompt(self, rng: np.random.Generator) -> tuple[int, list[T]]:
        """(island id, the skeletons to show) from a uniformly chosen island."""
        island_id = int(rng.integers(len(self.islands)))
        return island_id, self.islands[island_id].sample(rng)

    def register(
        self, item: T, score: float, length: int, island_id: int | None, rng: np.random.Generator
    ) -> None:
        """Store a scored skeleton in its island (every island when `island_id` is None, as for
        the starting skeleton). Scores must be finite: invalid candidates never enter."""
        if not math.isfinite(score):
            raise ValueError("only finite scores enter the buffer")
        targets = range(len(self.islands)) if island_id is None else [island_id]
        for i in targets:
            self._register_in(i, item, score, length)
        self.registered += 1
        if self.config.reset_every > 0:
            if self.registered % self.config.reset_every == 0:
                self.reset_islands(rng)
        elif self.clock() - self.last_reset > self.config.reset_seconds:
            self.last_reset = self.clock()
            self.reset_islands(rng)

    def _register_in(self, island_id: int, item: T, score: float, length: int) -> None:
        self.islands[island_id].register(item, score, length)
        if score > self.best_score[island_id]:
            self.best_score[island_id] = score
            self.best_item[island_id] = (item, score, length)

    def reset_islands(self, rng: np.random.Generator) -> None:
        """Empty the weaker half of the islands; seed each from a random survivor's best."""
        n = len(self.islands)
        noisy = np.array(self.best_score) + rng.standard_normal(n) * 1e-6
        order = np.argsort(noisy, kind="stable")
        reset, keep = order[: n // 2], order[n // 2 :]
        for island_id in reset:
            founder = self.best_item[int(rng.choice(keep))]
            self.islands[island_id] = Island(self.config)
            self.best_score[island_id] = -math.inf
            self.best_item[island_id] = None
            if founder is not None:
                self._register_in(int(island_id), *founder)
        self.resets += 1

    def __len__(self) -> int:
        return sum(island.num_programs for island in self.islands)
