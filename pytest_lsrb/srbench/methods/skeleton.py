"""LLM-SR's equation skeletons as text: the specification the model completes, and reading a
skeleton back out of what the model wrote, safely.

The prompt follows the reference (deep-symbolic-mathematics/LLM-SR `buffer.py` / `sampler.py`,
and the specification LLM-SRBench's LLMSRSearcher builds from a problem's symbols): an
instruction, a module docstring naming the output and the inputs, `MAX_NPARAMS = 10`, the
earlier skeletons as `equation_v0`, `equation_v1` (worst to best; every one after the first
documented as an improved version of the previous), and the header of the next version for the
model to complete. Like the reference, the prompt holds no scientific context beyond the
variables' descriptions (a problem's `desc` is not shown).

Model output is data: `read_skeleton` cuts the function out of the text with `ast` (never
executed) and hands it to the whitelisting parser in `pytest_lsrb.equations`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pytest_lsrb.equations import (
    EquationError,
    Program,
    alias_keywords,
    keyword_aliases,
    parse_function,
    parse_python,
)

MAX_NPARAMS: Final = 10
FUNCTION_NAME: Final = "equation"
INSTRUCTION: Final = (
    "You are a helpful assistant tasked with discovering mathematical function structures for "
    "scientific systems. Complete the 'equation' function below, considering the physical "
    "meaning and relationships of inputs."
)
INDENT: Final = "    "


@dataclass(frozen=True)
class Spec:
    """What the prompt says about one problem."""

    output: str
    output_desc: str
    inputs: tuple[str, ...]
    input_descs: tuple[str, ...]
    desc: str = ""

    @classmethod
    def from_context(cls, context: Mapping[str, Any]) -> Spec:
        """From `Problem.context()` (name, output, output_desc, inputs, input_descs, desc)."""
        inputs = tuple(context["inputs"])
        descs = tuple(context.get("input_descs") or inputs)
        return cls(
            output=str(context["output"]),
            output_desc=str(context.get("output_desc") or context["output"]),
            inputs=inputs,
            input_descs=descs,
            desc=str(context.get("desc") or ""),
        )

    # -- the specification --------------------------------------------------------------------

    def signature(self, name: str = FUNCTION_NAME) -> str:
        args = ", ".join(f"{v}: np.ndarray" for v in self.inputs)
        return f"def {name}({args}, params: np.ndarray) -> np.ndarray:"

    def docstring(self) -> str:
        args = "\n".join(
            f"{INDENT * 2}{v}: A numpy array representing observations of {d}."
            for v, d in zip(self.inputs, self.input_descs, strict=True)
        )
        return (
            f'{INDENT}""" Mathematical function for {self.output_desc}\n\n'
            f"{INDENT}Args:\n{args}\n"
            f"{INDENT * 2}params: Array of numeric constants or parameters to be optimized\n\n"
            f"{INDENT}Return:\n"
            f"{INDENT * 2}A numpy array representing {self.output_desc} as the result of applying "
            f"the mathematical function to the inputs.\n"
            f'{INDENT}"""'
        )

    def preface(self) -> str:
        descs = list(self.input_descs)
        given = descs[-1] if len(descs) < 2 else ", ".join(descs[:-1]) + ", and " + descs[-1]
        return (
            f'"""\nFind the mathematical function skeleton that represents {self.output_desc}, '
            f'given data on {given}.\n"""\n\n\n'
            "import numpy as np\n\n"
            "#Initialize parameters\n"
            f"MAX_NPARAMS = {MAX_NPARAMS}\n"
            "params = [1.0]*MAX_NPARAMS\n"
        )

    def initial_body(self) -> str:
        """The reference's starting skeleton: linear in every input plus a constant."""
        terms = " + ".join(f"params[{i}] * {v}" for i, v in enumerate(self.inputs))
        return f"{INDENT}output = {terms} + params[{len(self.inputs)}]\n{INDENT}return output\n"

    def program_length(self, body: str) -> int:
        """The length the reference's buffer prefers short programs by: `len(str(Function))`, the
        whole function (header, the specification's docstring, body) as code_manipulation prints it."""
        doc = self.docstring().strip().removeprefix('"""').removesuffix('"""').strip()
        return len(f'{self.signature()}\n    """{doc}"""\n{body.strip(chr(10))}\n\n')

    def function(self, body: str, name: str = FUNCTION_NAME, docstring: str | None = None) -> str:
        doc = self.docstring() if docstring is None else f'{INDENT}"""{docstring}"""'
        return f"{self.signature(name)}\n{doc}\n{body.rstrip()}\n"

    def prompt(self, bodies: Sequence[str]) -> str:
        """The text the model completes: earlier skeletons (worst to best) as equation_v0..,
        then the header of the next version."""
        parts = [self.preface()]
        for i, body in enumerate(bodies):
            doc = None if i == 0 else f"Improved version of `{FUNCTION_NAME}_v{i - 1}`."
            parts.append(self.function(body, f"{FUNCTION_NAME}_v{i}", doc))
        k = len(bodies)
        header = self.signature(f"{FUNCTION_NAME}_v{k}")
        if k:
            header += f'\n{INDENT}"""Improved version of `{FUNCTION_NAME}_v{k - 1}`."""'
        else:
            header += "\n" + self.docstring()
        parts.append(header + "\n")
        return "\n".join(parts)


@dataclass(frozen=True)
class Skeleton:
    """A skeleton read from model output: its body (as written, re-indented) and the program."""

    body: str
    program: Program

    @property
    def length(self) -> int:
        """The reference's program length (it prefers shorter programs within a cluster)."""
        return len(self.body)


_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.S | re.I)


def read_skeleton(text: str, spec: Spec) -> Skeleton:
    """The skeleton in a model's answer, or `EquationError` (kind from the equation language, or
    `parse_error` when no function body can be found).

    Like the reference: take the first function in the answer (or, with no `def`, the text as a
    continuation of the header), keep its body up to where the code stops parsing, and drop
    anything after its `return`. The body is then placed under the specification's own header;
    if the model renamed the inputs, its own header is used instead (inputs bind by position).
    """
    code = _code_part(text)
    own_header, body = _split_def(code)
    body = _trim_body(body, keyword_aliases(spec.inputs))
    if not body.strip():
        raise EquationError("parse_error", "no function body found in the answer")
    variables = list(spec.inputs)
    try:
        program = parse_function(spec.function(body), variables, max_params=MAX_NPARAMS)
    except EquationError as first:
        if own_header is None or first.kind not in ("unknown_name", "bad_signature"):
            raise
        program = parse_function(own_header + "\n" + body, variables, max_params=MAX_NPARAMS)
    return Skeleton(body=body, program=program)


def _code_part(text: str) -> str:
    """The fenced block holding a function (or a return), else the whole text."""
    blocks = _FENCE.findall(text)
    for block in blocks:
        if re.search(r"^\s*def\s", block, re.M):
            return str(block)
    for block in blocks:
        if "return" in block:
            return str(block)
    return text


def _split_def(code: str) -> tuple[str | None, str]:
    """(the first `def ...:` header line or None, the text after it)."""
    lines = code.splitlines()
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith("def ") and stripped.rstrip().endswith(":"):
            return stripped.rstrip(), "\n".join(lines[i + 1 :])
    return None, code


def _trim_body(body: str, aliases: Mapping[str, str] | None = None) -> str:
    """The function body: re-indented, cut where the code stops parsing (the reference's
    `_trim_function_body`), docstring and statements after the top-level `return` dropped.
    Inputs named like Python keywords (`aliases`) are read under their aliases for the parse."""
    lines = [line.expandtabs(4) for line in body.splitlines()]
    # Unindented lines join the body (the reference does this for local models' completions).
    lines = [line if not line.strip() or line.startswith(" ") else INDENT + line for line in lines]
    lines = _dedent_to(lines, INDENT)
    while lines:
        code = "def fake_function_header():\n" + "\n".join(lines)
        if aliases:
            code = alias_keywords(code, dict(aliases))
        try:
            tree = parse_python(code)
        except SyntaxError as err:
            if err.lineno is None or err.lineno <= 2:
                return ""
            lines = lines[: err.lineno - 2]
            continue
        except (ValueError, RecursionError, MemoryError):
            # A lone surrogate or NUL (ValueError) or nesting past the parser's limits: no body a
            # program can be read from, which scores the answer invalid like any unparsable one.
            return ""
        func = tree.body[0]
        if not isinstance(func, ast.FunctionDef):
            return ""
        end = func.end_lineno or len(lines) + 1
        for stmt in func.body:
            if isinstance(stmt, ast.Return):
                end = stmt.end_lineno or end
                break
        kept = lines[: end - 1]
        # Drop a leading docstring: the specification supplies its own.
        first = func.body[0]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
            and len(func.body) > 1
        ):
            kept = lines[(first.end_lineno or 1) - 1 : end - 1]
        return "\n".join(line.rstrip() for line in kept if line.strip()) + "\n"
    return ""


def _dedent_to(lines: list[str], indent: str) -> list[str]:
    """Shift the block so its least-indented non-blank line starts at `indent`."""
    widths = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip()]
    if not widths:
        return lines
    shift = min(widths) - len(indent)
    if shift > 0:
        return [line[shift:] if line.strip() else "" for line in lines]
    if shift < 0:
        return [(" " * -shift + line) if line.strip() else "" for line in lines]
    return lines
