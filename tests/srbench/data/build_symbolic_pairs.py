"""Builds `symbolic_pairs.json`, the labelled (ground truth, proposal) set for symbolic accuracy.

Run from the project root when the pairs change (it reads the AI-Feynman table once; the test
reads only the JSON it writes):

    .venv/bin/python tests/srbench/data/build_symbolic_pairs.py ../shared/data/feynman/FeynmanEquations.csv

Labels follow the paper's rule as `srbench.scoring.symbolic` states it: the two *families* (every number
but 0, ±1 and integer/half exponents, and every named parameter, a free constant; an overall
factor free) are equal. A superset, a subset or an approximation is `false`, whatever a human
reader would call "close". Kinds: rewrite (same family, rearranged), convention (constant
spelled otherwise: 3.14159 vs pi, a named constant vs a number), scale (an overall factor),
template (the truth has named parameters without values, as LSR-Synth's do), superset, subset,
approximation, different (another form). Each pair carries the variables' ranges (the domain the
checker samples).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from pytest_lsrb.srbench.generate.feynman import read_feynman_csv

X = {"x": [0.5, 3.0]}
XV = {"x": [0.5, 3.0], "v": [-1.0, 1.0]}
XY = {"x": [0.5, 3.0], "y": [0.5, 3.0]}
T = {"t": [0.0, 10.0], "A": [0.1, 2.0]}
P = {"t": [0.0, 30.0], "P": [5.0, 100.0]}
OSC = {"t": [0.0, 20.0], "x": [-1.5, 1.5], "v": [-1.0, 1.0]}
MAT = {"epsilon": [0.01, 0.3], "T": [273.0, 373.0]}
REL = {"m": [1.0, 5.0], "v": [1.0, 2.0], "c": [3.0, 10.0]}
R = {"r": [0.1, 5.0]}
WIDE = {"x": [-40.0, 40.0]}

# (truth, proposal, ranges, equivalent, kind, note)
HAND: list[tuple[str, str, dict[str, list[float]], bool, str, str]] = [
    ("2.5*x + 1.2", "a*x + b", X, True, "rewrite", "linear"),
    ("2.5*x + 1.2", "c0*x + c1", X, True, "rewrite", "linear, c-names"),
    ("0.5*x**2", "k*x*x", X, True, "rewrite", "power as product"),
    ("-0.227*A - 0.366*A**2", "a*A + b*A**2", T, True, "rewrite", "rate law"),
    ("-0.227*A - 0.366*A**2", "-A*(k1 + k2*A)", T, True, "rewrite", "factored rate law"),
    ("3*exp(0.5*x)", "a*exp(b*x)", X, True, "rewrite", "exponential"),
    ("3*exp(0.5*x)", "exp(b*x + c)", X, True, "rewrite", "a*exp(bx) as exp(bx + c)"),
    ("3*exp(0.5*x)", "a*exp(x)**b", X, True, "rewrite", "exp power"),
    ("3*exp(-0.2*t)*A", "a*A/exp(b*t)", T, True, "rewrite", "decay as division"),
    ("np.log(2*x)", "c + np.log(x)", X, True, "rewrite", "log of a product"),
    ("np.log(x**3)", "a*np.log(x)", X, True, "scale", "log of a power: a factor"),
    ("np.log(5*x) - np.log(2)", "np.log(x) + c", X, True, "rewrite", "log difference"),
    (
        "np.sin(x + 0.3)",
        "a*np.sin(x) + b*np.cos(x)",
        X,
        True,
        "rewrite",
        "phase shift as a sum (with the free factor)",
    ),
    ("(x + v)*(x - v)", "x**2 - v**2", XV, True, "rewrite", "difference of squares"),
    ("x/(1 + x)", "1 - 1/(1 + x)", X, True, "rewrite", "partial fraction"),
    ("x/(1 + 0.5*x)", "a*x/(b + x)", X, True, "rewrite", "Michaelis-Menten parametrisation"),
    ("2*x**1.5", "a*x*np.sqrt(x)", X, True, "rewrite", "half power"),
    ("np.sqrt(x**2)", "x", X, True, "rewrite", "positive domain"),
    (
        "np.tanh(x)",
        "(np.exp(x) - np.exp(-x))/(np.exp(x) + np.exp(-x))",
        X,
        True,
        "rewrite",
        "tanh definition",
    ),
    (
        "np.tanh(x)",
        "(np.exp(x) - np.exp(-x))/(np.exp(x) + np.exp(-x))",
        WIDE,
        True,
        "rewrite",
        "tanh definition where the far probe overflows exp",
    ),
    (
        "np.tanh(0.7*x)",
        "(np.exp(2*a*x) - 1)/(np.exp(2*a*x) + 1)",
        WIDE,
        True,
        "rewrite",
        "tanh with a rate as a ratio of exponentials, exp overflowing far out",
    ),
    ("np.cosh(x)", "(np.exp(x) + np.exp(-x))/2", X, True, "scale", "cosh definition"),
    ("0.0821*P + 0.398*P*(1 - P/100.0)", "r*P - s*P**2", P, True, "rewrite", "logistic plus linear"),
    ("0.3*P*(1 - P/80.0)", "r*P*(K - P)", P, True, "rewrite", "logistic, other constants"),
    ("0.2*P*np.exp(-0.05*t)", "P*np.exp(a - b*t)", P, True, "rewrite", "decaying growth"),
    (
        "-1.65*x - 0.154*v - 0.929*x*np.exp(-np.abs(x))",
        "-(a*x + b*v + c*x/np.exp(np.abs(x)))",
        OSC,
        True,
        "rewrite",
        "oscillator rearranged",
    ),
    (
        "-2.09*x + 0.934*np.sin(0.619*t) - 0.595*x**2*v",
        "a*x + b*np.sin(w*t) + c*v*x*x",
        OSC,
        True,
        "rewrite",
        "driven oscillator",
    ),
    (
        "144.0*epsilon + 3.26*epsilon**2*np.sqrt(T)",
        "epsilon*(E + s*epsilon*T**0.5)",
        MAT,
        True,
        "rewrite",
        "stress factored",
    ),
    (
        "52.2*epsilon*(1 - 0.00248*(T - 292.0))",
        "a*epsilon + b*epsilon*T",
        MAT,
        True,
        "rewrite",
        "thermal softening expanded",
    ),
    ("m*np.sqrt(1 - v**2/c**2)", "m*np.sqrt(c**2 - v**2)/c", REL, True, "rewrite", "relativistic rearranged"),
    ("m/np.sqrt(1 - v**2/c**2)", "m*c/np.sqrt((c - v)*(c + v))", REL, True, "rewrite", "Lorentz factor"),
    ("m*v/np.sqrt(m**2 - 1)", "v/np.sqrt(1 - 1/m**2)", REL, True, "rewrite", "divide through"),
    ("2*np.pi*x", "a*x", X, True, "convention", "pi is a constant"),
    ("x**2/(4*np.pi)", "x**2*k", X, True, "convention", "pi in a denominator"),
    ("np.arcsin(0.5*x/3)", "np.arcsin(a*x)", X, True, "rewrite", "arcsin argument"),
    (
        "1/(1/x + 1/v)",
        "x*v/(x + v)",
        {"x": [0.5, 3.0], "v": [0.5, 3.0]},
        True,
        "rewrite",
        "parallel resistors",
    ),
    ("3.14159*r**2", "np.pi*r**2", R, True, "convention", "3.14159 vs pi"),
    ("np.pi*r**2", "3.14159*r**2", R, True, "convention", "pi vs 3.14159"),
    ("np.pi*r**2", "A*r**2", R, True, "convention", "pi as a named constant"),
    ("6.674e-11*x*y", "G*x*y", XY, True, "convention", "a physical constant by name"),
    ("G*x*y", "6.674e-11*x*y", XY, True, "template", "a named parameter by value"),
    ("0.5*x*y**2", "x*y**2/2", XY, True, "convention", "0.5 vs /2"),
    ("x*y**2", "0.5*x*y**2", XY, True, "scale", "a factor where the truth has none"),
    ("np.exp(-x/0.3)", "np.exp(-3.333*x)", X, True, "convention", "a rate written as its inverse"),
    # --- not the truth's family --------------------------------------------------------------------
    (
        "np.sin(x)**2",
        "a - np.cos(x)**2",
        X,
        False,
        "superset",
        "Pythagorean identity with a free constant term",
    ),
    ("np.sin(x)**2", "a - b*np.cos(2*x)", X, False, "superset", "double angle with a free offset"),
    ("2*np.sin(x)*np.cos(x)", "a*np.sin(b*x)", X, False, "superset", "sin 2x with a free frequency"),
    ("np.cos(x)**2 - np.sin(x)**2", "np.cos(a*x)", X, False, "superset", "cos 2x with a free frequency"),
    ("(x + 1)**2", "x**2 + a*x + b", X, False, "superset", "expanded square with free coefficients"),
    ("np.sqrt(x)", "a*x**b", X, False, "superset", "power law with a free exponent"),
    ("np.exp(np.log(x)*2)", "x**2", X, False, "subset", "exp(c*log x) is a free power: x**2 is one member"),
    (
        "np.tanh(x)",
        "(np.exp(2*x) - 1)/(np.exp(2*x) + 1)",
        X,
        False,
        "superset",
        "tanh(c*x/2): the 2 is a free constant, the truth's rate is not",
    ),
    ("2.5*x + 1.2", "a*x", X, False, "subset", "missing intercept"),
    ("0.5*x**2", "a*x**3", X, False, "different", "wrong power"),
    ("0.5*x**2", "a*x**2 + b*x**3 + 0*x", X, False, "superset", "extra term, zero at best fit"),
    ("0.5*x**2 + 0.1*x**3", "a*x**2", X, False, "subset", "missing term"),
    ("3*np.exp(0.5*x)", "a*x + b*x**2 + c", X, False, "approximation", "quadratic approximation"),
    (
        "np.exp(x)",
        "a + b*x + c*x**2 + d*x**3 + e*x**4 + f*x**5 + g*x**6",
        X,
        False,
        "approximation",
        "degree-6 Taylor fit: close in range, not an identity",
    ),
    ("np.sin(x)", "a*x + b*x**3 + c*x**5", X, False, "approximation", "odd polynomial for sin"),
    (
        "np.exp(x)",
        "a + b*x + c*x**2 + d*x**3 + e*x**4 + f*x**5 + g*x**6",
        {"x": [0.5, 1.0]},
        False,
        "approximation",
        "Taylor fit to 1e-9 inside a narrow range: only the wider probe tells",
    ),
    (
        "np.sin(x)",
        "a*x + b*x**3 + c*x**5 + d*x**7",
        {"x": [0.1, 0.6]},
        False,
        "approximation",
        "odd polynomial, narrow range",
    ),
    (
        "np.sin(x)",
        "x - x**3/6 + x**5/120",
        {"x": [0.01, 0.1]},
        False,
        "approximation",
        "a truncated series fitting to 1e-11 on a small range",
    ),
    ("np.exp(x)", "1 + x + x**2/2 + x**3/6", {"x": [0.001, 0.01]}, False, "approximation", "exp series"),
    ("1/(1-x)", "1 + x + x**2 + x**3", {"x": [0.001, 0.01]}, False, "approximation", "geometric series"),
    (
        "x/(1 + x)",
        "a + b*x + c*x**2 + d*x**3",
        {"x": [0.01, 0.05]},
        False,
        "approximation",
        "Taylor polynomial of x/(1+x) on a narrow range",
    ),
    ("np.log(x)", "a*(x - 1) + b*(x - 1)**2", X, False, "approximation", "log series"),
    ("x/(1 + x)", "a*x/(1 + x**2)", X, False, "different", "wrong denominator"),
    ("x/(1 + 0.5*x)", "a*x/(1 + b*x**2)", X, False, "different", "squared saturation"),
    ("-0.227*A - 0.366*A**2", "a*A + b*A**3", T, False, "different", "cubic instead of square"),
    ("-0.227*A - 0.366*A**2", "a*A*np.exp(b*t)", T, False, "different", "time dependence instead"),
    ("np.tanh(x)", "a*x/(1 + b*np.abs(x))", X, False, "different", "tanh look-alike"),
    ("np.tanh(x)", "np.arctan(a*x)*b", X, False, "different", "arctan look-alike"),
    ("np.sqrt(x)", "a*np.log(1 + b*x)", X, False, "different", "log look-alike"),
    ("m*np.sqrt(1 - v**2/c**2)", "m*(1 - a*v**2/c**2)", REL, False, "approximation", "first-order expansion"),
    (
        "m/np.sqrt(1 - v**2/c**2)",
        "m*(1 + a*v**2/c**2 + b*v**4/c**4)",
        REL,
        False,
        "approximation",
        "second-order expansion",
    ),
    (
        "m/np.sqrt(1 - v**2/c**2)",
        "m*(1 + v**2/(2*c**2) + 3*v**4/(8*c**4))",
        {"m": [1.0, 5.0], "v": [1.0, 10.0], "c": [300.0, 1000.0]},
        False,
        "approximation",
        "series of the Lorentz factor at v << c",
    ),
    ("0.3*P*(1 - P/80.0)", "r*P*np.exp(-P/K)", P, False, "different", "Ricker instead of logistic"),
    (
        "0.2*P*np.exp(-0.05*t)",
        "a*P/(1 + b*t)",
        P,
        False,
        "different",
        "hyperbolic instead of exponential decay",
    ),
    ("-1.65*x - 0.154*v", "a*x + b*v**3", OSC, False, "different", "cubic damping"),
    (
        "-1.65*x - 0.154*v - 0.3*x**3",
        "a*x + b*v + c*np.sin(x)",
        OSC,
        False,
        "different",
        "pendulum look-alike",
    ),
    ("-2.3*x + 0.439*np.sin(1.01*t)", "a*x + b*np.cos(w*t)", OSC, False, "different", "cosine, no phase"),
    (
        "-2.3*x + 0.439*np.sin(1.01*t)",
        "a*x + b*np.cos(w*t + f)",
        OSC,
        False,
        "superset",
        "cosine with a free phase",
    ),
    ("-2.3*x + 0.439*np.sin(1.01*t)", "a*x + b*t", OSC, False, "different", "linear drive"),
    (
        "144.0*epsilon + 3.26*epsilon**2*np.sqrt(T)",
        "a*epsilon + b*epsilon**2*T",
        MAT,
        False,
        "different",
        "T instead of sqrt(T)",
    ),
    (
        "52.2*epsilon*(1 - 0.00248*(T - 292.0))",
        "a*epsilon*np.exp(-b*T)",
        MAT,
        False,
        "different",
        "exponential softening",
    ),
    ("np.sin(x)**2", "a*np.sin(x)", X, False, "different", "missing square"),
    ("np.sin(x + 0.3)", "a*np.sin(b*x)", X, False, "different", "missing phase"),
    ("2*x**1.5", "a*x**2", X, False, "different", "wrong exponent"),
    ("x", "a*x + b*v", XV, False, "superset", "extra input with zero weight"),
    ("x*v", "a*x + b*v", XV, False, "different", "sum instead of product"),
    ("x**2 - v**2", "(x - v)**2", XV, False, "different", "square of difference"),
    (
        "1/(1/x + 1/v)",
        "a*(x + v)",
        {"x": [0.5, 3.0], "v": [0.5, 3.0]},
        False,
        "different",
        "series instead of parallel",
    ),
    ("x*y**2", "x*y**2 + a", XY, False, "superset", "a free offset"),
    ("0.5*x*y**2", "a*x*y**2 + b*x*y", XY, False, "superset", "an extra term"),
    # --- templates: LSR-Synth-style truths with named parameters without values ---------------------
    (
        "F0*np.sin(t) - omega0**2*x - beta*v",
        "c0*np.sin(t) + c1*x + c2*v",
        OSC,
        True,
        "template",
        "the issue's physics template, an answer of its form",
    ),
    (
        "F0*np.sin(t) - omega0**2*x - beta*v",
        "-(a*x + b*v) + F*np.sin(t)",
        OSC,
        True,
        "template",
        "rearranged",
    ),
    (
        "F0*np.sin(t) - omega0**2*x - beta*v",
        "c0*np.sin(t) + c1*x + c2*v + c3*x**3",
        OSC,
        False,
        "superset",
        "template plus a cubic term",
    ),
    (
        "F0*np.sin(t) - omega0**2*x - beta*v",
        "c0*np.sin(c3*t) + c1*x + c2*v",
        OSC,
        False,
        "superset",
        "template with a free drive frequency",
    ),
    (
        "F0*np.sin(t) - omega0**2*x - beta*v",
        "c1*x + c2*v",
        OSC,
        False,
        "subset",
        "template without the drive",
    ),
    (
        "F0*np.sin(t) - omega0**2*x - beta*v",
        "c0*(t - t**3/6) + c1*x + c2*v",
        OSC,
        False,
        "approximation",
        "the drive as a cubic",
    ),
    ("-omega0**2*x - beta*v*np.abs(v)", "c0*x + c1*v*np.abs(v)", OSC, True, "template", "quadratic drag"),
    ("-omega0**2*x - beta*v*np.abs(v)", "c0*x + c1*v", OSC, False, "different", "linear drag"),
    ("-omega0**2*x - beta*v*np.abs(v)", "c0*x + c1*v*np.abs(v) + c2*v", OSC, False, "superset", "both drags"),
    ("-k*A**2", "c*A**2", T, True, "template", "second-order rate"),
    ("-k*A**2", "c0*A**2 + c1*A", T, False, "superset", "second-order plus first-order"),
    ("-k*A*np.exp(-s*t)", "c0*A*np.exp(c1*t)", T, True, "template", "decaying rate constant"),
    ("-k*A*np.exp(-s*t)", "c0*A", T, False, "subset", "constant rate"),
    ("r*P*(1 - P/K)", "c0*P + c1*P**2", P, True, "template", "logistic expanded"),
    ("r*P*(1 - P/K)", "c0*P + c1*P**2 + c2*P**3", P, False, "superset", "logistic plus cubic"),
    ("r*P*(1 - P/K)", "c0*P*np.exp(-c1*P)", P, False, "different", "Ricker"),
    ("r*P*(1 - P/K)*(P/a - 1)", "c0*P*(c1 - P)*(P - c2)", P, True, "template", "Allee effect"),
    (
        "E*epsilon*(1 - alpha*(T - T0))",
        "c0*epsilon + c1*epsilon*T",
        MAT,
        True,
        "template",
        "thermal softening",
    ),
    ("E*epsilon*(1 - alpha*(T - T0))", "c0*epsilon", MAT, False, "subset", "no temperature"),
]


def _subst(formula: str, name: str, by: str) -> str:
    return re.sub(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", by, formula)


def feynman_pairs(csv_path: Path) -> list[dict]:
    out: list[dict] = []
    for i, eq in enumerate(read_feynman_csv(csv_path)):
        ranges = {v.name: [v.low, v.high] for v in eq.variables}
        first = eq.variables[0].name
        src = f"feynman {eq.name}"
        if re.search(r"(?<![A-Za-z0-9_])pi(?![A-Za-z0-9_])", eq.formula):
            out.append(
                dict(
                    truth=eq.formula,
                    proposal=_subst(eq.formula, "pi", "3.14159"),
                    ranges=ranges,
                    equivalent=True,
                    kind="convention",
                    note="pi written as 3.14159",
                    source=src,
                )
            )
        if i % 4 == 0:
            out.append(
                dict(
                    truth=eq.formula,
                    proposal=f"C_scale*({eq.formula})",
                    ranges=ranges,
                    equivalent=True,
                    kind="scale",
                    note="an overall named factor",
                    source=src,
                )
            )
        if i % 2 == 0:
            out.append(
                dict(
                    truth=eq.formula,
                    proposal=f"{eq.formula} + C_extra*{first}",
                    ranges=ranges,
                    equivalent=False,
                    kind="superset",
                    note=f"an extra term in {first}",
                    source=src,
                )
            )
        if i % 3 == 0 and len(eq.variables) > 1:
            out.append(
                dict(
                    truth=eq.formula,
                    proposal=_subst(eq.formula, first, "C_const"),
                    ranges=ranges,
                    equivalent=False,
                    kind="different",
                    note=f"{first} replaced by a constant",
                    source=src,
                )
            )
    return out


def main(argv: list[str]) -> None:
    pairs = [
        dict(truth=t, proposal=p, ranges=r, equivalent=e, kind=k, note=n, source="hand")
        for t, p, r, e, k, n in HAND
    ]
    pairs += feynman_pairs(Path(argv[0]))
    out = Path(__file__).with_name("symbolic_pairs.json")
    out.write_text(json.dumps({"rule": __doc__.split("\n\n")[2], "pairs": pairs}, indent=1) + "\n")
    print(f"{len(pairs)} pairs -> {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
