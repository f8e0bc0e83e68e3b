"""The AI-Feynman equation table (`FeynmanEquations.csv`), read with its real quirks.

- `# variables` is wrong for some rows: the variables are the non-empty `vN_name` columns.
- Formulas use numpy-style names (`ln`, `arcsin`) and `pi`: the equation language reads them.
- Some ranges start at 0.
"""

from __future__ import annotations

import csv
import io
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.paths import file_name_problem
from pytest_lsrb.equations import Program, parse_expression

MAX_VARIABLES: Final = 10
REQUIRED_COLUMNS: Final = ("Filename", "Formula", "v1_name", "v1_low", "v1_high")
TABLE_MAX_BYTES: Final = 16 * 2**20  # the published table is 11 KB
NAME_MAX: Final = 100  # characters of `Filename`: the problem and data file names add to it


class FeynmanTableWarning(UserWarning):
    """A row of the equation table was skipped (its `Filename` repeats an earlier row's)."""


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
    """The table's equations. A row that would break a later step is refused here in one
    sentence naming the file, its line and the column; a repeated `Filename` is warned about
    and its later rows skipped (each name becomes a data file of its own)."""
    path = Path(path)
    try:
        if path.stat().st_size > TABLE_MAX_BYTES:
            raise LsrbUsageError(f"{path}: larger than {TABLE_MAX_BYTES // 2**20} MB, not an equation table.")
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is not part of `Filename`
    except OSError as exc:
        raise LsrbUsageError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
    except UnicodeDecodeError as exc:
        raise LsrbUsageError(f"{path}: not UTF-8 text (byte {exc.start}).") from None
    out: list[FeynmanEquation] = []
    seen: dict[str, int] = {}
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in (reader.fieldnames or [])]
        reader.fieldnames = header
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            raise LsrbUsageError(f"{path}:1: the header has no '{missing[0]}' column.")
        ended = reader.line_num
        for row in reader:
            line, ended = ended + 1, reader.line_num  # the row's first line (a quoted cell may span more)
            eq = _equation(row, f"{path}:{line}")
            if eq is None:
                continue
            if eq.name in seen:
                warnings.warn(
                    f"{path}:{line}: column 'Filename': {eq.name!r} repeats line "
                    f"{seen[eq.name]}; this row is skipped.",
                    FeynmanTableWarning,
                    stacklevel=2,
                )
                continue
            seen[eq.name] = line
            out.append(eq)
    except csv.Error as exc:
        raise LsrbUsageError(f"{path}:{reader.line_num}: not a CSV row ({exc}).") from None
    if not out:
        raise LsrbUsageError(f"{path}: holds no equations (no row with a 'Filename').")
    return out


def _usable_name(name: str) -> bool:
    """Whether the equation language takes `name` as a variable (its own rule, asked directly)."""
    try:
        parse_expression(name, [name])
    except ValueError:  # EquationError is a ValueError too
        return False
    return True


def _number(row: dict[str | None, str | None], column: str, where: str) -> float:
    text = (row.get(column) or "").strip()
    try:
        value = float(text)
    except ValueError:
        raise LsrbUsageError(f"{where}: column '{column}': {text[:40]!r} is not a number.") from None
    if not math.isfinite(value):
        raise LsrbUsageError(f"{where}: column '{column}': {text[:40]!r} is not a finite number.")
    return value


def _equation(row: dict[str | None, str | None], where: str) -> FeynmanEquation | None:
    """One row as an equation (None for a row without a `Filename`), or one sentence."""
    if row.get(None):  # DictReader files the cells past the header under None
        raise LsrbUsageError(f"{where}: more cells than the header has columns.")
    name = (row.get("Filename") or "").strip()
    if not name:
        return None
    problem = file_name_problem(name)  # it becomes the name of the problem's data file
    if problem is None and len(name) > NAME_MAX:
        problem = f"is longer than {NAME_MAX} characters"
    if problem is not None:
        raise LsrbUsageError(f"{where}: column 'Filename': {name[:40]!r} {problem}.")
    variables: list[FeynmanVariable] = []
    for i in range(1, MAX_VARIABLES + 1):
        vname = (row.get(f"v{i}_name") or "").strip()
        if not vname:
            continue
        if not _usable_name(vname):
            raise LsrbUsageError(
                f"{where}: column 'v{i}_name': {vname[:40]!r} is not usable as a variable name."
            )
        if vname in (v.name for v in variables):
            raise LsrbUsageError(f"{where}: column 'v{i}_name': {vname!r} names an earlier variable again.")
        low, high = _number(row, f"v{i}_low", where), _number(row, f"v{i}_high", where)
        if not low <= high or not math.isfinite(high - low):
            raise LsrbUsageError(
                f"{where}: column 'v{i}_high': the range [{low:g}, {high:g}] is not a range."
            )
        variables.append(FeynmanVariable(vname, low, high))
    if not variables:
        raise LsrbUsageError(f"{where}: column 'v1_name': the equation has no variables.")
    output = (row.get("Output") or "").strip() or "y"
    names = [v.name for v in variables]
    if not _usable_name(output):
        raise LsrbUsageError(f"{where}: column 'Output': {output[:40]!r} is not usable as a variable name.")
    if output in names and f"{output}_out" in names:  # the output is renamed <name>_out then
        raise LsrbUsageError(f"{where}: column 'Output': {output!r} and {output}_out are both variables.")
    declared = (row.get("# variables") or "").strip()
    count: int | None = None
    if declared:
        number = _number(row, "# variables", where)
        if number != int(number) or not 0 <= number <= MAX_VARIABLES:
            raise LsrbUsageError(
                f"{where}: column '# variables': {declared[:40]!r} is not a count from 0 to {MAX_VARIABLES}."
            )
        count = int(number)
    eq = FeynmanEquation(
        name=name,
        output=output,
        formula=(row.get("Formula") or "").strip(),
        variables=tuple(variables),
        declared_count=count,
    )
    try:
        eq.program()
    except ValueError as exc:  # EquationError, or a name the language refuses
        raise LsrbUsageError(f"{where}: column 'Formula': {str(exc).rstrip('.')}.") from None
    return eq


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
