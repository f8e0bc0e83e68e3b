"""Where an LSR-Synth problem's rows lie, and which of them are OOD: the official release's rule.

The release (LLM-SRBench, HF `nnheui/llm-srbench`, `lsr_bench_data.hdf5`) publishes data, not
the code that made them; its evaluation code (github.com/deep-symbolic-mathematics/llm-srbench,
`bench/datamodules.py`, `bench/pipelines.py`) only reads `train_data`, `id_test_data` and
`ood_test_data`. The rule below is read off the release's rows as a public mirror holds them
(github.com/jiaruisu0218-cloud/STRIDE at 9d1ca636, `data/benchmark_dr/lsr_synth/<domain>/<name>/`
{train,test_id,test_ood}.csv: CRK3/15/19/22/29, BPG9/13/19/20/21, PO5/12/14/20/40,
MatSci1/3/5/12/23), the same in every problem of a domain:

- every problem has 5,000 rows: 4,000 train, 500 in-domain test, 500 OOD test;
- the rows are one sweep of evenly spaced points from the domain's start to its end value,
  the last tenth of the sweep is the OOD test, the first nine tenths are shuffled into train and
  in-domain test;
- chemistry: t from 0 to 60 (in-domain t <= 53.9988, OOD t from 54.0108), A = 1 at t = 0;
- biology: t from 1 to 60 (in-domain t <= 54.0988, OOD from 54.1106), P = 1 at t = 1;
- physics: t from 0 to 40 (in-domain t <= 35.9992, OOD from 36.0072), x = 1 and v = 0 at t = 0;
- material science: strain and temperature sweep together, epsilon from 0 to 0.6 and T from 273
  to 573 (T = 273 + 500 epsilon in every row, so the two inputs are collinear), OOD from
  epsilon 0.540108, T 543.054;
- no noise: the ODE targets are the rate at the integrated state (the finite-difference slope of
  the state differs from the target smoothly, lag-1 autocorrelation of the difference >= 0.93,
  as an integrator's error does, not as added noise would).

Here the in-domain rows are `n_id` evenly spaced points over the first nine tenths of the sweep
(start included) and the OOD rows `n_ood` evenly spaced points over the last tenth (end
included), so any sizes keep the release's spans; with the release's sizes (4,500 and 500) the
steps agree with the release's (60/4999 for chemistry) within 0.1 %, across the cut too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import numpy as np

OOD_FRACTION: Final = 0.1  # the release: the last 500 of 5,000 evenly spaced points


@dataclass(frozen=True)
class Sweep:
    """One domain's sweep: the inputs in `spans` run evenly and together from their first to
    their last value; an ODE's state starts at `initial` at the sweep's start."""

    spans: Mapping[str, tuple[float, float]]
    initial: Mapping[str, float] = field(default_factory=dict)  # ODE: state at the start
    positive_state: bool = False  # a concentration or population
    state_bound: float = 1e4  # a state past it has blown up

    @property
    def id_length(self) -> float:
        """The in-domain part's length in the first swept input (time for the ODEs)."""
        lo, hi = next(iter(self.spans.values()))
        return (1 - OOD_FRACTION) * (hi - lo)


SWEEPS: Final[Mapping[str, Sweep]] = {
    "chem_react": Sweep({"t": (0.0, 60.0)}, {"A": 1.0}, positive_state=True),
    "bio_pop_growth": Sweep({"t": (1.0, 60.0)}, {"P": 1.0}, positive_state=True),
    "phys_osc": Sweep({"t": (0.0, 40.0)}, {"x": 1.0, "v": 0.0}, state_bound=100.0),
    "matsci": Sweep({"epsilon": (0.0, 0.6), "T": (273.0, 573.0)}),
}


def sweep_fractions(n_id: int, n_ood: int) -> tuple[np.ndarray, np.ndarray]:
    """Where the in-domain and the OOD rows lie along a sweep, as fractions of it: `n_id` evenly
    spaced points from 0 and `n_ood` evenly spaced points to 1, each half a step from the cut at
    nine tenths: with the release's 9:1 sizes the steps on either side of the cut and across it
    agree within 0.1 %, as in the release's one even grid."""
    cut = 1.0 - OOD_FRACTION
    in_domain = cut * np.arange(n_id) / (n_id - 0.5)
    ood = 1.0 - OOD_FRACTION * np.arange(n_ood)[::-1] / (n_ood - 0.5)
    return in_domain, ood


def sweep_columns(sweep: Sweep, n_id: int, n_ood: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The swept inputs' values: (in-domain columns, OOD columns), each in sweep order."""
    f_id, f_ood = sweep_fractions(n_id, n_ood)
    spans = sweep.spans.items()
    return (
        {name: lo + f_id * (hi - lo) for name, (lo, hi) in spans},
        {name: lo + f_ood * (hi - lo) for name, (lo, hi) in spans},
    )
