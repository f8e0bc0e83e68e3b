"""The options every suite reads, and how all run options reach `pytest --help`.

One spelling: the option `--lsrb-<name>`, the suite.toml default `<name>` and the run-config key
share the name (dashes become underscores); `options.resolve` turns the options, the command line
and the suite's defaults into a `RunConfig`. A family's own options are declared by the family
(`engine.option_spec.OptionSet`, found by `engine.option_sets`), never here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from pytest_lsrb.engine.option_spec import (
    DAY_S,
    Bounds,
    Option,
    OptionSet,
    integer,
    integer_or_auto,
    optional_integer,
    optional_number,
)

if TYPE_CHECKING:
    import pytest

# The `pytest --help` groups of the every-suite options, in their order; a family's options come
# between `model` and `budgets`, a group per option set.
GROUPS: Final[dict[str, str]] = {
    "selection": "selection: which items, how many samples, how answers are checked",
    "model": "model: the endpoint and how it is called",
    "budgets": "budgets: stop the run at a cost, a token count or a time",
    "output": "output: where the run is written, resuming, progress, test outcomes",
    "gate": "gate: compare with a baseline run and exit 6 on a regression",
    "run": "other run options",
}
FAMILIES_AFTER: Final = "model"

OPTIONS: list[Option] = [
    Option(
        "adapter",
        str,
        "mock",
        "model adapter: mock (offline baseline), ollama or openai; sorrydb-tactics or sorrydb-rfl: "
        "SorryDB's deterministic strategies, no model (sample i answers the i-th tactic); an "
        'installed package\'s adapter (`lsrb list`) or a "package.module:Class" spec',
        group="model",
    ),
    Option("model", str, "", "model name sent to the endpoint (default: the adapter's)", group="model"),
    Option("base-url", str, None, "endpoint base URL (default: the adapter's)", group="model"),
    Option(
        "allow-model-alias",
        bool,
        False,
        "let --lsrb-model name a model the server does not list (a gateway's alias, a llama.cpp "
        "server that answers any name with its one model); records keep the model that answered",
        identity=False,
        flag=True,
        group="model",
    ),
    Option(
        "api-key-env",
        str,
        None,
        "name of the environment variable holding the API key (the key itself is never recorded)",
        identity=False,
        group="model",
    ),
    Option(
        "max-tokens-field",
        str,
        "max_tokens",
        "request field for the token limit (max_tokens or max_completion_tokens)",
        group="model",
    ),
    Option(
        "timeout",
        float,
        120.0,
        "seconds before one model call times out",
        identity=False,
        bounds=Bounds(0, DAY_S, low_open=True, whole=False, unit="seconds"),
        group="model",
    ),
    Option(
        "max-retries",
        integer,
        100,
        "at most this many retries of one model call (--lsrb-retry-time is the usual limit)",
        identity=False,
        bounds=Bounds(0, 100),
        group="model",
    ),
    Option(
        "retry-time",
        float,
        120.0,
        "seconds of failed calls after which the model's server is taken for down and the run "
        "stops what is left (resumable); until then transient errors (connection refused or "
        "reset, 429, 502/503/504, timeouts) are retried with capped jittered backoff that a "
        "Retry-After may lengthen: long enough for a local server to restart; 0: no retries",
        identity=False,
        bounds=Bounds(0, DAY_S, whole=False, unit="seconds"),
        group="model",
    ),
    Option(
        "concurrency",
        optional_integer,
        None,
        "attempts in flight at once per process (default: the adapter's)",
        identity=False,
        bounds=Bounds(1, 1024),
        group="model",
    ),
    Option(
        "cache-dir", str, None, "response cache directory (off unless given)", identity=False, group="model"
    ),
    Option(
        "cache-journal",
        str,
        "auto",
        "the response cache's SQLite journal: wal (local disks), delete (network filesystems: NFS, "
        "Lustre, CIFS, FUSE), auto picks by the filesystem the cache is on",
        identity=False,
        choices=("auto", "wal", "delete"),
        group="model",
    ),
    Option(
        "price",
        str,
        None,
        "in=X,out=Y: prices per million prompt/completion tokens; the summary and progress line "
        "then show the run's cost",
        identity=False,
        group="budgets",
    ),
    Option(
        "max-cost",
        optional_number,
        None,
        "stop the run once it has spent this much (priced by --lsrb-price, in its currency); asked "
        "before every request, one budget for all -n workers; answers already paid for are kept and "
        "--lsrb-resume with a larger budget continues (README: budgets)",
        identity=False,
        bounds=Bounds(0, 1e12, low_open=True, whole=False),
        group="budgets",
    ),
    Option(
        "max-total-tokens",
        optional_integer,
        None,
        "stop the run once its requests have used this many prompt + completion tokens (as the "
        "server reports them), like --lsrb-max-cost",
        identity=False,
        bounds=Bounds(1, 10**15),
        group="budgets",
    ),
    Option(
        "max-wall-time",
        optional_number,
        None,
        "stop the run after this many seconds of this command's wall clock, like --lsrb-max-cost "
        "(no new request or attempt starts after it)",
        identity=False,
        bounds=Bounds(0, 365 * DAY_S, low_open=True, whole=False, unit="seconds"),
        group="budgets",
    ),
    Option(
        "progress",
        optional_number,
        None,
        "seconds between progress lines (done/total, rate, ETA, errors, tokens, cost, cache hits); "
        "default 5 on a terminal, 30 in a log; 0: none",
        identity=False,
        bounds=Bounds(0, DAY_S, whole=False, unit="seconds"),
        group="output",
    ),
    Option(
        "seed", integer, 0, "run seed: selection and every per-attempt seed derive from it", group="selection"
    ),
    Option(
        "samples",
        integer,
        1,
        "samples per item (pass@k is reported for k up to this)",
        bounds=Bounds(1, 10_000),
        group="selection",
    ),
    Option(
        "temperature",
        float,
        0.0,
        "sampling temperature",
        bounds=Bounds(0, 2, whole=False),  # the range OpenAI-compatible servers accept
        group="model",
    ),
    Option(
        "max-tokens",
        integer,
        256,
        "maximum tokens per model call",
        bounds=Bounds(1, 10_000_000),
        group="model",
    ),
    Option(
        "dry-run",
        str,
        None,
        "plan the run and make one model call, then stop: the calls, tokens and time the selection "
        "would take, estimated from the calls each attempt may make (an llm_srbench method's budget) "
        "and that measured call; nothing is written (`lsrb run SUITE --dry-run`)",
        identity=False,
        flag=True,
        group="run",
    ),
    Option(
        "split-policy",
        str,
        "all",
        "which items: all, dev (stable 20%), test (the other 80%), or manifest:PATH#SPLIT "
        "(a frozen split written by `lsrb split`)",
        group="selection",
    ),
    Option(
        "goal-slice",
        str,
        "all",
        "filter items, e.g. 'tag:nat,hyps:<=2' (see README: goal slices)",
        group="selection",
    ),
    Option(
        "max-items",
        optional_integer,
        None,
        "evaluate a seeded subset of at most this many items",
        bounds=Bounds(1, 100_000_000),
        group="selection",
    ),
    Option(
        "shard-count",
        integer_or_auto,
        1,
        "split the selection into this many shards (stable hash of item_id); auto: the scheduler's",
        bounds=Bounds(1, 1_000_000),
        group="selection",
    ),
    Option(
        "shard-index",
        integer_or_auto,
        0,
        "which shard this run evaluates (0-based); auto: from Slurm, Kubernetes, GitLab or "
        "LSRB_SHARD_INDEX (README: sharding)",
        group="selection",
    ),
    Option("index", str, None, "index file to use instead of the suite's built-in one", group="selection"),
    Option(
        "verification",
        str,
        "none",
        "how answers are checked (the task's modes; an installed package's verifier: `lsrb list`)",
        group="selection",
    ),
    Option(
        "fastpath",
        str,
        "on",
        "off: use only pytest's and xdist's public hooks (no batched xdist messages, deep queues, "
        "crash blame, direct terminal writes or heap freezing); same records, slower",
        choices=("on", "off"),
        identity=False,
        group="output",
    ),
    Option(
        "outcome",
        str,
        "strict",
        "strict: a wrong answer fails its test; record: every completed attempt passes",
        choices=("strict", "record"),
        group="output",
    ),
    Option(
        "output-dir",
        str,
        None,
        "the run's directory (default: a new lsrb-out/<suite>/<UTC time>-<config hash> for each run, "
        "lsrb-out/<suite>/latest naming the last one)",
        identity=False,
        group="output",
    ),
    Option(
        "resume",
        bool,
        False,
        "continue the run in --lsrb-output-dir (default: the latest unfinished run of the same "
        "options) without redoing finished attempts",
        identity=False,
        flag=True,
        group="output",
    ),
    Option(
        "resume-or-start",
        bool,
        False,
        "continue the run in --lsrb-output-dir when there is one (same options required), start it "
        "when there is none: the one command a requeued job or a retried pod runs again",
        identity=False,
        flag=True,
        group="output",
    ),
    Option(
        "retry-errors",
        bool,
        False,
        "with --lsrb-resume (or --lsrb-resume-or-start): also redo attempts that ended in an "
        "infrastructure error (never the model's own failures)",
        identity=False,
        flag=True,
        group="output",
    ),
    Option(
        "overwrite",
        bool,
        False,
        "replace an existing run in --lsrb-output-dir instead of refusing",
        identity=False,
        flag=True,
        group="output",
    ),
    Option(
        "baseline",
        str,
        None,
        "a previous output directory: exit 6 when this run is significantly worse (README: gating)",
        identity=False,
        group="gate",
    ),
    Option(
        "baseline-missing",
        str,
        "fail",
        "when --lsrb-baseline names no run (no such folder, or an empty one): fail (the gate fails "
        "before any model call: a lost baseline never passes by accident) or pass (declared: this is "
        "the first run, with nothing to compare; --lsrb-min/--lsrb-max still hold)",
        identity=False,
        choices=("fail", "pass"),
        group="gate",
    ),
    Option(
        "max-drop",
        str,
        None,
        "METRIC=X[,...]: allowed drop below the baseline, e.g. pass_at_1=0.02 (default with a "
        "baseline: pass_at_1=0, any significant drop)",
        identity=False,
        group="gate",
    ),
    Option(
        "min",
        str,
        None,
        "METRIC=X[,...]: exit 6 when METRIC is below X, e.g. valid_rate=0.9",
        identity=False,
        group="gate",
    ),
    Option(
        "max",
        str,
        None,
        "METRIC=X[,...]: exit 6 when a lower-is-better METRIC is above X, e.g. latency_ms_p95=2000",
        identity=False,
        group="gate",
    ),
    Option(
        "alpha",
        float,
        0.05,
        "significance level of the paired test (McNemar/bootstrap) that a drop is not noise",
        identity=False,
        group="gate",
    ),
]

# Run-config keys that may differ between the shards of one run.
PER_SHARD_KEYS = frozenset({"shard_index"})


def dest(name: str) -> str:
    return "lsrb_" + name.replace("-", "_")


def key(name: str) -> str:
    return name.replace("-", "_")


def help_text(opt: Option) -> str:
    """The option's help as `--help` prints it: its default added when the help does not say it,
    and `%` doubled (argparse formats help text with `%(default)s`)."""
    text = opt.help
    shown = opt.shown_default()
    if shown is not None and "default" not in text:
        text += f" (default: {shown})"
    return text.replace("%", "%%")


def grouped(families: list[OptionSet]) -> list[tuple[str, str, list[Option]]]:
    """(group name, title, options) in the order `--help` shows them: the every-suite options by
    theme, each family's set (`option_sets.registered_sets`) in its own group after `model`."""
    by_group: dict[str, list[Option]] = {name: [] for name in GROUPS}
    for opt in OPTIONS:
        by_group.setdefault(opt.group, []).append(opt)
    out: list[tuple[str, str, list[Option]]] = []
    for name, options in by_group.items():
        if options:
            out.append((f"lsrb-{name}", GROUPS.get(name, name), options))
        if name == FAMILIES_AFTER:
            out += [(f"lsrb-{s.kind}-{s.owners[0]}", s.title, list(s.options)) for s in families]
    return out


def add_options(parser: pytest.Parser, families: list[OptionSet]) -> None:
    """Every run option in its group (`grouped`), as `pytest --help` lists them. The choices are
    shown, not given to argparse: its "invalid choice" comes over four lines under pytest's
    usage line, where `Option.parse` says one sentence like every other bad value."""
    for name, title, options in grouped(families):
        group = parser.getgroup(name, f"pytest-lsrb {title}")
        for opt in options:
            if opt.flag:
                group.addoption(opt.flag_name, action="store_true", default=None, dest=dest(opt.name),
                                help=help_text(opt))  # fmt: skip
            else:
                shown = "{" + ",".join(opt.choices) + "}" if opt.choices else None
                group.addoption(opt.flag_name, action="store", default=None, dest=dest(opt.name),
                                help=help_text(opt), metavar=shown)  # fmt: skip
