"""Keeping secrets out of what leaves the process: redact known values, strip URL credentials.

A key can come back from a server in more spellings than its own: URL-encoded (a proxy that
echoes the request line), or inside base64 (an echoed `Authorization: Basic` header, where the key
follows `user:` at any byte offset). `Secrets` knows every such form of every key and replaces
them all; callers redact a text *before* they cut it to length, so no prefix of a key survives a
cut either. A server may also echo the start of a key on its own (OpenAI's "Incorrect API key
provided: sk-proj-abcd****qrst"): any prefix of a key of at least `MIN_PREFIX` characters is
redacted wherever it stands. A key split by control or invisible characters (`sk-ab\x00cd`,
`sk-ab\\r\\ncd` as JSON or a repr writes them) is still the key: each form matches with such
characters between its letters. The cost is linear in the text and in the keys' length (keys of
2,000 characters are normal: OAuth and JWT bearer tokens): no pattern grows with a key.

Redaction applies where text leaves the process (records, run files, logs, the terminal, JUnit
XML: `output.files`, `session.egress`), never to what a server answered before it is judged.

`RUN_KEYS` holds every key this process sends anywhere (the model's, the judge's, a Kimina
server's): whoever reads a key from the environment registers it, every way out redacts with all
of them, and the first registration makes every log record redacted too
(`logging.setLogRecordFactory`: any logger, any level, any handler, tracebacks included).
"""

from __future__ import annotations

import base64
import logging
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

MASK = "***"
# The mask is made of one character no key holds (so a mask next to text never completes a key):
# `***` unless a key holds `*`.
_MASKS = ("***", "###", "~~~", "\u2022\u2022\u2022")
# Shorter base64 fragments than this could match ordinary text; a key's own spelling is always
# redacted, whatever its length.
MIN_FORM = 8
# An echoed start of a key this long or longer is the key's (shorter ones are ordinary text).
MIN_PREFIX = 8
# What may stand between two letters of a key that is still the key: C0/C1 controls, soft hyphen,
# zero-width and bidi marks, BOM, and their escaped spellings in JSON or a Python repr.
_SPLIT_ONE = (
    r"[\x00-\x1f\x7f-\x9f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]"
    r"|\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[rnt0abfv])"
)
_SPLIT = f"(?:{_SPLIT_ONE})*"
_GAP = re.compile(f"(?:{_SPLIT_ONE})+")


def _split_tolerant(form: str) -> str:
    """A pattern for `form` that also matches it with control characters between its letters."""
    return _SPLIT.join(re.escape(c) for c in form)


def _base64_cores(raw: bytes) -> set[str]:
    """The base64 characters that spell `raw` whatever precedes it (0, 1 or 2 bytes mod 3) and
    whatever follows it, in the standard and the URL-safe alphabet."""
    cores: set[str] = set()
    for lead in range(3):
        encoded = base64.b64encode(b"\0" * lead + raw).decode("ascii").rstrip("=")
        skip = (0, 2, 3)[lead]  # characters that also hold bits of the leading bytes
        end = len(encoded) - (1 if (lead + len(raw)) % 3 else 0)  # the last one may hold the next
        core = encoded[skip:end]
        cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


def secret_forms(secret: str) -> set[str]:
    """Every spelling of `secret` to redact: itself, URL-encoded, and inside base64."""
    if not secret:
        return set()
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {secret, quote(secret, safe=""), quote(secret), quote_plus(secret)}
    forms |= {c for c in _base64_cores(raw) if len(c) >= MIN_FORM}
    return {f for f in forms if f}


def _mask_for(keys: Iterable[str]) -> str:
    used = {c for key in keys for c in key}
    return next((m for m in _MASKS if m[0] not in used), MASK)


def _common_run(text: str, at: int, form: str, k: int) -> int:
    """How many characters of `form[k:]` stand in `text` from `at` on: compared in C
    (`startswith`), galloping then halving, so a run of length n costs O(n log n) bytes compared."""
    limit = min(len(form) - k, len(text) - at)
    if limit <= 0 or text[at] != form[k]:
        return 0
    if text.startswith(form[k : k + limit], at):
        return limit
    low, high, step = 1, limit, 8  # `low` characters stand there, `high` do not
    while low + step < high:
        if not text.startswith(form[k : k + low + step], at):
            high = low + step
            break
        low, step = low + step, step * 2
    while high - low > 1:
        mid = (low + high) // 2
        if text.startswith(form[k : k + mid], at):
            low = mid
        else:
            high = mid
    return low


def _extend(text: str, at: int, form: str, k: int) -> tuple[int, int]:
    """How far the start of `form` whose first `k` characters stand in `text` up to `at` goes on:
    (its end in `text`, how many of its characters), control characters between them skipped."""
    while k < len(form):
        run = _common_run(text, at, form, k)
        at, k = at + run, k + run
        if k == len(form):
            break
        gap = _GAP.match(text, at)
        if gap is None or gap.end() >= len(text) or text[gap.end()] != form[k]:
            break
        at = gap.end()
    return at, k


def _borders(form: str) -> list[int]:
    """KMP's failure function: `[i]` is the length of the longest proper border (a start that is
    also an end) of `form[: i + 1]`."""
    table = [0] * len(form)
    b = 0
    for i in range(1, len(form)):
        while b and form[i] != form[b]:
            b = table[b - 1]
        if form[i] == form[b]:
            b += 1
        table[i] = b
    return table


class _Form:
    """One spelling of a key of `MIN_PREFIX` characters or more; its borders, made when first needed."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._borders: list[int] | None = None

    def border(self, k: int) -> int:
        if self._borders is None:
            self._borders = _borders(self.text)
        return self._borders[k - 1] if k else 0

    def cover(self, text: str, start: int, head_end: int) -> int:
        """The end of the text the form's starts cover from `start` (its head matched up to
        `head_end`): its longest start there, and every later start of it of `MIN_PREFIX`
        characters or more that begins inside that one and goes on past its end."""
        form, m = self.text, len(self.text)
        end, k = _extend(text, head_end, form, MIN_PREFIX)
        if end - start != k:  # split by control characters: no overlap reasoning on it
            return end
        # `text[end - k: end] == form[:k]`: a start of the form that begins inside it and goes
        # past `end` has matched one of its borders so far (as in Knuth-Morris-Pratt).
        while True:
            b = self.border(k)
            if k == m and b:  # the whole form, then as long as the text repeats its period
                period = m - b
                more = _common_run(text, end, text, end - period)
                if more:
                    end += more
                    k = m if more % period == 0 else b + more % period
                    continue
            advanced = False
            while b:
                run = _common_run(text, end, form, b) if b < m else 0
                if run and b + run >= MIN_PREFIX:
                    end, k, advanced = end + run, b + run, True
                    break
                b = self.border(b)
            if not advanced:
                return end


class Secrets:
    """The secrets of one endpoint and how to find all their forms, in time linear in the text and
    in the keys' length (a 4,096-character key costs about what a short one does: nothing is
    nested per character).

    A form of `MIN_PREFIX` characters or more is found by its first `MIN_PREFIX` characters (one
    pattern for every form: a few hundred characters whatever the keys' length), then followed in
    the text as far as it goes: the whole form, or the longest start of it that stands there, and
    any other start of it that overlaps that one, is masked (`_Form.cover`). Shorter forms (a
    short key itself) are masked where they stand whole. The text is read once, left to right."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        keys = sorted({s for s in secrets if s})
        forms: set[str] = set()
        for key in keys:
            forms |= secret_forms(key)
        self.mask = _mask_for(keys)
        # long forms by their head (forms of one key often share it: `quote(key) == key`)
        by_head: dict[str, list[_Form]] = {}
        for form in sorted(f for f in forms if len(f) >= MIN_PREFIX):
            by_head.setdefault(form[:MIN_PREFIX], []).append(_Form(form))
        self._groups = [(re.compile(_split_tolerant(h)), fs) for h, fs in sorted(by_head.items())]
        self._heads = re.compile("|".join(_split_tolerant(h) for h in sorted(by_head))) if by_head else None
        short = sorted((f for f in forms if len(f) < MIN_PREFIX), key=lambda f: (-len(f), f))
        self._short = re.compile("|".join(map(_split_tolerant, short))) if short else None

    def __bool__(self) -> bool:
        return self._heads is not None or self._short is not None

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The places of `text` to mask, in order, apart and not touching."""
        found: list[tuple[int, int]] = []
        if self._heads is not None:
            search = self._heads.search
            hit = search(text)
            while hit is not None:
                start = hit.start()
                end = self._cover(text, start)
                found.append((start, end))
                hit = search(text, end)
        if self._short is not None:
            found += [m.span() for m in self._short.finditer(text)]
            found.sort()
        merged: list[tuple[int, int]] = []
        for start, end in found:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged

    def _cover(self, text: str, start: int) -> int:
        """The end of what the long forms whose head stands at `start` cover from there."""
        end = start + 1
        for head, forms in self._groups:
            matched = head.match(text, start)
            if matched is not None:
                for form in forms:
                    end = max(end, form.cover(text, start, matched.end()))
        return end

    def redact(self, text: str) -> str:
        if not text or not self:
            return text
        spans = self.spans(text)
        if not spans:
            return text
        pieces: list[str] = []
        kept = 0
        for start, end in spans:
            pieces += (text[kept:start], self.mask)
            kept = end
        pieces.append(text[kept:])
        return "".join(pieces)

    def redact_tree(self, value: Any) -> Any:
        """A parsed JSON value with every string in it (keys too) redacted."""
        if not self:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list):
            return [self.redact_tree(v) for v in value]
        if isinstance(value, dict):
            return {self.redact(str(k)): self.redact_tree(v) for k, v in value.items()}
        return value


# Shorter keys than this can be words of an answer or a prompt (random keys are 32+ characters).
SAFE_KEY_LENGTH = 16


def redact_json(value: Any, secrets: Secrets, names: Secrets) -> Any:
    """A JSON value as it may leave the process: every string masked by `secrets`, every dict key
    by `names` (`RUN_KEYS.long_secrets()`: a field name is no answer, and a short key that is
    also part of one, `x` in `max_tokens`, must not make the file unreadable)."""
    if isinstance(value, str):
        return secrets.redact(value)
    if isinstance(value, (list, tuple)):
        return [redact_json(v, secrets, names) for v in value]
    if isinstance(value, dict):
        return {
            (names.redact(k) if isinstance(k, str) else k): redact_json(v, secrets, names)
            for k, v in value.items()
        }
    return value


class KeyRing:
    """Every key this process holds (thread-safe); `secrets()` redacts all their forms."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: frozenset[str] = frozenset()
        self._secrets = Secrets(())
        self._long = Secrets(())

    def add(self, *keys: str | None) -> None:
        new = {k for k in keys if k} - self._keys
        if not new:
            return
        with self._lock:
            self._keys = self._keys | new
            self._secrets = Secrets(self._keys)
            self._long = Secrets(k for k in self._keys if len(k) >= SAFE_KEY_LENGTH)
        install_log_redaction()

    def secrets(self) -> Secrets:
        return self._secrets

    def long_secrets(self) -> Secrets:
        """The keys of `SAFE_KEY_LENGTH` characters or more: masked in what one server says before
        another hears it (a Lean message fed back to the model), where masking a short key would
        change the words themselves."""
        return self._long

    def redact(self, text: str) -> str:
        return self._secrets.redact(text)


RUN_KEYS = KeyRing()


def register_key(*keys: str | None) -> None:
    """Add keys this process sends somewhere: from now on they are redacted everywhere."""
    RUN_KEYS.add(*keys)


_LOG_FACTORY_LOCK = threading.Lock()
_log_factory_installed = False


def install_log_redaction() -> None:
    """Make every log record carry its message (and traceback) with every run key redacted."""
    global _log_factory_installed
    with _LOG_FACTORY_LOCK:
        if _log_factory_installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            secrets = RUN_KEYS.secrets()
            if not secrets:
                return record
            try:
                message = record.getMessage()
            except Exception:  # a malformed %-format: logging reports it itself later
                return record
            clean = secrets.redact(message)
            if clean != message:
                record.msg, record.args = clean, None
            if record.exc_info and not record.exc_text:
                record.exc_text = secrets.redact(logging.Formatter().formatException(record.exc_info))
            return record

        logging.setLogRecordFactory(factory)
        _log_factory_installed = True


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every form of every secret replaced by `***`."""
    return Secrets(secrets).redact(text)


def strip_userinfo(url: str) -> str:
    """The URL without `user:password@` (URLs are logged and recorded; credentials must not be)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def key_problem(key: str) -> str | None:
    """Why `key` cannot be sent in an HTTP header (never quoting the key), or None."""
    if any(ord(c) > 126 for c in key):
        return "holds a non-ASCII character"
    if any(ord(c) < 32 or ord(c) == 127 for c in key):
        return (
            "holds a control character (a newline or carriage return, perhaps from the file it was read from)"
        )
    if key != key.strip():
        return "starts or ends with a space"
    return None
