"""Which Lean, Lake and Mathlib a check ran with, as one line recorded with every attempt.

In a Lake project: its `lean-toolchain` (what elan runs there) and the Mathlib revision pinned
by `lake-manifest.json`; without one: the first line of `lean --version`. The text is read once
per project and kept.
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path

from pytest_lsrb.tactic.lean.process import run_bounded

_CACHE: dict[tuple[str, str], str] = {}
_LOCK = threading.Lock()


def _manifest_mathlib(project: Path) -> str | None:
    try:
        data = json.loads((project / "lake-manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    packages = data.get("packages") if isinstance(data, dict) else None
    for package in packages if isinstance(packages, list) else []:
        if isinstance(package, dict) and package.get("name") == "mathlib":
            rev = package.get("rev")
            return str(rev) if rev else None
    return None


def describe_toolchain(project: Path | None, lean_command: str = "lean") -> str:
    """`lean-toolchain: leanprover/lean4:v4.22.0; mathlib: <rev>`, or `lean: Lean (version ...)`."""
    key = (str(project), lean_command)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    parts: list[str] = []
    if project is not None:
        with contextlib.suppress(OSError):
            pinned = (project / "lean-toolchain").read_text(encoding="utf-8").strip()
            parts.append(f"lean-toolchain: {pinned}")
        mathlib = _manifest_mathlib(project)
        if mathlib:
            parts.append(f"mathlib: {mathlib}")
    if not parts:
        result = run_bounded([lean_command, "--version"], timeout_s=30, memory_mb=None)
        first = result.stdout.strip().splitlines()[:1] if result.ok else []
        parts.append("lean: " + (first[0] if first else "unknown"))
    text = "; ".join(parts)
    with _LOCK:
        _CACHE[key] = text
    return text
