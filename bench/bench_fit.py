"""Fit and score LLM-SR-style skeletons on oscillator1's 10,000 training rows: ours vs the reference.

Baseline, a faithful re-creation of the reference pipeline (deep-symbolic-mathematics/LLM-SR,
`llmsr/evaluator.py` LocalSandbox + `specs/specification_oscillator1_numpy.txt`): the skeleton is
spliced into the specification program, a fresh `multiprocessing.Process` (fork, the reference's
start method on Linux) `exec`s that program text and runs `scipy.optimize.minimize(loss,
[1.0]*MAX_NPARAMS, method="BFGS")` with numerical gradients; the score (-MSE) comes back through a
Queue that the parent polls as the reference does. `exec` of program text appears here only
because this bench re-creates the baseline being compared against; the product never does it.

A second baseline runs the same BFGS in-process (no fork, no exec per candidate): the
reference's algorithm alone.

Ours, as the llmsr method runs every candidate: `parse_function` (whitelist, no exec) ->
`Program.bind` -> `fit_program` with each policy: `reference` (the default: the reference's
scipy call on the compiled program), `fast` (exact gradients, closed form when linear) and
`enhanced`. Everything runs in one process on the same rows; the allocator tuning that
`fit_program` applies is switched on before the first baseline candidate, so the forked baseline
inherits it too. Prints, per skeleton, the times, the speed-ups and each policy's optimum gap
(its loss / the in-process reference's - 1; "inv" where a side is invalid), then per skeleton
class (linear, nonlinear, nonconvex) the median speed-ups and each policy's optimum agreement:
the share of skeletons whose loss is within 1e-6 (relative) of the reference's, or invalid
exactly where the reference's is (the target for `reference`: >= 95 %).

    python bench/bench_fit.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / ".." / "shared" / "data" / "llmsr" / "oscillator1" / "train.csv"

# Skeletons of the kind LLM-SR proposes for the oscillator, as the bodies the model would
# return, by class: linear in their parameters (the starting skeleton and two richer ones),
# smooth nonlinear ones up to all 10 parameters, and nonconvex ones (phase-shifted sines,
# rational terms, logs: several basins, or points where the loss is nan), where the exact and
# the numerical gradient can lead BFGS to different optima.
LINEAR, NONLINEAR, NONCONVEX = "linear", "nonlinear", "nonconvex"
BODIES = [
    (LINEAR, "    return params[0] * x + params[1] * v + params[2]\n"),
    (
        LINEAR,
        "    return params[0] * x + params[1] * v + params[2] * x ** 3 + params[3] * v ** 3"
        " + params[4] * x * v\n",
    ),
    (
        LINEAR,
        "    return params[0] * np.sin(x) + params[1] * v * np.abs(v)"
        " + params[2] * x * np.exp(-v ** 2) + params[3]\n",
    ),
    (
        NONLINEAR,
        "    return params[0] * x + params[1] * v + params[2] * x ** 3 + params[3] * np.sin(params[4] * x)\n",
    ),
    (
        NONLINEAR,
        "    return params[0] * np.sin(params[1] * x) + params[2] * v * np.abs(v) + params[3] * x ** 3\n",
    ),
    (NONLINEAR, "    return params[0] * x * np.exp(-params[1] * np.abs(v)) + params[2] * v + params[3]\n"),
    (
        NONLINEAR,
        """\
    s = params[0] * x + params[1] * v + params[2] * x ** 3 + params[3] * np.sin(params[4] * x)
    t = params[5] * v ** 3 + params[6] * np.exp(-params[7] * x ** 2) * v
    return s + t + params[8] * np.tanh(params[9] * v)
""",
    ),
    (NONCONVEX, "    return params[0] * np.sin(params[1] * x + params[2]) + params[3] * v\n"),
    (
        NONCONVEX,
        "    return params[0] * np.sin(params[1] * x + params[2])"
        " + params[3] * np.cos(params[4] * v + params[5])\n",
    ),
    (
        NONCONVEX,
        "    return params[0] * np.sin(params[1] * x) * np.cos(params[2] * v + params[3]) + params[4]\n",
    ),
    (NONCONVEX, "    return params[0] * np.sin(params[1] * x + params[2] * v) + params[3] * x\n"),
    (NONCONVEX, "    return params[0] * np.sin(params[1] * x * v + params[2])\n"),
    (NONCONVEX, "    return params[0] * x / (params[1] + params[2] * v ** 2) + params[3] * v\n"),
    (
        NONCONVEX,
        "    return params[0] * x / (params[1] + x ** 2) + params[2] * v / (params[3]"
        " + params[4] * v ** 2)\n",
    ),
    (
        NONCONVEX,
        "    return (params[0] * x + params[1] * v) / (params[2]"
        " + params[3] * x ** 2 + params[4] * v ** 2)\n",
    ),
    (NONCONVEX, "    return params[0] / (params[1] + params[2] * x) + params[3] * v\n"),
    (NONCONVEX, "    return params[0] * np.log(np.abs(params[1] * x) + params[2]) + params[3] * v\n"),
    (NONCONVEX, "    return params[0] * np.log(params[1] + params[2] * x ** 2) * x + params[3] * v\n"),
    (NONCONVEX, "    return params[0] * np.log(params[1] * x + params[2]) + params[3] * v\n"),
    (
        NONCONVEX,
        "    return params[0] * x * np.log(np.abs(params[1] * v)"
        " + params[2]) + params[3] * np.sin(params[4] * x)\n",
    ),
    (NONCONVEX, "    return params[0] * np.sqrt(params[1] + params[2] * x) + params[3] * v\n"),
    (
        NONCONVEX,
        "    return params[0] * np.exp(params[1] * x) * np.sin(params[2] * v + params[3]) + params[4] * x\n",
    ),
    (NONCONVEX, "    return params[0] * np.tanh(params[1] * x + params[2]) + params[3] * v ** params[4]\n"),
]

HEADER = "def equation(x: np.ndarray, v: np.ndarray, params: np.ndarray) -> np.ndarray:\n"

# The reference's program after code_manipulation (decorators dropped, evolved body spliced in).
REFERENCE_PREFACE = '''"""
Find the mathematical function skeleton that represents acceleration in a damped nonlinear \
oscillator system with driving force, given data on position, and velocity.
"""


import numpy as np

#Initialize parameters
MAX_NPARAMS = 10
params = [1.0]*MAX_NPARAMS


def evaluate(data: dict) -> float:
    """ Evaluate the equation on data observations."""

    # Load data observations
    inputs, outputs = data['inputs'], data['outputs']
    x, v = inputs[:,0], inputs[:,1]

    # Optimize parameters based on data
    from scipy.optimize import minimize
    def loss(params):
        y_pred = equation(x, v, params)
        return np.mean((y_pred - outputs) ** 2)

    loss_partial = lambda params: loss(params)
    result = minimize(loss_partial, [1.0]*MAX_NPARAMS, method='BFGS')

    # Return evaluation score
    optimized_params = result.x
    loss = result.fun

    if np.isnan(loss) or np.isinf(loss):
        return None
    else:
        return -loss

'''


def _reference_child(program: str, function_to_run: str, dataset: dict[str, Any], result_queue: Any) -> None:
    """LocalSandbox._compile_and_run_function, as in the reference (bench baseline only)."""
    try:
        namespace: dict[str, Any] = {}
        exec(program, namespace)  # the baseline being re-created; never in the product
        results = namespace[function_to_run](dataset)
        if not isinstance(results, (int, float)):
            result_queue.put((None, False))
            return
        result_queue.put((results, True))
    except Exception as exc:
        print(f"Execution Error: {exc}")
        result_queue.put((None, False))


def reference_candidate(body: str, dataset: dict[str, Any], timeout_s: float = 30.0) -> float | None:
    """LocalSandbox.run for one candidate: splice, fork, exec, BFGS, poll the queue."""
    program = REFERENCE_PREFACE + "\n" + HEADER + body + "\n"
    ctx = multiprocessing.get_context("fork")
    result_queue = ctx.Queue()
    process = ctx.Process(target=_reference_child, args=(program, "evaluate", dataset, result_queue))
    process.start()
    process.join(timeout=timeout_s)
    if process.is_alive():
        process.terminate()
        process.join()
        return None
    for _ in range(5):
        if not result_queue.empty():
            score, ok = result_queue.get_nowait()
            return float(score) if ok else None
        time.sleep(0.1)
    return None


def ours_candidate(body: str, X: np.ndarray, y: np.ndarray, limits: Any) -> tuple[float, str]:
    """(training MSE, fit method) as the llmsr method scores a candidate (inf: invalid)."""
    from pytest_lsrb.equations import parse_function
    from pytest_lsrb.srbench.fitting.fit import fit_program

    program = parse_function(HEADER + body, ["x", "v"])
    result = fit_program(program, X, y, seed=0, limits=limits)
    return result.mse, result.method


def in_process_reference(body: str, X: np.ndarray, y: np.ndarray) -> float:
    """The reference's procedure without its sandbox: BFGS from ten ones, numerical gradients, on
    the skeleton as numpy code (the baseline's `exec` again; never in the product)."""
    from scipy.optimize import minimize

    namespace: dict[str, Any] = {"np": np}
    exec(HEADER + body, namespace)
    equation = namespace["equation"]
    x, v = X[:, 0], X[:, 1]

    def loss(params: np.ndarray) -> float:
        return float(np.mean((equation(x, v, params) - y) ** 2))

    with np.errstate(all="ignore"):
        value = float(minimize(loss, [1.0] * 10, method="BFGS").fun)
    return value if math.isfinite(value) else math.inf  # the reference's None


def _timed(fn: Any, repeats: int) -> tuple[float, Any]:
    times, value = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), value


AGREE_RTOL = 1e-6


def gap(ours: float, ref: float) -> float | None:
    """ours / ref - 1; 0 when both are invalid; None when exactly one is."""
    if not math.isfinite(ref) or not math.isfinite(ours):
        return 0.0 if math.isfinite(ref) == math.isfinite(ours) else None
    return ours / ref - 1.0 if ref > 0 else (0.0 if ours == ref else math.inf)


def agrees(g: float | None) -> bool:
    return g is not None and abs(g) <= AGREE_RTOL


def _gap_text(g: float | None) -> str:
    return "inv" if g is None else f"{g:.1e}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-sandbox", action="store_true", help="skip the forked baseline (faster)")
    args = parser.parse_args(argv)
    if not DATA.is_file():
        print(f"skipped: {DATA} is missing")
        return 0
    table = np.loadtxt(DATA, delimiter=",", skiprows=1)
    X, y = np.ascontiguousarray(table[:, :-1]), np.ascontiguousarray(table[:, -1])
    dataset = {"inputs": X, "outputs": y}  # LLM-SR's main.py: inputs = df[:, :-1], outputs = df[:, -1]

    from pytest_lsrb.srbench.fitting.fit import FitLimits, tune_allocator

    tune_allocator()  # before any fork: the baseline inherits it (see the module docstring)
    reference_candidate(BODIES[0][1], dataset)  # warm imports and first-call costs outside the timings
    ours_candidate(BODIES[0][1], X, y, FitLimits())
    policies = {
        "reference": FitLimits(),
        "fast": FitLimits(policy="fast"),
        "enhanced": FitLimits(policy="enhanced"),
    }
    print(
        f"per candidate on {len(y)} rows of oscillator1, median of {args.repeats} "
        f"(python {sys.version.split()[0]}); gap = policy / reference loss - 1 (negative: lower; inv: "
        "valid on one side only)"
    )
    print(
        f"{'#':>3} {'class':>9} {'sandbox ms':>10} {'in-proc ms':>10} {'ref ms':>8} {'fast ms':>8} "
        f"{'enh ms':>8} {'ref loss':>11} {'ref gap':>8} {'fast gap':>9} {'enh gap':>9}"
    )
    rows: list[dict[str, Any]] = []
    for i, (kind, body) in enumerate(BODIES):
        t_box = (
            math.nan
            if args.no_sandbox
            else _timed(lambda b=body: reference_candidate(b, dataset), args.repeats)[0]
        )
        t_ref, ref = _timed(lambda b=body: in_process_reference(b, X, y), args.repeats)
        row: dict[str, Any] = {"kind": kind, "box": t_box, "inproc": t_ref}
        for name, limits in policies.items():
            t, (loss, _method) = _timed(lambda b=body, lim=limits: ours_candidate(b, X, y, lim), args.repeats)
            row[name] = (t, gap(loss, ref))
        rows.append(row)
        print(
            f"{i:>3} {kind:>9} {t_box * 1000:>10.1f} {t_ref * 1000:>10.1f} "
            + " ".join(f"{row[n][0] * 1000:>8.1f}" for n in policies)
            + f" {ref:>11.4e} "
            + " ".join(f"{_gap_text(row[n][1]):>8}" for n in policies)
        )
    for label in (LINEAR, NONLINEAR, NONCONVEX, "all"):
        group = [r for r in rows if label in ("all", r["kind"])]
        speed = {
            n: statistics.median(r["inproc"] / r[n][0] for r in group)
            for n in ("reference", "fast", "enhanced")
        }
        agreement = {n: sum(agrees(r[n][1]) for r in group) for n in policies}
        print(
            f"{label} ({len(group)}): speed-up vs the reference's BFGS in-process: "
            + ", ".join(f"{n} {speed[n]:.1f}x" for n in policies)
            + "; optimum within 1e-6 of the reference's: "
            + ", ".join(
                f"{n} {agreement[n]}/{len(group)} ({100 * agreement[n] / len(group):.0f} %)" for n in policies
            )
        )
    if not args.no_sandbox:
        box = statistics.median(r["box"] / r["reference"][0] for r in rows)
        fast = statistics.median(r["box"] / r["fast"][0] for r in rows)
        print(
            f"median speed-up vs the reference's sandboxed candidate: reference {box:.1f}x, fast {fast:.1f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
