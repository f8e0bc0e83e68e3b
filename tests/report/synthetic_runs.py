"""Output directories written the way a run writes them, with records built in the published shapes.

The tactic shape is what tasks/tactic.py writes; the equation shape (problem_set, domain, nmse_id,
nmse_ood, acc_tau_id, acc_tau_ood, symbolic_match, pred_sample_id) is what the LLM-SRBench suite
writes. Files go through the project's own writers (AttemptsWriter, write_json_atomic, Summarizer),
so the report reads exactly what a run leaves behind.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

from pytest_lsrb.engine.summary import SUMMARY_SCHEMA_VERSION, Summarizer
from pytest_lsrb.output.files import ATTEMPTS_FILE, RUN_FILE, SUMMARY_FILE, AttemptsWriter, write_json_atomic
from pytest_lsrb.tactic.task import TacticSummary

TACTIC_SUITE = "goal_to_tactic_proposal_v1"
HOSTILE = (
    "</script><script>document.body.setAttribute('data-pwned','1')</script>"
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\"><b>bold</b> & ]]> \u2028"
)

REPOS = [
    ("https://github.com/leanprover-community/mathlib4", "v4.22.0", ["mathlib", "algebra"]),
    ("https://github.com/teorth/pfr", "v4.21.0", ["combinatorics"]),
    ("https://github.com/pytest-lsrb/builtin-goals", "v4.22.0", ["nat", "logic"]),
]
GEN_ERRORS = [("timeout", "transport"), ("rate_limit", "provider"), ("empty_output", "model_output")]
VERIFY: list[tuple[str, str | None, str | None]] = [
    ("closed", None, None),
    ("progress", None, None),
    ("lean_error", "model", "parse"),
    ("lean_error", "model", "unknown_identifier"),
    ("lean_error", "model", "tactic_failed"),
    ("timeout", "environment", None),  # a wall-clock timeout: the environment's
    ("toolchain_missing", "environment", None),
]


def _header(
    suite: str,
    task: str,
    samples: int,
    items: int,
    index: Path | None,
    model: str,
    verification: str,
    rows_hash: str,
) -> dict[str, Any]:
    config = {
        "adapter": "openai",
        "model": model,
        "base_url": "http://127.0.0.1:1/v1",
        "samples": samples,
        "seed": 0,
        "temperature": 0.7,
        "max_tokens": 128,
        "verification": verification,
        "split_policy": "all",
        "goal_slice": "all",
        "max_items": None,
        "shard_count": 1,
        "shard_index": 0,
        "suite": suite,
        "task": task,
        "index": str(index) if index else None,
        "outcome": "strict",
        "profiles": None,
        "index_sha256": hashlib.sha256(index.read_bytes()).hexdigest() if index else None,
    }
    return {
        "schema_version": 1,
        "suite": suite,
        "config": config,
        "config_hash": "c" * 64,
        "selected_rows_hash": rows_hash,
        "selected_items": items,
        "shard_count": 1,
        "shard_index": 0,
        "attempts_expected": items * samples,
        "started_at": "2026-01-01T00:00:00+00:00",
    }


def _finish(
    out: Path,
    header: dict[str, Any],
    records: list[dict[str, Any]],
    samples: int,
    accumulator: Any,
    write_summary: bool,
) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / RUN_FILE, header)
    writer = AttemptsWriter(out / ATTEMPTS_FILE)
    summarizer = Summarizer(samples, accumulator)
    for rec in records:
        writer.write(rec)
        summarizer.add(rec)
    writer.close()
    if write_summary:
        metrics = summarizer.finish()
        summary = {
            "schema_version": SUMMARY_SCHEMA_VERSION,
            "suite": header["suite"],
            "config": header["config"],
            "config_hash": header["config_hash"],
            "selected_rows_hash": header["selected_rows_hash"],
            "selected_items": header["selected_items"],
            "shard_count": 1,
            "shard_index": 0,
            "attempts_expected": header["attempts_expected"],
            "complete": metrics["attempts"] == header["attempts_expected"],
            "profile_config_path": None,
            **metrics,
            "wall_time_s": 12.5,
        }
        write_json_atomic(out / SUMMARY_FILE, summary)
    return out


def tactic_run(
    out: Path,
    *,
    items: int = 30,
    samples: int = 4,
    seed: int = 0,
    skill: float = 0.45,
    hostile_item: bool = False,
    model: str = "qwen2.5:7b",
    write_summary: bool = True,
    with_prompt: bool = True,
) -> Path:
    """A tactic run with synthetic verification: errors of every domain, three repos, tags."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    index = out / "index.jsonl"
    rows = []
    for i in range(items):
        remote, lean, tags = REPOS[i % len(REPOS)]
        rows.append(
            {
                "item_id": f"{remote.rsplit('/', 1)[-1]}_goal_{i:05d}",
                "repo_remote": remote,
                "repo_branch": "main",
                "repo_commit": "0" * 40,
                "repo_lean_version": lean,
                "path": f"Src/File{i % 7}.lean",
                "start_line": 10 + i,
                "start_column": 2,
                "end_line": 10 + i,
                "end_column": 7,
                "goal_text": f"n : Nat\n⊢ n + {i} = {i} + n",
                "tags": tags[: 1 + i % 2],
            }
        )
    if hostile_item:
        rows[0]["item_id"] = "hostile<script>item"
        rows[0]["tags"] = ["<i>tag</i>"]
    index.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    records = []
    for row in rows:
        difficulty = rng.random()
        for k in range(samples):
            rec: dict[str, Any] = {
                "record_schema_version": 1,
                "item_id": row["item_id"],
                "sample_index": k,
                "attempt_seed": rng.randrange(2**31),
                "suite": TACTIC_SUITE,
                "adapter": "openai",
                "model": model,
                "config_hash": "c" * 64,
                "prompt_hash": f"{row['item_id']}-p",
                "latency_ms": round(rng.lognormvariate(6.0, 0.6), 3),
                "model_calls": 1,
                "cached": False,
                "generation_error_kind": None,
                "generation_error_domain": None,
                "generation_error_message": None,
                "verification_mode": "synthetic",
                "verification_attempted": False,
                "verification_success": None,
                "verification_outcome": "not_attempted",
                "verification_error_kind": None,
                "verification_error_domain": None,
                "verification_error_subkind": None,
                "verification_detail": None,
                "verification_latency_ms": 0.0,
                "repo_replay_profile_id": None,
                "finished_at": "2026-01-01T00:00:01+00:00",
            }
            if with_prompt:
                rec["prompt"] = [
                    {"role": "system", "content": "Propose exactly one Lean 4 tactic."},
                    {"role": "user", "content": f"Goal:\n{row['goal_text']}"},
                ]
            roll = rng.random()
            if roll < 0.04:
                kind, domain = GEN_ERRORS[rng.randrange(len(GEN_ERRORS))]
                rec.update(
                    generation_error_kind=kind,
                    generation_error_domain=domain,
                    generation_error_message=f"{kind} after 3 tries",
                    raw_output="",
                    tactic="",
                    proposal="",
                    valid=False,
                    nonempty=False,
                    contains_sorry=False,
                )
            elif roll < 0.08:
                rec.update(
                    raw_output="sorry",
                    tactic="sorry",
                    proposal="sorry",
                    valid=True,
                    nonempty=True,
                    contains_sorry=True,
                    verification_outcome="forbidden_token",
                    verification_success=False,
                    verification_error_kind="forbidden_token",
                    verification_error_domain="model",
                )
            else:
                tactic = rng.choice(["omega", "simp", "rw [Nat.add_comm]", "exact Nat.add_comm _ _", "ring"])
                rec.update(
                    raw_output=f"```lean\n{tactic}\n```",
                    tactic=tactic,
                    proposal=tactic,
                    valid=True,
                    nonempty=True,
                    contains_sorry=False,
                    verification_attempted=True,
                    verification_latency_ms=round(rng.uniform(50, 900), 3),
                )
                if rng.random() < skill * (1.2 - difficulty):
                    outcome, vdomain, sub = VERIFY[0]
                else:
                    outcome, vdomain, sub = VERIFY[1 + rng.randrange(len(VERIFY) - 1)]
                rec.update(
                    verification_outcome=outcome,
                    verification_success=outcome == "closed",
                    verification_error_kind=None if vdomain is None else outcome,
                    verification_error_domain=vdomain,
                    verification_error_subkind=sub,
                    verification_detail=None if vdomain is None else f"{outcome}: line 3",
                )
            if hostile_item and row is rows[0] and k == 0:
                rec["raw_output"] = HOSTILE
                rec["tactic"] = rec["proposal"] = "</script><script>alert(1)</script>"
            records.append(rec)
    header = _header(
        TACTIC_SUITE,
        TACTIC_SUITE,
        samples,
        items,
        index,
        model,
        "synthetic",
        hashlib.sha256(f"rows-{seed}-{items}".encode()).hexdigest(),
    )
    return _finish(out, header, records, samples, TacticSummary(), write_summary)


EQUATION_GROUPS = [  # (problem_set, domain) as the llm_srbench task records them
    ("lsr_transform", None),
    ("lsr_synth", "chem_react"),
    ("lsr_synth", "bio_pop_growth"),
    ("lsr_synth", "phys_osc"),
    ("lsr_synth", "matsci"),
]


def equation_run(
    out: Path,
    *,
    problems: int = 15,
    samples: int = 2,
    seed: int = 1,
    with_samples: bool = True,
    model: str = "gpt-4o-mini",
) -> Path:
    """An LLM-SRBench-shaped run: records carry the paper's metrics and a few prediction pairs."""
    rng = random.Random(seed)
    records = []
    for i in range(problems):
        pset, domain = EQUATION_GROUPS[i % len(EQUATION_GROUPS)]
        item = f"{pset}_{domain or 'feynman'}_{i:03d}"
        quality = rng.random()
        for k in range(samples):
            noise = 10 ** rng.uniform(-6, 0) * (1.5 - quality)
            nmse_id = noise
            nmse_ood = None if pset == "lsr_transform" else noise * rng.uniform(1, 30)
            rec: dict[str, Any] = {
                "record_schema_version": 1,
                "item_id": item,
                "sample_index": k,
                "attempt_seed": rng.randrange(2**31),
                "suite": "llm_srbench",
                "adapter": "openai",
                "model": model,
                "config_hash": "e" * 64,
                "prompt_hash": f"p{i}",
                "raw_output": "def equation(x, v, params):\n    return params[0] * x + params[1] * v",
                "proposal": "params[0] * x + params[1] * v",
                "equation": "params[0]*x + params[1]*v",
                "valid": True,
                "nonempty": True,
                "contains_sorry": None,
                "latency_ms": round(rng.lognormvariate(7.0, 0.5), 3),
                "model_calls": 3,
                "cached": False,
                "generation_error_kind": None,
                "generation_error_domain": None,
                "verification_mode": "equation",
                "verification_attempted": True,
                "verification_success": nmse_id < 1e-3,
                "verification_outcome": "fitted",
                "verification_latency_ms": 12.0,
                "problem_set": pset,
                "problem_group": f"{pset}_{domain}" if domain else pset,
                "domain": domain,
                "has_ood": nmse_ood is not None,
                "nmse_id": nmse_id,
                "nmse_ood": nmse_ood,
                "acc_tau_id": nmse_id < 1e-3,
                "acc_tau_ood": None if nmse_ood is None else nmse_ood < 1e-3,
                "symbolic_match": (nmse_id < 1e-5) if pset == "lsr_transform" else None,
            }
            if with_samples:
                ys = [rng.uniform(-5, 5) for _ in range(40)]
                rec["pred_sample_id"] = [[y, y + rng.gauss(0, (noise**0.5) * 3)] for y in ys]
            records.append(rec)
    header = _header(
        "llm_srbench",
        "llm_srbench",
        samples,
        problems,
        None,
        model,
        "equation",
        hashlib.sha256(f"problems-{problems}".encode()).hexdigest(),
    )
    return _finish(out, header, records, samples, None, True)
