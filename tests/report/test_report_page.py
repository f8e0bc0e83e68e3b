"""The HTML page: self-contained, escaped, deterministic, and showing each section it promises."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

from synthetic_runs import HOSTILE, equation_run, tactic_run

from pytest_lsrb.cli import main
from pytest_lsrb.report import build_report, load_run

SCRIPT = re.compile(r"<script([^>]*)>(.*?)</script>", re.S)


def scripts(html: str) -> list[tuple[str, str]]:
    return SCRIPT.findall(html)


def payload(html: str) -> dict:
    _attrs, body = next((a, b) for a, b in scripts(html) if "lsrb-items" in a)
    data: dict = json.loads(body)
    return data


def test_hostile_model_output_stays_data(tactic_pair: tuple[Path, Path]) -> None:
    base, cur = tactic_pair
    html = build_report(load_run(cur), load_run(base))
    # Exactly our two script elements: the JSON data and the report's code.
    assert html.count("<script") == 2 and html.count("</script") == 2
    assert "<script>alert" not in html
    assert "<img" not in html and 'onerror="' not in html
    data_attrs, data_body = scripts(html)[0]
    assert "application/json" in data_attrs
    assert "<" not in data_body and ">" not in data_body and "&" not in data_body
    rows = payload(html)["rows"]
    cols = payload(html)["columns"]
    hostile = [r for r in rows if r[cols.index("item")] == "hostile<script>item" and r[cols.index("k")] == 0]
    assert hostile and hostile[0][cols.index("raw")] == HOSTILE  # intact, byte for byte, once parsed
    assert hostile[0][cols.index("answer")] == "</script><script>alert(1)</script>"
    # Names from the run appear escaped in the HTML parts (here a tag in the breakdowns).
    assert "hostile<script>item" not in html and "<i>tag</i>" not in html
    assert "&lt;i&gt;tag&lt;/i&gt;" in html


def test_the_page_fetches_nothing_and_runs_only_its_own_script(tactic_pair: tuple[Path, Path]) -> None:
    html = build_report(load_run(tactic_pair[1]))
    assert not re.search(r"""(?:src|href|action|xlink:href)\s*=\s*['"]?\s*(?:https?:)?//""", html, re.I)
    assert "url(" not in html and "<link" not in html and "@import" not in html
    code = scripts(html)[1][1]
    digest = base64.b64encode(hashlib.sha256(code.encode("utf-8")).digest()).decode()
    csp = re.search(r"Content-Security-Policy' content=\"([^\"]+)\"", html)
    assert csp is not None
    assert "default-src 'none'" in csp.group(1) and f"script-src 'sha256-{digest}'" in csp.group(1)


def test_the_same_run_gives_the_same_page(tmp_path: Path) -> None:
    run = tactic_run(tmp_path / "r", items=12, samples=3, seed=4)
    assert build_report(load_run(run)) == build_report(load_run(run))


def test_a_tactic_report_shows_every_section(tactic_pair: tuple[Path, Path]) -> None:
    base, cur = tactic_pair
    current = load_run(cur)
    html = build_report(current, load_run(base))
    assert current.selected_rows_hash in html
    for section in (
        "id='run'",
        "id='headline'",
        "id='charts'",
        "id='comparison'",
        "id='breakdowns'",
        "id='items'",
        "id='config'",
    ):
        assert section in html
    assert "Generation errors (no usable answer" in html or "generation errors: none" in html
    for caption in (
        "pass@k over k — verified",
        "Generation latency",
        "Over time: attempts finished and successes",
        "Verification errors",
        "By repository",
        "By Lean version",
        "By tag",
    ):
        assert caption in html
    assert "id='equations'" not in html  # no equation metrics in a tactic run
    rows = payload(html)["rows"]
    assert len(rows) == len(current.records)
    assert payload(html)["baseline"] is True
    prompts = payload(html)["prompts"]
    assert prompts and all("── user ──" in p for p in prompts.values())


def test_an_equation_report_has_table1_and_scatter_plots(equation_pair: tuple[Path, Path]) -> None:
    base, cur = equation_pair
    html = build_report(load_run(cur), load_run(base))
    assert "id='table1'" in html and "id='table1-ood'" in html and "id='scatter'" in html
    for group in (
        "LSR-Transform",
        "LSR-Synth Chemistry",
        "LSR-Synth Biology",
        "LSR-Synth Physics",
        "LSR-Synth MatSci",
    ):
        assert group in html
    table = html[html.index("id='table1'") : html.index("id='table1-ood'")]
    assert table.index("baseline model-a") < table.index("gpt-4o-mini")  # baseline row first


def test_equation_records_without_samples_skip_the_scatter_plots(tmp_path: Path) -> None:
    html = build_report(load_run(equation_run(tmp_path / "eq", problems=4, with_samples=False)))
    assert "id='table1'" in html and "id='scatter'" not in html
    assert "carry no prediction samples" in html


def test_lsrb_report_writes_the_page_and_prints_the_comparison(
    mock_run: Path, tmp_path: Path, capsys: object
) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(mock_run), "--baseline", str(mock_run), "-o", str(out)]) == 0
    printed = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "items flipped: 0 regressed, 0 improved" in printed and f"wrote {out}" in printed
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "pass@k over k — judged pass" in html
    assert main(["report", str(mock_run)]) == 0
    assert (mock_run / "report.html").exists()
    assert main(["report", str(tmp_path / "nope")]) == 2


def test_a_directory_with_only_a_summary_still_reports_its_metrics(tmp_path: Path) -> None:
    run = tactic_run(tmp_path / "r", items=10, samples=4)
    (tmp_path / "only").mkdir()
    (tmp_path / "only" / "summary.json").write_bytes((run / "summary.json").read_bytes())
    current = load_run(tmp_path / "only")
    assert current.records == [] and current.warnings == []
    html = build_report(current)
    assert html.count("<circle") == 3  # pass@1, @2, @4 from the summary's ladder
    assert current.selected_rows_hash in html and payload(html)["rows"] == []
