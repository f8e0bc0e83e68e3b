"""Small builders shared by the adapter tests and benches."""

from __future__ import annotations

from pytest_lsrb.adapters.base import AdapterConfig, GenerationRequest, Message, SamplingConfig


def quick_config(name: str, url: str, **overrides: object) -> AdapterConfig:
    """Short timeouts and backoff so retry tests take milliseconds."""
    values: dict[str, object] = dict(
        name=name,
        model="qwen2.5:7b",
        base_url=url,
        timeout_s=2.0,
        max_retries=3,
        backoff_base_s=0.005,
        backoff_max_s=0.02,
    )
    values.update(overrides)
    return AdapterConfig(**values)


def make_request(
    seed: int = 7, text: str = "n : Nat\n⊢ n + 0 = n", temperature: float = 0.0, max_tokens: int = 16
) -> GenerationRequest:
    return GenerationRequest(
        messages=(Message("system", "Answer with one Lean tactic."), Message("user", text)),
        seed=seed,
        sampling=SamplingConfig(temperature=temperature, max_tokens=max_tokens),
    )
