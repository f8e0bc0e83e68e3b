"""The analyses beside Table 1: search-progress medians by model call, in-domain vs OOD per group,
symbolic vs OOD accuracy, complexity buckets; then real mock runs of two methods side by side in
one report (`lsrb report RUN MORE_RUN`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_lsrb.report import report_command
from pytest_lsrb.srbench.tables.analyses import Analyses, bucket_of

SUITE = Path(__file__).resolve().parents[2] / "suites" / "llm_srbench"


def rec(**kw: Any) -> dict[str, Any]:
    base = {
        "sr_method": "sga",
        "problem_group": "lsr_synth_phys_osc",
        "problem_set": "lsr_synth",
        "has_ood": True,
    }
    return {**base, **kw}


def test_progress_medians_take_each_attempts_best_so_far_at_each_checkpoint() -> None:
    a = Analyses()
    a.add(rec(model_calls=12, search_progress=[[0, 1.0, 2.0, 3.0], [3, 0.5, 0.6, 0.7], [11, 0.1, 0.2, None]]))
    a.add(rec(model_calls=12, search_progress=[[0, 0.8, 0.9, 1.0]]))
    a.add(rec(model_calls=12, search_progress=[[4, 0.3, 0.3, 0.3]]))  # no hypothesis before call 4
    curve = a.finish()["sr_search_progress"]["sga"]
    assert curve["calls"] == [0, 1, 2, 5, 10]
    assert curve["attempts"] == [2, 2, 2, 3, 3]
    # at call 5: attempt 1 has 0.5 (from call 3), attempt 2 0.8, attempt 3 0.3 -> median 0.5
    assert curve["train_nmse_median"][3] == 0.5
    assert curve["test_nmse_median"][0] == pytest.approx((2.0 + 0.9) / 2)
    assert curve["runs"] == 3


def test_id_vs_ood_symbolic_vs_ood_and_complexity() -> None:
    a = Analyses()
    a.add(rec(nmse_id=0.1, nmse_ood=1.0, acc_tau_ood=True, symbolic_match=True))
    a.add(rec(nmse_id=None, nmse_ood=None, acc_tau_ood=False, symbolic_match=False))  # invalid: +inf
    a.add(rec(nmse_id=0.3, nmse_ood=3.0, acc_tau_ood=False, symbolic_match=None))
    out = a.finish()
    assert out["sr_id_vs_ood"]["lsr_synth_phys_osc"] == {
        "attempts": 3,
        "median_nmse_id": 0.3,
        "median_nmse_ood": 3.0,
    }
    assert out["sr_symbolic_vs_ood"]["lsr_synth_phys_osc"]["symbolic_accuracy_pct"] == 50.0
    assert out["sr_symbolic_vs_ood"]["lsr_synth_phys_osc"]["acc_tau_ood_pct"] == pytest.approx(33.33)
    assert out["sr_complexity"] is None  # neither set run
    a.add(
        rec(
            problem_set="lsr_transform", truth_complexity=7, symbolic_match=True, acc_tau_id=True, nmse_id=0.0
        )
    )
    assert a.finish()["sr_complexity"] is None  # only one of the two sets
    a.add(rec(problem_set="feynman", truth_complexity=33, symbolic_match=False, nmse_id=0.5))
    complexity = a.finish()["sr_complexity"]
    assert complexity["lsr_transform"]["6-10"]["symbolic_accuracy_pct"] == 100.0
    assert complexity["feynman"]["31+"]["median_nmse_id"] == 0.5
    assert bucket_of(5) == "1-5" and bucket_of(30) == "21-30"


@pytest.mark.slow
def test_report_shows_methods_side_by_side_with_the_analyses(run_suite: Any, tmp_path: Path) -> None:
    dirs = []
    for method, budget in (("direct", 2), ("sga", 16)):
        out = tmp_path / method
        result = run_suite(
            f"--lsrb-sr-method={method}",
            f"--lsrb-sr-budget={budget}",
            "--lsrb-goal-slice=name:gen-CRK",
            "--lsrb-outcome=record",
            suite=SUITE,
            out=out,
            timeout=600,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        summary = json.loads((out / "summary.json").read_text())
        assert summary["sr_search_progress"][method]["runs"] == 2
        assert set(summary["sr_id_vs_ood"]) == {"lsr_synth_chem_react"}
        dirs.append(out)
    lines = report_command(dirs[0], tmp_path / "report.html", None, [dirs[1]])
    html = (tmp_path / "report.html").read_text()
    assert lines[-1].startswith("wrote ")
    section = html[html.index("<section id='methods'>") :]
    assert "direct · mock" in section and "sga · mock" in section
    # Fig. 4 needs an LSR-Transform and a Feynman set; with one synth group it is not drawn as an
    # empty panel (#50 item 5), and one line says which and why.
    assert section.count("<figure>") == 3
    for title in ("Search progress", "Fig. 5", "Fig. 6"):
        assert title in section
    assert "Not drawn, no data in these runs: Complexity" in section
    assert "Fig. 4 needs symbolic verdicts on both" in section


def test_lsrb_report_prints_table1_in_the_papers_layout(
    run_suite: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_lsrb.cli import main

    dirs = []
    for name in ("a", "b"):  # two runs of one method: the paper's rows are told apart by folder
        out = tmp_path / name
        result = run_suite(
            "--lsrb-sr-method=direct",
            "--lsrb-sr-budget=1",
            "--lsrb-goal-slice=name:gen-CRK",
            "--lsrb-outcome=record",
            suite=SUITE,
            out=out,
            timeout=600,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        dirs.append(out)
    summary = json.loads((dirs[0] / "summary.json").read_text())
    ((key, row),) = summary["srbench_table"].items()
    capsys.readouterr()
    html = str(tmp_path / "r.html")
    assert main(["report", str(dirs[0]), str(dirs[1]), "--table1", "paper", "-o", html]) == 0
    printed = capsys.readouterr().out
    table = printed[printed.index("Table 1 (the paper's layout)") :].splitlines()
    assert "SA judged by: the paper's rule" in printed
    head, sub, first, second, nmse = table[1:6]
    assert "Chemistry" in head or "chem" in head.lower(), head
    assert sub.split() == ["|", "SA", "Acc0.1", "NMSE"]
    assert first.startswith("direct (a)") and second.startswith("direct (b)")
    # The cells are the summary's own numbers (one rule: srbench.tables.table's rows).
    cells = first.split("|")[1].split()
    assert float(cells[0]) == pytest.approx(row["symbolic_accuracy_pct"], abs=0.005)
    assert float(cells[1]) == pytest.approx(row["acc_tau_id_pct"], abs=0.005)
    assert nmse.startswith("(NMSE = median")
    assert "Table 1 of" not in printed  # the paper's layout only
    assert main(["report", str(dirs[0]), "--table1", "ours", "-o", html]) == 0
    ours = capsys.readouterr().out
    assert f"Table 1 of {dirs[0]}" in ours and "Table 1 (the paper's layout)" not in ours
    assert key.rpartition(":")[2] in ours
