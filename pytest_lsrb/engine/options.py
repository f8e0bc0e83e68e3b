"""Run options: one table, one spelling. The option `--lsrb-<name>`, the suite.toml default
`<name>` and the run-config key share the name (dashes become underscores).

Precedence: command line > the suite's `[defaults]` > the table's default.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.redaction import key_problem, strip_userinfo
from pytest_lsrb.core.textfiles import shown
from pytest_lsrb.engine.option_checks import check_values
from pytest_lsrb.engine.suite import SuiteSpec

T = TypeVar("T")

RUNS_ROOT = "lsrb-out"  # under the current directory: lsrb-out/<suite>/<run>/


@dataclass(frozen=True)
class Option:
    name: str
    type: Callable[[str], Any]
    default: Any
    help: str
    # Part of the run's identity (config_hash): changing it changes what the run measures.
    identity: bool = True
    choices: tuple[str, ...] | None = None
    flag: bool = False
    # The tasks the option means something for (None: every task). Another task's options stay
    # out of a run's identity, so adding an option to one suite never changes another's hashes.
    tasks: tuple[str, ...] | None = None


def _int(text: str) -> int:
    return int(text)


def _int_or_auto(text: str) -> int | str:
    return "auto" if str(text).strip() == "auto" else int(text)


def _opt_int(text: str) -> int | None:
    return None if text in ("", "none", "None") else int(text)


def _opt_float(text: str) -> float | None:
    return None if text in ("", "none", "None") else float(text)


SRBENCH = ("llm_srbench",)
TACTIC = ("goal_to_tactic_proposal_v1",)

OPTIONS: list[Option] = [
    Option("adapter", str, "mock", "model adapter: mock (offline baseline), ollama or openai"),
    Option("model", str, "", "model name sent to the endpoint (default: the adapter's)"),
    Option("base-url", str, None, "endpoint base URL (default: the adapter's)"),
    Option(
        "api-key-env",
        str,
        None,
        "name of the environment variable holding the API key (the key itself is never recorded)",
        identity=False,
    ),
    Option(
        "max-tokens-field",
        str,
        "max_tokens",
        "request field for the token limit (max_tokens or max_completion_tokens)",
    ),
    Option("timeout", float, 120.0, "seconds before one model call times out", identity=False),
    Option("max-retries", _int, 4, "retries for transient model-call errors", identity=False),
    Option(
        "concurrency",
        _opt_int,
        None,
        "attempts in flight at once per process (default: the adapter's)",
        identity=False,
    ),
    Option("cache-dir", str, None, "response cache directory (off unless given)", identity=False),
    Option(
        "cache-journal",
        str,
        "auto",
        "the response cache's SQLite journal: wal (local disks), delete (network filesystems: NFS, "
        "Lustre, CIFS, FUSE), auto picks by the filesystem the cache is on",
        identity=False,
        choices=("auto", "wal", "delete"),
    ),
    Option(
        "price",
        str,
        None,
        "in=X,out=Y: prices per million prompt/completion tokens; the summary and progress line "
        "then show the run's cost",
        identity=False,
    ),
    Option(
        "progress",
        _opt_float,
        None,
        "seconds between progress lines (done/total, rate, ETA, errors, tokens, cost, cache hits); "
        "default 5 on a terminal, 30 in a log; 0: none",
        identity=False,
    ),
    Option("seed", _int, 0, "run seed: selection and every per-attempt seed derive from it"),
    Option("samples", _int, 1, "samples per item (pass@k is reported for k up to this)"),
    Option("temperature", float, 0.0, "sampling temperature"),
    Option("max-tokens", _int, 256, "maximum tokens per model call"),
    Option(
        "split-policy",
        str,
        "all",
        "which items: all, dev (stable 20%), test (the other 80%), or manifest:PATH#SPLIT "
        "(a frozen split written by `lsrb split`)",
    ),
    Option("goal-slice", str, "all", "filter items, e.g. 'tag:nat,hyps:<=2' (see README: goal slices)"),
    Option("max-items", _opt_int, None, "evaluate a seeded subset of at most this many items"),
    Option(
        "shard-count",
        _int_or_auto,
        1,
        "split the selection into this many shards (stable hash of item_id); auto: the scheduler's",
    ),
    Option(
        "shard-index",
        _int_or_auto,
        0,
        "which shard this run evaluates (0-based); auto: from Slurm, Kubernetes, GitLab or "
        "LSRB_SHARD_INDEX (README: sharding)",
    ),
    Option("index", str, None, "index file to use instead of the suite's built-in one"),
    Option("verification", str, "none", "how answers are checked (suite-specific modes)"),
    Option("profiles", str, None, "replay profile file or folder (repo_replay/synthetic)"),
    Option(
        "allow-local-remotes",
        bool,
        False,
        "repo_replay may clone index rows whose repo_remote is a local path or file:// URL "
        "(off: an index from elsewhere cannot point git at this machine's repositories)",
        identity=False,
        flag=True,
    ),
    Option(
        "allow-native-decide",
        bool,
        False,
        "Lean verification accepts proofs that trust the compiler (native_decide: Lean.ofReduceBool); "
        "off: such a proof is lean_error/native_decide (a profile's allow_native_decide also allows it)",
        flag=True,
        tasks=TACTIC,
    ),
    Option(
        "context",
        _int,
        0,
        "repo_replay: show the model the file around the sorry - its open/namespace/variable lines "
        "and the declaration up to the sorry, at most N lines before it (0: the goal only)",
        tasks=TACTIC,
    ),
    Option(
        "max-heartbeats",
        _opt_int,
        None,
        "Lean's maxHeartbeats for checking an answer (synthetic, and repo_replay with lean --json); "
        "overrides the profile's max_heartbeats; unset: the profile's, else Lean's default",
        tasks=TACTIC,
    ),
    Option(
        "outcome",
        str,
        "strict",
        "strict: a wrong answer fails its test; record: every completed attempt passes",
        choices=("strict", "record"),
    ),
    Option(
        "output-dir",
        str,
        None,
        "the run's directory (default: a new lsrb-out/<suite>/<UTC time>-<config hash> for each run, "
        "lsrb-out/<suite>/latest naming the last one)",
        identity=False,
    ),
    Option(
        "resume",
        bool,
        False,
        "continue the run in --lsrb-output-dir (default: the latest unfinished run of the same "
        "options) without redoing finished attempts",
        identity=False,
        flag=True,
    ),
    Option(
        "retry-errors",
        bool,
        False,
        "with --lsrb-resume: also redo attempts that ended in an error",
        identity=False,
        flag=True,
    ),
    Option(
        "overwrite",
        bool,
        False,
        "replace an existing run in --lsrb-output-dir instead of refusing",
        identity=False,
        flag=True,
    ),
    # Regression gate (pytest_lsrb/tools/gate.py): a regression exits with status 6.
    Option(
        "baseline",
        str,
        None,
        "a previous output directory: exit 6 when this run is significantly worse (README: gating)",
        identity=False,
    ),
    Option(
        "max-drop",
        str,
        None,
        "METRIC=X[,...]: allowed drop below the baseline, e.g. pass_at_1=0.02 (default with a "
        "baseline: pass_at_1=0, any significant drop)",
        identity=False,
    ),
    Option(
        "min", str, None, "METRIC=X[,...]: exit 6 when METRIC is below X, e.g. valid_rate=0.9", identity=False
    ),
    Option(
        "alpha",
        float,
        0.05,
        "significance level of the paired test (McNemar/bootstrap) that a drop is not noise",
        identity=False,
    ),
    # llm_srbench (pytest_lsrb/srbench/task.py): equation discovery.
    Option(
        "sr-method",
        str,
        "direct",
        "llm_srbench discovery method: direct (the reference's Direct), llmsr (LLM-SR) or "
        "direct-expression (a one-line-expression prompt from the suite's templates)",
        tasks=SRBENCH,
    ),
    Option(
        "sr-budget",
        _opt_int,
        None,
        "llm_srbench: model calls per discovery run (default: the method's; direct 5, llmsr 1000, "
        "direct-expression 4)",
        tasks=SRBENCH,
    ),
    Option(
        "sr-time-limit",
        _opt_float,
        None,
        "llm_srbench: wall-clock seconds per discovery run; the search stops there and keeps its "
        "best equation, and the symbolic check gets what is left (at least 1 s) (default: no limit)",
        tasks=SRBENCH,
    ),
    Option(
        "sr-judge-time-limit",
        _opt_float,
        60.0,
        "llm_srbench: wall-clock seconds for the sympy check of one answer (it runs in a child "
        "process with 2 GB of memory; beyond either its verdict is recorded as undecided)",
        identity=False,
        tasks=SRBENCH,
    ),
    Option(
        "sr-fit-time-limit",
        _opt_float,
        5.0,
        "llm_srbench: wall-clock seconds for fitting one candidate's parameters",
        tasks=SRBENCH,
    ),
    Option(
        "sr-fit",
        str,
        "reference",
        "llm_srbench: how a candidate's parameters are fitted: reference (the reference's BFGS from "
        "all-ones on the training MSE, same optimum, exact gradients) or enhanced (least squares, "
        "normalised loss, stall stop, seeded restarts: scores differ from the reference's)",
        choices=("reference", "enhanced"),
        tasks=SRBENCH,
    ),
    Option(
        "sr-reset-every",
        _opt_int,
        None,
        "llm_srbench llmsr: reset the weaker half of the islands every N registered skeletons "
        "(default: the reference's schedule, every 4 hours of wall clock)",
        tasks=SRBENCH,
    ),
    Option(
        "sr-metrics",
        str,
        "reference",
        "llm_srbench: which test points count: reference (points with a NaN prediction dropped, as "
        "the reference does) or strict (an equation not finite on every point is invalid)",
        choices=("reference", "strict"),
        tasks=SRBENCH,
    ),
    Option(
        "sr-per-problem",
        str,
        "sample0",
        "llm_srbench Table 1: which result stands for a problem: sample0 (its first sample; the "
        "paper runs one search per problem) or best_train (of its --lsrb-samples runs, the one with "
        "the lowest training MSE: best-of-k chosen without test data)",
        choices=("sample0", "best_train"),
        tasks=SRBENCH,
    ),
    Option(
        "sr-judge",
        str,
        "sympy",
        "llm_srbench symbolic accuracy: sympy (model-free checker), llm (the paper's judge through "
        "the adapter), both (reports their agreement) or none",
        choices=("sympy", "llm", "both", "none"),
        tasks=SRBENCH,
    ),
    Option(
        "sr-judge-model",
        str,
        None,
        "llm_srbench: the LLM judge's model (the paper: GPT-4o); required with --lsrb-sr-judge=llm|both "
        "on a real adapter, so the model under test never grades itself",
        tasks=SRBENCH,
    ),
    Option(
        "sr-judge-base-url",
        str,
        None,
        "llm_srbench: the LLM judge's endpoint (default: --lsrb-base-url)",
        tasks=SRBENCH,
    ),
    Option(
        "sr-judge-adapter",
        str,
        None,
        "llm_srbench: the LLM judge's adapter, mock|ollama|openai (default: --lsrb-adapter)",
        tasks=SRBENCH,
    ),
    Option(
        "sr-success",
        str,
        "acc_0.1",
        "llm_srbench: what verification_success means: acc_0.1 (on the test data) or symbolic",
        choices=("acc_0.1", "symbolic"),
        tasks=SRBENCH,
    ),
]

# Run-config keys that may differ between the shards of one run.
PER_SHARD_KEYS = frozenset({"shard_index"})


def dest(name: str) -> str:
    return "lsrb_" + name.replace("-", "_")


def key(name: str) -> str:
    return name.replace("-", "_")


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("lsrb", "pytest-lsrb: LLM reasoning benchmarks")
    for opt in OPTIONS:
        # argparse formats help text with `%` (`%(default)s`): a literal percent sign is `%%`.
        help_text = opt.help.replace("%", "%%")
        if opt.flag:
            group.addoption(
                f"--lsrb-{opt.name}", action="store_true", default=None, dest=dest(opt.name), help=help_text
            )
        else:
            group.addoption(
                f"--lsrb-{opt.name}",
                action="store",
                default=None,
                dest=dest(opt.name),
                help=help_text,
                choices=opt.choices,
            )


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides what a run measures, plus where its files go."""

    values: Mapping[str, Any]
    suite: SuiteSpec
    output_dir: Path
    from_suite: frozenset[str] = frozenset()  # keys whose value came from suite.toml [defaults]
    from_command_line: frozenset[str] = frozenset()  # keys given as --lsrb-NAME
    # No --lsrb-output-dir: `output_dir` is the suite's folder of runs (lsrb-out/<suite>), in which
    # this run gets its own directory once its config hash is known (output/runs.py).
    runs_folder: bool = False
    # What a task adds to the identity beyond options (the tactic suite: the replay profiles'
    # contents, so a resume after editing a profile's timeout is refused as another config).
    extra_identity: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def _typed(self, name: str, kind: type[T]) -> T:
        """The value of option `name`, which `resolve` has already converted to `kind`."""
        value = self.values[name]
        if not isinstance(value, kind):  # a bug in the option table, not a user's mistake
            raise TypeError(f"run option {name!r} holds {type(value).__name__}, not {kind.__name__}")
        return value

    def _optional(self, name: str, kind: type[T]) -> T | None:
        return None if self.values[name] is None else self._typed(name, kind)

    def _seconds(self, name: str) -> float:
        value = self.values[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"run option {name!r} holds {type(value).__name__}, not a number")
        return value

    # The spine's options, typed.
    @property
    def samples(self) -> int:
        return self._typed("samples", int)

    @property
    def seed(self) -> int:
        return self._typed("seed", int)

    @property
    def shard_count(self) -> int:
        return self._typed("shard_count", int)

    @property
    def shard_index(self) -> int:
        return self._typed("shard_index", int)

    @property
    def max_tokens(self) -> int:
        return self._typed("max_tokens", int)

    @property
    def max_items(self) -> int | None:
        return self._optional("max_items", int)

    @property
    def outcome(self) -> str:
        return self._typed("outcome", str)

    @property
    def verification(self) -> str:
        return self._typed("verification", str)

    @property
    def index(self) -> Path:
        return Path(self._typed("index", str))

    @property
    def split_policy(self) -> str:
        return self._typed("split_policy", str)

    @property
    def goal_slice(self) -> str:
        return self._typed("goal_slice", str)

    @property
    def resume(self) -> bool:
        return self._typed("resume", bool)

    @property
    def retry_errors(self) -> bool:
        return self._typed("retry_errors", bool)

    @property
    def timeout(self) -> float:
        return self._seconds("timeout")

    @property
    def max_retries(self) -> int:
        return self._typed("max_retries", int)

    @property
    def concurrency(self) -> int | None:
        """Attempts in flight per process; None: the adapter's default."""
        return self._optional("concurrency", int)

    @property
    def cache_dir(self) -> str | None:
        return self._optional("cache_dir", str)

    @property
    def price(self) -> str | None:
        return self._optional("price", str)

    @property
    def progress(self) -> float | None:
        return None if self.values["progress"] is None else self._seconds("progress")

    @property
    def allow_local_remotes(self) -> bool:
        return self._typed("allow_local_remotes", bool)

    @property
    def allow_native_decide(self) -> bool:
        return self._typed("allow_native_decide", bool)

    @property
    def max_heartbeats(self) -> int | None:
        return self._optional("max_heartbeats", int)

    def blame(self, exc: LsrbUsageError) -> LsrbUsageError:
        """A problem with `--lsrb-NAME` whose value came from suite.toml, said of suite.toml."""
        return blame_suite_default(exc, self.suite, self.from_suite)

    def identity(self) -> dict[str, Any]:
        """The config as recorded in run.json and summary.json (never a secret)."""
        task = self.suite.task
        ident = {
            key(o.name): self.values[key(o.name)]
            for o in OPTIONS
            if o.identity and (o.tasks is None or task in o.tasks)
        }
        ident["suite"] = self.suite.name
        ident["task"] = self.suite.task
        ident["index"] = display_path(Path(self.values["index"]), self.suite.root)
        ident["index_sha256"] = file_sha256(Path(self.values["index"]))
        ident.update(self.extra_identity)
        if ident.get("base_url"):  # `https://user:key@host` must not reach run.json
            ident["base_url"] = strip_userinfo(str(ident["base_url"]))
        return ident

    def config_hash(self) -> str:
        """Hash of the identity minus per-shard keys: equal for every shard of one run."""
        return identity_hash(self.identity())


def identity_hash(identity: Mapping[str, Any]) -> str:
    """config_hash of a recorded identity (run.json's `config`); `lsrb merge` recomputes it."""
    ident = {k: v for k, v in identity.items() if k not in PER_SHARD_KEYS and k != "index"}
    canonical = json.dumps(ident, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def display_path(path: Path, suite_root: Path) -> str:
    """A suite's own files by their suite-relative name (machine-independent), others in full."""
    try:
        return path.resolve().relative_to(suite_root).as_posix()
    except ValueError:
        return str(path)


def file_sha256(path: Path) -> str:
    """SHA-256 of a file; of a folder (a data release), of every file under it, names included."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(file.relative_to(path).as_posix().encode() + b"\x00")
        with file.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def blame_suite_default(exc: LsrbUsageError, suite: SuiteSpec, from_suite: frozenset[str]) -> LsrbUsageError:
    message = str(exc)
    for name in from_suite:
        flag = f"--lsrb-{name.replace('_', '-')}"
        if message.startswith((flag + ":", flag + " ")):
            where = f"{suite.root / 'suite.toml'}: field 'defaults.{name}'"
            return LsrbUsageError(where + message[len(flag) :])
    return exc


def suite_default(opt: Option, value: Any, suite: SuiteSpec) -> Any:
    """A `[defaults]` value from suite.toml, checked like the command line checks its option."""
    where = f"{suite.root / 'suite.toml'}: field 'defaults.{key(opt.name)}'"
    if opt.flag:
        if not isinstance(value, bool):
            raise LsrbUsageError(f"{where}: expected true or false (got {shown(value)}).")
        return value
    if isinstance(value, (dict, list)) or (isinstance(value, bool) and opt.type is not str):
        raise LsrbUsageError(f"{where}: expected a value like --lsrb-{opt.name} takes (got {shown(value)}).")
    try:
        checked = opt.type(str(value))
    except ValueError:
        raise LsrbUsageError(f"{where}: {shown(value)} is not a valid value.") from None
    if opt.choices is not None and checked not in opt.choices:
        raise LsrbUsageError(f"{where}: expected one of {', '.join(opt.choices)} (got {shown(value)}).")
    return checked


def resolve(getoption: Callable[[str], Any], suite: SuiteSpec, rootdir: Path) -> RunConfig:
    """Merge command line, suite defaults and table defaults; validate types and ranges."""
    known = {key(o.name) for o in OPTIONS}
    from_suite = frozenset(k for k in suite.defaults if k in known and getoption(dest(k)) is None)
    try:
        return _resolve(getoption, suite, from_suite)
    except LsrbUsageError as exc:
        raise blame_suite_default(exc, suite, from_suite) from None


def _resolve(getoption: Callable[[str], Any], suite: SuiteSpec, from_suite: frozenset[str]) -> RunConfig:
    values: dict[str, Any] = {}
    known = {key(o.name) for o in OPTIONS}
    unknown = set(suite.defaults) - known
    if unknown:
        raise LsrbUsageError(
            f"{suite.root / 'suite.toml'}: unknown key(s) in [defaults]: {', '.join(sorted(unknown))}."
        )
    given: set[str] = set()  # keys given as --lsrb-NAME
    for opt in OPTIONS:
        raw = getoption(dest(opt.name))
        if raw is None:
            value = suite.defaults.get(key(opt.name), opt.default)
            if key(opt.name) in suite.defaults:
                value = suite_default(opt, value, suite)
        else:
            given.add(key(opt.name))
            try:
                value = raw if opt.flag else opt.type(raw)
            except ValueError:
                raise LsrbUsageError(f"--lsrb-{opt.name}: '{raw}' is not a valid value.") from None
        values[key(opt.name)] = value
    if "auto" in (values["shard_index"], values["shard_count"]):
        from pytest_lsrb.engine.shards import resolve_shard

        given_count = "shard_count" in given or "shard_count" in suite.defaults
        values["shard_index"], values["shard_count"] = resolve_shard(
            str(values["shard_index"]), str(values["shard_count"]), given_count, os.environ
        )
    if values["index"] is None:
        values["index"] = str(suite.index)
    else:
        index = Path(values["index"]).expanduser()
        if not index.is_absolute():
            index = Path.cwd() / index
        if not index.exists():  # a file, or a folder (a release, CSV problem or parquet folder)
            raise LsrbUsageError(f"--lsrb-index: {index} does not exist.")
        values["index"] = str(index.resolve())
    if values["retry_errors"] and not values["resume"]:
        raise LsrbUsageError("--lsrb-retry-errors only makes sense with --lsrb-resume.")
    if values["resume"] and values["overwrite"]:
        raise LsrbUsageError("--lsrb-resume and --lsrb-overwrite contradict each other; pick one.")
    check_values(values)  # finite, in bounds, text, a URL that parses
    from pytest_lsrb.engine.cost import parse_price

    parse_price(values["price"])  # a bad price stops the run before any model is called
    api_env = values["api_key_env"]
    if api_env and not os.environ.get(api_env):
        raise LsrbUsageError(f"--lsrb-api-key-env: the environment variable {api_env} is not set or empty.")
    problem = key_problem(os.environ.get(api_env) or "") if api_env else None
    if problem is not None:  # the sentence names the variable, never the key
        raise LsrbUsageError(f"--lsrb-api-key-env: the key in ${api_env} {problem}; fix the variable.")
    out = values["output_dir"]
    output_dir = Path(out).expanduser() if out else Path.cwd() / RUNS_ROOT / suite.name
    if not output_dir.is_absolute():
        output_dir = Path.cwd() / output_dir
    return RunConfig(
        values=values,
        suite=suite,
        output_dir=output_dir,
        from_suite=from_suite,
        from_command_line=frozenset(given),
        runs_folder=not out,
    )
