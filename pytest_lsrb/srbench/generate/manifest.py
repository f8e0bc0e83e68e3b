"""What a generated problem set was made with.

ODE integration (`solve_ivp`) and numpy's vectorised kernels differ between CPUs in the last
bits (1e-16..1e-11 relative), so the same seed cannot promise bit-identical data everywhere.
Values are therefore stored at a stated precision (`srbench.data.precision`), and
`manifest.json` beside the index records the generator's settings, the integrator's settings and
the library versions, so a regeneration can be compared with the stored set within that precision.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np

from pytest_lsrb.srbench.data.precision import STORED_BITS

MANIFEST_FILE: Final = "manifest.json"
# scipy.integrate.solve_ivp settings for the ODE domains of LSR-Synth.
INTEGRATOR: Final[Mapping[str, Any]] = {
    "function": "scipy.integrate.solve_ivp",
    "method": "LSODA",
    "rtol": 1e-8,
    "atol": 1e-10,
}


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
