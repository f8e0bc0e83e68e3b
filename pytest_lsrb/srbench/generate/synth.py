"""LSR-Synth-style problems: known + novel terms combined, checked for solvability, sampled.

- ODE domains (chemistry dA/dt, biology dP/dt, physics dv/dt with dx/dt = v) are integrated with
  `scipy.integrate.solve_ivp`; the solvability check (`solvability.py`) rejects a candidate, the
  reason counted in the report, when its rate is not finite, it blows up, needs too many
  evaluations, turns non-physical or is stiff on the data's time scale.
- OOD per domain as the official data build it (issue #40). Chemistry and biology: in-domain data
  from the first time window, OOD from a later one (the release's biology rows: in-domain t up to
  ~50, OOD t from ~54 on). Physics as LLM-SR's oscillators, the set LLM-SRBench's physics
  follows: OOD is the trajectory's start, t in [0, 20), in-domain a later window, t in [30, 50],
  so OOD holds the larger motion before it settles — its x and v leave the in-domain box (LLM-SR's
  oscillator1: 92 % of OOD rows, oscillator2: 69 %), not only t. Material science is static:
  stress(strain, temperature); OOD data come from a higher strain and temperature range.
- OOD data must vary: as stored, the OOD targets' variance must be at least `MIN_OOD_SPREAD` of
  the in-domain targets' (`ood_degenerate` otherwise: a reaction that is over, a population at
  its carrying capacity, where NMSE_OOD = mse/var(y_ood) would divide by next to nothing).
  An ODE candidate that falls short is integrated again with both time windows halved, then
  quartered (`WINDOW_SCALES`, a fresh draw of the start and times), and rejected when none
  reaches the spread.
- OOD data must be out of domain for the equation: at least `MIN_OOD_OUTSIDE` of the OOD rows
  lie outside the in-domain box (min..max) of some input the equation uses — for physics, of a
  state (x or v), since t alone leaving its range is no new motion; a candidate that falls short
  is rejected as `ood_interpolation`.
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
from dataclasses import dataclass, field, replace
from typing import Any, Final

import numpy as np

from pytest_lsrb.core.seeds import stable_hash
from pytest_lsrb.equations import Program, parse_expression
from pytest_lsrb.srbench.data.precision import stored_split
from pytest_lsrb.srbench.data.problem import GENERATED_PREFIX, SYNTH_SET, Problem, output_first
from pytest_lsrb.srbench.generate.solvability import integrate
from pytest_lsrb.srbench.generate.terms import DOMAINS, DomainSpec, Term

MIN_OOD_SPREAD: Final = 0.01  # var(OOD targets) / var(in-domain targets), as stored
MIN_OOD_OUTSIDE: Final = 0.5  # OOD rows outside the in-domain box of the used inputs
WINDOW_SCALES: Final = (1.0, 0.5, 0.25)


@dataclass(frozen=True)
class Window:
    """Where a domain's data come from: initial states and time windows (ODE) or input ranges."""

    initial: dict[str, tuple[float, float]]  # ODE: state variable -> initial range
    id_window: tuple[float, float] = (0.0, 0.0)
    ood_window: tuple[float, float] = (0.0, 0.0)
    id_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)  # static inputs
    ood_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)
    positive_state: bool = False
    state_bound: float = 1e4
    # Inputs the OOD rows must leave the in-domain box of (those the equation uses among them);
    # None: any input the equation uses.
    ood_inputs: tuple[str, ...] | None = None


WINDOWS: Final[dict[str, Window]] = {
    "chem_react": Window(
        initial={"A": (0.5, 2.0)}, id_window=(0.0, 30.0), ood_window=(30.0, 45.0), positive_state=True
    ),
    "bio_pop_growth": Window(
        initial={"P": (5.0, 20.0)}, id_window=(0.0, 30.0), ood_window=(30.0, 45.0), positive_state=True
    ),
    # LLM-SR's oscillators: OOD t in [0, 20) from the initial state, in-domain t in [30, 50].
    "phys_osc": Window(
        initial={"x": (0.5, 1.5), "v": (-0.5, 0.5)},
        id_window=(30.0, 50.0),
        ood_window=(0.0, 20.0),
        state_bound=100.0,
        ood_inputs=("x", "v"),
    ),
    "matsci": Window(
        initial={},
        id_ranges={"epsilon": (0.01, 0.3), "T": (273.0, 373.0)},
        ood_ranges={"epsilon": (0.3, 0.45), "T": (373.0, 473.0)},
    ),
}


@dataclass
class SynthReport:
    problems: list[Problem] = field(default_factory=list)
    attempts: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    windows_shortened: int = 0  # problems whose time windows were shortened for OOD spread

    def summary(self) -> dict[str, Any]:
        return {
            "problems": len(self.problems),
            "attempts": self.attempts,
            "rejected": dict(sorted(self.rejected.items())),
            "windows_shortened": self.windows_shortened,
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
    spec: DomainSpec, win: Window, program: Program, rng: np.random.Generator, n_id: int, n_ood: int
) -> tuple[np.ndarray, np.ndarray] | str:
    """(ID table, OOD table) with columns in `spec.symbols` order, or why the candidate fails the
    solvability check (`solvability.integrate`)."""
    state_names = list(win.initial)
    y0 = [rng.uniform(*win.initial[s]) for s in state_names]
    t_id = np.sort(rng.uniform(*win.id_window, n_id))
    t_ood = np.sort(rng.uniform(*win.ood_window, n_ood))
    # One trajectory through both windows, in time order (the OOD window may come first).
    order = np.argsort(np.concatenate([t_id, t_ood]), kind="stable")
    t_eval = np.concatenate([t_id, t_ood])[order]
    inputs = spec.symbols[1:]
    states = integrate(
        program,
        inputs,
        state_names,
        y0,
        t_eval,
        state_bound=win.state_bound,
        positive_state=win.positive_state,
        window_length=win.id_window[1] - win.id_window[0],
    )
    if isinstance(states, str):
        return states
    cols = {"t": t_eval, **{n: states[i] for i, n in enumerate(state_names)}}
    out = program.evaluate({k: cols[k] for k in inputs})
    table = np.empty((t_eval.size, len(inputs) + 1))
    table[order] = np.column_stack([out, *[cols[k] for k in inputs]])  # back to [ID rows, OOD rows]
    return table[: t_id.size], table[t_id.size :]


def _static_data(
    spec: DomainSpec, win: Window, program: Program, rng: np.random.Generator, n_id: int, n_ood: int
) -> tuple[np.ndarray, np.ndarray]:
    inputs = spec.symbols[1:]
    tables = []
    for ranges, n in ((win.id_ranges, n_id), (win.ood_ranges, n_ood)):
        cols = {k: rng.uniform(*ranges[k], n) for k in inputs}
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
    id_table: np.ndarray,
    ood_table: np.ndarray,
    inputs: Sequence[str],
    truth: Program,
    among: Sequence[str] | None = None,
) -> float:
    """The share of OOD rows with at least one input the equation uses (and, given `among`, one
    of those) outside that input's in-domain range (columns: the target, then `inputs`); 0 when
    there is none."""
    used = [
        i + 1
        for i, name in enumerate(inputs)
        if name in truth.used_variables and (among is None or name in among)
    ]
    if not used or not len(ood_table):
        return 0.0
    lo, hi = id_table[:, used].min(axis=0), id_table[:, used].max(axis=0)
    outside = (ood_table[:, used] < lo) | (ood_table[:, used] > hi)
    return float(outside.any(axis=1).mean())


def candidate_data(
    spec: DomainSpec, win: Window, program: Program, rng: np.random.Generator, n_id: int, n_ood: int
) -> tuple[np.ndarray, np.ndarray, float] | str:
    """(ID table, OOD table, window scale) for an accepted candidate, or why it is rejected.

    ODE domains whose OOD targets barely vary (the process is over by the OOD window) are
    integrated again (a fresh draw) with both time windows scaled by `WINDOW_SCALES` in turn: the
    windows follow the process's own time scale, as long as one gives the stated spread."""
    reason = "ood_degenerate"
    for scale in WINDOW_SCALES if spec.ode else (1.0,):
        data = (
            ode_data(spec, _scaled(win, scale), program, rng, n_id, n_ood)
            if spec.ode
            else _static_data(spec, win, program, rng, n_id, n_ood)
        )
        if isinstance(data, str):
            return data
        id_table, ood_table = data
        if not (np.isfinite(id_table).all() and np.isfinite(ood_table).all()):
            return "non_finite_rate"
        if _degenerate(id_table):
            return "degenerate"
        if ood_spread(id_table, ood_table, program) >= MIN_OOD_SPREAD:
            share = ood_outside_share(id_table, ood_table, spec.symbols[1:], program, win.ood_inputs)
            if share < MIN_OOD_OUTSIDE:
                return "ood_interpolation"
            return id_table, ood_table, scale
    return reason


def _scaled(win: Window, scale: float) -> Window:
    if scale == 1.0:
        return win
    return replace(
        win,
        id_window=(win.id_window[0] * scale, win.id_window[1] * scale),
        ood_window=(win.ood_window[0] * scale, win.ood_window[1] * scale),
    )


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
    win = WINDOWS[domain]
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
        data = candidate_data(spec, win, program, rng, n_id, n_ood)
        if isinstance(data, str):
            report.rejected[data] += 1
            continue
        id_table, ood_table, scale = data
        if scale != 1.0:
            report.windows_shortened += 1
        seen.add(key)
        order = rng.permutation(n_id)
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
