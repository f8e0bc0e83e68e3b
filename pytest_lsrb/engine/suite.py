"""Suites: a folder with `suite.toml`, its test module and its built-in data.

```toml
[suite]
name = "goal_to_tactic_proposal_v1"
task = "goal_to_tactic_proposal_v1"   # which task implementation runs it
index = "index.jsonl"                 # rows, relative to the folder
prompt = "prompt.md"                  # user prompt template ({{field}} placeholders)
system_prompt = "system.md"           # optional

[defaults]                            # any run option's default for this suite
samples = 1
max_tokens = 128
```
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.registry import SUITES_GROUP, Registry, is_spec
from pytest_lsrb.core.textfiles import read_toml

SUITE_FILE = "suite.toml"


@dataclass(frozen=True)
class SuiteSpec:
    name: str
    task: str
    root: Path
    index: Path
    prompt_template: str
    system_template: str | None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)

    def render_prompt(self, fields: Mapping[str, Any]) -> tuple[str | None, str]:
        """(system, user) prompts with `{{name}}` placeholders filled."""
        system = render(self.system_template, fields) if self.system_template else None
        return system, render(self.prompt_template, fields)


def render(template: str, fields: Mapping[str, Any]) -> str:
    """Fill `{{name}}` placeholders; a placeholder with no field is left as it is."""
    if "{{" not in template:  # nothing to fill, and no value can make a placeholder appear
        return template
    out = template
    for name, value in fields.items():
        out = out.replace("{{" + name + "}}", str(value))
    return out


def load_suite(root: Path) -> SuiteSpec:
    path = root / SUITE_FILE
    data = read_toml(path)
    suite = data.get("suite")
    if not isinstance(suite, dict):
        raise LsrbUsageError(f"{path}: missing the [suite] table.")
    for key in ("name", "task", "index", "prompt"):
        if not isinstance(suite.get(key), str):
            raise LsrbUsageError(f"{path}: field 'suite.{key}' is missing or not a string.")
    prompt = _read_text(root / suite["prompt"], path, "suite.prompt")
    system = suite.get("system_prompt")
    system_text = _read_text(root / system, path, "suite.system_prompt") if system else None
    defaults = data.get("defaults", {})
    settings = {k: v for k, v in data.items() if k not in ("suite", "defaults")}
    return SuiteSpec(
        name=suite["name"],
        task=suite["task"],
        root=root.resolve(),
        index=(root / suite["index"]).resolve(),
        prompt_template=prompt,
        system_template=system_text,
        defaults=defaults,
        settings=settings,
    )


def read_suite_text(root: Path, name: str, field_name: str) -> str:
    """A text file a suite.toml field names (a prompt template), or one sentence saying why not."""
    return _read_text(root / name, root / SUITE_FILE, field_name)


def _read_text(path: Path, owner: Path, field_name: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        raise LsrbUsageError(f"{owner}: field '{field_name}' names {path}, which cannot be read.") from None
    except UnicodeDecodeError as exc:
        raise LsrbUsageError(
            f"{owner}: field '{field_name}' names {path}, which is not UTF-8 text "
            f"(byte 0x{exc.object[exc.start]:02x} at offset {exc.start})."
        ) from None


def suite_root_of(path: Path) -> Path | None:
    """The suite folder containing `path` (a file or folder inside it), if any."""
    path = path.resolve()
    for candidate in (path, *path.parents):
        if (candidate / SUITE_FILE).is_file():
            return candidate
    return None


def discover_suite_roots(args: Iterable[str], rootdir: Path) -> list[Path]:
    """Suite folders named by pytest's positional args: inside one, or containing some."""
    roots: list[Path] = []
    for arg in args:
        if arg.startswith("-"):
            continue
        path = Path(arg.split("::", 1)[0])
        if not path.is_absolute():
            path = rootdir / path
        if not path.exists():
            continue
        found = suite_root_of(path)
        if found is not None:
            roots.append(found)
        elif path.is_dir():
            roots.extend(p.parent.resolve() for p in sorted(path.rglob(SUITE_FILE)))
    unique: list[Path] = []
    for root in roots:
        if root not in unique:
            unique.append(root)
    return unique


def builtin_suites_dir() -> Path:
    """Where the built-in suites live: the repo's `suites/` in a checkout, else inside the wheel."""
    package = Path(__file__).resolve().parent.parent  # pytest_lsrb/
    packaged = package / "_suites"
    if packaged.is_dir():
        return packaged
    return package.parent / "suites"


def suites() -> Registry:
    """The suites a name finds: the built-in folders, then installed packages' entry points of
    `pytest_lsrb.suites` (each names an object holding its folder's path), then a
    `"pkg.mod:NAME"` spec of such an object. `lsrb list` shows them."""
    root = builtin_suites_dir()
    found = sorted(p for p in root.iterdir() if (p / SUITE_FILE).is_file()) if root.is_dir() else []
    return Registry({p.name: str(p) for p in found}, group=SUITES_GROUP, what="suite", where="lsrb run SUITE")


def find_suite(ref: str | os.PathLike[str]) -> Path:
    """The suite a command names: a folder that exists, else a suite by name (`suites()`)."""
    suite = Path(ref)
    if suite.exists():
        return suite
    name = os.fspath(ref)
    known = suites()
    if name in known.builtins:
        return Path(known.builtins[name])
    if name not in known and not is_spec(name):
        installed = sorted(set(known.names()) - set(known.builtins))
        also = f"; installed: {', '.join(installed)}" if installed else ""
        raise LsrbUsageError(f"no suite '{ref}' (built-in suites: {', '.join(known.builtins)}{also}).")
    target = known.load(name)
    try:
        folder = Path(target)
    except TypeError:
        raise LsrbUsageError(
            f"the suite '{name}' names {target!r}, not a folder (a Path or str is expected)."
        ) from None
    if not (folder / SUITE_FILE).is_file():
        raise LsrbUsageError(f"the suite '{name}' names {folder}, which holds no {SUITE_FILE}.")
    return folder
