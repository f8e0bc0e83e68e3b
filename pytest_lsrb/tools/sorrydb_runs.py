"""Leaderboard interop: a run here as SorryDB's agent output, and SorryDB's output as a run here.

- `lsrb export sorrydb RUN -o FILE` (`export_run`): every sorry of the run as one element of
  SorryDB's agent output (doc/AGENTS.md; the `SorryResult` fields of sorrydb/database/sorry.py at
  71959ed, their names exactly): `sorry` (the index row as SorryDB's record: `repo`, `location`,
  `debug_info`, `metadata`, `id`) and `proof` - the first verified sample's proof, or, in a run
  that checked nothing, the first sample's (SorryDB's `--no-verify` runner keeps the proof
  unverified), else null - then `proof_verified`, `verification_message` ("n succeeded, m failed
  out of k attempts", as SorryDB's pass@k runner writes it), `strategy_name` (`<model>_pass_at_<k>`),
  `successful_attempts`, `failed_attempts`, the token counts. A proof of several lines is written
  as the text that replaces the sorry (its later lines indented to the sorry's column,
  lean/splice.py `block_at`; in term position, which an index from SorryDB does not record, as a
  tactic block: SorryDB's own proofs there start with `by`).
- `lsrb import sorrydb-results FILE|DIR -o OUT` (`import_results`): SorryDB's agent output, or an
  experiment folder (`result.json`, `run_summary.json`, the per-sorry logs), as a run folder:
  its index (`index.jsonl`, the sorries as `lsrb import sorrydb` writes them), one record per
  attempt and item (`item_id` the sorry's id), the answer - the model's raw response from the log
  where the folder has it, else SorryDB's extracted proof - read by this project's reader, and
  **SorryDB's recorded verdict** as the record's verdict (`verification_mode` `sorrydb_recorded`),
  except where this project's guard refuses the proof SorryDB's checker took (`sorryAx _ false`:
  `forbidden_token`, as the published figures count it - SorryDB's own 1,000-sorry run of Claude
  Opus 4.5 (SC) verified 319, 48 of them through `sorryAx`, and the leaderboard says 27.1 %);
  SorryDB's own fields beside it (`sorrydb`). `lsrb compare` and `lsrb report` then put the
  leaderboard entry beside a run here, paired by sorry id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final, cast

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.excerpts import RECORD_TEXT, excerpt
from pytest_lsrb.core.rows import stream_jsonl
from pytest_lsrb.core.selection import selected_rows_hash
from pytest_lsrb.engine.options import RunConfig, resolve
from pytest_lsrb.engine.outcomes import judged, success
from pytest_lsrb.engine.records import AttemptRecord, check_record, record_key
from pytest_lsrb.engine.suite import find_suite, load_suite
from pytest_lsrb.engine.summary import SUMMARY_SCHEMA_VERSION, summarizer_for
from pytest_lsrb.engine.task import get_task
from pytest_lsrb.output.files import ATTEMPTS_FILE, RUN_FILE, SUMMARY_FILE, AttemptsWriter, write_json_atomic
from pytest_lsrb.output.reader import read_run
from pytest_lsrb.output.rundir import RUN_SCHEMA_VERSION
from pytest_lsrb.tactic.answer import read_answer
from pytest_lsrb.tactic.guard import refuse
from pytest_lsrb.tactic.lean.gitrefs import is_local_remote
from pytest_lsrb.tactic.lean.splice import block_at
from pytest_lsrb.tactic.records import TacticAttemptRecord
from pytest_lsrb.tactic.rows import TacticRow
from pytest_lsrb.tactic.sorrydb import write_index
from pytest_lsrb.tactic.sorrydb_results import PASS_AT_SUFFIX, Experiment, SorryResult, read_experiment

SUITE: Final = "goal_to_tactic_proposal_v1"
RECORDED_MODE: Final = "sorrydb_recorded"  # the verdicts of an imported run are SorryDB's
INDEX_FILE: Final = "index.jsonl"
_SORRYDB_TEXT: Final = 4_000  # characters of SorryDB's own text kept beside a record


# -- export ---------------------------------------------------------------------------------------


def export_run(run_dir: Path, out: Path, *, index: Path | None = None) -> dict[str, int]:
    """Write `run_dir` as SorryDB's agent output to `out`; returns counts (sorries, verified)."""
    run = read_run(run_dir, "lsrb export sorrydb")
    config = run.config
    if config.get("task") not in (None, SUITE):
        raise LsrbUsageError(
            f"lsrb export sorrydb: {run_dir} is a run of {config.get('task')}, not of {SUITE}."
        )
    index_path = index or Path(str(config.get("index") or ""))
    if not index_path.is_absolute():
        index_path = find_suite(SUITE) / index_path
    if not index_path.is_file():
        raise LsrbUsageError(
            f"lsrb export sorrydb: the run's index {index_path} cannot be read; give it with --index."
        )
    by_item: dict[str, list[AttemptRecord]] = {}
    for rec in sorted(run.records, key=record_key):
        by_item.setdefault(str(rec["item_id"]), []).append(rec)
    rows = {row.item_id: row for row in stream_jsonl(index_path, TacticRow) if row.item_id in by_item}
    missing = sorted(set(by_item) - set(rows))
    if missing:
        raise LsrbUsageError(
            f"lsrb export sorrydb: {index_path} has no row for item '{missing[0]}' of the run "
            f"({len(missing)} in all); give the run's index with --index."
        )
    strategy = f"{config.get('adapter')}:{config.get('model') or 'default'}"
    results = [sorry_result(rows[item], records, strategy) for item, records in by_item.items()]
    order = {item: n for n, item in enumerate(rows)}
    results.sort(key=lambda r: order[r["sorry"]["id"]])
    write_json_atomic(out, results)
    return {"sorries": len(results), "verified": sum(1 for r in results if r["proof_verified"])}


def sorry_record(row: TacticRow) -> dict[str, Any]:
    """The index row as SorryDB's sorry record (doc/DATABASE.md); `blame_email_hash`, a hash of the
    author's e-mail that `lsrb import sorrydb` does not keep, is written empty unless a row holds it."""
    extra = row.model_extra or {}
    return {
        "repo": {
            "remote": row.repo_remote,
            "branch": row.repo_branch,
            "commit": row.repo_commit,
            "lean_version": row.repo_lean_version,
        },
        "location": {
            "path": row.path,
            "start_line": row.start_line,
            "start_column": row.start_column,
            "end_line": row.end_line,
            "end_column": row.end_column,
        },
        "debug_info": {"goal": row.goal_text, "url": row.url or ""},
        "metadata": {
            "blame_email_hash": str(extra.get("blame_email_hash") or ""),
            "blame_date": row.blame_date,
            "inclusion_date": row.inclusion_date,
        },
        "id": row.item_id,
    }


def replacement(row: TacticRow, proof: str) -> str:
    """The text that replaces the sorry: the proof, its later lines at the sorry's column."""
    return block_at(proof, row.start_column, "tactic") if "\n" in proof.strip("\n") else proof.strip()


def sorry_result(row: TacticRow, records: list[AttemptRecord], strategy: str) -> dict[str, Any]:
    """One element of SorryDB's agent output for a sorry's attempts (sample order)."""
    proofs = [replacement(row, str(r.get("tactic") or "")) if r.get("tactic") else None for r in records]
    checked = any(bool(r.get("verification_mode", "none") != "none") for r in records)
    passed = [p for r, p in zip(records, proofs, strict=True) if judged(r) and success(r) and p]
    failed = [p for r, p in zip(records, proofs, strict=True) if p and p not in passed]
    proof = passed[0] if passed else (None if checked else next((p for p in proofs if p), None))
    tokens_in = [r.get("prompt_tokens") for r in records]
    tokens_out = [r.get("completion_tokens") for r in records]
    return {
        "sorry": sorry_record(row),
        "proof": proof,
        "proof_verified": bool(passed),
        "feedback": None,
        "verification_message": (
            f"{len(passed)} succeeded, {len(failed)} failed out of {len(records)} attempts"
            if checked
            else "not verified"
        ),
        "success": True,
        "error_type": None,
        "error_message": None,
        "strategy_name": f"{strategy}_pass_at_{len(records)}",
        "failed_attempts": failed or None,
        "successful_attempts": passed or None,
        "input_tokens": _total(tokens_in),
        "output_tokens": _total(tokens_out),
        "estimated_cost": None,
    }


def _total(values: Iterable[Any]) -> int | None:
    counted = [int(v) for v in values if isinstance(v, int) and not isinstance(v, bool)]
    return sum(counted) if counted else None


# -- import ---------------------------------------------------------------------------------------


def import_results(source: Path, out: Path, *, overwrite: bool = False) -> dict[str, Any]:
    """Write SorryDB's agent output (a file or an experiment folder) as a run folder; returns its
    summary."""
    experiment = read_experiment(source)
    for n, result in enumerate(experiment.results):
        if is_local_remote(result.sorry.repo.remote):
            raise LsrbUsageError(
                f"{experiment.path}: results[{n}]: field 'sorry.repo.remote': {result.sorry.repo.remote!r} "
                "is a repository on this machine, never one of SorryDB's."
            )
    existing = [n for n in (ATTEMPTS_FILE, RUN_FILE, SUMMARY_FILE, INDEX_FILE) if (out / n).exists()]
    if existing and not overwrite:
        raise LsrbUsageError(
            f"lsrb import sorrydb-results: {out} already holds {', '.join(existing)}; pass --overwrite "
            "or choose another -o."
        )
    out.mkdir(parents=True, exist_ok=True)
    rows = [r.sorry.to_row() for r in experiment.results]
    index = (out / INDEX_FILE).resolve()
    write_index(rows, index)
    samples = experiment.samples()
    config = _config(experiment, index, samples)
    ident, config_hash = config.identity(), config.config_hash()
    run = {"suite": SUITE, "adapter": ident["adapter"], "model": ident["model"], "config_hash": config_hash}
    records = [
        rec
        for result in experiment.results
        for rec in result_records(result, samples, run, experiment.responses.get(result.sorry.id))
    ]
    for name in existing:
        (out / name).unlink()
    writer = AttemptsWriter(out / ATTEMPTS_FILE)
    try:
        for rec in records:
            check_record(rec, f"{out / ATTEMPTS_FILE}", TacticAttemptRecord)
            writer.write(rec)
    finally:
        writer.close()
    task = get_task(SUITE)
    summarizer = summarizer_for(task, samples)
    for rec in records:
        summarizer.add(rec)
    metrics = summarizer.finish()
    header = {
        "schema_version": RUN_SCHEMA_VERSION,
        "suite": SUITE,
        "config": ident,
        "config_hash": config_hash,
        "selected_rows_hash": selected_rows_hash(rows),
        "selected_items": len(rows),
        "shard_count": 1,
        "shard_index": 0,
        "attempts_expected": len(records),
        "imported_from": str(source),
        "sorrydb_run": experiment.settings or None,
    }
    summary = {
        **{k: v for k, v in header.items() if k not in ("imported_from", "sorrydb_run")},
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "items_expected": len(rows),
        "complete": True,
        **task.summary_fields(config),
        **metrics,
    }
    write_json_atomic(out / RUN_FILE, header)
    write_json_atomic(out / SUMMARY_FILE, summary)
    return summary


def _config(experiment: Experiment, index: Path, samples: int) -> RunConfig:
    """The tactic suite's options at their defaults, with what the imported run was: SorryDB's
    strategy and model, its samples per sorry, whole proofs in SorryDB's words, SorryDB's verdicts."""
    suite = load_suite(find_suite(SUITE))
    config = resolve(lambda _name: None, suite, suite.root)
    strategy = experiment.settings.get("strategy") or {}
    named = _named_by_results(experiment)
    name = str(strategy.get("name") or (named[0] if named else "unknown"))
    values = {
        **config.values,
        "adapter": name if name.startswith("sorrydb/") else f"sorrydb/{name}",  # (a re-import)
        "model": _model_of(strategy) or (named[1] if named else name),
        "samples": samples,
        "answer": "proof",
        "prompt": "sorrydb",
        "verification": RECORDED_MODE,
        "index": str(index),
    }
    return dataclasses.replace(config, values=values)


def _named_by_results(experiment: Experiment) -> tuple[str, str] | None:
    """(strategy, model) from the results' one `strategy_name` when no run summary names them: a
    result list alone. SorryDB's runner writes `<strategies>_pass_at_<k>`; `lsrb export sorrydb`
    writes `<adapter>:<model>_pass_at_<k>`, read back as that adapter and model. None when the
    results name no strategy, or several."""
    names = {PASS_AT_SUFFIX.sub("", r.strategy_name) for r in experiment.results if r.strategy_name}
    names.discard("error")  # SorryDB's runner names a result that crashed "error"
    if len(names) != 1:
        return None
    (name,) = names
    if not name or len(name) > 200:
        return None
    adapter, colon, model = name.partition(":")
    return (adapter, model) if colon and adapter and model else (name, name)


def _model_of(strategy: Mapping[str, Any]) -> str | None:
    """The model a SorryDB strategy spec names (`args.model`, or the provider and its model)."""
    args = strategy.get("args")
    if not isinstance(args, Mapping):
        return None
    if isinstance(args.get("model"), str):
        return str(args["model"])
    model_config = args.get("model_config")
    if isinstance(model_config, Mapping):
        params = model_config.get("params")
        model = params.get("model") if isinstance(params, Mapping) else None
        provider = model_config.get("provider")
        return "/".join(str(x) for x in (provider, model) if isinstance(x, str)) or None
    return None


def result_records(
    result: SorryResult, samples: int, run: Mapping[str, Any], response: str | None
) -> list[AttemptRecord]:
    """The records of one SorryDB result: one per attempt, SorryDB's verdict each, its answer read
    by this project's reader (the raw response where the log kept it, else SorryDB's proof)."""
    sorry = result.sorry
    recorded = {
        "proof": None if result.proof is None else excerpt(result.proof, _SORRYDB_TEXT),
        "proof_verified": result.proof_verified,
        "verification_message": excerpt(result.verification_message or "", _SORRYDB_TEXT) or None,
        "strategy_name": result.strategy_name,
        "success": result.success,
        "error_type": result.error_type,
    }
    records: list[AttemptRecord] = []
    for index, (proof, verified) in enumerate(result.attempts(samples)):
        raw = response if response is not None and index == 0 else proof
        answer = read_answer(raw, "proof")
        # SorryDB counts a result's tokens over all its attempts: the totals stand on the first
        # attempt's record, so the run's (and a re-export's) sums are SorryDB's.
        tokens = (result.input_tokens, result.output_tokens) if index == 0 else (None, None)
        record: dict[str, Any] = {
            "record_schema_version": 1,
            "suite": run["suite"],
            "item_id": sorry.id,
            "sample_index": index,
            "attempt_seed": 0,
            "config_hash": run["config_hash"],
            "adapter": run["adapter"],
            "model": run["model"],
            "raw_output": excerpt(raw, RECORD_TEXT),
            "prompt_tokens": tokens[0],
            "completion_tokens": tokens[1],
            "tactic": answer.tactic,
            "proposal": answer.tactic,
            "valid": answer.valid,
            "nonempty": answer.nonempty,
            "contains_sorry": answer.contains_sorry,
            "answer_format": answer.answer_format,
            "answer_mode": "proof",
            "repo_remote": sorry.repo.remote,
            "repo_lean_version": sorry.repo.lean_version,
            "verification_mode": RECORDED_MODE,
            "verification_attempted": True,
            "verification_success": verified,
            "verification_outcome": "closed",
            "verification_detail": recorded["verification_message"],
            "sorrydb": {**recorded, "attempt_proof": excerpt(proof, _SORRYDB_TEXT) or None},
        }
        refused = refuse(proof, proof=True) if verified else None
        if refused is not None:  # SorryDB's checker took it; the guard here does not (`sorryAx _ false`)
            record["verification_success"] = False
            record["verification_outcome"] = "forbidden_token"
            record["verification_error_kind"] = "forbidden_token"
            record["verification_error_domain"] = "model"
            record["verification_error_subkind"] = refused.subkind
            record["verification_detail"] = f"verified by SorryDB's checker, refused here: {refused.detail}"
        elif not verified:  # SorryDB's verdict: its checker refused the proof, or there was none
            record["verification_outcome"] = "lean_error"
            record["verification_error_kind"] = "lean_error"
            record["verification_error_domain"] = "model"
            record["verification_error_subkind"] = "sorrydb_rejected" if proof else "no_proof"
        records.append(cast(AttemptRecord, record))
    return records
