"""The experience buffer: islands, score clusters, softmax sampling, shorter programs, resets."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.srbench.methods.buffer import BufferConfig, Cluster, ExperienceBuffer, Island, softmax


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=30), st.floats(1e-4, 10.0))
def test_softmax_is_a_distribution(logits: list[float], temperature: float) -> None:
    p = softmax(np.array(logits), temperature)
    assert p.shape == (len(logits),)
    assert np.all(p >= 0) and math.isclose(float(p.sum()), 1.0, abs_tol=1e-12)
    assert p[int(np.argmax(logits))] >= p.max() - 1e-12


def test_softmax_refuses_non_finite_scores() -> None:
    with pytest.raises(ValueError):
        softmax(np.array([0.0, -math.inf]), 1.0)


def test_cluster_prefers_shorter_programs() -> None:
    cluster: Cluster[str] = Cluster(score=-1.0)
    cluster.add("short", 10)
    cluster.add("long", 400)
    rng = np.random.default_rng(0)
    counts = Counter(cluster.sample(rng) for _ in range(2000))
    assert counts["short"] > counts["long"] > 0


def test_island_shows_worst_first_and_favours_high_scores() -> None:
    island: Island[str] = Island(BufferConfig(functions_per_prompt=2, temperature_init=1.0))
    for name, score in [("bad", -5.0), ("mid", -1.0), ("good", -0.1)]:
        island.register(name, score, 10)
    rng = np.random.default_rng(1)
    shown: Counter[str] = Counter()
    for _ in range(500):
        picked = island.sample(rng)
        assert len(picked) == 2
        order = {"bad": 0, "mid": 1, "good": 2}
        assert order[picked[0]] <= order[picked[1]]
        shown.update(picked)
    assert shown["good"] > shown["mid"] > shown["bad"]


def test_same_score_joins_one_cluster() -> None:
    island: Island[str] = Island(BufferConfig())
    island.register("a", -1.0, 5)
    island.register("b", -1.0, 7)
    assert len(island.clusters) == 1 and island.num_programs == 2


def test_starting_skeleton_goes_to_every_island_and_new_ones_to_theirs() -> None:
    buffer: ExperienceBuffer[str] = ExperienceBuffer(BufferConfig(num_islands=4))
    rng = np.random.default_rng(0)
    buffer.register("start", -1.0, 10, None, rng)
    assert all(i.num_programs == 1 for i in buffer.islands)
    buffer.register("child", -0.5, 10, 2, rng)
    assert [i.num_programs for i in buffer.islands] == [1, 1, 2, 1]
    assert buffer.best_score[2] == -0.5 and buffer.best_score[0] == -1.0
    with pytest.raises(ValueError):
        buffer.register("invalid", -math.inf, 10, 0, rng)


def test_reset_by_registrations_restarts_the_weaker_half_from_survivors() -> None:
    buffer: ExperienceBuffer[str] = ExperienceBuffer(BufferConfig(num_islands=4, reset_every=5))
    rng = np.random.default_rng(0)
    buffer.register("start", -10.0, 10, None, rng)
    for island, score in [(0, -1.0), (1, -2.0), (2, -8.0)]:
        buffer.register(f"i{island}", score, 10, island, rng)
    assert buffer.resets == 0
    buffer.register("i3", -9.0, 10, 3, rng)  # the 5th registration triggers the reset
    assert buffer.resets == 1
    # Islands 2 and 3 were the weakest: each now holds exactly one founder from island 0 or 1.
    for weak in (2, 3):
        assert buffer.islands[weak].num_programs == 1
        best = buffer.best_item[weak]
        assert best is not None and best[0] in ("i0", "i1")
    assert buffer.best_item[0] is not None and buffer.best_item[0][0] == "i0"


def test_reset_by_the_clock_as_the_reference_after_four_hours() -> None:
    now = [0.0]
    buffer: ExperienceBuffer[str] = ExperienceBuffer(BufferConfig(num_islands=4), clock=lambda: now[0])
    rng = np.random.default_rng(0)
    buffer.register("start", -10.0, 10, None, rng)
    for i in range(300):  # any number of registrations within four hours: no reset
        now[0] += 40.0
        buffer.register(f"c{i}", -5.0, 10, i % 4, rng)
    assert buffer.resets == 0 and now[0] < 4 * 3600
    now[0] = 4 * 3600 + 1.0  # strictly more than the period since the start
    buffer.register("late", -4.0, 10, 0, rng)
    assert buffer.resets == 1
    buffer.register("next", -4.0, 10, 1, rng)
    assert buffer.resets == 1  # the period restarts from the reset


def test_prompts_are_reproducible_from_the_generator() -> None:
    def draws(seed: int) -> list[tuple[int, list[str]]]:
        buffer: ExperienceBuffer[str] = ExperienceBuffer()
        rng = np.random.default_rng(seed)
        buffer.register("start", -3.0, 10, None, rng)
        out = []
        for i in range(30):
            island, shown = buffer.prompt(rng)
            buffer.register(f"p{i}", -1.0 / (i + 1), 10 + i, island, rng)
            out.append((island, shown))
        return out

    assert draws(7) == draws(7)
    assert draws(7) != draws(8)
