"""Escape payloads and fuzzing: every hostile or garbage input ends in a classified EquationError.

Nothing here can run the payloads: the package never calls exec/eval (checked statically below),
so a payload that slipped through would show up as a parse that *succeeded*, which fails the test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pytest_lsrb.equations as equations_pkg
from pytest_lsrb.equations import EQUATION_ERROR_KINDS, EquationError, parse_expression, parse_function

XV = ["x", "v"]

ESCAPES = [
    "__import__('os').system('echo pwned')",
    "__import__",
    "np.__dict__",
    "np.__class__",
    "np.exp.__globals__",
    "np.exp.__globals__['__builtins__']['eval']('1')",
    "x.__class__",
    "().__class__.__bases__[0].__subclasses__()",
    "''.__class__.__mro__[1].__subclasses__()",
    "[].__class__.__base__.__subclasses__()",
    "(lambda: 1)()",
    "lambda x: x",
    "[i for i in range(10)]",
    "{i: i for i in range(3)}",
    "{i for i in range(3)}",
    "sum(i for i in range(3))",
    "9**9**9",
    "x**(9**9)",
    "2**1000",
    "x**1e6",
    "np.power(x, 10**6)",
    "f'{x}'",
    "f'{__import__(\"os\")}'",
    "eval('1+1')",
    "exec('import os')",
    "compile('1', 'f', 'eval')",
    "open('/etc/passwd')",
    "getattr(np, 'exp')(x)",
    "globals()",
    "vars()",
    "breakpoint()",
    "os.system('ls')",
    "np.lib.npyio.load('x')",
    "np.ctypeslib",
    "np.load('file.npy')",
    "math.__loader__",
    "type(x)",
    "x if (y := 1) else v",
    "(x := 5)",
    "x[0]",
    "params.__class__",
    "params[__import__('os')]",
    "params['a']",
    "np.exp(*[x])",
    "await x",
    "yield x",
    "x; import os",
    "(" * 300 + "x" + ")" * 300,
    "-" * 5000 + "x",
    "+".join(["x"] * 3000),
    "np.sin(" * 120 + "x" + ")" * 120,
    "x" + "**x" * 150,
    "1" * 400 + "*x",
    "x" * 30000,
]

FUNCTION_ESCAPES = [
    "def f(x, v, params):\n    return __import__('os').system('ls')",
    "def f(x, v, params):\n    import os\n    return x",
    "def f(x, v, params):\n    return (lambda: x)()",
    "def f(x, v, params):\n    g = np.exp.__globals__\n    return x",
    "def f(x, v, params):\n    while True:\n        pass\n    return x",
    "def f(x, v, params):\n    try:\n        return x\n    except Exception:\n        return v",
    "def f(x, v, params):\n    with open('f') as h:\n        return x",
    "def f(x, v, params):\n    global np\n    return x",
    "def f(x, v, params):\n    raise SystemExit\n",
    "def f(x, v, params):\n    del x\n    return v",
    "def f(x, v, params):\n    assert x\n    return v",
    "class A:\n    pass\ndef f(x, v, params):\n    return x",
    "def f(x, v, params):\n    return [a for a in x]",
    "def f(x, v, params):\n    print(x)\n    return x",
    "def f(x, v, params):\n    eval = 1\n    return x",
    "async def f(x, v, params):\n    return x",
    "def f(x, v, params):\n    __builtins__ = 1\n    return x",
    "def f(x, v, params):\n    a = 9\n    return a**a**a",
    "def f(x, v, params):\n    a = x\n" + "    a = np.exp(a)\n" * 600 + "    return a",
]


@pytest.mark.parametrize("payload", ESCAPES, ids=range(len(ESCAPES)))
def test_expression_escapes_are_refused(payload: str) -> None:
    with pytest.raises(EquationError) as err:
        parse_expression(payload, XV)
    assert err.value.kind in EQUATION_ERROR_KINDS


@pytest.mark.parametrize("payload", FUNCTION_ESCAPES, ids=range(len(FUNCTION_ESCAPES)))
def test_function_escapes_are_refused(payload: str) -> None:
    with pytest.raises(EquationError) as err:
        parse_function(payload, XV)
    assert err.value.kind in EQUATION_ERROR_KINDS


def test_huge_exponents_are_too_complex() -> None:
    for payload in ("9**9**9", "x**(9**9)", "x**1e6", "np.power(x, 10**6)"):
        with pytest.raises(EquationError) as err:
            parse_expression(payload, XV)
        assert err.value.kind == "too_complex", payload


def test_deep_nesting_is_too_complex() -> None:
    for payload in ("(" * 300 + "x" + ")" * 300, "np.sin(" * 120 + "x" + ")" * 120, "-" * 5000 + "x"):
        with pytest.raises(EquationError) as err:
            parse_expression(payload, XV)
        assert err.value.kind == "too_complex"


_TOKENS = [
    "x",
    "v",
    "c0",
    "params",
    "[",
    "]",
    "0",
    "1",
    "2.5",
    "1e308",
    "(",
    ")",
    "+",
    "-",
    "*",
    "/",
    "**",
    "np",
    ".",
    "exp",
    "log",
    "sin",
    "sqrt",
    "__class__",
    "__globals__",
    "__import__",
    "lambda",
    ":",
    ",",
    "for",
    "in",
    "if",
    "else",
    "'",
    '"',
    "f'",
    "{",
    "}",
    "import",
    "os",
    " ",
    "\n",
    "def",
    "return",
    "=",
    "<",
    "@",
    "%",
    "not",
    "and",
    "where",
    "9",
    "e",
    "pi",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=30))
def test_token_soup_never_escapes_the_taxonomy(tokens: list[str]) -> None:
    text = "".join(tokens)
    for parse in (parse_expression, parse_function):
        try:
            prog = parse(text, XV)
        except EquationError as err:
            assert err.kind in EQUATION_ERROR_KINDS
        else:
            assert prog.node_count >= 1
            # Whatever parsed must be a plain numeric program: it evaluates without raising.
            prog.evaluate({"x": [1.0, -2.0], "v": [0.0, 3.0]}, [1.0] * prog.n_params)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_arbitrary_text_never_escapes_the_taxonomy(text: str) -> None:
    for parse in (parse_expression, parse_function):
        try:
            parse(text, XV)
        except EquationError as err:
            assert err.kind in EQUATION_ERROR_KINDS


def _calls_in(path: Path) -> set[str]:
    """Builtins called by bare name, and sympy/numpy helpers that run strings as code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                names.add(node.func.id)
            elif isinstance(node.func, ast.Attribute) and node.func.attr in _STRING_RUNNERS:
                names.add(node.func.attr)
    return names


_STRING_RUNNERS = {"sympify", "parse_expr", "lambdify", "eval", "exec"}


def test_the_equation_code_never_executes_text() -> None:
    forbidden = {"eval", "exec", "compile", "__import__", *_STRING_RUNNERS}
    root = Path(equations_pkg.__file__).parent
    srbench = root.parent / "srbench"
    files = sorted(root.rglob("*.py")) + (sorted(srbench.rglob("*.py")) if srbench.is_dir() else [])
    assert files
    for path in files:
        bad = _calls_in(path) & forbidden
        assert not bad, f"{path} calls {sorted(bad)}"
