"""A discovery method from outside the package (issue #39) runs a llm_srbench suite end to end,
named by a `"pkg.mod:Class"` spec or by its package's entry point (`pytest_lsrb.methods`), with
no edit to `pytest_lsrb/`. The method predicts the training mean (one model call, asked and
ignored): by NMSE's definition (MSE over the variance of y) its training NMSE is exactly 1, which
the suite's record must carry through, whatever the problem."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsrb_testing import REPO, install_distribution, install_example

from pytest_lsrb import api
from pytest_lsrb.srbench.methods import METHODS

SUITE = REPO / "suites" / "llm_srbench"

METHOD = '''
import numpy as np

from pytest_lsrb import DiscoveryMethod, DiscoveryResult, GenerationRequest, Message, parse_equation


class MeanMethod(DiscoveryMethod):
    """y is its training mean: one model call, asked and not used."""

    name = "mean"

    def discover(self, problem, adapter, sampling, seed, budget, *, options=None):
        _, y = problem.columns("train")
        request = GenerationRequest(
            messages=(Message("user", "Propose y."),), seed=seed, sampling=sampling,
            context=problem.context(),
        )
        answer = adapter.generate(request)
        mean = float(np.mean(y))
        mse = float(np.mean((y - mean) ** 2))
        return DiscoveryResult(
            program=parse_equation("c0", problem.inputs, free_params=True), params=(mean,),
            proposal="c0", raw_output=answer.text, train_mse=mse, train_nmse=mse / float(np.var(y)),
            model_calls=1, latency_ms=answer.latency_ms,
        )
'''


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`meanplug` 1.0 on sys.path, as `pip install --target` lays it out."""
    entry_points = "[pytest_lsrb.methods]\nmean = meanplug:MeanMethod\n"
    modules = {"meanplug": METHOD}
    return install_distribution(tmp_path / "site", "meanplug", entry_points, modules, monkeypatch)


@pytest.mark.parametrize("method", ["meanplug:MeanMethod", "mean"], ids=["spec", "entry_point"])
def test_a_method_from_another_package_runs_the_suite_end_to_end(
    installed: Path, method: str, tmp_path: Path
) -> None:
    assert METHODS.load(method).__name__ == "MeanMethod"
    # (sr_judge none: the symbolic check is the suite's, not the method's, and costs a child process)
    result = api.run(
        SUITE, sr_method=method, sr_judge="none", max_items=3, output_dir=tmp_path / "o", pytest_args=["-q"]
    )
    assert result.summary is not None and len(result.records) == 3
    for record in result.records:
        assert record["sr_method"] == "mean" and record["model_calls"] == 1
        assert record["train_nmse"] == pytest.approx(1.0)
        assert record["nmse_id"] is not None and record["equation"]
    assert result.summary["config"]["sr_method"] == method


def test_the_example_method_runs_the_suite_with_its_own_mock_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`examples/lsrb-refine` (its own package, found by its entry point) proposes, sees the fit,
    and proposes again; the mock answers its calls with the baseline the method ships (its
    `mock_answer`: the n-th of four shapes), not one core chose by the method's name."""
    install_example("lsrb-refine", tmp_path / "site", monkeypatch)
    from lsrb_refine import SHAPES

    result = api.run(
        SUITE, sr_method="refine", sr_judge="none", max_items=3, output_dir=tmp_path / "o", pytest_args=["-q"]
    )
    assert result.summary is not None and len(result.records) == 3
    for record in result.records:
        assert (record["sr_method"], record["sr_budget"], record["model_calls"]) == ("refine", 4, 4)
        _, rhs = str(record["raw_output"]).split(" = ")  # the best answer: one of the method's shapes
        forms = [re.escape(shape).replace(re.escape("{x}"), r"\w+") for shape in SHAPES]
        assert any(re.fullmatch(form, rhs) for form in forms), rhs
        assert record["nmse_id"] is not None and record["proposal"] == rhs
