"""A small GitHub Actions runner for the CI recipe test: runs a workflow file's jobs and steps in
order, as GitHub runs them, on this machine (no network).

What GitHub itself does is the edge, stood in for here and nowhere else:

- `${{ ... }}` expressions (GitHub's language: literals, contexts `github`, `inputs`, `matrix`,
  `env`, the operators `!`, `==`, `!=`, `&&`, `||`, parentheses, and `contains`, `startsWith`,
  `always`, `success`, `failure`), with GitHub's loose equality (a null, a boolean and a string
  compare as numbers; strings case-insensitively). An expression outside that subset fails the
  test: the workflow must not use what this runner cannot check.
- `if:` on steps (a failed step skips the rest unless their `if` says `always()`/`failure()`);
  a failed job skips the jobs that need it; a matrix's jobs run one after another.
- `run:` steps: `bash --noprofile --norc -eo pipefail` in the job's workspace, with the
  workflow's, job's and step's `env` (expressions expanded), as GitHub's default shell.
- the actions the recipe uses: checkout (the job's workspace is a fresh copy of the repository),
  setup-python (the test's venv is on PATH), upload/download-artifact (a folder per run),
  cache/restore and cache/save (a store that outlives runs: an exact key, else the newest entry
  whose key starts with a restore key; a key saved once is never overwritten, as GitHub's).
"""

from __future__ import annotations

import fnmatch
import itertools
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)
TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||[!(),.])|(?P<name>[A-Za-z_][\w-]*))"
)


class UnsupportedExpression(Exception):
    """An expression this runner does not evaluate (the test fails rather than guess)."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise UnsupportedExpression(f"cannot read {text[pos:]!r} in {text!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    if text == "":
        return 0.0
    try:
        return float(text)
    except ValueError:
        return float("nan")


def loose_equal(a: Any, b: Any) -> bool:
    """GitHub's `==`: strings compare case-insensitively; other mixes compare as numbers."""
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    if type(a) is type(b) and not isinstance(a, (int, float)):
        return bool(a == b)
    return _number(a) == _number(b)


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and value == value  # (NaN is falsy)


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Expression:
    """Recursive descent over GitHub's expression grammar (the subset in the module doc)."""

    def __init__(self, text: str, contexts: Mapping[str, Any], status: Mapping[str, bool]) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.pos = 0
        self.contexts = contexts
        self.status = status

    def value(self) -> Any:
        result = self._or()
        if self.pos != len(self.toks):
            raise UnsupportedExpression(f"unexpected {self.toks[self.pos][1]!r} in {self.text!r}")
        return result

    def _peek(self) -> str | None:
        return self.toks[self.pos][1] if self.pos < len(self.toks) else None

    def _take(self, want: str | None = None) -> tuple[str, str]:
        if self.pos >= len(self.toks):
            raise UnsupportedExpression(f"{self.text!r} ends early")
        tok = self.toks[self.pos]
        if want is not None and tok[1] != want:
            raise UnsupportedExpression(f"expected {want!r}, got {tok[1]!r} in {self.text!r}")
        self.pos += 1
        return tok

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            left = left if truthy(left) else right
        return left

    def _and(self) -> Any:
        left = self._eq()
        while self._peek() == "&&":
            self._take()
            right = self._eq()
            left = right if truthy(left) else left
        return left

    def _eq(self) -> Any:
        left = self._unary()
        while self._peek() in ("==", "!="):
            op = self._take()[1]
            right = self._unary()
            left = loose_equal(left, right) if op == "==" else not loose_equal(left, right)
        return left

    def _unary(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not truthy(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        kind, text = self._take()
        if text == "(":
            inner = self._or()
            self._take(")")
            return inner
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text)
        if kind != "name":
            raise UnsupportedExpression(f"unexpected {text!r} in {self.text!r}")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self._peek() == "(":
            return self._call(text)
        value = self.contexts.get(text) if text in self.contexts else _missing(text, self.text)
        while self._peek() == ".":
            self._take()
            name = self._take()[1]
            value = value.get(name) if isinstance(value, Mapping) else None
        return value

    def _call(self, name: str) -> Any:
        self._take("(")
        args = []
        while self._peek() != ")":
            args.append(self._or())
            if self._peek() == ",":
                self._take()
        self._take(")")
        functions: dict[str, Callable[..., Any]] = {
            "contains": lambda hay, needle: as_text(needle).lower() in as_text(hay).lower(),
            "startsWith": lambda text, prefix: as_text(text).lower().startswith(as_text(prefix).lower()),
            "always": lambda: True,
            "success": lambda: not self.status.get("failed", False),
            "failure": lambda: self.status.get("failed", False),
        }
        if name not in functions:
            raise UnsupportedExpression(f"function {name}() in {self.text!r}")
        return functions[name](*args)


def _missing(name: str, text: str) -> Any:
    raise UnsupportedExpression(f"context {name!r} in {text!r}")


def evaluate(text: str, contexts: Mapping[str, Any], status: Mapping[str, bool] | None = None) -> Any:
    return Expression(text, contexts, status or {}).value()


def expand(value: Any, contexts: Mapping[str, Any]) -> str:
    """A string with every `${{ ... }}` replaced by its value's text."""
    return EXPR.sub(lambda m: as_text(evaluate(m.group(1), contexts)), as_text(value))


@dataclass
class StepLog:
    job: str
    name: str
    status: str  # success | failure | skipped
    returncode: int | None = None
    output: str = ""


@dataclass
class RunResult:
    jobs: dict[str, str] = field(default_factory=dict)  # job (with matrix) -> success/failure/skipped
    steps: list[StepLog] = field(default_factory=list)

    def step(self, name: str, job: str = "gate") -> StepLog:
        found = [s for s in self.steps if s.name == name and s.job == job]
        assert found, f"no step {name!r} in job {job!r}: {[(s.job, s.name) for s in self.steps]}"
        return found[-1]

    def log(self) -> str:
        return "\n".join(
            f"--- {s.job} / {s.name}: {s.status} ({s.returncode})\n{s.output}" for s in self.steps
        )


@dataclass
class Runner:
    """Runs one workflow file; its cache store outlives the runs (as a repository's caches do)."""

    workflow: dict[str, Any]
    machine: Callable[[], Path]  # a fresh checkout of the repository: one per job
    environ: dict[str, str]  # the machine's environment (PATH with the Python to use)
    root: Path  # where runs keep their artifacts and the cache store
    counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    # Jobs already run, by what they run (their expanded steps and the variables those read): a
    # job run again with the same steps on the same input is deterministic here (the mock, a
    # greedy fake model), so `reuse` takes its artifacts from that run instead of running it.
    reuse: bool = False
    _done: dict[str, tuple[str, Path, list[str]]] = field(default_factory=dict)

    def run(
        self,
        event: str,
        ref: str,
        *,
        message: str = "",
        inputs: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        """One workflow run for `event` on `ref` (a push's commit `message`, a dispatch's
        `inputs`); `env` overrides the workflow's own (a user's edit of LSRB_MODEL_ARGS)."""
        run_id = next(self.counter)
        github = {
            "event_name": event,
            "ref": ref,
            "sha": f"{run_id:040x}",
            "run_id": str(1000 + run_id),
            "run_attempt": "1",
            "event": {"head_commit": {"message": message}} if event == "push" else {},
        }
        base = {"github": github, "inputs": dict(inputs or {})}
        workflow_env = {k: expand(v, base) for k, v in (self.workflow.get("env") or {}).items()}
        workflow_env.update(env or {})
        artifacts = self.root / f"run-{run_id}" / "artifacts"
        result = RunResult()
        for name, job in self.workflow["jobs"].items():
            needs = job.get("needs") or []
            needs = [needs] if isinstance(needs, str) else needs
            if any(result.jobs.get(n) != "success" for n in needs):
                result.jobs[name] = "skipped"
                continue
            matrix = (job.get("strategy") or {}).get("matrix") or {}
            keys = list(matrix)
            combos = [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*matrix.values())] or [
                {}
            ]
            statuses = []
            for combo in combos:
                label = name + "".join(f" ({v})" for v in combo.values())
                contexts = {**base, "matrix": combo, "env": workflow_env}
                statuses.append(self._job(label, job, contexts, workflow_env, artifacts, result))
            result.jobs[name] = "success" if all(s == "success" for s in statuses) else "failure"
        return result

    def _job(
        self,
        label: str,
        job: Mapping[str, Any],
        contexts: dict[str, Any],
        workflow_env: Mapping[str, str],
        artifacts: Path,
        result: RunResult,
    ) -> str:
        job_env = {**workflow_env, **{k: expand(v, contexts) for k, v in (job.get("env") or {}).items()}}
        key = self._job_key(job, contexts, job_env)
        if self.reuse and key in self._done and not job.get("needs"):
            status, earlier, names = self._done[key]
            for n in names:
                shutil.copytree(earlier / n, artifacts / n, dirs_exist_ok=True)
            result.steps.append(StepLog(label.split(" ")[0], f"(as run before: {label})", status, 0))
            return status
        before = set(p.name for p in artifacts.iterdir()) if artifacts.is_dir() else set()
        workspace = self.machine()
        failed = False
        for index, step in enumerate(job["steps"]):
            name = step.get("name") or step.get("uses") or step.get("run", "").split("\n")[0] or str(index)
            condition = step.get("if")
            if condition is None:
                run_it = not failed
            else:
                text = EXPR.sub(lambda m: m.group(1), str(condition))
                run_it = truthy(evaluate(text, contexts, {"failed": failed}))
                if not any(f in text for f in ("always()", "failure()")):
                    run_it = run_it and not failed
            if not run_it:
                result.steps.append(StepLog(label.split(" ")[0], name, "skipped"))
                continue
            env = {**job_env, **{k: expand(v, contexts) for k, v in (step.get("env") or {}).items()}}
            if "run" in step:
                code, output = self._shell(expand(step["run"], contexts), workspace, env)
            else:
                code, output = self._action(
                    step["uses"], step.get("with") or {}, contexts, workspace, artifacts
                )
            failed = failed or code != 0
            result.steps.append(
                StepLog(label.split(" ")[0], name, "success" if code == 0 else "failure", code, output)
            )
        status = "failure" if failed else "success"
        made = sorted(set(p.name for p in artifacts.iterdir()) - before) if artifacts.is_dir() else []
        self._done[key] = (status, artifacts, made)
        return status

    @staticmethod
    def _job_key(job: Mapping[str, Any], contexts: Mapping[str, Any], env: Mapping[str, str]) -> str:
        texts = [
            expand(s.get("run", ""), contexts) + repr(s.get("uses")) + repr(s.get("with"))
            for s in job["steps"]
        ]
        read = sorted({n for t in texts for n in re.findall(r"\$\{?([A-Z_][A-Z0-9_]*)", t)})
        return repr((texts, [(n, env.get(n)) for n in read]))

    def _shell(self, script: str, cwd: Path, env: Mapping[str, str]) -> tuple[int, str]:
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=cwd,
            env={**self.environ, **env},
            capture_output=True,
            text=True,
            timeout=900,
        )
        return proc.returncode, proc.stdout + proc.stderr

    def _action(
        self,
        uses: str,
        given: Mapping[str, Any],
        contexts: Mapping[str, Any],
        workspace: Path,
        artifacts: Path,
    ) -> tuple[int, str]:
        action = uses.split("@")[0]
        args = {k: expand(v, contexts) for k, v in given.items()}
        store = self.root / "cache"
        if action in ("actions/checkout", "actions/setup-python"):
            return 0, f"{action}: the job's workspace and the venv on PATH"
        if action == "actions/upload-artifact":
            source = workspace / args["path"]
            if not source.exists():
                return 0, f"no files at {args['path']}: nothing uploaded (a warning)"
            shutil.copytree(source, artifacts / args["name"], dirs_exist_ok=True)
            return 0, f"uploaded {args['name']}"
        if action == "actions/download-artifact":
            names = sorted(p.name for p in artifacts.iterdir()) if artifacts.is_dir() else []
            found = [n for n in names if fnmatch.fnmatch(n, args.get("pattern") or args.get("name") or "*")]
            for n in found:
                shutil.copytree(artifacts / n, workspace / args.get("path", ".") / n, dirs_exist_ok=True)
            return 0, f"downloaded {found}"
        if action == "actions/cache/restore":
            entries = sorted(store.iterdir(), key=lambda p: p.stat().st_mtime_ns) if store.is_dir() else []
            exact = [p for p in entries if p.name == args["key"]]
            prefixes = [k.strip() for k in str(args.get("restore-keys", "")).splitlines() if k.strip()]
            by_prefix = [p for p in entries if any(p.name.startswith(k) for k in prefixes)]
            hits = exact or by_prefix[-1:]
            if not hits:
                return 0, "Cache not found for input keys"
            hit = hits[0]
            shutil.copytree(hit, workspace / args["path"], dirs_exist_ok=True)
            return 0, f"Cache restored from key: {hit.name}"
        if action == "actions/cache/save":
            target = store / args["key"]
            if target.exists():
                return 0, f"Failed to save: cache {args['key']} exists already (a warning)"
            shutil.copytree(workspace / args["path"], target)
            return 0, f"Cache saved with key: {args['key']}"
        raise UnsupportedExpression(f"action {uses} is not one this runner stands in for")
