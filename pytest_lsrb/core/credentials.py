"""API keys read from the environment, checked once at start and scoped to their own server.

Each endpoint names the variable that holds its key (`--lsrb-api-key-env` for the model under
test, `--lsrb-sr-judge-api-key-env` for the judge, `kimina_api_key_env` in a Lean profile). A key
is read, checked (set, and sendable in an HTTP header: no control or non-ASCII character, no
surrounding space) and registered for redaction (core.redaction.RUN_KEYS) before any model call;
the sentence that refuses it names the variable, never the key. A key goes only to the origin
(scheme, host, port) of its own endpoint: `same_origin` is the one test of that.

A key pasted where a variable's *name* belongs (`--lsrb-api-key-env sk-...`) is refused without
being quoted (`variable_problem`), and registered for redaction in case anything else echoes it.

A key under `SAFE_KEY_LENGTH` characters can stand in ordinary text (`simp`, `none`, `ollama`): it
is still masked wherever text leaves the process, so records and the terminal may show `***` in an
answer the verifier judged as sent; `key_warnings` says so in one sentence per key, at start.

Credentials in a base URL (`http://user:KEY@host`) are sent as the URL says, but no URL we print,
log or pass on a child's command line carries them: a child gets them in `$LSRB_BASE_URL_USERINFO`
(`userinfo_env`), which also lets a user give them without writing them on a command line.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping, MutableMapping, Sequence
from urllib.parse import urlsplit, urlunsplit

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.redaction import RUN_KEYS, SAFE_KEY_LENGTH, key_problem, register_key, strip_userinfo

_DEFAULT_PORTS = {"http": 80, "https": 443}
# The credentials of a base URL that carries none on the command line (`user:password`).
USERINFO_ENV = "LSRB_BASE_URL_USERINFO"
BASE_URL_FLAG = "--lsrb-base-url"
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
# What API keys start with (OpenAI, Anthropic, Hugging Face, GitHub, Slack, AWS, Google, Groq...).
_KEY_PREFIXES = ("sk-", "sk_", "hf_", "ghp_", "gho_", "github_pat_", "xox", "AKIA", "AIza", "gsk_", "pk-")


def looks_like_key(value: str) -> bool:
    """Whether `value` is shaped like a secret rather than an environment variable's name: a known
    key prefix, or 20+ characters mixing lower case, upper case and digits (names are words)."""
    if value.startswith(_KEY_PREFIXES):
        return True
    mixed = (
        any(c.islower() for c in value) + any(c.isupper() for c in value) + any(c.isdigit() for c in value)
    )
    return len(value) >= 20 and mixed == 3


def variable_problem(variable: str) -> str | None:
    """Why `variable` cannot be the name of an environment variable (never quoting it), or None."""
    if looks_like_key(variable):
        return "looks like a key, not the name of an environment variable (the value is not shown)"
    if not _VARIABLE.fullmatch(variable):
        return (
            "is not the name of an environment variable (letters, digits and _, not starting with a "
            "digit; the value is not shown)"
        )
    return None


def checked_key(variable: str | None, where: str) -> str | None:
    """The key in `$variable` (None when no variable is named), checked and registered.

    `where` names the option or field that named the variable, for the refusal's sentence.
    """
    if not variable:
        return None
    problem = variable_problem(variable)
    if problem is not None:
        register_key(variable)  # whatever else echoes it (a log, a traceback) shows it masked
        raise LsrbUsageError(
            f"{where}: the value {problem}; give the NAME of the variable that holds the key, "
            "e.g. OPENAI_API_KEY."
        )
    value = os.environ.get(variable)
    if not value:
        raise LsrbUsageError(f"{where}: the environment variable {variable} is not set or empty.")
    problem = key_problem(value)
    if problem is not None:  # the sentence names the variable, never the key
        raise LsrbUsageError(f"{where}: the key in ${variable} {problem}; fix the variable.")
    register_key(value)
    _note_short(f"{where}: the key in ${variable}", value)
    return value


_WARNINGS: dict[str, None] = {}  # in the order found, once each


def _note_short(what: str, key: str | None) -> None:
    if key and len(key) < SAFE_KEY_LENGTH:
        _WARNINGS[
            f"{what} is {len(key)} character{'s' if len(key) != 1 else ''} long: a key under "
            f"{SAFE_KEY_LENGTH} characters can be a word of an answer, a prompt or a message, and "
            "wherever it stands records, logs and the terminal show *** (answers are still judged as "
            "the server sent them); a longer key keeps them readable"
        ] = None


def key_warnings() -> list[str]:
    """One sentence for each key read so far that is too short to mask without hiding text."""
    return list(_WARNINGS)


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of `url`, the default port filled in; a URL without a scheme is http."""
    parts = urlsplit(url.strip() if "://" in url else "http://" + url.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port if port is not None else _DEFAULT_PORTS.get(scheme)


def same_origin(a: str, b: str) -> bool:
    return origin(a) == origin(b)


def url_with_env_userinfo(url: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """`url` with the credentials in `$LSRB_BASE_URL_USERINFO` when it carries none of its own;
    the password is registered for redaction either way."""
    if not url:
        return url
    env = os.environ if environ is None else environ
    parts = urlsplit(url)
    userinfo = env.get(USERINFO_ENV)
    if "@" not in parts.netloc and userinfo:
        problem = key_problem(userinfo)
        if problem is not None:
            raise LsrbUsageError(f"${USERINFO_ENV} {problem}; fix the variable.")
        parts = parts._replace(netloc=f"{userinfo}@{parts.netloc}")
        url = urlunsplit(parts)
    with contextlib.suppress(ValueError):
        password = urlsplit(url).password
        register_key(password)
        _note_short(f"{BASE_URL_FLAG}: the password in its user info", password)
    return url


def _userinfo(url: str) -> str | None:
    netloc = urlsplit(url).netloc
    return netloc.rsplit("@", 1)[0] if "@" in netloc else None


def shown_command(words: Sequence[str]) -> tuple[list[str], bool]:
    """A command line safe to print or log: every URL's credentials removed and every run key
    masked; True when credentials were removed (the command then needs them again, from
    `$LSRB_BASE_URL_USERINFO`)."""
    out: list[str] = []
    stripped = False
    for word in words:
        flag, eq, value = word.partition("=")
        target = value if eq and flag.startswith("--") else word
        if "://" in target and _userinfo(target) is not None:
            target = strip_userinfo(target)
            stripped = True
            word = f"{flag}={target}" if eq and flag.startswith("--") else target
        out.append(RUN_KEYS.redact(word))
    return out, stripped


def child_command(words: Sequence[str], env: MutableMapping[str, str]) -> list[str]:
    """`words` for a child process with the base URL's credentials moved into `env`
    ($LSRB_BASE_URL_USERINFO): a command line is visible to every user of the machine (`ps`)."""
    out: list[str] = []
    take_next = False
    for word in words:
        if take_next or word.startswith(BASE_URL_FLAG + "="):
            prefix = "" if take_next else BASE_URL_FLAG + "="
            url = word[len(prefix) :]
            userinfo = _userinfo(url) if "://" in url else None
            if userinfo is not None:
                env[USERINFO_ENV] = userinfo
                word = prefix + strip_userinfo(url)
        take_next = word == BASE_URL_FLAG
        out.append(word)
    return out
