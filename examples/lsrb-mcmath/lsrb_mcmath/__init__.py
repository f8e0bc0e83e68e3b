"""lsrb-mcmath: multiple-choice arithmetic as a pytest-lsrb family (task `mcmath`, verifier
`mcmath_exact`), installed as its own package and found through its entry points."""
