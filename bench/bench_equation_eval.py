"""The equation evaluator against hand-written numpy, on a 10-parameter LLM-SR-style skeleton and
10,000 rows (oscillator1's training size). Prints times and ratios measured in the same run.

- baseline: the same equation written directly in numpy (the floor: no interpretation at all);
- ours: `Program.bind(X).evaluate(params)` (compiled once, parameter-free part cached), and the
  MSE plus its exact gradient in one forward and one reverse pass (`mse_and_grad`) against the
  baseline's value plus a forward-difference gradient (11 evaluations, what BFGS does without
  derivatives).

    python bench/bench_equation_eval.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from pytest_lsrb.equations import parse_function

SKELETON = """
def equation(x, v, params):
    spring = -params[0] * x - params[1] * x**3
    damping = -params[2] * v - params[3] * v * np.abs(v)
    drive = params[4] * np.sin(params[5] * x) + params[6] * np.exp(-params[7] * v**2)
    return spring + damping + drive + params[8] * x * v + params[9]
"""


def numpy_equation(x: np.ndarray, v: np.ndarray, p: np.ndarray) -> np.ndarray:
    spring = -p[0] * x - p[1] * x**3
    damping = -p[2] * v - p[3] * v * np.abs(v)
    drive = p[4] * np.sin(p[5] * x) + p[6] * np.exp(-p[7] * v**2)
    return spring + damping + drive + p[8] * x * v + p[9]


def best_of(fn: Callable[[], object], repeat: int = 5, number: int = 50) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    x, v = rng.uniform(-1, 1, 10_000), rng.uniform(-1, 1, 10_000)
    target = numpy_equation(x, v, rng.normal(size=10))
    p = rng.normal(size=10)
    parse_s = best_of(lambda: parse_function(SKELETON, ["x", "v"]), number=20)
    bound = parse_function(SKELETON, ["x", "v"]).bind({"x": x, "v": v})
    np.testing.assert_allclose(bound.evaluate(p), numpy_equation(x, v, p), rtol=1e-12)

    base_eval = best_of(lambda: numpy_equation(x, v, p))
    ours_eval = best_of(lambda: bound.evaluate(p))

    def fd_grad() -> None:
        y0 = numpy_equation(x, v, p)
        loss0 = np.mean((y0 - target) ** 2)
        for k in range(10):
            q = p.copy()
            q[k] += 1e-7
            _ = (np.mean((numpy_equation(x, v, q) - target) ** 2) - loss0) / 1e-7

    def ours_grad() -> None:
        bound.mse_and_grad(p, target)

    base_grad = best_of(fd_grad, number=10)
    ours_grad_s = best_of(ours_grad, number=10)
    print(f"parse + compile                     {parse_s * 1e3:8.3f} ms (once per candidate)")
    print(f"evaluate: numpy by hand             {base_eval * 1e3:8.3f} ms")
    print(
        f"evaluate: Program.bind().evaluate   {ours_eval * 1e3:8.3f} ms   ratio {ours_eval / base_eval:.2f}x"
    )
    print(f"loss+gradient: numpy, finite diff.  {base_grad * 1e3:8.3f} ms")
    print(
        f"loss+gradient: ours, reverse mode   {ours_grad_s * 1e3:8.3f} ms   "
        f"ratio {ours_grad_s / base_grad:.2f}x"
    )


if __name__ == "__main__":
    main()
