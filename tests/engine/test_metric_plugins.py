"""A metric an installed package declares is a full plug point (issue #49, item 1): its entry
point of `pytest_lsrb.metrics` names a `Metric`, and every consumer reads it from the one table
`engine.metric` keeps, in any process, with nothing imported by hand: summary.json writes it like a
built-in, the pytest gate and `lsrb compare` hold it, the terminal and the report show it, and
`lsrb list` says where it comes from. A broken declaration is one sentence."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsrb_testing import install_distribution

from pytest_lsrb import api
from pytest_lsrb.cli import main as lsrb
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.engine.metric import Metric, every, find, resolve_metric, summary_metrics
from pytest_lsrb.engine.outcomes import answered, judged
from pytest_lsrb.engine.summary import MetricTally
from pytest_lsrb.report import write_report
from pytest_lsrb.tools.plugins import listing

# A package's metric: the characters of the tactic the model proposed, for the tactic suite only.
PLUGIN = """
from pytest_lsrb import Metric, answered

def tactic_chars(record):
    tactic = record.get("tactic")
    return float(len(tactic)) if isinstance(tactic, str) else None

TACTIC_CHARS = Metric(
    "tactic_chars", "tactic length (chars)", "lower", "number", "mean", answered, tactic_chars,
    tasks=("goal_to_tactic_proposal_v1",),
)
NOT_A_METRIC = {"key": "x"}
"""

TACTIC = "goal_to_tactic_proposal_v1"


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    entry_points = "[pytest_lsrb.metrics]\ntactic_chars = tacticlen:TACTIC_CHARS\n"
    return install_distribution(
        tmp_path / "site", "tacticlen", entry_points, {"tacticlen": PLUGIN}, monkeypatch
    )


def test_an_installed_metric_is_read_by_every_consumer(plugin: Path, tmp_path: Path, capsys: Any) -> None:
    result = api.run(TACTIC, max_items=6, output_dir=tmp_path / "a", pytest_args=["-q"])
    summary = result.summary
    assert summary is not None
    want = [len(r["tactic"]) for r in result.records if r.get("tactic") is not None]
    assert summary["tactic_chars"] == pytest.approx(sum(want) / len(want))  # written like a built-in
    # the terminal's table has its row, by its label
    assert f"tactic length (chars)  {summary['tactic_chars']:.3f}" in capsys.readouterr().out
    # the gate in pytest and `lsrb compare` both hold it
    bound = f"tactic_chars={summary['tactic_chars'] / 2}"
    gated = api.run(TACTIC, max_items=6, output_dir=tmp_path / "b", max=bound, pytest_args=["-q"])
    assert gated.exit_code == 6
    assert lsrb(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--max", bound]) == 6
    assert lsrb(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--max", "tactic_chars=1000"]) == 0
    # the report's cards and its comparison
    page = write_report(tmp_path / "b", tmp_path / "r.html", tmp_path / "a").read_text("utf-8")
    assert page.count("tactic length (chars)") >= 2
    block = listing().split("\nmetrics (")[1].split("\n\n")[0]
    assert "tactic_chars" in block and "entry point (tacticlen 1.0)  tacticlen:TACTIC_CHARS" in block
    # another family's runs do not have it
    assert [m.key for m in summary_metrics("llm_srbench")] == []


def test_lsrb_compare_in_a_process_of_its_own_knows_the_metric(plugin: Path, tmp_path: Path) -> None:
    """`lsrb compare` imports nothing of the package's by hand: the entry point is enough."""
    runs = [tmp_path / "a", tmp_path / "b"]
    for where in runs:
        api.run(TACTIC, max_items=3, output_dir=where, pytest_args=["-q"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(plugin), *filter(None, [env.get("PYTHONPATH")])])
    command = [sys.executable, "-m", "pytest_lsrb", "compare", *map(str, runs), "--max", "tactic_chars=0.5"]
    alone = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert alone.returncode == 6, alone.stdout + alone.stderr
    assert "tactic_chars" in alone.stdout


def test_a_declaration_that_is_no_metric_or_another_key_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry_points = "[pytest_lsrb.metrics]\nwrong = badmetric:NOT_A_METRIC\n"
    install_distribution(tmp_path / "one", "badmetric", entry_points, {"badmetric": PLUGIN}, monkeypatch)
    said = r"metric 'wrong' of badmetric 1.0 \('badmetric:NOT_A_METRIC'\) is a dict, not a pytest_lsrb.Metric"
    with pytest.raises(LsrbUsageError, match=said):
        resolve_metric("valid_rate")


def test_an_entry_point_is_named_by_its_metrics_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry_points = "[pytest_lsrb.metrics]\nchars = othername:TACTIC_CHARS\n"
    install_distribution(tmp_path / "two", "othername", entry_points, {"othername": PLUGIN}, monkeypatch)
    with pytest.raises(LsrbUsageError, match="declares the key 'tactic_chars'"):
        find("valid_rate")


def test_a_built_in_key_wins_over_a_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = PLUGIN + '\nVALID = Metric("valid_rate", "mine", "lower", "rate", "rate")\n'
    entry_points = "[pytest_lsrb.metrics]\nvalid_rate = shadow:VALID\n"
    install_distribution(tmp_path / "three", "shadow", entry_points, {"shadow": source}, monkeypatch)
    assert resolve_metric("valid_rate").label == "valid rate"
    lines = [" ".join(line.split()) for line in listing().splitlines()]
    assert "valid_rate entry point (shadow 1.0), shadowed by the built-in shadow:VALID" in lines


# -- the streaming tally is the declaration's value ---------------------------------------------

RECORD = st.fixed_dictionaries(
    {
        "item_id": st.sampled_from(["a", "b", "c", "d"]),
        "valid": st.booleans(),
        "x": st.one_of(st.none(), st.floats(-1e6, 1e6), st.just(math.nan)),
        "generation_error_kind": st.sampled_from([None, None, None, "timeout"]),
    }
)


def _x(record: dict[str, Any]) -> float | None:
    return record.get("x")


def _valid(record: dict[str, Any]) -> bool:
    return bool(record.get("valid"))


DECLARED = [
    Metric("m_mean", "mean", "lower", "number", "mean", answered, _x),
    Metric("m_median", "median", "lower", "number", "median", every, _x),
    Metric("m_p95", "p95", "lower", "number", "p95", judged, _x),
    Metric("m_rate", "rate", "higher", "rate", "rate", judged, _valid),
    Metric("m_pass2", "pass@2", "higher", "rate", "item_mean", judged, _valid, k=2),
]


@given(st.lists(RECORD, max_size=30), st.sampled_from(DECLARED), st.integers(1, 3))
def test_the_summarys_tally_is_the_declarations_value(
    records: list[dict[str, Any]], metric: Metric, samples: int
) -> None:
    for i, record in enumerate(records):
        record["sample_index"] = i
    tally = MetricTally(metric, samples)
    by_item: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        tally.add(record)
        by_item.setdefault(record["item_id"], []).append(record)
    want, _ = metric.value(by_item, samples)
    got = tally.value()
    assert (got is None) == (want is None)
    if want is not None:
        assert got == pytest.approx(want, rel=1e-9, abs=1e-6)
