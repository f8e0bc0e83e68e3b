"""The AI-Feynman equation table (`FeynmanEquations.csv`), read with its real quirks.

- `# variables` is wrong for some rows: the variables are the non-empty `vN_name` columns.
- Formulas use numpy-style names (`ln`, `arcsin`) and `pi`: the equation language reads them.
- Some ranges start at 0.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.paths import file_name_problem
from pytest_lsrb.equations import EquationError, Program, parse_expression

MAX_VARIABLES: Final = 10


@dataclass(frozen=True)
class FeynmanVariable:
    name: str
    low: float
    high: float


@dataclass(frozen=True)
class FeynmanEquation:
    name: str  # the `Filename` column, e.g. I.10.7
    output: str
    formula: str
    variables: tuple[FeynmanVariable, ...]
    declared_count: int | None  # the (sometimes wrong) `# variables` column

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variables]

    def program(self) -> Program:
        return parse_expression(self.formula, self.names)


def read_feynman_csv(path: Path) -> list[FeynmanEquation]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise LsrbUsageError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    out: list[FeynmanEquation] = []
    reader = csv.DictReader(io.StringIO(text, newline=""))
    for lineno, row in enumerate(reader, start=2):
        name = (row.get("Filename") or "").strip()
        if not name:
            continue
        problem = file_name_problem(name)  # it becomes the name of the problem's data file
        if problem is not None:
            raise LsrbUsageError(f"{path}:{lineno}: field 'Filename': {name!r} {problem}.")
        variables: list[FeynmanVariable] = []
        for i in range(1, MAX_VARIABLES + 1):
            vname = (row.get(f"v{i}_name") or "").strip()
            if not vname:
                continue
            try:
                low, high = float(row[f"v{i}_low"]), float(row[f"v{i}_high"])
            except (TypeError, ValueError, KeyError):
                raise LsrbUsageError(
                    f"{path}:{lineno}: field 'v{i}_low'/'v{i}_high' is not a number."
                ) from None
            variables.append(FeynmanVariable(vname, low, high))
        declared = (row.get("# variables") or "").strip()
        eq = FeynmanEquation(
            name=name,
            output=(row.get("Output") or "y").strip(),
            formula=(row.get("Formula") or "").strip(),
            variables=tuple(variables),
            declared_count=int(float(declared)) if declared else None,
        )
        try:
            eq.program()
        except EquationError as exc:
            raise LsrbUsageError(f"{path}:{lineno}: field 'Formula': {exc}.") from None
        out.append(eq)
    return out


# Meanings of the symbols the Feynman table uses, for the problems' `symbol_descs`.
SYMBOL_DESCS: Final[dict[str, str]] = {
    "A": "area",
    "A_vec": "vector potential",
    "B": "magnetic field",
    "Bx": "magnetic field x",
    "By": "magnetic field y",
    "Bz": "magnetic field z",
    "C": "capacitance",
    "D": "diffusion coefficient",
    "E_n": "energy",
    "E_den": "energy density",
    "Ef": "electric field",
    "F": "force",
    "G": "gravitational constant",
    "H": "magnetic field strength",
    "I": "electric current",
    "I1": "intensity 1",
    "I2": "intensity 2",
    "I_0": "reference current",
    "Int": "intensity",
    "Int_0": "reference intensity",
    "Jz": "angular momentum z",
    "K": "kinetic energy",
    "L": "angular momentum",
    "L_rad": "radiated power",
    "M": "magnetization",
    "Nn": "normal force",
    "Pol": "polarization",
    "Pwr": "power",
    "T": "temperature",
    "T1": "temperature 1",
    "T2": "temperature 2",
    "U": "energy",
    "V": "volume",
    "V1": "volume 1",
    "V2": "volume 2",
    "Volt": "voltage",
    "Y": "Young's modulus",
    "a": "acceleration",
    "alpha": "coefficient alpha",
    "beta": "coefficient beta",
    "c": "speed of light",
    "chi": "susceptibility",
    "d": "distance",
    "d1": "distance 1",
    "d2": "distance 2",
    "delta": "phase difference",
    "epsilon": "permittivity",
    "f": "function value",
    "flux": "flux",
    "foc": "focal length",
    "g": "gravitational acceleration",
    "g_": "g-factor",
    "gamma": "adiabatic index",
    "h": "Planck constant",
    "j": "current density",
    "k": "wave number",
    "k_spring": "spring constant",
    "kappa": "thermal conductivity",
    "kb": "Boltzmann constant",
    "lambd": "wavelength",
    "m": "mass",
    "m1": "mass 1",
    "m2": "mass 2",
    "m_0": "rest mass",
    "mob": "mobility",
    "mom": "magnetic moment",
    "mu": "friction coefficient",
    "mu_drift": "drift mobility",
    "mu_S": "shear modulus",
    "n": "number or index",
    "n_0": "base density",
    "n_rho": "number density",
    "omega": "angular frequency",
    "omega_0": "natural angular frequency",
    "p": "momentum",
    "p_d": "dipole moment",
    "pr": "pressure",
    "prob": "probability",
    "q": "charge",
    "q1": "charge 1",
    "q2": "charge 2",
    "r": "radius",
    "r1": "radius 1",
    "r2": "radius 2",
    "rho": "density",
    "rho_c": "charge density",
    "rho_c_0": "rest charge density",
    "sigma": "width",
    "sigma_den": "surface charge density",
    "t": "time",
    "t1": "time in the moving frame",
    "tau": "torque",
    "theta": "angle",
    "theta1": "angle 1",
    "theta2": "angle 2",
    "u": "velocity",
    "v": "velocity",
    "v1": "velocity",
    "w": "velocity",
    "x": "position",
    "x1": "position 1",
    "x2": "position 2",
    "x3": "position 3",
    "y": "position y",
    "y1": "position y1",
    "y2": "position y2",
    "y3": "position y3",
    "z": "height",
    "z1": "position z1",
    "z2": "position z2",
}


def describe_symbol(name: str) -> str:
    return SYMBOL_DESCS.get(name, name)
