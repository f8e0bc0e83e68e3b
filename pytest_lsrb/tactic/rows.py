"""Index rows of goal_to_tactic_proposal_v1: one Lean goal at a `sorry`, compatible with SorryDB."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from pytest_lsrb.core.paths import relative_path_problem
from pytest_lsrb.core.rows import content_hash
from pytest_lsrb.tactic.lean.gitrefs import commit_problem, remote_problem


def _rule(problem_of: Callable[[str], str | None]) -> AfterValidator:
    # The rules are pure, and an index repeats its values (a repository's remote and commit on
    # each of its sorries, a file's path on each sorry in it): each distinct value is judged once.
    judged = functools.lru_cache(maxsize=4096)(problem_of)

    def check(value: str) -> str:
        problem = judged(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


# The repository values reach git and the file system (repo_replay): a row is refused when they
# could be read as options, name a command-running transport or lead out of the checkout. The
# SorryDB importer uses the same types, so both name the rule in the same words.
CommitHash = Annotated[str, _rule(commit_problem)]
GitRemote = Annotated[str, _rule(remote_problem)]
RepoPath = Annotated[str, _rule(relative_path_problem)]


def repo_name(remote: str) -> str:
    """`https://github.com/owner/name.git` -> `name` (what `-k`, the summary and the report show)."""
    return remote.rstrip("/").removesuffix(".git").rsplit("/", 1)[-1]


class TacticRow(BaseModel):
    """One goal of goal_to_tactic_proposal_v1, compatible with SorryDB's sorry records."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)

    item_id: str = Field(min_length=1)
    repo_remote: GitRemote
    repo_branch: str
    repo_commit: CommitHash
    repo_lean_version: str
    path: RepoPath
    start_line: int = Field(ge=1, description="1-based line of the sorry")
    start_column: int = Field(ge=0, description="0-based column of the sorry")
    end_line: int = Field(ge=1)
    end_column: int = Field(ge=0)
    goal_text: str = Field(min_length=1)
    url: str | None = None
    sorry_kind: Literal["tactic", "term"] | None = None
    blame_date: str | None = None
    inclusion_date: str | None = None
    tags: list[str] = Field(default_factory=list)

    @field_validator("end_column")
    @classmethod
    def _span_ends_after_start(cls, end_column: int, info: ValidationInfo) -> int:
        d = info.data
        if {"start_line", "start_column", "end_line"} <= d.keys() and (d["end_line"], end_column) < (
            d["start_line"],
            d["start_column"],
        ):
            raise ValueError(
                f"the sorry's span ends at {d['end_line']}:{end_column}, before it starts at "
                f"{d['start_line']}:{d['start_column']}"
            )
        return end_column

    @property
    def repo_name(self) -> str:
        """`owner/name` -> `name`; what a person types after `-k`."""
        return repo_name(self.repo_remote)

    def keywords(self) -> list[str]:
        """Extra words `-k` can match: the repo name, the file path and its parts, the tags."""
        words = [self.repo_name, self.path, *self.path.split("/"), *self.tags]
        return [w for w in words if w]

    def content_hash(self) -> str:
        return content_hash(self)
