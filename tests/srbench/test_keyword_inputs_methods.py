"""LLM-SR's skeletons and SGA's code blocks read an input named like a Python keyword (`lambda`),
shown to the model and in the result as written (issue #30, item 5)."""

from __future__ import annotations

import numpy as np

from pytest_lsrb.srbench.data.problem import Problem, output_first
from pytest_lsrb.srbench.methods.sga import read_code
from pytest_lsrb.srbench.methods.skeleton import Spec, read_skeleton


def test_an_llmsr_skeleton_and_an_sga_code_block_read_keyword_inputs() -> None:
    spec = Spec(
        output="y", output_desc="phase", inputs=("lambda", "x"), input_descs=("wavelength", "distance")
    )
    assert "def equation_v1(lambda: np.ndarray, x: np.ndarray" in spec.prompt(
        [spec.initial_body()]
    )  # as written
    skeleton = read_skeleton("    return params[0] * lambda * x\n", spec)
    assert skeleton.program.to_expression() == "c0*lambda*x" and "lambda" in skeleton.body
    rng = np.random.default_rng(0)
    table = rng.uniform(1, 2, (20, 3))
    problem = Problem(
        name="kw",
        symbols=["y", "lambda", "x"],
        symbol_descs=["phase", "wavelength", "distance"],
        symbol_properties=output_first(2),
        problem_set="llmsr",
        train=table,
        test=table,
    )
    code = "INITIAL_PARAMS = [2.0]\n\ndef equation(lambda, x, params):\n    return params[0]*lambda*x\n"
    program, initial = read_code(code, problem)
    assert program.to_expression() == "c0*lambda*x" and initial == [2.0]
