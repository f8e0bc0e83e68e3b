"""`HttpAdapter`: a model behind a JSON-over-HTTP API, as a lab writes one.

A subclass names its API (`name`, `default_base_url`, `generate_path`, how the key is sent) and
writes two methods: `request_body` (a `GenerationRequest` as the API's JSON) and `parse_reply`
(the API's JSON answer as a `Reply`, raising `bad_response(...)` for a body that is not one).
Everything else is the shared endpoint's (`adapters.http.HttpEndpoint`), as the built-in adapters
have it: one pooled client, whole-response timeouts and body limits, retries with capped jittered
backoff that honour `Retry-After`, quota and auth refusals that stop the run, no redirect
followed, the run's budget asked per request under the slot permit, attempts served in test order,
a server that is down waited out as the run's other processes see it (`adapters.outage`),
and the key registered for redaction before any request (a server that echoes it gets it stored
nowhere: records, logs, the terminal). The key is read from the variable `--lsrb-api-key-env`
names (else the adapter's own `api_key_env`) and sent in `auth_header` (`Authorization: Bearer
KEY` unless the API says otherwise).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from pytest_lsrb.adapters.base import Adapter, AdapterConfig, GenerationRequest, GenerationResult
from pytest_lsrb.adapters.concurrency import ADMISSION
from pytest_lsrb.adapters.http import HttpEndpoint, Reply, api_key_from_env, to_result
from pytest_lsrb.adapters.retry import RetryPolicy


class HttpAdapter(Adapter):
    """A JSON-over-HTTP model API: subclass it, set `name`, `default_base_url` and
    `generate_path`, and write `request_body` and `parse_reply`; the rest has a default here."""

    name: str
    default_base_url: ClassVar[str]  # when --lsrb-base-url is not given
    generate_path: ClassVar[str]  # POSTed to for each call, below the base URL (`/v1/messages`)
    # How the key (the variable `--lsrb-api-key-env` names) is sent: `auth_header: auth_scheme KEY`,
    # or the key alone when `auth_scheme` is None (Anthropic's `x-api-key`).
    auth_header: ClassVar[str] = "Authorization"
    auth_scheme: ClassVar[str | None] = "Bearer"
    # The variable read for the key when `--lsrb-api-key-env` names none (its SDK's own, such as
    # ANTHROPIC_API_KEY); unset, no key is sent. Either way the key is registered for redaction.
    api_key_env: ClassVar[str | None] = None
    headers: ClassVar[Mapping[str, str]] = {}  # sent with every request (an API version)
    default_concurrency = 8
    admits_budget = True  # the run's budget is asked per request, under the slot permit

    def __init__(self, config: AdapterConfig) -> None:
        self.config = config
        self.model = config.model
        in_flight = config.concurrency or self.default_concurrency
        self.http = HttpEndpoint(
            config.base_url or self.default_base_url,
            timeout_s=config.timeout_s,
            pool_size=in_flight + 2,
            in_flight=in_flight,
            retry=RetryPolicy(
                config.max_retries, config.backoff_base_s, config.backoff_max_s, total_s=config.retry_time_s
            ),
            outage_dir=config.outage_dir,  # the run's processes share what they saw of the server
            api_key=api_key_from_env(config.api_key_env or self.api_key_env),
            headers=self.headers,
            auth_header=self.auth_header,
            auth_scheme=self.auth_scheme,
        )

    @abstractmethod
    def request_body(self, request: GenerationRequest) -> Any:
        """The JSON the API takes for `request` (its messages, `sampling`, `seed` where it has one)."""

    @abstractmethod
    def parse_reply(self, data: Any) -> Reply:
        """The answer in the API's JSON (its text, `usage` by `token_usage`, finish reason, served
        model); raise `bad_response(...)` for a body that is not the API's success shape, or
        `ResponseError("empty_output", ...)` when the model wrote nothing."""

    def generate(self, request: GenerationRequest) -> GenerationResult:
        outcome = self.http.call(
            "POST",
            self.generate_path,
            self.request_body(request),
            parse=self.parse_reply,
            seed=request.seed,
            admission=ADMISSION.get(),
        )
        return to_result(outcome)

    def identity(self) -> Mapping[str, Any]:
        """The adapter, model and endpoint (never the key): what records and caches name."""
        return {"adapter": self.name, "model": self.model, "base_url": self.http.shown_url}

    def interrupt(self) -> None:
        self.http.interrupt()

    def close(self) -> None:
        self.http.close()
