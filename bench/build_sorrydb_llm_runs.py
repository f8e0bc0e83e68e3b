"""Build tests/tactic/data/sorrydb_llm_runs.jsonl.gz from SorryDB's own recorded runs.

SorryDB (github.com/SorryDB/SorryDB, Apache-2.0) keeps, at commit 71959ed (the commit the
project's SorryDB baselines cite), the raw output of its `llm` strategy
(sorrydb/strategies/llm_strategy.py, one prompt, one answer) under
`intermediate_experiment_outputs/<model>/<run>_llm/`: `result.json` holds, per sorry, the proof
SorryDB extracted from the answer (`extract_proof_from_diff` in sorrydb/utils/sorry_extraction.py)
and its checker's verdict (`proof_verified`, `verification_message`);
`logs/process_single_sorry/<id>.log` holds the answer itself, logged as `Full LLM response:`.
Runs whose logs hold no answer (the two older DeepSeek runs) are left out.

What SorryDB sent with each answer is the file up to the sorry's last line (`context_lines =
file_text.splitlines()[: loc.end_line]`; the last 300 of them for Kimina and Goedel): the files
are read here from the repositories at the rows' commits, where a git directory holds that
commit (a commit no mirror holds leaves the row without a source; it is kept, read without).

Each row is assigned to `dev` or `unseen` by a fixed hash, before the reader was changed:
`unseen` when int(sha256("<family key>:<sorry id>"), 16) % 3 == 0. A model's repeated runs on one
sorry (near-identical answers) land together.

Nothing here reads an answer: the reference is SorryDB's `proof` as recorded.

    python bench/build_sorrydb_llm_runs.py --sorrydb /path/to/SorryDB.git --mirrors /work/.mirror

`--mirrors DIR` holds one git directory per repository as `DIR/<owner>+<name>/repo` (or
`DIR/<owner>/<name>`, a clone). The output's first line describes it (`meta`), then one line per
source file (`source`) and one per answer (`answer`).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

COMMIT = "71959ed"
OUT = Path(__file__).resolve().parents[1] / "tests/tactic/data/sorrydb_llm_runs.jsonl.gz"
# SorryDB's folder name -> (family key, the model as SorryDB's logs name it)
MODELS = {
    "claude": ("claude-sonnet-4.5", "anthropic claude-sonnet-4-5"),
    "gemini": ("gemini-3-flash", "google gemini-3-flash-preview"),
    "deepseek": ("deepseek-prover-v2-671b", "openrouter deepseek/deepseek-prover-v2"),
    "kimina": ("kimina-prover-72b", "huggingface AI-MO/Kimina-Prover-72B:featherless-ai"),
}
TRUNCATED = {"kimina": 300}  # llm_strategy.py MAX_CONTEXT_LINES for is_kimina / is_goedel
_LOG_LINE = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] \[[A-Za-z_]+\] ", re.M)
_ERROR = re.compile(r"error(?:\([\w.]+\))?: ([^\n]*)")


def split_of(key: str) -> str:
    return "unseen" if int(hashlib.sha256(key.encode()).hexdigest(), 16) % 3 == 0 else "dev"


def _git(gitdir: Path, *args: str) -> str | None:
    done = subprocess.run(["git", "-C", str(gitdir), *args], capture_output=True, check=False)
    return done.stdout.decode("utf-8") if done.returncode == 0 else None


def _logged(log: str, label: str) -> str | None:
    """The last text logged after `label` up to the next log line (the logger adds one newline)."""
    found = list(re.finditer(rf"\] \[INFO\] {re.escape(label)}", log))
    if not found:
        return None
    start = found[-1].end()
    after = _LOG_LINE.search(log, start)
    text = log[start : after.start() if after else len(log)]
    return text[:-1] if text.endswith("\n") else text


def checker_errors(message: str | None, limit: int = 4) -> list[str]:
    """The checker's error headlines (one line each, at most 160 characters), or its message's
    first line when it names no Lean error (`Expected one less sorry in modified file`)."""
    if not message:
        return []
    heads = list(dict.fromkeys(m.group(1).strip()[:160] for m in _ERROR.finditer(message)))
    return heads[:limit] or [message.strip().split("\n", 1)[0][:160]]


def _mirror(mirrors: Path, remote: str) -> Path | None:
    owner, name = remote.rstrip("/").removesuffix(".git").split("/")[-2:]
    for candidate in (mirrors / f"{owner}+{name}" / "repo", mirrors / owner / name):
        if candidate.exists():
            return candidate
    return None


def _licence(gitdir: Path, commit: str) -> str | None:
    names = (_git(gitdir, "ls-tree", "--name-only", commit) or "").split()
    for name in names:
        if name.upper().startswith(("LICENSE", "LICENCE", "COPYING")):
            head = " ".join((_git(gitdir, "show", f"{commit}:{name}") or "").split())[:200]
            for known in ("Apache License", "MIT License", "BSD"):
                if known in head:
                    return known.replace(" License", "").replace("Apache", "Apache-2.0")
            return "other"
    return None


def build(sorrydb: Path, mirrors: Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    runs = [
        line
        for folder in MODELS
        for line in (
            _git(
                sorrydb, "ls-tree", "-d", "--name-only", COMMIT, f"intermediate_experiment_outputs/{folder}/"
            )
            or ""
        ).split()
        if line.endswith("_llm")
    ]
    answers: list[dict[str, Any]] = []
    sources: dict[str, dict[str, Any]] = {}
    for run in sorted(runs):
        folder = run.split("/")[1]
        family = MODELS[folder][0]
        results = json.loads(_git(sorrydb, "show", f"{COMMIT}:{run}/result.json") or "[]")
        for entry in results:
            sorry = entry["sorry"]
            log = _git(sorrydb, "show", f"{COMMIT}:{run}/logs/process_single_sorry/{sorry['id']}.log")
            response = _logged(log, "Full LLM response:\n") if log else None
            if response is None:
                continue
            loc, repo = sorry["location"], sorry["repo"]
            key = f"{repo['remote'].removeprefix('https://github.com/')}@{repo['commit']}:{loc['path']}"
            if key not in sources:
                gitdir = _mirror(mirrors, repo["remote"])
                text = _git(gitdir, "show", f"{repo['commit']}:{loc['path']}") if gitdir else None
                licence = _licence(gitdir, repo["commit"]) if gitdir and text is not None else None
                sources[key] = {"text": text, "licence": licence, "last_line": 0}
            source = sources[key]
            source["last_line"] = max(source["last_line"], loc["end_line"])
            first = max(1, loc["end_line"] - TRUNCATED[folder] + 1) if folder in TRUNCATED else 1
            answers.append(
                {
                    "kind": "answer",
                    "split": split_of(f"{family}:{sorry['id']}"),
                    "family": family,
                    "run": run,
                    "sorry_id": sorry["id"],
                    "repo": repo["remote"],
                    "commit": repo["commit"],
                    "path": loc["path"],
                    "start_line": loc["start_line"],
                    "start_column": loc["start_column"],
                    "end_line": loc["end_line"],
                    "end_column": loc["end_column"],
                    "goal": sorry["debug_info"]["goal"],
                    "source": key if source["text"] is not None and source["licence"] else None,
                    "context_first_line": first,
                    "response": response,
                    "sorrydb_proof": entry.get("proof"),
                    "verified": bool(entry.get("proof_verified")),
                    "checker_errors": checker_errors(entry.get("verification_message")),
                }
            )
    return answers, sources


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sorrydb", type=Path, required=True, help="a git directory of SorryDB")
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    answers, sources = build(args.sorrydb, args.mirrors)
    kept = {
        key: src for key, src in sources.items() if src["text"] is not None and src["licence"] is not None
    }
    meta = {
        "kind": "meta",
        "from": f"github.com/SorryDB/SorryDB@{COMMIT} intermediate_experiment_outputs/*/*_llm "
        "(result.json: proof, proof_verified, verification_message; logs/process_single_sorry: "
        "Full LLM response)",
        "licence": "SorryDB: Apache-2.0; each source file: its repository's licence (`licence`)",
        "models": {key: name for key, name in MODELS.values()},
        "split": 'unseen when int(sha256("<family>:<sorry_id>"), 16) % 3 == 0, else dev',
        "context": "the model saw the source's lines context_first_line..end_line",
        "built_by": "bench/build_sorrydb_llm_runs.py",
    }
    lines = [json.dumps(meta, ensure_ascii=False)]
    for key, src in sorted(kept.items()):
        text = "\n".join(src["text"].split("\n")[: src["last_line"]])
        record = {"kind": "source", "key": key, "licence": src["licence"], "text": text}
        lines.append(json.dumps(record, ensure_ascii=False))
    lines += [json.dumps(row, ensure_ascii=False) for row in answers]
    # mtime 0: the same data gives the same bytes
    with args.out.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as fh:
        fh.write(("\n".join(lines) + "\n").encode("utf-8"))
    missing = sorted(k for k in sources if k not in kept)
    print(f"{len(answers)} answers, {len(kept)} source files kept, {len(missing)} not found: {missing}")


if __name__ == "__main__":
    main()
