"""A safe equation language for model-proposed equations: parsed with `ast` against a whitelist,
evaluated with numpy, converted to sympy. Nothing a model writes is ever `exec`/`eval`-ed.

Public API (stable):

    parse_expression(text, variables, *, free_params=False, max_params=10) -> Program
        `c0*x**2 + np.sin(v)`, `params[0]*exp(-params[1]*t)`; with free_params=True unknown
        names (`a*exp(b*x)`) become parameters in order of first appearance.
    parse_function(text, variables, *, max_params=10) -> Program
        `def equation(x, v, params): ...` with a docstring, annotations, local (tuple,
        augmented) assignments and one final `return`. Inputs bind to variables by name, or by
        position when the names differ but the count matches.
    parse_equation(text, variables, ...) -> Program
        either of the above, chosen by the presence of `def `; drops an `y = ` prefix.

    Program
        .variables        input names (column order for a 2-D array)
        .n_params         parameters read: params[0] .. params[n_params-1]
        .param_names      how each parameter was written (c0, params[1], k, ...)
        .node_count       expression-tree size (complexity)
        .kind             "expression" | "function"
        .used_variables   the variables the equation reads
        .evaluate(X, params) -> np.ndarray (n,)
            X: {name: array} or an (n, len(variables)) array; params: array of >= n_params.
            float64 throughout; overflow / invalid math gives inf/nan, never an exception.
        .bind(X) -> BoundProgram
            precomputes the parameter-independent part once for these rows:
            .evaluate(params) -> (n,)
            .value_and_jacobian(params) -> ((n,), (n, n_params))
            .value_and_grad(params, weights) -> ((n,), (n_params,))   J^T weights
            .mse_and_grad(params, target) -> (mse, (n_params,))  one forward + one reverse pass
            (exact reverse-mode derivatives in one pass: with weights = 2*(y - target)/n the
            gradient of the MSE, for BFGS; the Jacobian for least squares).
        .value_and_jacobian(X, params)
        .to_sympy(symbols=None, params=None) -> sympy.Expr
            params None: symbols c0.. (or the free names); or numbers/symbols to substitute.
        .to_expression(params=None) -> str   canonical text; parses back to the same program.
        Program.from_ir(root, variables, n_params)   (used by the generators' sympy solutions)

    from_sympy(expr, variables, param_symbols=None) -> IR node
    EquationError(kind, message): `.kind` in EQUATION_ERROR_KINDS
        parse_error, forbidden_construct, unknown_name, too_many_params, too_complex,
        bad_signature, bad_call, bad_constant.

The language: numbers, input variables, params[i] / c<i>, + - * / **, unary -, the functions in
`ir.FUNCTION_ALIASES` (bare or as np./numpy./math. attributes: exp log ln sqrt abs sin cos tan
arcsin/asin ... tanh, hypot, maximum, minimum, where), `pi`, `np.pi`, `np.e`, comparisons and
`a if cond else b` (as where). Limits: 20,000 characters, nesting 100, 2,000 tree nodes, 500
distinct nodes, |constant exponent| <= 100, 10 parameters.

Input names that are Python keywords (`lambda`, a wavelength) are parsed under an alias
(`keyword_aliases`, `alias_keywords`) and keep their written name in the program and its text.
"""

from pytest_lsrb.equations.compiler import BoundProgram
from pytest_lsrb.equations.errors import EQUATION_ERROR_KINDS, UNSUPPORTED_KINDS, EquationError
from pytest_lsrb.equations.parser import MAX_PARAMS, alias_keywords, keyword_aliases, parse_python
from pytest_lsrb.equations.program import Program, parse_equation, parse_expression, parse_function
from pytest_lsrb.equations.sympy_bridge import from_sympy

__all__ = [
    "EQUATION_ERROR_KINDS",
    "MAX_PARAMS",
    "UNSUPPORTED_KINDS",
    "BoundProgram",
    "EquationError",
    "Program",
    "alias_keywords",
    "from_sympy",
    "keyword_aliases",
    "parse_equation",
    "parse_expression",
    "parse_function",
    "parse_python",
]
