"""Where a pytest session's text leaves the process: the terminal and the test reports.

Keys are redacted where text leaves, never before an answer is judged (core.redaction). The
session's ways out, one place each:

- attempts.jsonl, run.json, summary.json, gate.json: `output.files` (`record_line`,
  `write_json_atomic`);
- log records, at any level, to any handler: `core.redaction.install_log_redaction`;
- the terminal: everything pytest's terminal reporter writes goes through the writer
  `config.get_terminal_writer()` returns, whose `write` is wrapped here (test reports, the
  summary, progress lines, warnings, INTERNALERROR lines);
- test reports, which JUnit XML, `-rA`, xdist's controller and other plug-ins read: each report is
  redacted as it is made (its failure text, captured output and user properties), in the process
  that ran the test.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from pytest_lsrb.core.redaction import RUN_KEYS, Secrets

_WRAPPED = "_lsrb_redacting"


def guard_terminal(config: pytest.Config) -> None:
    """Redact every key of the run from what the terminal reporter writes from now on."""
    if config.pluginmanager.get_plugin("terminalreporter") is None:
        return
    writer = config.get_terminal_writer()
    if getattr(writer, _WRAPPED, False):
        return
    write = writer.write

    def redacting_write(msg: str, **kwargs: Any) -> None:
        secrets = RUN_KEYS.secrets()
        write(secrets.redact(msg) if secrets and isinstance(msg, str) else msg, **kwargs)

    writer.write = redacting_write  # type: ignore[method-assign]
    setattr(writer, _WRAPPED, True)


def redact_report(report: pytest.TestReport, secrets: Secrets) -> None:
    """`report` with every key masked in what it shows: its failure or skip text, its captured
    output, its user properties."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, message)
        report.longrepr = (longrepr[0], longrepr[1], secrets.redact(str(longrepr[2])))
    elif longrepr is not None:
        text = str(longrepr)
        clean = secrets.redact(text)
        if clean != text:
            report.longrepr = clean
    report.sections = [(title, secrets.redact(content)) for title, content in report.sections]
    report.user_properties = [
        (name, secrets.redact(value) if isinstance(value, str) else value)
        for name, value in report.user_properties
    ]


class Egress:
    """The pytest hooks of a session that runs a suite: every test report is redacted as it is
    made (registered by `plugin.SessionHooks.start`, after the terminal is guarded)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Generator[None, Any, Any]:
        report = yield
        secrets = RUN_KEYS.secrets()
        if secrets and isinstance(report, pytest.TestReport):
            redact_report(report, secrets)
        return report
