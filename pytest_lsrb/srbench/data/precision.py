"""The precision a problem set's data are stored at.

ODE integration (`solve_ivp`) and numpy's vectorised kernels differ between CPUs in the last
bits (1e-16..1e-11 relative), so the same seed cannot promise bit-identical data everywhere.
Values are therefore stored rounded to 24 significant bits (float32's precision, about 7
significant digits, in float64's range); generate/manifest.py records what else decides the
numbers. The output column is computed from the
ground truth at the stored (rounded) inputs before it is rounded itself: rounding an input of an
ill-conditioned equation (a population at equilibrium, where dP/dt is 1e-9) would otherwise move
its true output by more than the output's own size.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from pytest_lsrb.equations import Program

STORED_BITS: Final = 24  # significant bits kept in stored data (float32's 24-bit significand)


def stored_precision(values: np.ndarray) -> np.ndarray:
    """`values` rounded to STORED_BITS significant bits (exact in float64; zeros, infinities and
    NaN unchanged)."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        mantissa, exponent = np.frexp(values)
        scale = float(2**STORED_BITS)
        rounded: np.ndarray = np.ldexp(np.round(mantissa * scale) / scale, exponent)
        return rounded


def stored_split(data: np.ndarray, truth: Program | None) -> np.ndarray:
    """One split as stored: inputs rounded, the output (column 0) recomputed from `truth` at the
    rounded inputs where it is finite there, then rounded."""
    stored = stored_precision(data)
    if truth is not None:
        inputs = {name: stored[:, i + 1] for i, name in enumerate(truth.variables)}
        with np.errstate(all="ignore"):
            exact = truth.evaluate(inputs)
        keep = np.isfinite(exact)
        stored[keep, 0] = stored_precision(exact[keep])
    return stored
