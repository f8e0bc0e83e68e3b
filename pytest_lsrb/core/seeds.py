"""Stable hashing and per-attempt seeds: pure functions, identical on every machine and run.

Python's `hash()` is salted per process, so nothing here uses it.
"""

from __future__ import annotations

import hashlib

SEED_BITS = 31  # fits every server we talk to (llama.cpp: uint32, OpenAI: int, Ollama: int)


def stable_hash(*parts: object) -> int:
    """A 64-bit integer from SHA-256 of the parts, separated so ("ab","c") != ("a","bc")."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def attempt_seed(seed: int, item_id: str, sample_index: int) -> int:
    """The seed sent to the model for one attempt: a pure function of (seed, item, sample)."""
    return stable_hash("attempt", seed, item_id, sample_index) & ((1 << SEED_BITS) - 1)


def shard_of(item_id: str, shard_count: int) -> int:
    """Which shard an item belongs to: depends on the item id alone, never on the selection."""
    if shard_count < 1:
        raise ValueError("shard_count must be at least 1")
    return stable_hash("shard", item_id) % shard_count
