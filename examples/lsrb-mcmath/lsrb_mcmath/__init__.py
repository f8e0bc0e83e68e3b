"""lsrb-mcmath: multiple-choice arithmetic as a pytest-lsrb family (task `mcmath`, verifier
`mcmath_exact`, suite `mcmath`), installed as its own package and found through its entry points."""

from pathlib import Path

# The suite folder, found by name through the `pytest_lsrb.suites` entry point (`lsrb run
# mcmath`): inside the package when installed from a wheel (pyproject's force-include), beside
# it in the source tree.
_HERE = Path(__file__).resolve().parent
SUITE = _HERE / "suite" if (_HERE / "suite").is_dir() else _HERE.parent / "suite"
