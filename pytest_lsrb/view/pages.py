"""The pages of `lsrb view`: the runs under the folder, one run (drawn and kept up to date by
view.js from its JSON), and two runs side by side. Every value that came from a run is escaped
here (`report.charts.esc`) or travels as escaped JSON that view.js puts in the DOM as text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from pytest_lsrb.report.charts import esc
from pytest_lsrb.report.items import json_for_script

SHOWN_ROWS = 1000  # attempts listed on the comparison page (the JSON has up to data.MAX_ROWS)


def page(title: str, body: str, script: bool = False) -> str:
    scripts = ("/static/durations.js", "/static/view.js")  # durations.js: the report's, shared
    js = "".join(f"<script src='{src}'></script>" for src in scripts) if script else ""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{esc(title)}</title><link rel='stylesheet' href='/static/view.css'></head><body>"
        f"<header><a href='/'>lsrb view</a> <span class='sub'>{esc(title)}</span></header>"
        f"<main>{body}</main>{js}</body></html>\n"
    )


def _pct(value: Any) -> str:
    return "–" if not isinstance(value, (int, float)) else f"{value * 100:.1f}%"


def index_page(root: str, runs: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for r in runs:
        link = "/run?" + urlencode({"name": r["name"]})
        done = f"{r.get('attempts', 0)}/{r.get('expected') if r.get('expected') is not None else '?'}"
        cells = [
            f"<a href='{esc(link)}' class='mono'>{esc(r['name'])}</a>",
            esc(r.get("suite")),
            esc(r.get("model")),
            f"<span class='badge'>{esc(r.get('status'))}</span>",
        ]
        rows.append(
            f"<tr class='st-{esc(r.get('status'))}'>{''.join(f'<td>{c}</td>' for c in cells)}"
            f"<td class='num'>{esc(done)}</td><td class='num'>{esc(_pct(r.get('success_rate')))}</td>"
            f"<td>{esc(r.get('started') or '–')}</td></tr>"
        )
    options = "".join(f"<option value='{esc(r['name'])}'>{esc(r['name'])}</option>" for r in runs)
    compare = (
        "<form method='get' action='/compare' class='compare'><label>baseline <select name='a'>"
        f"{options}</select></label> <label>current <select name='b'>{options}</select></label> "
        "<button type='submit'>compare item by item</button></form>"
        if len(runs) > 1
        else ""
    )
    table = (
        "<table id='runs'><tr><th>run</th><th>suite</th><th>model</th><th>status</th>"
        "<th class='num'>attempts</th><th class='num'>success</th><th>started</th></tr>"
        f"{''.join(rows)}</table>"
        if rows
        else f"<p class='note'>No runs under {esc(root)} yet.</p>"
    )
    body = f"<h1>Runs under <span class='mono'>{esc(root)}</span></h1>{compare}{table}"
    return page(f"runs under {root}", body)


def run_page(name: str, state: Mapping[str, Any]) -> str:
    """The run's page: its first state embedded (escaped JSON), drawn by view.js, which then
    asks for the state again every few seconds while the run goes on."""
    body = (
        f"<h1 class='mono' id='run-name'>{esc(name)}</h1>"
        "<div id='status'></div><div id='cards' class='cards'></div>"
        "<h2>In flight</h2><div id='in-flight'></div>"
        "<h2>Attempts <span id='count' class='note'></span></h2>"
        "<table id='attempts'><thead><tr><th>item</th><th>sample</th><th>outcome</th><th>answer</th>"
        "<th>verdict</th><th class='num'>latency</th><th class='num'>tokens</th></tr></thead>"
        "<tbody></tbody></table>"
        "<noscript><p class='warn'>This page is drawn by JavaScript; `lsrb report` writes a "
        "static one.</p></noscript>"
        f"<script type='application/json' id='lsrb-state'>{json_for_script(state)}</script>"
    )
    return page(f"run {name}", body, script=True)


def compare_page(state: Mapping[str, Any], only_changed: bool, query: Mapping[str, str]) -> str:
    b, c = state["baseline"], state["current"]
    deltas = "".join(
        f"<tr><th>{esc(d['label'])}</th><td class='num'>{esc(d['baseline'])}</td>"
        f"<td class='num'>{esc(d['current'])}</td><td class='num {esc(d['verdict'])}'>{esc(d['change'])}</td>"
        f"<td class='{esc(d['verdict'])}'>{esc(d['verdict'])}</td></tr>"
        for d in state["deltas"]
    )
    rows = [r for r in state["rows"] if not only_changed or r["before"] != r["after"]]
    lines = "".join(
        f"<tr class='flip-{esc(r['flip'])}'><td class='mono'>{esc(r['item'])}</td><td>s{esc(r['k'])}</td>"
        f"<td><span class='badge b-{esc(r['before'])}'>{esc(r['before'] or '–')}</span></td>"
        f"<td><span class='badge b-{esc(r['after'])}'>{esc(r['after'])}</span></td>"
        f"<td class='mono answer'>{esc(r['before_answer'] or '')}</td>"
        f"<td class='mono answer'>{esc(r['after_answer'] or '')}</td><td>{esc(r['flip'] or '')}</td></tr>"
        for r in rows[:SHOWN_ROWS]
    )
    other = {**query, "changed": "0" if only_changed else "1"}
    toggle = (
        f"<a href='/compare?{esc(urlencode(other))}'>"
        f"{'show every attempt' if only_changed else 'show only attempts whose outcome changed'}</a>"
    )
    more = len(rows) - SHOWN_ROWS
    note = f"<p class='note'>… and {more} more (lsrb report --baseline has them all)</p>" if more > 0 else ""
    same = "" if b["hash"] == c["hash"] else "<p class='warn'>The runs selected different items.</p>"
    body = (
        f"<h1>Compared: <span class='mono'>{esc(b['name'])}</span> → "
        f"<span class='mono'>{esc(c['name'])}</span></h1>"
        f"<p class='note'>{esc(b['model'])} → {esc(c['model'])}</p>{same}"
        "<table id='deltas'><tr><th>metric</th><th class='num'>baseline</th><th class='num'>current</th>"
        f"<th class='num'>change</th><th></th></tr>{deltas}</table>"
        f"<h2>Items whose pass@1 moved</h2><p id='flips'>regressed: {len(state['regressed'])} · "
        f"improved: {len(state['improved'])}</p>"
        f"<h2>Attempts side by side</h2><p>{toggle}</p>"
        "<table id='side-by-side'><tr><th>item</th><th>sample</th><th>baseline</th><th>current</th>"
        f"<th>baseline answer</th><th>current answer</th><th>item</th></tr>{lines}</table>{note}"
    )
    return page(f"{b['name']} vs {c['name']}", body)


def error_page(status: int, sentence: str) -> str:
    return page(f"{status}", f"<h1>{status}</h1><p>{esc(sentence)}</p>")
