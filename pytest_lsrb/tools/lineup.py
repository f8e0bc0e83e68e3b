"""Several models in one command (issue #34): `lsrb run SUITE --lsrb-model a --lsrb-model b …`, or
`--lsrb-models FILE` naming each model's adapter, base URL, key variable and sampling, is one
ordinary run per model: each in its own directory (`<group>/<label>`), each resumable alone with
the command its own last line prints. Runs on different servers go in parallel; runs on one server
one after another (they would only queue in it): `by_server`. The comparison of the runs is `report.lineup`.

A models file is TOML, one `[[model]]` table per model; its keys are run options without the
`--lsrb-` prefix (those of `MODEL_KEYS`), e.g.

    [[model]]
    model = "qwen2.5:7b"
    adapter = "ollama"
    base_url = "http://gpu1:11434"

    [[model]]
    label = "gpt-4o-mini"         # the run's folder (default: the model's name, made a file name)
    model = "gpt-4o-mini"
    adapter = "openai"
    api_key_env = "OPENAI_API_KEY"
    temperature = 0.7
    max_tokens = 512

Everything else on the command line applies to every model's run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.textfiles import read_toml

MODEL_FLAG: Final = "--lsrb-model"
MODELS_FLAG: Final = "--lsrb-models"
OUTPUT_FLAG: Final = "--lsrb-output-dir"
# The keys a models file may give per model (each is the run option `--lsrb-<key with ->`).
MODEL_KEYS: Final = (
    "model",
    "adapter",
    "base_url",
    "api_key_env",
    "allow_model_alias",
    "max_tokens_field",
    "temperature",
    "max_tokens",
    "timeout",
    "concurrency",
    "price",
)
MAX_MODELS_FILE_BYTES: Final = 1 << 20
MAX_MODELS: Final = 64
LABEL_OK = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class ModelRun:
    """One model's run: its folder's name and the options that are its own."""

    label: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def words(self) -> list[str]:
        """The command-line words of its own options."""
        out = []
        for key, value in self.options.items():
            flag = "--lsrb-" + key.replace("_", "-")
            if isinstance(value, bool):
                if value:
                    out.append(flag)
            else:
                out.append(f"{flag}={value}")
        return out

    @property
    def server(self) -> tuple[str, str]:
        """What decides whether two runs may go at once: their adapter and base URL."""
        return (str(self.options.get("adapter") or ""), str(self.options.get("base_url") or ""))


def label_of(name: str) -> str:
    """A model's name made a folder name (`qwen2.5:7b` -> `qwen2.5-7b`)."""
    label = LABEL_OK.sub("-", name).strip("-.")
    return label[:80] or "model"


def _values(words: Sequence[str], flag: str) -> tuple[list[str], list[str]]:
    """The values `flag` is given in `words` (`--flag=X` or `--flag X`), and the other words."""
    values: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == flag:
            if i + 1 >= len(words):
                raise LsrbUsageError(f"{flag} needs a value.")
            values.append(words[i + 1])
            i += 2
            continue
        if word.startswith(flag + "="):
            values.append(word[len(flag) + 1 :])
        else:
            rest.append(word)
        i += 1
    return values, rest


def model_values(words: Sequence[str]) -> list[str]:
    """The `--lsrb-model` values given in `words` (a word after one that takes no value is never
    mistaken for one: only `--lsrb-model X` and `--lsrb-model=X` count)."""
    try:
        return _values(words, MODEL_FLAG)[0]
    except LsrbUsageError:
        return []


def split_models(words: Sequence[str]) -> tuple[list[ModelRun], list[str]] | None:
    """The model runs a command line asks for and the words every run shares; None for a command
    of one model (an ordinary run)."""
    models, rest = _values(words, MODEL_FLAG)
    files, rest = _values(rest, MODELS_FLAG)
    if len(files) > 1:
        raise LsrbUsageError(f"{MODELS_FLAG} is given {len(files)} times; give one models file.")
    runs = [ModelRun(label_of(m), {"model": m}) for m in models]
    if files:
        runs += read_models_file(Path(files[0]))
    if len(runs) < 2 and not files:
        return None
    if not runs:
        raise LsrbUsageError(f"{files[0]}: names no model (add [[model]] tables).")
    seen: dict[str, int] = {}
    unique = []
    for run in runs:  # a label twice (the same model at two temperatures): a suffix apart
        seen[run.label] = seen.get(run.label, 0) + 1
        label = run.label if seen[run.label] == 1 else f"{run.label}-{seen[run.label]}"
        unique.append(ModelRun(label, run.options))
    if len({r.label for r in unique}) != len(unique):
        raise LsrbUsageError("two models would share one run folder; give each a distinct label.")
    return unique, rest


def read_models_file(path: Path) -> list[ModelRun]:
    """A models file's runs; one sentence naming the file, the entry and the field otherwise."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise LsrbUsageError(f"{MODELS_FLAG}: {path} cannot be read ({exc.strerror or exc}).") from None
    if size > MAX_MODELS_FILE_BYTES:
        raise LsrbUsageError(f"{path}: {size} bytes; a models file is at most {MAX_MODELS_FILE_BYTES}.")
    data = read_toml(path)  # (one reader of TOML: BOM, depth, digits, encoding)
    unknown = sorted(set(data) - {"model"})
    if unknown:
        raise LsrbUsageError(
            f"{path}: unknown top-level key(s) {', '.join(unknown)} (expected [[model]] tables)."
        )
    entries = data.get("model", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise LsrbUsageError(f"{path}: 'model' must be a list of tables ([[model]]).")
    if len(entries) > MAX_MODELS:
        raise LsrbUsageError(f"{path}: {len(entries)} models; at most {MAX_MODELS} in one command.")
    runs = []
    for n, entry in enumerate(entries, start=1):
        where = f"{path}: model {n}"
        bad = sorted(set(entry) - {*MODEL_KEYS, "label"})
        if bad:
            raise LsrbUsageError(
                f"{where}: unknown field '{bad[0]}' (known: label, {', '.join(MODEL_KEYS)})."
            )
        name = entry.get("model")
        if not isinstance(name, str) or not name.strip():
            raise LsrbUsageError(f"{where}: field 'model' must be a non-empty string.")
        for key, value in entry.items():
            if not isinstance(value, (str, int, float, bool)):
                raise LsrbUsageError(f"{where}: field '{key}' must be a string, number or boolean.")
            if isinstance(value, str) and ("\n" in value or "\x00" in value):
                raise LsrbUsageError(f"{where}: field '{key}' holds a line break or NUL.")
        label = entry.get("label", name)
        if not isinstance(label, str):
            raise LsrbUsageError(f"{where}: field 'label' must be a string.")
        runs.append(ModelRun(label_of(label), {k: v for k, v in entry.items() if k != "label"}))
    return runs


def group_dir(words: Sequence[str], suite_name: str, stamp: str) -> tuple[Path, list[str]]:
    """The folder the runs go in (`--lsrb-output-dir`, else `lsrb-out/<suite>/models-<stamp>`) and
    the shared words without it."""
    dirs, rest = _values(words, OUTPUT_FLAG)
    if len(dirs) > 1:
        raise LsrbUsageError(f"{OUTPUT_FLAG} is given {len(dirs)} times.")
    base = Path(dirs[0]).expanduser() if dirs else Path("lsrb-out") / suite_name / f"models-{stamp}"
    return base, rest


def by_server(runs: Sequence[ModelRun]) -> list[list[ModelRun]]:
    """Runs grouped by server (adapter + base URL), in the order given: each group runs one after
    another (they would only queue in that server), the groups at once."""
    groups: dict[tuple[str, str], list[ModelRun]] = {}
    for run in runs:
        groups.setdefault(run.server, []).append(run)
    return list(groups.values())
