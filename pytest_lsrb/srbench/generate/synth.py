"""LSR-Synth-style problems: known + novel terms combined, checked for solvability, sampled.

- ODE domains (chemistry dA/dt, biology dP/dt, physics dv/dt with dx/dt = v) are integrated with
  `scipy.integrate.solve_ivp`; the solvability check (`solvability.py`) rejects a candidate, the
  reason counted in the report, when its rate is not finite, it blows up, needs too many
  evaluations, turns non-physical or is stiff on the data's time scale.
- OOD per domain as the official release builds it (`sweep.py`, with the rows it was read off):
  the rows are one evenly spaced sweep of time (chemistry t 0..60 from A = 1, biology t 1..60
  from P = 1, physics t 0..40 from x = 1, v = 0) or of strain and temperature together
  (material science, epsilon 0..0.6 with T 273..573); the last tenth of the sweep is the OOD
  test, the first nine tenths are shuffled into train and in-domain test — except that a row
  whose target is exactly 0 (stress at zero strain) goes to train: Acc_tau divides by |y|, so in
  a test split it would fail every equation, the truth included (the release's random split
  leaves it in test one time in nine).
- OOD data must vary: as stored, the OOD targets' variance must be at least `MIN_OOD_SPREAD` of
  the in-domain targets' (`ood_degenerate` otherwise). The release keeps settled processes (its
  chemistry and biology rows: OOD variance 4e-7..2e-3 of the in-domain variance), so the bar only
  rejects a process that has stopped: the release's oscillators PO5 and PO20, at rest by t = 36 (OOD
  variance 1e-11 of the in-domain one, targets of 1e-6), would be rejected here.
- OOD data must be out of domain for the equation: at least `MIN_OOD_OUTSIDE` of the OOD rows
  lie outside the in-domain box (min..max) of some input the equation uses (t included); a
  candidate that falls short (an autonomous oscillator that swings inside its earlier box) is
  rejected as `ood_interpolation`. This is the project's filter; the release has none.
- Names start with `gen-` (`GENERATED_PREFIX`): `gen-CRK0` is never the release's `CRK0`.

Everything is drawn from `numpy.random.default_rng` seeded by a stable hash of (seed, domain,
attempt), so the same seed gives the same problems on every machine, to the precision the data
are stored at (data/precision.py: the integrator differs between CPUs in the last bits). The
accept/reject thresholds compare quantities far from their limits for the term libraries here;
a candidate within a few ulps of one could in principle be decided differently on another CPU.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from pytest_lsrb.core.seeds import stable_hash
from pytest_lsrb.equations import Program, parse_expression
from pytest_lsrb.srbench.data.precision import stored_split
from pytest_lsrb.srbench.data.problem import GENERATED_PREFIX, SYNTH_SET, Problem, output_first
from pytest_lsrb.srbench.generate.solvability import integrate
from pytest_lsrb.srbench.generate.sweep import SWEEPS, Sweep, sweep_columns
from pytest_lsrb.srbench.generate.terms import DOMAINS, DomainSpec, Term

MIN_OOD_SPREAD: Final = 1e-8  # var(OOD targets) / var(in-domain targets), as stored
MIN_OOD_OUTSIDE: Final = 0.5  # OOD rows outside the in-domain box of the used inputs


@dataclass
class SynthReport:
    problems: list[Problem] = field(default_factory=list)
    attempts: int = 0
    rejected: Counter[str] = field(default_factory=Counter)

    def summary(self) -> dict[str, Any]:
        return {
            "problems": len(self.problems),
            "attempts": self.attempts,
            "rejected": dict(sorted(self.rejected.items())),
        }


def _coefficient(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(f"{rng.uniform(lo, hi):.3g}")


def _render(term: Term, rng: np.random.Generator) -> str:
    values = {name: _coefficient(rng, *rng_range) for name, rng_range in term.coeffs.items()}
    return term.template.format(**{k: repr(v) for k, v in values.items()})


def compose(spec: DomainSpec, rng: np.random.Generator) -> tuple[str, list[str]]:
    """(equation text, term tags): the required terms, 1-2 known and 1-2 novel terms."""
    n_known = 1 + int(rng.random() < 0.35)
    n_novel = 1 + int(rng.random() < 0.35)
    known: list[Term] = []
    for i in rng.permutation(len(spec.known)):
        term = spec.known[int(i)]
        if not term.family or all(term.family != k.family for k in known):
            known.append(term)
        if len(known) == n_known:
            break
    known.sort(key=spec.known.index)
    novel = [spec.novel[i] for i in sorted(rng.choice(len(spec.novel), n_novel, replace=False))]
    terms = [*spec.required, *known, *novel]
    text = ""
    for term in terms:
        part = _render(term, rng)
        if not text:
            text = part
        elif part.startswith("-"):
            text += " - " + part[1:]
        else:
            text += " + " + part
    return text, [t.tag for t in terms]


def ode_data(
    spec: DomainSpec, sweep: Sweep, program: Program, n_id: int, n_ood: int
) -> tuple[np.ndarray, np.ndarray] | str:
    """(ID table, OOD table) with columns in `spec.symbols` order, or why the candidate fails the
    solvability check (`solvability.integrate`): one trajectory from the sweep's initial state,
    sampled at the sweep's in-domain times, then its OOD times."""
    state_names = list(sweep.initial)
    id_cols, ood_cols = sweep_columns(sweep, n_id, n_ood)
    t_eval = np.concatenate([id_cols["t"], ood_cols["t"]])
    inputs = spec.symbols[1:]
    states = integrate(
        program,
        inputs,
        state_names,
        [sweep.initial[s] for s in state_names],
        t_eval,
        state_bound=sweep.state_bound,
        positive_state=sweep.positive_state,
        window_length=sweep.id_length,
    )
    if isinstance(states, str):
        return states
    cols = {"t": t_eval, **{n: states[i] for i, n in enumerate(state_names)}}
    out = program.evaluate({k: cols[k] for k in inputs})
    table = np.column_stack([out, *[cols[k] for k in inputs]])
    return table[:n_id], table[n_id:]


def _static_data(
    spec: DomainSpec, sweep: Sweep, program: Program, n_id: int, n_ood: int
) -> tuple[np.ndarray, np.ndarray]:
    inputs = spec.symbols[1:]
    tables = []
    for cols in sweep_columns(sweep, n_id, n_ood):
        tables.append(np.column_stack([program.evaluate(cols), *[cols[k] for k in inputs]]))
    return tables[0], tables[1]


def _degenerate(table: np.ndarray) -> bool:
    y = table[:, 0]
    scale = float(np.mean(np.abs(y))) + 1e-12
    return bool(np.std(y) < 1e-3 * scale or np.abs(y).max() > 1e6)


def ood_spread(id_table: np.ndarray, ood_table: np.ndarray, truth: Program) -> float:
    """var(OOD targets) / var(in-domain targets), both as they will be stored."""
    var_id = float(np.var(stored_split(id_table, truth)[:, 0]))
    var_ood = float(np.var(stored_split(ood_table, truth)[:, 0]))
    return var_ood / var_id if var_id > 0 else 0.0


def ood_outside_share(
    id_table: np.ndarray, ood_table: np.ndarray, inputs: Sequence[str], truth: Program
) -> float:
    """The share of OOD rows with at least one input the equation uses outside that input's
    in-domain range (columns: the target, then `inputs`); 0 when there is none."""
    used = [i + 1 for i, name in enumerate(inputs) if name in truth.used_variables]
    if not used or not len(ood_table):
        return 0.0
    lo, hi = id_table[:, used].min(axis=0), id_table[:, used].max(axis=0)
    outside = (ood_table[:, used] < lo) | (ood_table[:, used] > hi)
    return float(outside.any(axis=1).mean())


def candidate_data(
    spec: DomainSpec, sweep: Sweep, program: Program, n_id: int, n_ood: int
) -> tuple[np.ndarray, np.ndarray] | str:
    """(ID table, OOD table) for an accepted candidate, or why it is rejected."""
    if spec.ode:
        data = ode_data(spec, sweep, program, n_id, n_ood)
        if isinstance(data, str):
            return data
    else:
        data = _static_data(spec, sweep, program, n_id, n_ood)
    id_table, ood_table = data
    if not (np.isfinite(id_table).all() and np.isfinite(ood_table).all()):
        return "non_finite_rate"
    if _degenerate(id_table):
        return "degenerate"
    if ood_spread(id_table, ood_table, program) < MIN_OOD_SPREAD:
        return "ood_degenerate"
    if ood_outside_share(id_table, ood_table, spec.symbols[1:], program) < MIN_OOD_OUTSIDE:
        return "ood_interpolation"
    return id_table, ood_table


def generate_synth(
    domain: str,
    *,
    count: int | None = None,
    seed: int = 0,
    n_train: int = 500,
    n_test: int = 250,
    n_ood: int = 250,
    max_attempts_factor: int = 20,
) -> SynthReport:
    """`count` problems for one domain (default: the benchmark's count for it)."""
    spec = DOMAINS[domain]
    sweep = SWEEPS[domain]
    wanted = spec.default_count if count is None else count
    report = SynthReport()
    seen: set[str] = set()
    n_id = n_train + n_test
    while len(report.problems) < wanted and report.attempts < max_attempts_factor * max(wanted, 1):
        attempt = report.attempts
        report.attempts += 1
        rng = np.random.default_rng(stable_hash(SYNTH_SET, seed, domain, attempt) % 2**63)
        text, tags = compose(spec, rng)
        key = "+".join(sorted(tags))
        if key in seen and len(seen) < _combinations(spec):
            report.rejected["duplicate_form"] += 1
            continue
        program = parse_expression(text, list(spec.symbols[1:]))
        data = candidate_data(spec, sweep, program, n_id, n_ood)
        if isinstance(data, str):
            report.rejected[data] += 1
            continue
        id_table, ood_table = data
        seen.add(key)
        order = rng.permutation(n_id)  # the in-domain sweep shuffled into train and test
        # ...except that a row whose target is 0 (a stress at zero strain) goes to train: Acc_tau
        # divides by |y|, so in a test split it would fail every equation, the truth included.
        order = order[np.argsort(id_table[order, 0] != 0, kind="stable")]
        index = len(report.problems)
        report.problems.append(
            Problem(
                name=f"{GENERATED_PREFIX}{spec.prefix}{index}",
                symbols=list(spec.symbols),
                symbol_descs=list(spec.symbol_descs),
                symbol_properties=output_first(len(spec.symbols) - 1),
                expression=text,
                desc=spec.desc,
                problem_set=SYNTH_SET,
                domain=domain,
                train=id_table[order[:n_train]],
                test=id_table[order[n_train:]],
                ood_test=ood_table,
            )
        )
    return report


def _combinations(spec: DomainSpec) -> int:
    from math import comb

    k, n = len(spec.known), len(spec.novel)
    return (k + comb(k, 2)) * (n + comb(n, 2))


def generate_all_synth(
    domains: Sequence[str] | None = None,
    *,
    seed: int = 0,
    counts: dict[str, int] | None = None,
    **kwargs: Any,
) -> dict[str, SynthReport]:
    out: dict[str, SynthReport] = {}
    for domain in domains or list(DOMAINS):
        out[domain] = generate_synth(domain, count=(counts or {}).get(domain), seed=seed, **kwargs)
    return out
