"""A labelled set of (ground truth, proposal) pairs for the symbolic-accuracy checker.

`equivalent`: some choice of the proposal's constants makes it equal to the ground truth
(rearrangements, other constant parametrisations, log/trig/exp identities).
`not equivalent`: near misses — a missing or extra dependence, a wrong power or function, or an
approximation that is good inside the data range but not an identity.
Proposals name their constants freely (`a`, `b`, `c0`, ...); numbers in them are constants too.
"""

from __future__ import annotations

from typing import NamedTuple


class Pair(NamedTuple):
    truth: str
    proposal: str
    ranges: dict[str, tuple[float, float]]
    equivalent: bool
    note: str


X = {"x": (0.5, 3.0)}
XV = {"x": (0.5, 3.0), "v": (-1.0, 1.0)}
T = {"t": (0.0, 10.0), "A": (0.1, 2.0)}
P = {"t": (0.0, 30.0), "P": (5.0, 100.0)}
OSC = {"t": (0.0, 20.0), "x": (-1.5, 1.5), "v": (-1.0, 1.0)}
MAT = {"epsilon": (0.01, 0.3), "T": (273.0, 373.0)}
REL = {"m": (1.0, 5.0), "v": (1.0, 2.0), "c": (3.0, 10.0)}

PAIRS: list[Pair] = [
    # --- equivalent: same form, other constants --------------------------------------------
    Pair("2.5*x + 1.2", "a*x + b", X, True, "linear"),
    Pair("2.5*x + 1.2", "c0*x + c1", X, True, "linear, c-names"),
    Pair("0.5*x**2", "k*x*x", X, True, "power as product"),
    Pair("-0.227*A - 0.366*A**2", "a*A + b*A**2", T, True, "rate law"),
    Pair("-0.227*A - 0.366*A**2", "-A*(k1 + k2*A)", T, True, "factored rate law"),
    Pair("3*exp(0.5*x)", "a*exp(b*x)", X, True, "exponential"),
    Pair("3*exp(0.5*x)", "exp(b*x + c)", X, True, "a*exp(bx) as exp(bx + c)"),
    Pair("3*exp(0.5*x)", "a*exp(x)**b", X, True, "exp power"),
    Pair("3*exp(-0.2*t)*A", "a*A/exp(b*t)", T, True, "decay as division"),
    Pair("np.log(2*x)", "c + np.log(x)", X, True, "log of a product"),
    Pair("np.log(x**3)", "a*np.log(x)", X, True, "log of a power"),
    Pair("np.log(5*x) - np.log(2)", "np.log(x) + c", X, True, "log difference"),
    Pair("np.sin(x)**2", "a - np.cos(x)**2", X, True, "Pythagorean identity"),
    Pair("np.sin(x)**2", "a - b*np.cos(2*x)", X, True, "double angle"),
    Pair("np.sin(x + 0.3)", "a*np.sin(x) + b*np.cos(x)", X, True, "phase shift as a sum"),
    Pair("2*np.sin(x)*np.cos(x)", "a*np.sin(b*x)", X, True, "sin 2x"),
    Pair("np.cos(x)**2 - np.sin(x)**2", "np.cos(a*x)", X, True, "cos 2x"),
    Pair("(x + v)*(x - v)", "x**2 - v**2", XV, True, "difference of squares"),
    Pair("(x + 1)**2", "x**2 + a*x + b", X, True, "expanded square"),
    Pair("x/(1 + x)", "1 - 1/(1 + x)", X, True, "partial fraction"),
    Pair("x/(1 + 0.5*x)", "a*x/(b + x)", X, True, "Michaelis-Menten parametrisation"),
    Pair("2*x**1.5", "a*x*np.sqrt(x)", X, True, "half power"),
    Pair("np.sqrt(x)", "a*x**b", X, True, "power law"),
    Pair("np.sqrt(x**2)", "x", X, True, "positive domain"),
    Pair("np.exp(np.log(x)*2)", "x**2", X, True, "exp-log"),
    Pair("np.tanh(x)", "(np.exp(2*x) - 1)/(np.exp(2*x) + 1)", X, True, "tanh definition"),
    Pair("np.cosh(x)", "(np.exp(x) + np.exp(-x))/2", X, True, "cosh definition"),
    Pair("0.0821*P + 0.398*P*(1 - P/100.0)", "r*P - s*P**2", P, True, "logistic plus linear"),
    Pair("0.3*P*(1 - P/80.0)", "r*P*(K - P)", P, True, "logistic, other constants"),
    Pair("0.2*P*np.exp(-0.05*t)", "P*np.exp(a - b*t)", P, True, "decaying growth"),
    Pair(
        "-1.65*x - 0.154*v - 0.929*x*np.exp(-np.abs(x))",
        "-(a*x + b*v + c*x/np.exp(np.abs(x)))",
        OSC,
        True,
        "oscillator rearranged",
    ),
    Pair(
        "-2.09*x + 0.934*np.sin(0.619*t) - 0.595*x**2*v",
        "a*x + b*np.sin(w*t) + c*v*x*x",
        OSC,
        True,
        "driven oscillator",
    ),
    Pair(
        "144.0*epsilon + 3.26*epsilon**2*np.sqrt(T)",
        "epsilon*(E + s*epsilon*T**0.5)",
        MAT,
        True,
        "stress factored",
    ),
    Pair(
        "52.2*epsilon*(1 - 0.00248*(T - 292.0))",
        "a*epsilon + b*epsilon*T",
        MAT,
        True,
        "thermal softening expanded",
    ),
    Pair("m*np.sqrt(1 - v**2/c**2)", "m*np.sqrt(c**2 - v**2)/c", REL, True, "relativistic rearranged"),
    Pair("m/np.sqrt(1 - v**2/c**2)", "m*c/np.sqrt((c - v)*(c + v))", REL, True, "Lorentz factor"),
    Pair("m*v/np.sqrt(m**2 - 1)", "v/np.sqrt(1 - 1/m**2)", REL, True, "divide through"),
    Pair("2*np.pi*x", "a*x", X, True, "pi is a constant"),
    Pair("x**2/(4*np.pi)", "x**2*k", X, True, "pi in a denominator"),
    Pair("np.arcsin(0.5*x/3)", "np.arcsin(a*x)", X, True, "arcsin argument"),
    Pair("1/(1/x + 1/v)", "x*v/(x + v)", {"x": (0.5, 3.0), "v": (0.5, 3.0)}, True, "parallel resistors"),
    # --- not equivalent: near misses --------------------------------------------------------
    Pair("2.5*x + 1.2", "a*x", X, False, "missing intercept"),
    Pair("0.5*x**2", "a*x**3", X, False, "wrong power"),
    Pair("0.5*x**2", "a*x**2 + b*x**3 + 0*x", X, True, "extra term, zero at best fit"),
    Pair("0.5*x**2 + 0.1*x**3", "a*x**2", X, False, "missing term"),
    Pair("3*np.exp(0.5*x)", "a*x + b*x**2 + c", X, False, "quadratic approximation"),
    Pair(
        "np.exp(x)",
        "a + b*x + c*x**2 + d*x**3 + e*x**4 + f*x**5 + g*x**6",
        X,
        False,
        "degree-6 Taylor fit: close in range, not an identity",
    ),
    Pair("np.sin(x)", "a*x + b*x**3 + c*x**5", X, False, "odd polynomial for sin"),
    Pair(
        "np.exp(x)",
        "a + b*x + c*x**2 + d*x**3 + e*x**4 + f*x**5 + g*x**6",
        {"x": (0.5, 1.0)},
        False,
        "Taylor fit to 1e-9 inside a narrow range: only the wider probe tells",
    ),
    Pair(
        "np.sin(x)",
        "a*x + b*x**3 + c*x**5 + d*x**7",
        {"x": (0.1, 0.6)},
        False,
        "odd polynomial, narrow range",
    ),
    Pair("np.log(x)", "a*(x - 1) + b*(x - 1)**2", X, False, "log series"),
    Pair("x/(1 + x)", "a*x/(1 + x**2)", X, False, "wrong denominator"),
    Pair("x/(1 + 0.5*x)", "a*x/(1 + b*x**2)", X, False, "squared saturation"),
    Pair("-0.227*A - 0.366*A**2", "a*A + b*A**3", T, False, "cubic instead of square"),
    Pair("-0.227*A - 0.366*A**2", "a*A*np.exp(b*t)", T, False, "time dependence instead"),
    Pair("np.tanh(x)", "a*x/(1 + b*np.abs(x))", X, False, "tanh look-alike"),
    Pair("np.tanh(x)", "np.arctan(a*x)*b", X, False, "arctan look-alike"),
    Pair("np.sqrt(x)", "a*np.log(1 + b*x)", X, False, "log look-alike"),
    Pair("m*np.sqrt(1 - v**2/c**2)", "m*(1 - a*v**2/c**2)", REL, False, "first-order expansion"),
    Pair(
        "m/np.sqrt(1 - v**2/c**2)", "m*(1 + a*v**2/c**2 + b*v**4/c**4)", REL, False, "second-order expansion"
    ),
    Pair("0.3*P*(1 - P/80.0)", "r*P*np.exp(-P/K)", P, False, "Ricker instead of logistic"),
    Pair("0.2*P*np.exp(-0.05*t)", "a*P/(1 + b*t)", P, False, "hyperbolic instead of exponential decay"),
    Pair("-1.65*x - 0.154*v", "a*x + b*v**3", OSC, False, "cubic damping"),
    Pair("-1.65*x - 0.154*v - 0.3*x**3", "a*x + b*v + c*np.sin(x)", OSC, False, "pendulum look-alike"),
    Pair(
        "-2.3*x + 0.439*np.sin(1.01*t)", "a*x + b*np.cos(w*t)", OSC, False, "cosine instead of sine, no phase"
    ),
    Pair("-2.3*x + 0.439*np.sin(1.01*t)", "a*x + b*np.cos(w*t + f)", OSC, True, "cosine with a phase"),
    Pair("-2.3*x + 0.439*np.sin(1.01*t)", "a*x + b*t", OSC, False, "linear drive"),
    Pair(
        "144.0*epsilon + 3.26*epsilon**2*np.sqrt(T)",
        "a*epsilon + b*epsilon**2*T",
        MAT,
        False,
        "T instead of sqrt(T)",
    ),
    Pair(
        "52.2*epsilon*(1 - 0.00248*(T - 292.0))",
        "a*epsilon*np.exp(-b*T)",
        MAT,
        False,
        "exponential softening",
    ),
    Pair("np.sin(x)**2", "a*np.sin(x)", X, False, "missing square"),
    Pair("np.sin(x + 0.3)", "a*np.sin(b*x)", X, False, "missing phase"),
    Pair("2*x**1.5", "a*x**2", X, False, "wrong exponent"),
    Pair("x", "a*x + b*v", XV, True, "extra input with zero weight"),
    Pair("x*v", "a*x + b*v", XV, False, "sum instead of product"),
    Pair("x**2 - v**2", "(x - v)**2", XV, False, "square of difference"),
    Pair(
        "1/(1/x + 1/v)", "a*(x + v)", {"x": (0.5, 3.0), "v": (0.5, 3.0)}, False, "series instead of parallel"
    ),
]
