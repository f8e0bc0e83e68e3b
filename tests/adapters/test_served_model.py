"""The model asked for is the model served: a run against a server that lists its models (OpenAI's
`/v1/models`, Ollama's `/api/tags`) and not the one asked for stops before any model call, with one
sentence naming both; --lsrb-allow-model-alias lets a gateway's alias through.

Against the local server that speaks Ollama's native and OpenAI-compatible APIs (fakes/); the
same check against the real llama.cpp server is in tests/integration/test_llama_server_runs.py."""

from __future__ import annotations

import pytest
from fakes.ollama_server import FakeOllama
from lsrb_testing import RunSuite


@pytest.mark.parametrize(("adapter", "path"), [("openai", "/v1"), ("ollama", "")])
def test_a_model_the_server_does_not_list_stops_the_run_before_any_call(
    run_suite: RunSuite, adapter: str, path: str
) -> None:
    with FakeOllama(models=("smollm2:135m",)) as fake:
        args = [f"--lsrb-adapter={adapter}", f"--lsrb-base-url={fake.url}{path}", "--lsrb-model=gpt-4o"]
        result = run_suite(*args, "--lsrb-max-items=2")
        assert result.returncode == 4, result.stdout + result.stderr
        assert not fake.chat_requests() and not result.attempts()
        (line,) = [x for x in (result.stdout + result.stderr).splitlines() if "--lsrb-model:" in x]
        assert "'gpt-4o'" in line and "smollm2:135m" in line and "--lsrb-allow-model-alias" in line
        # with the option the run goes ahead and asks for the name (this server, like Ollama
        # itself, has no such alias and refuses each call: a gateway in front of it would answer)
        allowed = run_suite(*args, "--lsrb-max-items=2", "--lsrb-allow-model-alias")
        assert "--lsrb-model:" not in allowed.stdout + allowed.stderr
        assert len(fake.chat_requests()) == 2 and len(allowed.attempts()) == 2
