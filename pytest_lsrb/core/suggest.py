"""`(did you mean X?)`: the closest known spelling of a mistyped name, for the one sentence that
refuses it (an option, a suite.toml key, a keyword of `api.run`)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, known: Iterable[str]) -> str | None:
    """The known name nearest `word` (difflib's ratio >= 0.6), or None."""
    found = difflib.get_close_matches(word, sorted(set(known)), n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """` (did you mean X?)` for the closest known name, or an empty string."""
    found = closest(word, known)
    return f" (did you mean {found}?)" if found else ""
