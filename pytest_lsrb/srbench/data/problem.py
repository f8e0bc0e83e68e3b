"""One equation-discovery problem, with the LLM-SRBench field names and its data splits.

Data arrays hold the output in column 0 and the inputs after it, in `symbols` order (the
benchmark's layout). Arrays are float64 and read-only once validated.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pytest_lsrb.equations import EquationError, Program, parse_expression
from pytest_lsrb.equations.parser import STRUCTURAL_KEYWORDS

SPLITS: Final = ("train", "test", "ood_test")

# LLM-SRBench's problem sets, as in its Hugging Face splits (`lsr_synth_<domain>`).
TRANSFORM_SET: Final = "lsr_transform"
SYNTH_SET: Final = "lsr_synth"
# Names of problems the project's generators make start with this, so a generated `gen-CRK0` or
# `gen-I.10.7_0_0` is never mistaken for the official release's `CRK0` or `I.10.7_0_0`.
GENERATED_PREFIX: Final = "gen-"
SYNTH_DOMAINS: Final[dict[str, str]] = {
    "chem_react": "chemistry",
    "bio_pop_growth": "biology",
    "phys_osc": "physics",
    "matsci": "material_science",
}
DOMAIN_ALIASES: Final[dict[str, str]] = {
    **{d: d for d in SYNTH_DOMAINS},
    **{v: k for k, v in SYNTH_DOMAINS.items()},
    "chem": "chem_react",
    "bio": "bio_pop_growth",
    "phys": "phys_osc",
    "material": "matsci",
}


# "O" the output, "V" an input variable (a data column); anything else (the release's constants,
# e.g. "C", "P") has no data column: in a ground truth such a name is a template parameter.
SymbolProperty = str


def output_first(n_inputs: int) -> list[SymbolProperty]:
    """`symbol_properties` for an output followed by `n_inputs` input variables."""
    inputs: list[SymbolProperty] = ["V"] * n_inputs
    return ["O", *inputs]


class Problem(BaseModel):
    """A problem: metadata with the benchmark's field names plus `train`/`test`/`ood_test`."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, extra="forbid")

    name: str = Field(min_length=1)
    symbols: list[str] = Field(min_length=2)
    symbol_descs: list[str]
    symbol_properties: list[SymbolProperty]
    expression: str | None = None  # ground truth in the equation language, when known
    desc: str = ""  # the scientific context shown to the model
    problem_set: str = Field(min_length=1)
    domain: str | None = None
    train: np.ndarray
    test: np.ndarray
    ood_test: np.ndarray | None = None
    # Where the problem came from, when that is an official release: the loaded counts per group
    # against the paper's, and what a partial release lacks (Table 1 prints it). Not problem data:
    # left out of `metadata()` and the content hash.
    release_note: str | None = None

    @field_validator("symbols")
    @classmethod
    def _symbols_are_names(cls, value: list[str]) -> list[str]:
        for sym in value:
            if not sym.isidentifier() or sym == "params" or sym.startswith("__"):
                raise ValueError(f"{sym!r} is not usable as a variable name")
            if sym in STRUCTURAL_KEYWORDS:  # other keywords are aliased (equations.keyword_aliases)
                raise ValueError(
                    f"{sym!r} is not usable as a variable name (every equation program is written "
                    f"with {', '.join(sorted(STRUCTURAL_KEYWORDS))}); rename the symbol"
                )
        if len(set(value)) != len(value):
            raise ValueError("symbols must be distinct")
        return value

    @field_validator("train", "test", "ood_test", mode="before")
    @classmethod
    def _as_array(cls, value: Any) -> Any:
        if value is None:
            return None
        try:
            arr = np.array(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("must be a table of numbers") from None
        if arr.ndim != 2 or arr.shape[0] < 1:
            raise ValueError(f"must be a 2-D table with at least one row (got shape {arr.shape})")
        if not np.isfinite(arr).all():
            raise ValueError("holds non-finite values")
        arr.setflags(write=False)
        return arr

    @model_validator(mode="after")
    def _consistent(self) -> Problem:
        n = len(self.symbols)
        if len(self.symbol_descs) != n:
            raise ValueError(f"symbol_descs: has {len(self.symbol_descs)} entries for {n} symbols")
        if len(self.symbol_properties) != n:
            raise ValueError(f"symbol_properties: has {len(self.symbol_properties)} entries for {n} symbols")
        if self.symbol_properties[0] != "O" or "O" in self.symbol_properties[1:]:
            raise ValueError("symbol_properties: the output ('O') must come first and only once")
        if not self.inputs:
            raise ValueError("symbol_properties: no input variable ('V')")
        columns = 1 + len(self.inputs)
        for split in SPLITS:
            arr = getattr(self, split)
            if arr is not None and arr.shape[1] != columns:
                raise ValueError(
                    f"{split}: has {arr.shape[1]} columns for the output and "
                    f"{len(self.inputs)} input variables"
                )
        if self.expression is not None:
            try:
                parse_expression(self.expression, self.inputs, free_params=True)
            except EquationError as exc:
                raise ValueError(f"expression: {exc}") from None
        return self

    # -- views --------------------------------------------------------------------------------

    @property
    def item_id(self) -> str:
        return self.name

    @property
    def output(self) -> str:
        return self.symbols[0]

    @property
    def inputs(self) -> list[str]:
        """The input variables (properties holding `V`), in data-column order."""
        return [s for s, p in zip(self.symbols[1:], self.symbol_properties[1:], strict=True) if "V" in p]

    @property
    def group(self) -> str:
        """The paper's table column: `lsr_transform` or `lsr_synth_<domain>`."""
        if self.problem_set == SYNTH_SET and self.domain:
            return f"{SYNTH_SET}_{self.domain}"
        return self.problem_set

    @property
    def has_ground_truth(self) -> bool:
        return self.expression is not None

    def split(self, split: str) -> np.ndarray | None:
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}")
        arr: np.ndarray | None = getattr(self, split)
        return arr

    def columns(self, split: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """({input name: column}, output column) of one split."""
        arr = self.split(split)
        if arr is None:
            raise ValueError(f"problem {self.name} has no {split} data")
        return {name: arr[:, i + 1] for i, name in enumerate(self.inputs)}, arr[:, 0]

    def ground_truth(self) -> Program | None:
        """The ground truth; names that are not inputs are its (template) parameters."""
        if self.expression is None:
            return None
        return parse_expression(self.expression, self.inputs, free_params=True)

    def keywords(self) -> list[str]:
        words = [self.problem_set, self.group, *self.symbols]
        if self.domain:
            words += [self.domain, SYNTH_DOMAINS.get(self.domain, self.domain)]
        return words

    def metadata(self) -> dict[str, Any]:
        """Everything but the data (JSON-ready)."""
        return self.model_dump(exclude={"train", "test", "ood_test", "release_note"})

    def content_hash(self) -> str:
        digest = hashlib.sha256()
        digest.update(json.dumps(self.metadata(), sort_keys=True, separators=(",", ":")).encode())
        for split in SPLITS:
            arr = getattr(self, split)
            digest.update(f"\x1f{split}:".encode())
            if arr is not None:
                digest.update(str(arr.shape).encode())
                digest.update(np.ascontiguousarray(arr, dtype="<f8").tobytes())
        return digest.hexdigest()

    def context(self) -> dict[str, Any]:
        """What a discovery method needs to prompt a model (and what the mock adapter reads)."""
        return {
            "name": self.name,
            "output": self.output,
            "output_desc": self.symbol_descs[0],
            "inputs": self.inputs,
            "input_descs": [
                d for d, p in zip(self.symbol_descs[1:], self.symbol_properties[1:], strict=True) if "V" in p
            ],
            "desc": self.desc,
            "problem_set": self.problem_set,
            "domain": self.domain,
        }
