"""The run options' table: one spelling. The option `--lsrb-<name>`, the suite.toml default
`<name>` and the run-config key share the name (dashes become underscores); `options.resolve`
turns the table, the command line and the suite's defaults into a `RunConfig`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest


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
    Option(
        "adapter",
        str,
        "mock",
        "model adapter: mock (offline baseline), ollama or openai; sorrydb-tactics or sorrydb-rfl: "
        "SorryDB's deterministic strategies, no model (sample i answers the i-th tactic); an "
        'installed package\'s adapter (`lsrb list`) or a "package.module:Class" spec',
    ),
    Option("model", str, "", "model name sent to the endpoint (default: the adapter's)"),
    Option("base-url", str, None, "endpoint base URL (default: the adapter's)"),
    Option(
        "allow-model-alias",
        bool,
        False,
        "let --lsrb-model name a model the server does not list (a gateway's alias, a llama.cpp "
        "server that answers any name with its one model); records keep the model that answered",
        identity=False,
        flag=True,
    ),
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
    Option(
        "max-retries",
        _int,
        100,
        "at most this many retries of one model call (--lsrb-retry-time is the usual limit)",
        identity=False,
    ),
    Option(
        "retry-time",
        float,
        120.0,
        "seconds a model call keeps retrying transient errors (connection refused or reset, 429, "
        "502/503/504, timeouts) after its first one, with capped jittered backoff honouring "
        "Retry-After: long enough for a server to restart; 0: no retries",
        identity=False,
    ),
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
        "max-cost",
        _opt_float,
        None,
        "stop the run once it has spent this much (priced by --lsrb-price, in its currency); asked "
        "before every request, one budget for all -n workers; answers already paid for are kept and "
        "--lsrb-resume with a larger budget continues (README: budgets)",
        identity=False,
    ),
    Option(
        "max-total-tokens",
        _opt_int,
        None,
        "stop the run once its requests have used this many prompt + completion tokens (as the "
        "server reports them), like --lsrb-max-cost",
        identity=False,
    ),
    Option(
        "max-wall-time",
        _opt_float,
        None,
        "stop the run after this many seconds of this command's wall clock, like --lsrb-max-cost "
        "(no new request or attempt starts after it)",
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
    Option(
        "dry-run",
        str,
        None,
        "plan the run and make one model call, then stop: the calls, tokens and time the selection "
        "would take, estimated from the calls each attempt may make (an llm_srbench method's budget) "
        "and that measured call; nothing is written (`lsrb run SUITE --dry-run`)",
        identity=False,
        flag=True,
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
    Option(
        "verification",
        str,
        "none",
        "how answers are checked (the task's modes; an installed package's verifier: `lsrb list`)",
    ),
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
        "answer",
        str,
        "tactic",
        "what the model is asked for and judged on: tactic (the card's one next tactic), proof "
        "(the whole proof body replaces the sorry, as SorryDB and the prover papers measure) or "
        "search (SorryDB's tactic-by-tactic search on the REPL's proof states; the proof found is "
        "checked as a whole file)",
        choices=("tactic", "proof", "search"),
        tasks=TACTIC,
    ),
    Option(
        "screen",
        str,
        "on",
        "Lean over a REPL: run each answer on the sorry's proof state first and compile the whole "
        "patched file only for answers that close there (the verdicts are the same; off: every "
        "answer compiles its file)",
        # the verdicts are the same either way (tests/tactic/verifiers/test_screening.py)
        identity=False,
        choices=("on", "off"),
        tasks=TACTIC,
    ),
    Option(
        "forbid-search-tactics",
        bool,
        False,
        "refuse exact?/apply?/rw?/hint as forbidden_token (off: SorryDB's policy - a search tactic "
        "whose proof holds no sorryAx closes; apply?'s admitted goal fails the axiom check)",
        flag=True,
        tasks=TACTIC,
    ),
    Option(
        "strict-inherited-sorry",
        bool,
        False,
        "repo_replay: an answer that reaches sorryAx only through a lemma the file or its imports "
        "prove by sorry fails (lean_error/inherited_sorry); off: SorryDB's rule - it closes, recorded "
        "inherited_sorry (a profile's reject_inherited_sorry also sets it)",
        flag=True,
        tasks=TACTIC,
    ),
    Option(
        "search-iterations",
        _int,
        10,
        "--lsrb-answer search: at most N model calls per attempt, one tactic each (SorryDB's "
        "TacticByTacticStrategy and run_tactic_agent.py default: 10)",
        identity=False,  # in a search run's identity (TacticTask.configure), no other's
        tasks=TACTIC,
    ),
    Option(
        "search-parse",
        str,
        "sorrydb",
        "--lsrb-answer search: how a step is read from an answer: sorrydb (SorryDB's parser: the "
        "first fenced block with a leading `lean` cut off, so a ```lean4 block is not of the form "
        "`[n] tactic` and the search stops) or lenient (reasoning dropped, any fence tag removed: "
        "prover models answer in ```lean4 fences by training)",
        identity=False,  # in a search run's identity (TacticTask.configure), no other's
        choices=("sorrydb", "lenient"),
        tasks=TACTIC,
    ),
    Option(
        "search-failures",
        _int,
        3,
        "--lsrb-answer search: stop after N consecutive failed tactics (SorryDB's max_consecutive_failures)",
        identity=False,  # in a search run's identity (TacticTask.configure), no other's
        tasks=TACTIC,
    ),
    Option(
        "feedback-rounds",
        _int,
        0,
        "after a wrong answer, ask again up to N times, showing the model its earlier answers and "
        "Lean's reply (SorryDB's self-correcting protocol: its max_iterations counts every "
        "proposal, so max_iterations=3 is N=2); needs a Lean verification mode; the attempt's "
        "verdict is its last round's",
        tasks=TACTIC,
    ),
    Option(
        "context",
        str,
        "goal",
        "what the prompt shows: goal (the goal state only) or file (repo_replay: also the file "
        "around the sorry - its open/namespace/variable lines and the declaration up to the "
        "sorry, the target marked as SorryDB's prompts mark it; nothing after the sorry)",
        choices=("goal", "file"),
        tasks=TACTIC,
    ),
    Option(
        "context-lines",
        _int,
        100,
        "with --lsrb-context file: at most N lines of the declaration above the sorry (SorryDB's "
        "tactic strategy shows 100)",
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
        "fastpath",
        str,
        "on",
        "off: use only pytest's and xdist's public hooks (no batched xdist messages, deep queues, "
        "crash blame, direct terminal writes or heap freezing); same records, slower",
        choices=("on", "off"),
        identity=False,
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
        "resume-or-start",
        bool,
        False,
        "continue the run in --lsrb-output-dir when there is one (same options required), start it "
        "when there is none: the one command a requeued job or a retried pod runs again",
        identity=False,
        flag=True,
    ),
    Option(
        "retry-errors",
        bool,
        False,
        "with --lsrb-resume (or --lsrb-resume-or-start): also redo attempts that ended in an "
        "infrastructure error (never the model's own failures)",
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
        "baseline-missing",
        str,
        "fail",
        "when --lsrb-baseline names no run (no such folder, or an empty one): fail (the gate fails "
        "before any model call: a lost baseline never passes by accident) or pass (declared: this is "
        "the first run, with nothing to compare; --lsrb-min/--lsrb-max still hold)",
        identity=False,
        choices=("fail", "pass"),
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
        "max",
        str,
        None,
        "METRIC=X[,...]: exit 6 when a lower-is-better METRIC is above X, e.g. latency_ms_p95=2000",
        identity=False,
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
        "llm_srbench discovery method: direct (the reference's Direct), llmsr (LLM-SR), "
        "direct-expression (a one-line-expression prompt from the suite's templates), an installed "
        'package\'s method (`lsrb list`) or a "package.module:Class" spec',
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
        "sr-token-budget",
        _opt_int,
        None,
        "llm_srbench: prompt + completion tokens per discovery run, as the server reports them (the "
        "per-attempt cap of a run's --lsrb-max-total-tokens); the search stops there and keeps its best "
        "equation, like --lsrb-sr-time-limit (default: no cap)",
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
        30.0,  # the reference's (LLM-SR's evaluate_timeout_seconds); srbench.fitting.objective
        "llm_srbench: wall-clock seconds for fitting one candidate's parameters (the reference's "
        "30; a fit that reaches it is an invalid candidate, as there, and is counted: "
        "fit_time_limit_hits)",
        tasks=SRBENCH,
    ),
    Option(
        "sr-fit",
        str,
        "reference",
        "llm_srbench: how a candidate's parameters are fitted: reference (the reference's scipy "
        "BFGS from ten ones with its numerical gradient; a nan final loss is invalid), fast (the "
        "same BFGS with exact gradients and a closed form for linear skeletons: faster, another "
        "optimum on some nonconvex skeletons) or enhanced (least squares, normalised loss, stall "
        "stop, seeded restarts: scores differ from the reference's)",
        choices=("reference", "fast", "enhanced"),
        tasks=SRBENCH,
    ),
    Option(
        "sr-lasr-backend",
        str,
        "python",
        "llm_srbench lasr: the search engine: python (srbench/methods/evolution.py, the reference's "
        "settings) or pysr (LaSR's PySR fork and Julia, calling --lsrb-base-url itself)",
        choices=("python", "pysr"),
        tasks=SRBENCH,
    ),
    Option(
        "sr-lasr-rows",
        str,
        "first",
        "llm_srbench lasr: which 2000 training rows the search fits: first (the reference's "
        "task.samples[:2000]) or seeded (a seeded spread; for data stored in trajectory order, "
        "such as LLM-SR's CSVs, where the first rows are one stretch of the trajectory)",
        choices=("first", "seeded"),
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
        "sr-partial-release",
        bool,
        False,
        "llm_srbench: load an official release that lacks a split's metadata or a problem's data "
        "(a warning and Table 1's header name what is missing); off: such a release is refused",
        flag=True,
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
        "sr-sa-scale",
        str,
        "free",
        "llm_srbench symbolic accuracy (sympy judge), an open case of the paper's rule: free (an "
        "additive constant alone is a constant, removed like the others: x**2 + c matches x**2) or "
        "strict (an additive constant alone is a term of the form)",
        choices=("free", "strict"),
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
        "sr-judge-api-key-env",
        str,
        None,
        "llm_srbench: the environment variable holding the LLM judge's API key; without it the judge "
        "gets no key, unless it is served from --lsrb-base-url's own server (the model's key is never "
        "sent to another server)",
        identity=False,
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


def choices_of(name: str) -> tuple[str, ...]:
    """The choices of `--lsrb-<name>` (dashes or underscores): the one spelling of the list, which
    every check, constant and page reads (`tactic.answer.ANSWER_MODES`, `srbench.options`)."""
    found = next(opt for opt in OPTIONS if key(opt.name) == key(name))
    assert found.choices is not None, f"--lsrb-{found.name} has no choices"
    return found.choices


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
