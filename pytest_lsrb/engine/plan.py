"""The run plan: everything decided about one suite's run before the first test (the suite, its
task, the resolved config, the selected cases), and the adapter and verifier configs it implies."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_lsrb.adapters.base import AdapterConfig
from pytest_lsrb.core.credentials import url_with_env_userinfo
from pytest_lsrb.core.selection import Case, SelectableRow
from pytest_lsrb.engine.options import RunConfig
from pytest_lsrb.engine.suite import SuiteSpec
from pytest_lsrb.engine.task import Task, mock_answers
from pytest_lsrb.engine.verifier import VerifierConfig


@dataclass
class SuiteRun:
    """Everything decided about one suite's run before the first test."""

    spec: SuiteSpec
    task: Task[SelectableRow]
    config: RunConfig
    selected_count: int
    selected_hash: str
    cases: list[Case[SelectableRow]]
    config_hash: str

    def adapter_config(self) -> AdapterConfig:
        config, v = self.config, self.config.values
        return AdapterConfig(
            name=v["adapter"],
            model=v["model"] or "",
            base_url=url_with_env_userinfo(v["base_url"]),
            allow_model_alias=bool(v["allow_model_alias"]),
            api_key_env=v["api_key_env"],
            timeout_s=config.timeout,
            max_retries=config.max_retries,
            retry_time_s=config.retry_time,
            max_tokens_field=v["max_tokens_field"],
            cache_dir=config.cache_dir,
            cache_journal=v["cache_journal"],
            concurrency=config.concurrency,
            outage_dir=str(config.output_dir),
            answers=mock_answers(self.task.mock_answer),
        )

    @property
    def keeps_rounds(self) -> bool:
        """Whether the run keeps its own answers for a resume (`adapters.cache.keep_rounds`): its
        attempts may make several calls, and no response cache (`--lsrb-cache-dir`) keeps them."""
        return not self.config.cache_dir and self.task.calls_per_attempt(self.config.values) > 1

    def verifier_config(self) -> VerifierConfig:
        config = self.config
        return VerifierConfig(
            mode=config.verification,
            cache_dir=config.cache_dir,
            suite_root=str(self.spec.root),
            options=dict(config.values),
            settings=dict(self.spec.settings.get("verifier", {})),
        )
