"""Error taxonomies shared by every adapter, verifier and suite.

One source of truth for the spelling of every kind and domain that lands in attempt records
and summaries (see DESIGN.md, "Taxonomies").
"""

from __future__ import annotations

import re
from typing import Final

# Generation errors: kind -> domain.
GENERATION_ERROR_DOMAINS: Final[dict[str, str]] = {
    "timeout": "transport",
    "connection": "transport",
    "rate_limit": "provider",
    "quota": "provider",
    "auth": "provider",
    "server_error": "provider",
    "client_error": "provider",
    # A body that is not the protocol's success shape (truncated or HTML, 200 without the answer's
    # fields) is the server's fault: retried, then an infrastructure error, never the model's.
    "bad_response": "provider",
    "empty_output": "model_output",
    "harness": "harness",
    # A call the harness refused, not sent: past the attempt's limit (`engine.calls`).
    "call_limit": "harness",
}

# Transient kinds are retried with capped, jittered backoff; quota and auth never are.
RETRYABLE_GENERATION_KINDS: Final[frozenset[str]] = frozenset(
    {"timeout", "connection", "rate_limit", "server_error", "bad_response"}
)
# Kinds that stop the whole run early: every later call would fail the same way.
FATAL_GENERATION_KINDS: Final[frozenset[str]] = frozenset({"quota", "auth"})

# Domains whose errors are the model's fault (a failed test) rather than infrastructure (an
# errored test). A verification outcome's domain is declared by its verifier (engine.verifier).
MODEL_DOMAINS: Final[frozenset[str]] = frozenset({"model_output", "model"})


def generation_domain(kind: str) -> str:
    """The domain of a generation error kind; unknown kinds are harness bugs."""
    return GENERATION_ERROR_DOMAINS.get(kind, "harness")


class LsrbUsageError(Exception):
    """A mistake the user can fix (bad option, bad file). Reported as one sentence, no traceback.

    The message is made printable on one line: it often quotes a hostile file (a key with a
    newline, a lone surrogate that no terminal can encode), so those are shown escaped.
    """

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


# C0 and C1 control characters (ESC and CSI start terminal escapes), DEL, lone surrogates.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_UNPRINTABLE_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def printable(text: str, *, keep_lines: bool = False) -> str:
    """`text` with control characters and lone surrogates written as escapes: one safe line, or
    with `keep_lines` safe lines (newlines and tabs stay), e.g. a test's failure message."""
    pattern = _UNPRINTABLE_BUT_LINES if keep_lines else _UNPRINTABLE
    return pattern.sub(lambda m: ascii(m.group())[1:-1], text)


class OutputWriteError(Exception):
    """The disk refused a write to a run's file (full, over quota, past a file-size limit)."""
