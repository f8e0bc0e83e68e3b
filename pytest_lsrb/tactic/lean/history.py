"""A repository clone's history, read with git: what a file held at a commit and which later
commits changed it. Read only; used to see what became of a sorry upstream.

Every value that reaches git is checked first (commits are hexadecimal, paths relative without
`..` and never starting with `-`), positional values come after `--` where git takes them there,
git runs without a shell, with a timeout, no terminal prompt and only the network transports
(`gitrefs.git_environment`), though none of these commands talks to a remote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pytest_lsrb.tactic.lean.gitrefs import commit_problem, git_environment
from pytest_lsrb.tactic.lean.process import run_bounded


class HistoryError(Exception):
    """git could not answer (not a repository, a timeout): one sentence."""


class RefusedValue(HistoryError):
    """A commit or path that must not reach git (it could be read as an option, or leave the
    repository): refused before git runs."""


def path_problem(path: str) -> str | None:
    """Why `path` cannot name a file inside a repository, or None."""
    parts = PurePosixPath(path).parts
    if not path or path.startswith(("/", "-")) or ".." in parts or "\x00" in path or "\n" in path:
        return "must be a relative path inside the repository (no '..', not starting with '/' or '-')"
    return None


@dataclass(frozen=True)
class Change:
    """A commit that changed a file, with its committer date (ISO 8601, as git prints %cI)."""

    commit: str
    date: str


@dataclass
class RepoHistory:
    """Read-only questions to the clone at `root`; file contents are remembered per (commit, path)."""

    root: Path
    git_command: str = "git"
    timeout_s: float = 120.0
    _files: dict[tuple[str, str], str | None] = field(default_factory=dict)
    _head: Change | None = None

    def _git(self, *args: str, ok_codes: tuple[int, ...] = (0,)) -> tuple[int, str]:
        result = run_bounded(
            [self.git_command, *args],
            cwd=self.root,
            timeout_s=self.timeout_s,
            memory_mb=None,
            env=git_environment(allow_local=False),
        )
        if result.status != "exited" or result.returncode not in ok_codes:
            tail = (result.stderr.strip() or result.detail)[-300:]
            raise HistoryError(f"git {args[0]} in {self.root} failed: {tail}")
        return int(result.returncode or 0), result.stdout

    @staticmethod
    def _commit(commit: str) -> str:
        problem = commit_problem(commit)
        if problem is not None:
            raise RefusedValue(f"commit {commit!r} refused: it {problem}")
        return commit

    @staticmethod
    def _path(path: str) -> str:
        problem = path_problem(path)
        if problem is not None:
            raise RefusedValue(f"path {path!r} refused: it {problem}")
        return path

    def head(self) -> Change:
        """The clone's HEAD (asked once: the clone is not expected to move during a check)."""
        if self._head is None:
            _, out = self._git("log", "-1", "--format=%H%x09%cI", "HEAD", "--")
            sha, _, date = out.strip().partition("\t")
            self._head = Change(sha, date)
        return self._head

    def resolve(self, commit: str) -> str | None:
        """The full hash of `commit` when the clone has it, else None."""
        code, out = self._git(
            "rev-parse", "--verify", "--quiet", f"{self._commit(commit)}^{{commit}}", ok_codes=(0, 1)
        )
        return out.strip() if code == 0 and out.strip() else None

    def is_ancestor(self, commit: str, of: str) -> bool:
        code, _ = self._git(
            "merge-base", "--is-ancestor", self._commit(commit), self._commit(of), ok_codes=(0, 1)
        )
        return code == 0

    def file_at(self, commit: str, path: str) -> str | None:
        """The text of `path` at `commit`, or None when the commit has no such file."""
        key = (self._commit(commit), self._path(path))
        if key not in self._files:
            _, listed = self._git("ls-tree", "--name-only", key[0], "--", key[1])
            if listed.strip() != key[1]:
                self._files[key] = None
            else:
                _, text = self._git("cat-file", "blob", "--", f"{key[0]}:{key[1]}")
                self._files[key] = text
        return self._files[key]

    def changes(self, since: str, path: str, until: str = "HEAD") -> list[Change]:
        """Commits after `since` up to `until` that changed `path`, oldest first."""
        rev = f"{self._commit(since)}..{until if until == 'HEAD' else self._commit(until)}"
        _, out = self._git("log", "--reverse", "--format=%H%x09%cI", rev, "--", self._path(path))
        changes = []
        for line in out.splitlines():
            sha, _, date = line.partition("\t")
            if sha:
                changes.append(Change(sha, date))
        return changes

    def renamed_to(self, commit: str, path: str) -> str | None:
        """Where `commit` moved `path` (git's rename detection against its first parent), or None."""
        c, p = self._commit(commit), self._path(path)
        _, out = self._git("diff-tree", "-r", "-M", "--name-status", "--no-commit-id", f"{c}^", c, "--")
        for line in out.splitlines():
            fields = line.split("\t")
            if len(fields) == 3 and fields[0].startswith("R") and fields[1] == p:
                return fields[2] if path_problem(fields[2]) is None else None
        return None
