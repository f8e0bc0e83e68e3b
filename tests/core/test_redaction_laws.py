"""Redaction's laws (issue #46, item 1): whatever the keys (1 to 4,096 characters: OAuth and JWT
bearer tokens are 600-2,000) and whatever the text around them (up to 1 MB), no key and no start
of a key of `MIN_PREFIX` characters or more survives `Secrets.redact`; a text holding none is
left as it is. The patterns are no deeper for a long key than for a short one: a key of ~600
characters used to end every run in a RecursionError (one nested group per character)."""

from __future__ import annotations

import itertools
import random
import string

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_lsrb.core.redaction import MIN_PREFIX, Secrets, secret_forms

# What a key can hold: what an HTTP header carries (core.redaction.key_problem), no surrounding space.
KEY_ALPHABET = "".join(chr(c) for c in range(33, 127))
KEYS = st.text(alphabet=KEY_ALPHABET + " ", min_size=1, max_size=300).map(str.strip).filter(bool)
# Around the keys: ordinary text, control characters and escapes (what splits a key), the masks.
FILLER = st.lists(
    st.sampled_from([*'ab xyz-_*#~\\n\n\x00\u200b{}":/', "sk-", "\\x00", "\\u200b", "***"]),
    max_size=40,
).map("".join)


def survivors(text: str, keys: list[str]) -> list[str]:
    """The keys, or their first `MIN_PREFIX` characters (every longer start holds them), in `text`."""
    return [key for key in keys if key[:MIN_PREFIX] in text]


@st.composite
def bodies(draw: st.DrawFn) -> tuple[list[str], str]:
    """Some keys, and a text of pieces: filler, a key, a start of one, a key cut by a control character."""
    keys = draw(st.lists(KEYS, min_size=1, max_size=3))
    pieces: list[str] = []
    for _ in range(draw(st.integers(0, 8))):
        key = draw(st.sampled_from(keys))
        kind = draw(st.sampled_from(["filler", "key", "start", "split"]))
        if kind == "filler":
            pieces.append(draw(FILLER))
        elif kind == "key":
            pieces.append(key)
        elif kind == "start":
            pieces.append(key[: draw(st.integers(1, len(key)))])
        else:
            cut = draw(st.integers(0, len(key)))
            pieces.append(key[:cut] + draw(st.sampled_from(["\x00", "\\n", "\u200b", "\r\n"])) + key[cut:])
    return keys, "".join(pieces)


@given(bodies())
@example((["simp"], "simp"))
@example((["*"], "a*b**"))
@example((["a*", "*b"], "a*b*a**b"))
@example((["sk-ab", "sk-abcdefgh"], "sk-abcdefgsk-abcdefgh"))
@example((["aaaaaaaaaa"], "a" * 25))
@settings(max_examples=100)
def test_no_key_nor_a_start_of_one_survives(case: tuple[list[str], str]) -> None:
    keys, text = case
    assert survivors(Secrets(keys).redact(text), keys) == []


def naive_places(text: str, keys: list[str]) -> set[int]:
    """Every position of `text` inside a start (`MIN_PREFIX` characters or more) of a spelling of a
    key, found by trying every position and every length."""
    places: set[int] = set()
    for form in {f for key in keys for f in secret_forms(key) if len(f) >= MIN_PREFIX}:
        for i in range(len(text)):
            n = 0
            while n < len(form) and i + n < len(text) and text[i + n] == form[n]:
                n += 1
            if n >= MIN_PREFIX:
                places.update(range(i, i + n))
    return places


@given(bodies())
@example((["abcdefghabcdefghSUFFIX"], "abcdefgh" + "abcdefghabcdefghSUFFIX"))  # a border: the
@example((["k0123456789k"], "k0123456789k0123456789k"))  # start of a second copy inside the first
@example((["abababababab"], "abababababababababax" * 3))
@settings(max_examples=100)
def test_every_start_of_a_key_is_masked_whole(case: tuple[list[str], str]) -> None:
    """Stronger: no character of any start of a key (8+) survives, even where starts overlap
    (a key echoed after its own start, a key that repeats itself)."""
    keys, text = case
    secrets = Secrets(keys)
    spans = secrets.spans(text)
    assert all(a < b for a, b in spans) and all(b < c for (_, b), (c, _) in itertools.pairwise(spans))
    masked = {i for a, b in spans for i in range(a, b)}
    assert naive_places(text, keys) <= masked
    kept = [text[b:c] for (_, b), (c, _) in zip([(0, 0), *spans], [*spans, (len(text), 0)], strict=True)]
    assert secrets.redact(text) == secrets.mask.join(kept)


@given(KEYS, FILLER)
def test_a_text_without_the_key_is_left_as_it_is(key: str, text: str) -> None:
    secrets = Secrets([key])
    if not any(text[i:].startswith(key[:MIN_PREFIX]) for i in range(len(text))) and key not in text:
        # nothing of the key in it, even split: a control character between two of its letters
        # would have to stand between letters the text does not have
        flat = text.replace("\x00", "").replace("\u200b", "").replace("\n", "").replace("\\n", "")
        if key[: min(len(key), MIN_PREFIX)] not in flat:
            assert secrets.redact(text) == text


def test_shorter_starts_and_other_words_stay() -> None:
    secrets = Secrets(["sk-proj-abcdefgh"])
    assert secrets.redact("sk-proj is short; sk-proj-a is not") == "sk-proj is short; *** is not"
    assert secrets.redact("intro x; simp; exact foo") == "intro x; simp; exact foo"


def test_a_key_holding_the_mask_gets_another_mask() -> None:
    secrets = Secrets(["a*b*c*d*e"])
    assert secrets.redact("key a*b*c*d*e here") == "key ### here"


def _key(n: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits + "-_.") for _ in range(n))


@pytest.mark.parametrize("n", [1, 7, 8, 16, 600, 2048, 4096])
def test_keys_of_any_length_on_a_megabyte(n: int) -> None:
    """Every place of a 1 MB body the key (or a start of it, or it split by a control
    character) stands is masked; the body's other text is kept."""
    key = _key(n, n)
    secrets = Secrets([key])
    filler = "lorem ipsum dolor " * 3000  # 54 kB of ordinary text between the keys
    split = key[: n // 2] + "\x00" + key[n // 2 :] if n >= 2 else key
    body = "".join(
        [filler, key, filler, key[: max(MIN_PREFIX, n // 3)], filler, split, filler, key + key] * 4
    ).ljust(1_000_000, ".")
    out = secrets.redact(body)
    assert survivors(out, [key]) == []
    if n >= MIN_PREFIX:  # a one-letter key is in the filler itself
        assert out.count("lorem ipsum dolor") == body.count("lorem ipsum dolor")
        assert out.count("***") == 4 * 4  # key, its start, the split key, and key+key (one run each)


def test_a_periodic_key_on_a_periodic_megabyte() -> None:
    """The worst text for a search that follows each start of the key: the key's own letter, a
    million times. Each place is masked once, left to right: one pass."""
    key = "a" * 4096
    out = Secrets([key]).redact("a" * 1_000_000)
    assert "a" * MIN_PREFIX not in out


def test_many_long_keys_at_once() -> None:
    keys = [_key(2048, seed) for seed in range(5)]
    secrets = Secrets(keys)
    body = " | ".join(k[: 100 + i] + " and " + k for i, k in enumerate(keys))
    assert survivors(secrets.redact(body), keys) == []
