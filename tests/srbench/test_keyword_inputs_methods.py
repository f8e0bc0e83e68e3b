"""LLM-SR's skeletons and SGA's code blocks read an input named like a Python keyword (`lambda`),
shown to the model and in the result as written (issue #30, item 5)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_lsrb.srbench.data.problem import Problem, output_first
from pytest_lsrb.srbench.methods.sga import read_code
from pytest_lsrb.srbench.methods.skeleton import Spec, read_skeleton


@pytest.mark.parametrize("word", ["lambda", "in", "is", "None", "if"])
def test_an_llmsr_skeleton_and_an_sga_code_block_read_keyword_inputs(word: str) -> None:
    spec = Spec(output="y", output_desc="phase", inputs=(word, "x"), input_descs=("wavelength", "distance"))
    assert f"def equation_v1({word}: np.ndarray, x: np.ndarray" in spec.prompt(
        [spec.initial_body()]
    )  # as written
    skeleton = read_skeleton(f"    return params[0] * {word} * x\n", spec)
    assert skeleton.program.to_expression() == f"c0*{word}*x" and word in skeleton.body
    rng = np.random.default_rng(0)
    table = rng.uniform(1, 2, (20, 3))
    problem = Problem(
        name="kw",
        symbols=["y", word, "x"],
        symbol_descs=["phase", "wavelength", "distance"],
        symbol_properties=output_first(2),
        problem_set="llmsr",
        train=table,
        test=table,
    )
    code = f"INITIAL_PARAMS = [2.0]\n\ndef equation({word}, x, params):\n    return params[0]*{word}*x\n"
    program, initial = read_code(code, problem)
    assert program.to_expression() == f"c0*{word}*x" and initial == [2.0]
