"""The run plan: everything decided about one suite's run before the first test (the suite, its
task, the resolved config, the selected cases), and the adapter and verifier configs it implies."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_lsrb.adapters.base import AdapterConfig
from pytest_lsrb.core.selection import Case
from pytest_lsrb.engine.options import RunConfig
from pytest_lsrb.engine.suite import SuiteSpec
from pytest_lsrb.engine.task import Task
from pytest_lsrb.engine.verifier import VerifierConfig


@dataclass
class SuiteRun:
    """Everything decided about one suite's run before the first test."""

    spec: SuiteSpec
    task: Task
    config: RunConfig
    selected_count: int
    selected_hash: str
    cases: list[Case]
    config_hash: str

    def adapter_config(self) -> AdapterConfig:
        v = self.config.values
        return AdapterConfig(
            name=v["adapter"],
            model=v["model"] or "",
            base_url=v["base_url"],
            api_key_env=v["api_key_env"],
            timeout_s=float(v["timeout"]),
            max_retries=int(v["max_retries"]),
            max_tokens_field=v["max_tokens_field"],
            cache_dir=v["cache_dir"],
            cache_journal=v["cache_journal"],
            concurrency=v["concurrency"],
        )

    def verifier_config(self) -> VerifierConfig:
        v = self.config.values
        return VerifierConfig(
            mode=v["verification"],
            profiles_path=v["profiles"],
            cache_dir=v["cache_dir"],
            suite_root=str(self.spec.root),
            options=dict(self.spec.settings.get("verifier", {})),
            allow_local_remotes=bool(v["allow_local_remotes"]),
            allow_native_decide=bool(v.get("allow_native_decide")),
            max_heartbeats=v.get("max_heartbeats"),
        )
