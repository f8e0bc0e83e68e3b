"""Fixtures for `lsrb view`'s tests: real runs in a folder (the mock, and a fake server whose model
answers with hostile text), and the view's server over them on a free port, in this process."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fakes.ollama_server import FakeOllama
from view_hostile import HOSTILE

from pytest_lsrb import api
from pytest_lsrb.view.server import ViewServer


@pytest.fixture(scope="session")
def runs_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`base` (the mock) and, in a folder with a hostile name, `cur` (a model answering HOSTILE),
    the same 6 items of the tactic suite."""
    root = tmp_path_factory.mktemp("runs")
    api.run("goal_to_tactic_proposal_v1", max_items=6, outcome="record", output_dir=root / "base")
    with FakeOllama(reply=HOSTILE) as fake:
        api.run(
            "goal_to_tactic_proposal_v1",
            adapter="ollama",
            model="qwen2.5:7b",
            base_url=fake.url,
            max_items=6,
            outcome="record",
            output_dir=root / "we<i>rd & 'name'" / "cur",
        )
    return root


@pytest.fixture
def serve() -> Iterator[Callable[..., ViewServer]]:
    """`serve(folder, on_api=None)`: the view's server on a free loopback port, stopped after."""
    started: list[ViewServer] = []

    def start(folder: Path, on_api: Callable[[str], None] | None = None) -> ViewServer:
        server = ViewServer(folder, 0, on_api)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.shutdown()
        server.server_close()
