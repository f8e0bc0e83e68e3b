"""The symbolic checker's far probe stays on the data's side of zero, also when the data touch
it (`srbench.scoring.probes.probe_points`; issue #40 item 5's release-built sweeps start at 0)."""

from __future__ import annotations

import numpy as np

from pytest_lsrb.equations import parse_expression
from pytest_lsrb.srbench.scoring.symbolic import symbolic_match


def test_data_that_start_at_zero_are_probed_on_their_side_of_it() -> None:
    """A release-built chemistry sweep starts at t = 0 (generate/sweep.py): probing t out to -600
    let exp(-0.0966*t) (e^58 there) swamp every other term, so dropping one looked idle and the
    truth failed to match itself."""
    t = np.linspace(0.0, 60.0, 300)
    cols = {"t": t, "A": np.exp(-t / 8.7)}
    text = "-0.281*A - 0.0593*A**1.5 + 0.0668*exp(-0.0966*t) - 0.263*A*tanh(1.05*A)"
    truth = parse_expression(text, ["t", "A"])
    assert symbolic_match(parse_expression(text, ["t", "A"], free_params=True), truth, cols).match is True
    fewer = parse_expression("c0*A + c1*A**1.5 + c2*A*tanh(c3*A)", ["t", "A"], free_params=True)
    assert symbolic_match(fewer, truth, cols).match is False  # still no subset
    # The mirror image: data ending at 0 from below are probed below it.
    neg = {"t": -t, "A": cols["A"]}
    mirrored = parse_expression("-0.281*A + 0.0668*exp(0.0966*t)", ["t", "A"])
    same = parse_expression("c0*A + c1*exp(c2*t)", ["t", "A"], free_params=True)
    assert symbolic_match(same, mirrored, neg).match is True
