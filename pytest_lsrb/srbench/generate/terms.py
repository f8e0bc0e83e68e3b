"""Term libraries for LSR-Synth-style problems (the project's own, one per domain).

Each domain has *known* terms (textbook forms) and *novel* terms (plausible but unusual forms).
A problem combines known and novel terms; each `{name}` placeholder becomes a coefficient drawn
from its range. Terms are written in the equation language.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final


@dataclass(frozen=True)
class Term:
    template: str
    coeffs: dict[str, tuple[float, float]] = field(default_factory=dict)
    tag: str = ""  # what it models
    family: str = ""  # at most one known term per family (e.g. two linear elastic laws)


@dataclass(frozen=True)
class DomainSpec:
    domain: str  # the LLM-SRBench split suffix: chem_react, bio_pop_growth, phys_osc, matsci
    prefix: str  # problem name prefix, as in the benchmark (CRK0, BPG0, PO0, MatSci0)
    symbols: tuple[str, ...]  # output first
    symbol_descs: tuple[str, ...]
    desc: str
    known: tuple[Term, ...]
    novel: tuple[Term, ...]
    required: tuple[Term, ...] = ()  # always present (e.g. the restoring force of an oscillator)
    ode: bool = True
    default_count: int = 0


CHEMISTRY: Final = DomainSpec(
    domain="chem_react",
    prefix="CRK",
    symbols=("dA_dt", "t", "A"),
    symbol_descs=(
        "rate of change of concentration in chemistry reaction kinetics",
        "time",
        "concentration at time t",
    ),
    desc="Chemistry: reaction kinetics. The rate of change of the concentration of a reactant A "
    "over time, dA/dt, as a function of time and concentration.",
    known=(
        Term("-{k}*A", {"k": (0.05, 0.4)}, "first_order", "linear"),
        Term("-{k}*A**2", {"k": (0.05, 0.4)}, "second_order"),
        Term("-{k}*A/(1 + {K}*A)", {"k": (0.1, 0.6), "K": (0.5, 3.0)}, "saturation", "linear"),
        Term("-{k}*A**1.5", {"k": (0.05, 0.3)}, "three_halves_order"),
    ),
    novel=(
        Term("-{k}*A*exp(-{s}*t)", {"k": (0.1, 0.5), "s": (0.02, 0.2)}, "decaying_catalyst"),
        Term("{k}*sin({w}*t)*A", {"k": (0.02, 0.1), "w": (0.2, 1.0)}, "periodic_rate"),
        Term("-{k}*A*log(1 + A)", {"k": (0.05, 0.3)}, "log_inhibition"),
        Term("{k}*exp(-{s}*t)", {"k": (0.02, 0.1), "s": (0.05, 0.3)}, "decaying_source"),
        Term("-{k}*A*tanh({s}*A)", {"k": (0.05, 0.3), "s": (0.5, 2.0)}, "tanh_saturation"),
        Term("-{k}*A/(1 + {s}*t)", {"k": (0.1, 0.4), "s": (0.05, 0.5)}, "aging_rate"),
    ),
    default_count=36,
)

BIOLOGY: Final = DomainSpec(
    domain="bio_pop_growth",
    prefix="BPG",
    symbols=("dP_dt", "t", "P"),
    symbol_descs=("population growth rate", "time", "population at time t"),
    desc="Biology: population growth. The rate of change of a population over time, dP/dt, as a "
    "function of time and population size.",
    known=(
        Term("{r}*P", {"r": (0.02, 0.1)}, "exponential", "linear"),
        Term("{r}*P*(1 - P/{K})", {"r": (0.1, 0.5), "K": (50.0, 150.0)}, "logistic", "linear"),
        Term("-{m}*P", {"m": (0.01, 0.05)}, "mortality", "linear"),
        Term(
            "{r}*P*(1 - P/{K})*(P/{a} - 1)",
            {"r": (0.05, 0.2), "K": (60.0, 150.0), "a": (1.0, 4.0)},
            "allee",
            "linear",
        ),
    ),
    novel=(
        Term("{r}*P**0.333333", {"r": (0.2, 1.0)}, "cube_root_growth"),
        Term("{r}*P*exp(-{g}*t)", {"r": (0.05, 0.3), "g": (0.02, 0.1)}, "decaying_growth"),
        Term("{r}*P*sin({w}*t)", {"r": (0.02, 0.1), "w": (0.1, 0.6)}, "seasonal"),
        Term("{r}*P**2/(1 + {c}*P)", {"r": (0.005, 0.02), "c": (0.05, 0.5)}, "cooperative"),
        Term("-{m}*P**2/({h} + P**2)", {"m": (1.0, 5.0), "h": (50.0, 400.0)}, "predation"),
        Term("{r}*P*log(1 + P)/(1 + {c}*P)", {"r": (0.05, 0.2), "c": (0.01, 0.1)}, "log_growth"),
    ),
    default_count=24,
)

PHYSICS: Final = DomainSpec(
    domain="phys_osc",
    prefix="PO",
    symbols=("dv_dt", "t", "x", "v"),
    symbol_descs=(
        "acceleration in a nonlinear harmonic oscillator",
        "time",
        "position at time t",
        "velocity at time t",
    ),
    desc="Physics: a damped nonlinear oscillator. The acceleration dv/dt as a function of time, "
    "position and velocity.",
    required=(Term("-{w2}*x", {"w2": (0.5, 3.0)}, "spring"),),
    known=(
        Term("-{g}*v", {"g": (0.05, 0.5)}, "damping"),
        Term("-{b}*x**3", {"b": (0.1, 1.0)}, "duffing"),
        Term("{F}*sin({w}*t)", {"F": (0.1, 1.0), "w": (0.5, 2.0)}, "driving"),
    ),
    novel=(
        Term("-{g}*v**3", {"g": (0.1, 0.8)}, "cubic_damping"),
        Term("-{a}*sin(x)", {"a": (0.2, 1.5)}, "pendulum"),
        Term("-{c}*v*abs(v)", {"c": (0.1, 0.6)}, "quadratic_drag"),
        Term("-{d}*x**2*v", {"d": (0.1, 1.0)}, "van_der_pol_like"),
        Term("-{k}*x*exp(-abs(x))", {"k": (0.2, 1.0)}, "screened_spring"),
        Term("{F}*cos({w}*t)*x", {"F": (0.05, 0.4), "w": (0.5, 2.0)}, "parametric"),
    ),
    default_count=43,
)

MATERIAL: Final = DomainSpec(
    domain="matsci",
    prefix="MatSci",
    symbols=("sigma", "epsilon", "T"),
    symbol_descs=("stress", "strain", "temperature"),
    desc="Material science: the stress in a material as a function of its strain and temperature.",
    known=(
        Term("{E}*epsilon", {"E": (50.0, 200.0)}, "hooke", "elastic"),
        Term(
            "{E}*epsilon*(1 - {alpha}*(T - {T0}))",
            {"E": (50.0, 200.0), "alpha": (0.0005, 0.003), "T0": (273.0, 300.0)},
            "thermal_softening",
            "elastic",
        ),
        Term("{K}*epsilon**{n}", {"K": (50.0, 150.0), "n": (0.2, 0.6)}, "power_hardening"),
        Term("-{beta}*(T - {T0})", {"beta": (0.01, 0.1), "T0": (273.0, 300.0)}, "thermal_stress"),
    ),
    novel=(
        Term("{s}*(1 - exp(-epsilon/{e0}))", {"s": (5.0, 30.0), "e0": (0.02, 0.1)}, "saturating"),
        Term(
            "{s}*epsilon*exp(-{q}*(T - {T0}))",
            {"s": (20.0, 80.0), "q": (0.002, 0.01), "T0": (273.0, 300.0)},
            "arrhenius_softening",
        ),
        Term("{s}*log(1 + {c}*epsilon)", {"s": (5.0, 20.0), "c": (5.0, 50.0)}, "log_hardening"),
        Term(
            "{s}*tanh(epsilon/{e0})*(T/{T0})",
            {"s": (2.0, 10.0), "e0": (0.05, 0.2), "T0": (273.0, 300.0)},
            "tanh_thermal",
        ),
        Term("{s}*epsilon**2*sqrt(T)", {"s": (1.0, 5.0)}, "quadratic_thermal"),
    ),
    ode=False,
    default_count=25,
)

DOMAINS: Final[dict[str, DomainSpec]] = {d.domain: d for d in (CHEMISTRY, BIOLOGY, PHYSICS, MATERIAL)}
