"""The values an index row hands to git, and the rules they must keep.

A SorryDB dump or a shared index comes from the internet; its `repo_remote` and `repo_commit` end
up as git arguments. A value that starts with `-` would be read as an option
(`--upload-pack=<command>` runs the command), and some transports run commands by design
(`ext::`). So:

- a commit is 7 to 40 hexadecimal digits (what `git rev-parse --short`/full print);
- a remote is `https://`, `ssh://` (also `git+ssh://`), `git://`, or scp-style `user@host:path`,
  with a host name that cannot be an option; a local repository (a path or `file://`) only when
  the user opts in (`--lsrb-allow-local-remotes`); anything else is refused.

Rows are checked when they are read (`tactic.rows`, the SorryDB importer) and the checkout checks
again before it runs git, where it also puts `--` before every positional value and tells git which
transports it may use (`GIT_ALLOW_PROTOCOL`).
"""

from __future__ import annotations

import os
import re
from typing import Final
from urllib.parse import urlsplit

COMMIT: Final = re.compile(r"[0-9a-fA-F]{7,40}")
NETWORK_SCHEMES: Final = ("https", "ssh", "git", "git+ssh", "ssh+git")
# What git itself calls these transports, for GIT_ALLOW_PROTOCOL.
NETWORK_PROTOCOLS: Final = ("https", "ssh", "git")
LOCAL_PROTOCOLS: Final = ("file",)
_HOST: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\]")
_USER: Final = re.compile(r"[A-Za-z0-9._~-]+")
_SCP: Final = re.compile(r"(?:(?P<user>[^@/:]+)@)?(?P<host>[^@/:]+):(?P<path>.+)")
_UNSAFE: Final = re.compile(r"[\x00-\x20\x7f-\x9f]")


def commit_problem(commit: str) -> str | None:
    """Why `commit` is not a commit hash git can fetch by itself, or None."""
    if COMMIT.fullmatch(commit):
        return None
    return "must be a commit hash of 7 to 40 hexadecimal digits"


def is_local_remote(remote: str) -> bool:
    """A path on this machine (absolute, `./`, `../`, `~`) or a `file://` URL."""
    return remote.startswith(("/", "./", "../", "~", "file://")) or remote in (".", "..")


def remote_problem(remote: str, *, allow_local: bool = True) -> str | None:
    """Why git must not be pointed at `remote`, or None. `allow_local=False` also refuses local
    repositories (the default at use: reading rows only checks the shape)."""
    if not remote:
        return "is empty"
    if _UNSAFE.search(remote):
        return "holds a space or a control character"
    if remote.startswith("-"):
        return "starts with '-' (git would read it as an option)"
    if is_local_remote(remote):
        if not allow_local:
            return "is a repository on this machine; pass --lsrb-allow-local-remotes to use one"
        return None
    if "::" in remote.split("/", 1)[0]:
        return "names a git remote helper (`transport::address`), which may run commands"
    if "://" in remote:
        return _url_problem(remote)
    scp = _SCP.fullmatch(remote)
    if scp is not None:
        return _scp_problem(scp)
    return "is not a https://, ssh://, git:// or user@host:path remote"


def _url_problem(remote: str) -> str | None:
    try:
        parts = urlsplit(remote)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return "is not a valid URL"
    if parts.scheme.lower() not in NETWORK_SCHEMES:
        return f"uses '{parts.scheme}://' (allowed: https, ssh, git)"
    host = parts.hostname or ""
    if not (_HOST.fullmatch(host) or _HOST.fullmatch(f"[{host}]")):
        return "has no valid host name"
    if parts.username is not None and not _USER.fullmatch(parts.username):
        return "has an unusual user name"
    if parts.password is not None:
        return "holds a password (put credentials in git's credential helper, not in the index)"
    if not parts.path.strip("/"):
        return "names no repository path"
    return None


def _scp_problem(match: re.Match[str]) -> str | None:
    user, host, path = match.group("user"), match.group("host"), match.group("path")
    if user is not None and not _USER.fullmatch(user):
        return "has an unusual user name"
    if not _HOST.fullmatch(host):
        return "has no valid host name"
    if path.startswith("-"):
        return "has a repository path starting with '-'"
    return None


def allowed_protocols(allow_local: bool) -> str:
    """`GIT_ALLOW_PROTOCOL` for the checkout: git refuses every other transport (ext::, fd::...)."""
    return ":".join(NETWORK_PROTOCOLS + (LOCAL_PROTOCOLS if allow_local else ()))


def git_environment(allow_local: bool) -> dict[str, str]:
    """The environment every git process (and every `lake` that runs git for its dependencies)
    gets: this process's, with no terminal prompt and only the allowed transports."""
    return {
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ALLOW_PROTOCOL": allowed_protocols(allow_local),
    }
