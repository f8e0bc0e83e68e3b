"""What a generated problem set was made with, and the precision its data are stored at.

ODE integration (`solve_ivp`) and numpy's vectorised kernels differ between CPUs in the last
bits (1e-16..1e-11 relative), so the same seed cannot promise bit-identical data everywhere.
Values are therefore stored rounded to 24 significant bits (float32's precision, about 7
significant digits, in float64's range), and `manifest.json` beside the index records the
generator's settings, the integrator's settings and the library versions, so a regeneration can
be compared with the stored set within that precision. The output column is computed from the
ground truth at the stored (rounded) inputs before it is rounded itself: rounding an input of an
ill-conditioned equation (a population at equilibrium, where dP/dt is 1e-9) would otherwise move
its true output by more than the output's own size.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np

from pytest_lsrb.equations import Program

MANIFEST_FILE: Final = "manifest.json"
STORED_BITS: Final = 24  # significant bits kept in stored data (float32's 24-bit significand)
# scipy.integrate.solve_ivp settings for the ODE domains of LSR-Synth.
INTEGRATOR: Final[Mapping[str, Any]] = {
    "function": "scipy.integrate.solve_ivp",
    "method": "LSODA",
    "rtol": 1e-8,
    "atol": 1e-10,
}


def stored_precision(values: np.ndarray) -> np.ndarray:
    """`values` rounded to STORED_BITS significant bits (exact in float64; zeros, infinities and
    NaN unchanged)."""
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        mantissa, exponent = np.frexp(values)
        scale = float(2**STORED_BITS)
        return np.ldexp(np.round(mantissa * scale) / scale, exponent)


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


def generation_manifest(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest of a generated set: `settings` (seed, sizes, families...) plus what else
    decides its numbers."""
    import scipy
    import sympy

    from pytest_lsrb import __version__

    return {
        "schema_version": 1,
        "generator": f"pytest-lsrb {__version__}",
        "settings": dict(settings),
        "stored_precision": f"values rounded to {STORED_BITS} significant bits (float32's precision)",
        "integrator": dict(INTEGRATOR),
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "sympy": sympy.__version__,
        },
        "machine": platform.machine(),
    }


def write_manifest(index_path: Path, settings: Mapping[str, Any]) -> Path:
    path = Path(index_path).parent / MANIFEST_FILE
    path.write_text(
        json.dumps(generation_manifest(settings), indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    return path
