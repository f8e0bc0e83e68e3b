"""Replay profiles: per-repo policy for Lean verification (`schema_version = 1`, one TOML file each).

```toml
schema_version = 1
id = "mathlib"                         # default: the file name without .toml
description = "Mathlib itself: big build, use the cache"
repo_remote = "https://github.com/leanprover-community/mathlib4"   # optional match key
repo_lean_version = "v4.2*"            # optional match key (exact, or a glob with * ? [..])
build_timeout_s = 7200                 # clone + `lake exe cache get` + `lake build`
check_timeout_s = 600                  # one Lean run on one file / one REPL request
memory_mb = 32768                      # address-space cap of every Lean process (hit: memory_limit)
build_memory_mb = 65536                # cap of `lake build` / `lake exe cache get` (unset: none)
mathlib_cache = true                   # run `lake exe cache get` before `lake build`
replay_method = "file"                 # file: `lake lean FILE`; repl: the Lean REPL; kimina: a server
kimina_url = "http://lean-server:8000"  # replay_method = "kimina": the Kimina Lean Server to POST to
max_parallel = 1                       # Lean processes at once for this profile, per process
allow_native_decide = false            # true: a proof may trust the compiler (Lean.ofReduceBool)
reject_inherited_sorry = false         # true: sorryAx reached through a lemma proved by sorry fails
kernel_recheck = "off"                 # lean4checker: re-check a closed answer's module with the kernel
max_heartbeats = 200000                # Lean's maxHeartbeats for the answer (unset: Lean's default)
skip = false                           # true: rows matched here are not verified (recorded so)
```

Which profile applies to a row (more specific wins):
1. `repo_remote` and `repo_lean_version` both given and both match;
2. only `repo_remote` given, and it matches;
3. only `repo_lean_version` given, and it matches;
4. neither given: the default profile (the built-in one when no file has neither).
Within one level an exact `repo_lean_version` beats a glob, then the first file by name wins.
Remotes compare without a trailing `/` or `.git` and without case.
"""

from __future__ import annotations

import fnmatch
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.rows import describe_validation_error
from pytest_lsrb.core.textfiles import read_toml, shown

PROFILE_SCHEMA_VERSION: Final = 1
BUILTIN_PATH: Final = "builtin"
BUILTIN_DEFAULT_ID: Final = "builtin-default"


def _executable(value: str) -> str:
    if not value or value.startswith("-") or any(c.isspace() or not c.isprintable() for c in value):
        raise ValueError(
            "must name an executable: not empty, no leading '-', no spaces or control characters"
        )
    return value


Executable = Annotated[str, AfterValidator(_executable)]


# A week to build a repository, a day for one check, 1 PiB of address space: larger values are a
# mistake (or an attack on the timeouts below them), refused at load in one sentence.
MAX_BUILD_S = 7 * 86400.0
MAX_CHECK_S = 86400.0
MAX_MEMORY_MB = 1 << 30


class ReplayProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1]
    id: str = Field(default="", description="defaults to the file name without .toml")
    description: str = ""
    repo_remote: str | None = None
    repo_lean_version: str | None = None
    # Finite and bounded: `inf` would let one hung check hold the run for ever (a Kimina server
    # included), and 1e300 s does not fit a socket's or a process's timeout (an INTERNALERROR).
    build_timeout_s: float = Field(default=3600.0, gt=0, le=MAX_BUILD_S, allow_inf_nan=False)
    check_timeout_s: float = Field(default=300.0, gt=0, le=MAX_CHECK_S, allow_inf_nan=False)
    # RLIMIT_AS counts address space, not resident memory: `import Mathlib` maps every .olean,
    # so 8 GiB was at the edge of what one Lean process needs. Hitting the cap is `memory_limit`.
    memory_mb: int = Field(default=32768, ge=256, le=MAX_MEMORY_MB)
    build_memory_mb: int | None = Field(default=None, ge=256, le=MAX_MEMORY_MB)
    mathlib_cache: bool = True
    replay_method: Literal["file", "repl", "kimina"] = "file"
    # replay_method = "kimina": a Kimina Lean Server (lean/kimina.py) checks every source; the
    # API key, if the server wants one, is read from the environment variable named here and sent
    # to that server only. Synthetic mode only: the server has one Lean project of its own, so it
    # cannot build a row's repository (repo_replay refuses such a profile).
    kimina_url: str | None = None
    kimina_api_key_env: str | None = None
    max_parallel: int = Field(default=1, ge=1, le=1024)
    skip: bool = False
    skip_reason: str = ""
    # acceptance (lean/acceptance.py): native_decide proofs depend on Lean.ofReduceBool
    allow_native_decide: bool = False
    # repo_replay: sorryAx the target reaches through a declaration it names that is already
    # proved by sorry is SorryDB's `accepted` (closed, subkind inherited_sorry); true rejects it.
    reject_inherited_sorry: bool = False
    # repo_replay: after a `closed` verdict, compile the patched file to an .olean and replay it
    # through the kernel with lean4checker (`lake env lean4checker <Module>`); a failure is
    # lean_error/kernel_recheck. An absent checker is refused when the run starts.
    kernel_recheck: Literal["off", "lean4checker"] = "off"
    lean4checker_command: Executable = "lean4checker"
    max_heartbeats: int | None = Field(default=None, ge=0)
    # synthetic: the header (`auto` picks Mathlib when the repo or the goal's notation needs it),
    # and a Lake project to run in (needed for `import Mathlib` and for the REPL).
    synthetic_header: Literal["auto", "core", "mathlib"] = "auto"
    lean_project: str | None = None
    # Executables: `lean`, `lake`, `git`, and the REPL (default: LeanInteract when it is
    # installed, else `lake exe repl` in the project).
    # They are run as argv[0] (never through a shell); a value that is empty, starts with `-` or
    # holds a control character or a space is refused (a path with spaces: use a symlink).
    lean_command: Executable = "lean"
    lake_command: Executable = "lake"
    git_command: Executable = "git"
    repl_command: list[str] | None = Field(default=None, min_length=1)
    repl_backend: Literal["auto", "repl", "lean_interact"] = "auto"

    @field_validator("repl_command")
    @classmethod
    def _repl_program(cls, argv: list[str] | None) -> list[str] | None:
        if argv:
            _executable(argv[0])
        return argv

    @model_validator(mode="after")
    def _kimina_needs_a_url(self) -> ReplayProfile:
        # A model validator, not a field one: its error names no input, and the URL may hold a key.
        if self.replay_method == "kimina" and not (self.kimina_url or "").startswith(("http://", "https://")):
            raise ValueError("replay_method 'kimina' needs kimina_url, an http(s) URL of the server")
        if self.kimina_url is not None and not usable_url(self.kimina_url):
            raise ValueError(
                "kimina_url does not parse as an http(s) URL with a host "
                "(a bad port, or a '/' in user:password@; the URL is not shown, it may hold a key)"
            )
        return self

    @property
    def specificity(self) -> int:
        return 2 * (self.repo_remote is not None) + (self.repo_lean_version is not None)

    def matches(self, remote: str, lean_version: str) -> bool:
        if self.repo_remote is not None and normalize_remote(self.repo_remote) != normalize_remote(remote):
            return False
        return self.repo_lean_version is None or fnmatch.fnmatchcase(lean_version, self.repo_lean_version)


def usable_url(url: str) -> bool:
    """Whether the HTTP client can send to `url` (scheme, a host, a numeric port if any)."""
    import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError):
        return False
    return parsed.scheme in ("http", "https") and bool(parsed.host)


def normalize_remote(remote: str) -> str:
    return remote.strip().rstrip("/").removesuffix(".git").lower()


BUILTIN_DEFAULT: Final = ReplayProfile(
    schema_version=1, id=BUILTIN_DEFAULT_ID, description="built-in defaults (no profile file applies)"
)


@dataclass(frozen=True)
class ProfileSet:
    """The loaded profiles and where they came from (`path` lands in summary.json)."""

    profiles: tuple[tuple[ReplayProfile, str], ...]  # (profile, file) in file-name order
    path: str

    def match(self, remote: str, lean_version: str) -> ReplayProfile:
        best: tuple[int, int, int] | None = None
        chosen = None
        for order, (profile, _) in enumerate(self.profiles):
            if not profile.matches(remote, lean_version):
                continue
            version = profile.repo_lean_version
            exact = int(version is not None and not any(c in version for c in "*?["))
            key = (profile.specificity, exact, -order)
            if best is None or key > best:
                best, chosen = key, profile
        return chosen or BUILTIN_DEFAULT

    def get(self, profile_id: str) -> ReplayProfile | None:
        return next((p for p, _ in self.profiles if p.id == profile_id), None)


def load_profile_file(path: Path) -> ReplayProfile:
    data = read_toml(path)
    if "schema_version" not in data:
        raise LsrbUsageError(f"{path}: field 'schema_version' is missing (this reader knows 1).")
    if data.get("schema_version") != PROFILE_SCHEMA_VERSION:
        raise LsrbUsageError(
            f"{path}: field 'schema_version' is {shown(data.get('schema_version'))}; this reader knows 1."
        )
    data.setdefault("id", path.stem)
    try:
        return ReplayProfile.model_validate(data)
    except ValidationError as exc:
        raise LsrbUsageError(f"{path}: {describe_validation_error(exc)}.") from None


def load_profiles(path: Path | None) -> ProfileSet:
    """Profiles from a file or a folder of `*.toml`; None means the built-in default only."""
    if path is None:
        return ProfileSet((), BUILTIN_PATH)
    files = sorted(path.glob("*.toml")) if path.is_dir() else [path]
    loaded: list[tuple[ReplayProfile, str]] = []
    seen: dict[tuple[str | None, str | None], Path] = {}
    ids: dict[str, Path] = {}
    for file in files:
        profile = load_profile_file(file)
        if profile.id in ids:
            raise LsrbUsageError(f"{file}: field 'id': '{profile.id}' is also the id of {ids[profile.id]}.")
        ids[profile.id] = file
        remote = normalize_remote(profile.repo_remote) if profile.repo_remote is not None else None
        key = (remote, profile.repo_lean_version)
        if key in seen:
            raise LsrbUsageError(
                f"{file}: fields 'repo_remote'/'repo_lean_version' match exactly what {seen[key]} "
                "matches; merge the two profiles or make one more specific."
            )
        seen[key] = file
        loaded.append((profile, str(file)))
    return ProfileSet(tuple(loaded), str(path))


def resolve_profiles_path(option: str | None, suite_root: str | Path | None) -> Path | None:
    """The profiles actually used: `--lsrb-profiles`, else the repo's `profiles/`, else built-in."""
    if option:
        path = Path(option).expanduser()
        if not path.is_absolute():
            path = Path.cwd() / path
        if not path.exists():
            raise LsrbUsageError(f"--lsrb-profiles: {path} does not exist.")
        return path.resolve()
    if suite_root is not None:
        # A checkout keeps them beside suites/; a wheel ships them as pytest_lsrb/_profiles.
        top = Path(suite_root).resolve().parent.parent
        for candidate in (top / "profiles", top / "_profiles"):
            if candidate.is_dir() and any(candidate.glob("*.toml")):
                return candidate
    return None


def profiles_digest(path: Path | None) -> str:
    """SHA-256 over the profile files' names and bytes (`builtin` for the built-in default)."""
    if path is None:
        return BUILTIN_PATH
    files = sorted(path.glob("*.toml")) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.name.encode("utf-8") + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


def profile_config_path(mode: str, option: str | None, suite_root: str | Path | None) -> str | None:
    """What summary.json records as `profile_config_path` (None when verification uses none)."""
    if mode not in ("synthetic", "repo_replay"):
        return None
    path = resolve_profiles_path(option, suite_root)
    return BUILTIN_PATH if path is None else str(path)
