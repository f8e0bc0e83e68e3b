"""`--lsrb-sr-lasr-backend pysr`: the settings handed to LaSR's PySR fork are the searcher's, the
backend refuses in one sentence where it cannot run. Running the engine itself needs LaSR's PySR
fork, Julia and a model server Julia can reach; none can be installed where these tests run, so
no test here runs it."""

from __future__ import annotations

import importlib.util

import pytest

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.srbench.methods.evolution import EvolutionConfig
from pytest_lsrb.srbench.methods.lasr_pysr import check_pysr_backend, pysr_settings

HAS_PYSR = importlib.util.find_spec("pysr") is not None


def test_pysr_settings_are_llm_srbench_lasr_searchers() -> None:
    # methods/lasr/searcher.py (LasrSearcher.discover), written out
    settings = pysr_settings(EvolutionConfig())
    assert {k: v for k, v in settings.items() if k != "loss_function"} == {
        "niterations": 25,
        "ncyclesperiteration": 550,
        "populations": 10,
        "population_size": 33,
        "maxsize": 30,
        "binary_operators": ["+", "*", "-", "/", "^"],
        "unary_operators": ["exp", "log", "sqrt", "sin", "cos"],
        "weight_randomize": 0.1,
        "should_simplify": True,
        "constraints": {"sin": 10, "cos": 10, "exp": 20, "log": 20, "sqrt": 20, "pow": (-1, 20)},
        "nested_constraints": {
            "sin": {"cos": 0, "sin": 0},
            "cos": {"cos": 0, "sin": 0},
            "exp": {"exp": 0, "log": 0},
            "log": {"exp": 0, "log": 0},
            "sqrt": {"sqrt": 0},
        },
    }
    assert "(1000 .* (prediction .- dataset.y) ) .^ 2" in settings["loss_function"]


@pytest.mark.skipif(HAS_PYSR, reason="pysr is installed: the missing-package sentence cannot show")
def test_the_pysr_backend_without_pysr_is_one_sentence_before_any_model_call() -> None:
    from pytest_lsrb.srbench.task import SrbenchTask

    with pytest.raises(LsrbUsageError, match=r"--lsrb-sr-lasr-backend pysr needs LaSR's PySR fork") as err:
        SrbenchTask().check_options({"sr_method": "lasr", "sr_lasr_backend": "pysr"})
    assert str(err.value).count(". ") == 0 and str(err.value).endswith(".")
    # the python engine, or another method, never looks for pysr
    SrbenchTask().check_options({"sr_method": "lasr"})
    SrbenchTask().check_options({"sr_method": "direct", "sr_lasr_backend": "pysr"})
    with pytest.raises(LsrbUsageError, match="--lsrb-sr-lasr-backend: expected one of python, pysr"):
        SrbenchTask().check_options({"sr_method": "lasr", "sr_lasr_backend": "julia"})


@pytest.mark.skipif(not HAS_PYSR, reason="pysr is not installed")
def test_the_pysr_backend_refuses_the_mock_adapter() -> None:
    with pytest.raises(LsrbUsageError, match="needs --lsrb-adapter openai"):
        check_pysr_backend({"adapter": "mock"})
