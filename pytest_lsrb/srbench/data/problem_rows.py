"""Problem field dicts in, validated `Problem`s out: what every problem source shares (index lines,
CSV folders, the official release's rows). Every mistake names the file and the field."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.textfiles import refuse_lone_surrogates
from pytest_lsrb.srbench.data.problem import SPLITS, Problem

# Older releases named the splits differently.
SPLIT_ALIASES: Final[dict[str, tuple[str, ...]]] = {
    "train": ("train", "train_data"),
    "test": ("test", "id_test_data", "test_data"),
    "ood_test": ("ood_test", "ood_test_data"),
}
META_FIELDS: Final[tuple[str, ...]] = (
    "name",
    "symbols",
    "symbol_descs",
    "symbol_properties",
    "expression",
    "desc",
    "problem_set",
    "domain",
)


def check_unique(problems: Iterable[Problem], where: Path) -> list[Problem]:
    seen: set[str] = set()
    out = list(problems)
    for p in out:
        if p.name in seen:
            raise LsrbUsageError(f"{where}: field 'name': '{p.name}' appears twice (names must be unique).")
        seen.add(p.name)
    if not out:
        raise LsrbUsageError(f"{where}: holds no problems.")
    return out


# -- validation messages -----------------------------------------------------------------------


def describe_problem_error(err: ValidationError) -> str:
    """`field 'x': what is wrong` for the first problem pydantic found."""
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "missing":
        return f"field '{loc}' is missing (required)"
    if not loc:
        m = re.match(r"^(\w+): (.*)$", msg, re.S)
        if m:
            return f"field '{m.group(1)}': {m.group(2)}"
        return msg
    return f"field '{loc}': {msg[0].lower() + msg[1:] if msg else msg}"


def build_problem(fields: Mapping[str, Any], where: str) -> Problem:
    # Every source (index line, CSV folder metadata, parquet row) reaches a Problem through here.
    refuse_lone_surrogates({k: v for k, v in fields.items() if k not in SPLITS}, where)
    try:
        return Problem.model_validate(dict(fields))
    except ValidationError as exc:
        raise LsrbUsageError(f"{where}: {describe_problem_error(exc)}.") from None


def pick_splits(stored: Mapping[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split, names in SPLIT_ALIASES.items():
        found = next((n for n in names if n in stored), None)
        if found is None and split != "ood_test":
            raise LsrbUsageError(f"{where}: field '{split}' is missing (looked for {', '.join(names)}).")
        out[split] = None if found is None else stored[found]
    return out
