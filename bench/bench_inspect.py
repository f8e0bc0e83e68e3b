"""The same N samples through inspect_ai's mockllm and through pytest-lsrb's mock adapter.

Both harnesses get the same rows (bench_overhead's synthetic index of the tactic suite) and the
same rendered system + user prompts; each runs in a fresh process, timed with its peak RSS and
CPU time (best and median of --repeat). inspect_ai is not a dependency of this project: without
it the script says so and exits 0.

inspect_ai runs as a user would set it up for a fast run (INSPECT_FAST below, printed by the
script): no display, no per-sample log or realtime event log (only the eval's header and
results are written), no control-channel server, log level `error`, and 100 samples and
connections in flight. pytest-lsrb writes every attempt's full record
(attempts.jsonl, flushed per attempt) and summary.json, as in any run.

    pip install inspect_ai       # in your own venv; measured with 0.3.285
    python bench/bench_inspect.py [--samples 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
from pathlib import Path

from _util import TACTIC_SUITE, Measured, pytest_cmd, run_measured, synthetic_index

# Run by a fresh interpreter: the rows' prompts as inspect Samples, mockllm answering 'rfl'
# (our mock answers a tactic too), a match() scorer, and eval() with the settings in argv[3].
INSPECT_SCRIPT = """
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

samples = []
with open(sys.argv[1], encoding="utf-8") as fh:
    for line in fh:
        p = json.loads(line)
        messages = [ChatMessageUser(content=p["user"])]
        if p["system"]:
            messages.insert(0, ChatMessageSystem(content=p["system"]))
        samples.append(Sample(id=p["id"], input=messages, target="rfl"))


def answer(input, tools, tool_choice, config):
    # With usage given, mockllm does not count tokens with tiktoken (which downloads its tables).
    out = ModelOutput.from_content(model="mockllm", content="rfl")
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


logs = eval(
    Task(dataset=samples, solver=[generate()], scorer=match()),
    model=get_model("mockllm/model", custom_outputs=answer),
    log_dir=sys.argv[2],
    max_tasks=1,
    **json.loads(sys.argv[3]),
)
assert logs[0].status == "success", logs[0].status
assert logs[0].results.total_samples == len(samples), logs[0].results
"""


def inspect_fast(samples: int) -> dict[str, object]:
    """eval() settings for a fast inspect_ai run (the documented options of inspect_ai 0.3.x)."""
    return {
        "display": "none",  # no terminal UI
        "log_samples": False,  # the log holds the eval's header and results, not every sample
        "log_realtime": False,  # no realtime event log while samples run
        "log_level": "error",
        "ctl_server": False,  # no control-channel HTTP server
        # many samples in flight (mockllm answers at once); all 10,000 at once costs ~1.2 GB
        "max_samples": min(samples, 100),
        "max_connections": min(samples, 100),
    }


def write_prompts(index: Path, out: Path) -> Path:
    """The prompts our tactic task sends for each row of `index`, one JSON object per line."""
    from pytest_lsrb.core.rows import stream_jsonl
    from pytest_lsrb.engine.suite import load_suite
    from pytest_lsrb.tactic.rows import TacticRow
    from pytest_lsrb.tactic.task import build_messages

    suite = load_suite(TACTIC_SUITE)
    with out.open("w", encoding="utf-8") as fh:
        for row in stream_jsonl(index, TacticRow):
            msgs = {m.role: m.content for m in build_messages(suite, row)}
            line = {"id": row.item_id, "system": msgs.get("system"), "user": msgs["user"]}
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    return out


def measure(repeat: int, cmd: list[str], cwd: Path) -> list[Measured]:
    runs = []
    for _ in range(repeat):
        m = run_measured(cmd, cwd)
        if m.returncode != 0:
            raise SystemExit(f"run failed ({m.returncode}): {' '.join(cmd)}\n{m.stdout[-3000:]}")
        runs.append(m)
    return runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if importlib.util.find_spec("inspect_ai") is None:
        print("inspect_ai is not installed: `pip install inspect_ai` to compare (skipped).")
        return
    from importlib.metadata import version

    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        index = synthetic_index(tmp / "index.jsonl", args.samples)
        prompts = write_prompts(index, tmp / "prompts.jsonl")
        script = tmp / "run_inspect.py"
        script.write_text(INSPECT_SCRIPT, encoding="utf-8")
        fast = inspect_fast(args.samples)
        print(f"inspect_ai eval() settings: {json.dumps(fast)}")
        runs = {
            f"inspect_ai {version('inspect_ai')} mockllm": measure(
                args.repeat,
                [sys.executable, str(script), str(prompts), str(tmp / "logs"), json.dumps(fast)],
                tmp,
            ),
            "pytest-lsrb mock, serial": measure(
                args.repeat,
                pytest_cmd(
                    str(TACTIC_SUITE),
                    f"--lsrb-index={index}",
                    f"--lsrb-output-dir={tmp / 'out'}",
                    "--lsrb-overwrite",
                ),
                tmp,
            ),
        }
        print(f"{args.samples} samples, {args.repeat} runs each (fresh process per run)")
        print(f"{'harness':<34} {'best s':>8} {'median s':>9} {'cpu s':>8} {'peak MB':>8}")
        for name, ms in runs.items():
            secs = [m.seconds for m in ms]
            print(
                f"{name:<34} {min(secs):8.2f} {statistics.median(secs):9.2f} "
                f"{min(m.cpu_seconds for m in ms):8.2f} {max(m.peak_rss_mb for m in ms):8.1f}"
            )
        (inspect_runs, lsrb_runs) = runs.values()
        best = min(m.seconds for m in lsrb_runs) / min(m.seconds for m in inspect_runs)
        med = statistics.median(m.seconds for m in lsrb_runs) / statistics.median(
            m.seconds for m in inspect_runs
        )
        cpu = min(m.cpu_seconds for m in lsrb_runs) / min(m.cpu_seconds for m in inspect_runs)
        print(
            f"ratio, pytest-lsrb / inspect_ai: {best:.2f}x wall (best), {med:.2f}x wall (median), "
            f"{cpu:.2f}x cpu (best)"
        )


if __name__ == "__main__":
    main()
