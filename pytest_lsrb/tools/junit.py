"""The regression gate as a test case in pytest's JUnit XML (`--junitxml`): `lsrb::gate`.

CI systems read test results from JUnit XML, where every attempt's test passes under
`--lsrb-outcome=record` and the gate (which only sets the exit status) was invisible. The gate's
verdict is added as one more test case, failing with the gate's own message on a regression, with
the checked numbers as properties. Only the XML gets it: the terminal already has the gate's
section, and pytest's counts stay the counts of the attempts' tests.
"""

from __future__ import annotations

from typing import Any, Final

from pytest_lsrb.tools.gate import GateResult, result_lines, title

NODE_ID: Final = "lsrb::gate"


def gate_properties(result: GateResult) -> list[tuple[str, object]]:
    props: list[tuple[str, object]] = [("regressed", result.regressed), ("alpha", result.alpha)]
    for c in result.checks:
        props += [(f"{c.metric}.change", c.change), (f"{c.metric}.items", c.items)]
        if c.kind == "max_drop":
            props += [(f"{c.metric}.p", c.p_adjusted), (f"{c.metric}.min_detectable", c.min_detectable)]
        else:
            props.append((f"{c.metric}.current", c.current))
    return props


def add_gate_case(xml: Any, result: GateResult) -> bool:
    """Add `lsrb::gate` to the session's JUnit XML through pytest's junitxml plugin object `xml`
    (None: no XML is being written; True when added). `session.seams.junit_xml` finds it.

    Must run before pytest's junitxml plugin writes the file in its own sessionfinish.
    """
    import pytest

    if xml is None:
        return False
    failed = result.regressed
    message = "\n".join([title(result), *result_lines(result)])
    common: dict[str, Any] = {"nodeid": NODE_ID, "location": ("lsrb", None, "gate"), "keywords": {}}
    call = pytest.TestReport(
        outcome="failed" if failed else "passed",
        longrepr=message if failed else None,
        when="call",
        duration=0.0,
        **common,
    )
    teardown = pytest.TestReport(
        outcome="passed",
        longrepr=None,
        when="teardown",
        duration=0.0,
        user_properties=gate_properties(result),
        sections=[] if failed else [("Captured stdout call", message)],
        **common,
    )
    xml.pytest_runtest_logreport(call)
    xml.pytest_runtest_logreport(teardown)
    return True
