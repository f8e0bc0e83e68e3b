"""`lsrb view`'s server (issue #50, item 4): it lists the runs under a folder, shows one run and
two compared, as the report counts them; it answers only requests addressed to itself on the
loopback interface, names runs only from its walk of the folder (no path a request makes up
reaches a file), and every value from a run reaches the page escaped."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from view_hostile import HOSTILE

from pytest_lsrb.report import load_run
from pytest_lsrb.view.runs import find_runs, run_named

CUR = "we<i>rd & 'name'/cur"


def get(
    server: Any, target: str, host: str | None = None, method: str = "GET"
) -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.putrequest(method, target, skip_host=True)
    if host is not False:
        conn.putheader("Host", str(host) if host is not None else f"127.0.0.1:{server.port}")
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read().decode("utf-8")
    conn.close()
    return resp.status, dict(resp.getheaders()), body


def test_it_lists_the_runs_and_shows_one_as_the_report_counts_it(runs_folder: Path, serve: Any) -> None:
    server = serve(runs_folder)
    status, headers, html = get(server, "/")
    assert status == 200 and "script-src 'self'" in headers["Content-Security-Policy"]
    assert "we&lt;i&gt;rd &amp; &#x27;name&#x27;/cur" in html and "<i>rd" not in html
    listed = json.loads(get(server, "/api/runs")[2])
    assert {r["name"] for r in listed} == {"base", CUR}
    state = json.loads(get(server, "/api/run?name=" + quote(CUR))[2])
    run = load_run(runs_folder / "we<i>rd & 'name'" / "cur")
    assert run.summary is not None
    assert state["headline"]["attempts"] == len(run.records) == 6
    assert state["headline"]["success_rate"] == run.summary["success_rate"]  # the report's number
    assert state["headline"]["unreadable"] == run.summary["unreadable_answers"]
    assert state["running"] is False and state["finished"] is True
    assert {row[state["columns"].index("answer")] for row in state["rows"]} <= {
        HOSTILE,
        HOSTILE.split("\n")[0],
    }


def test_a_page_never_holds_a_runs_text_as_markup(runs_folder: Path, serve: Any) -> None:
    server = serve(runs_folder)
    _, _, page = get(server, "/run?name=" + quote(CUR))
    assert "<script>document" not in page and "<img src=x" not in page
    assert "\\u003cscript\\u003e" in page  # the state travels as escaped JSON (view.js: textContent)
    _, _, compared = get(server, "/compare?a=base&b=" + quote(CUR))
    assert "<script>document" not in compared and "&lt;script&gt;document" in compared
    assert "regressed: " in compared


@pytest.mark.parametrize(
    "target",
    [
        "/run?name=../../etc",
        "/run?name=/etc/passwd",
        "/run?name=base/../../x",
        "/run?name=%2e%2e%2fbase",
        "/run?name=",
        "/run",
        "/compare?a=base&b=../x",
        "/static/../server.py",
        "/static/view.js/../../data.py",
        "/etc/passwd",
    ],
)
def test_no_path_a_request_makes_up_reaches_a_file(runs_folder: Path, serve: Any, target: str) -> None:
    status, _, body = get(serve(runs_folder), target)
    assert status == 404 and "import" not in body


def test_a_link_out_of_the_folder_is_not_followed(runs_folder: Path, tmp_path: Path, serve: Any) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "outside").symlink_to(runs_folder / "base", target_is_directory=True)
    assert find_runs(folder) == [] and run_named(folder, "outside") is None
    assert get(serve(folder), "/run?name=outside")[0] == 404


@pytest.mark.parametrize(
    "host", ["evil.example:80", "127.0.0.1", "localhost:1", "127.0.0.1.nip.io", "", False]
)
def test_only_requests_addressed_to_itself_are_answered(runs_folder: Path, serve: Any, host: Any) -> None:
    """A page of another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own
    name in Host: refused, as is a request without one."""
    server = serve(runs_folder)
    status, _, body = get(server, "/api/runs", host=host)
    assert status == 421 and "base" not in body
    for good in (f"localhost:{server.port}", f"127.0.0.1:{server.port}"):
        assert get(server, "/api/runs", host=good)[0] == 200


def test_it_only_shows(runs_folder: Path, serve: Any) -> None:
    server = serve(runs_folder)
    for method in ("POST", "PUT", "DELETE"):
        assert get(server, "/", method=method)[0] == 405
    assert server.server_address[0] == "127.0.0.1"


def test_a_folder_that_is_not_there_is_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_lsrb.cli import main

    assert main(["view", str(tmp_path / "nope"), "--port", "0"]) == 2
    assert "is not a folder" in capsys.readouterr().err
