"""Files with a `module` header, where Lean refuses `#print axioms`, and how their axioms are read.

From the Lean release that made the module system a feature until one that lifts the limit,
`#print axioms` in a file that starts with `module` is an error (src/Lean/Elab/Print.lean,
`elabPrintAxioms`: "cannot use `#print axioms` in a `module`; consider temporarily removing the
`module` header or placing the command in a separate file"). Lean's manual gives the way round:
a non-module file that imports the module asks instead. So a checked copy of a module file is
split in two:

1. the module itself, its `#print axioms` lines turned into comments (no position moves),
   compiled to an `.olean` under a scratch name (`LsrbScratch.Checked`) — its messages are the
   file's messages;
2. a scratch non-module file: `import LsrbScratch.Checked`, the namespaces and `open`s in force
   at the probe line (so `#print axioms t` names the same declaration), then the probe line as
   written. Its messages are placed back on the probe line (same columns), so the acceptance
   rule reads them as if Lean had printed them in the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

SCRATCH_MODULE: Final = "LsrbScratch.Checked"
_PROBE: Final = "#print axioms "
_SCOPE: Final = re.compile(
    r"^(?:(?:@\[[^\]]*\]\s*)?(?:public\s+|noncomputable\s+)*(?P<section>section)\b\s*(?P<sname>\S*)"
    r"|(?P<namespace>namespace)\s+(?P<nname>\S+)"
    r"|(?P<end>end)\b\s*(?P<ename>\S*)\s*$"
    r"|(?P<mutual>mutual)\s*$"
    r"|(?P<open>open\b.*))"
)


def is_module(source: str) -> bool:
    """Whether `source` starts (after comments and blank lines) with the `module` keyword."""
    in_comment = False
    for line in source.split("\n"):
        stripped = line.strip()
        if in_comment:
            in_comment = "-/" not in stripped
            continue
        if stripped.startswith("/-"):
            in_comment = "-/" not in stripped[2:]
            continue
        if not stripped or stripped.startswith("--"):
            continue
        return stripped == "module" or stripped.startswith(("module ", "module\t"))
    return False


def probe_lines(source: str) -> list[int]:
    """The 1-based lines that hold `#print axioms` commands."""
    return [i for i, line in enumerate(source.split("\n"), start=1) if line.startswith(_PROBE)]


def scope_at(source: str, line: int) -> list[str]:
    """The `namespace`/`section`/`open` commands in force at `line` (1-based), as lines a
    non-module file can replay: sections reopened plainly (`public section` is the module
    system's), `open ... in` skipped (it scopes one command), closed scopes dropped."""
    stack: list[tuple[str, list[str]]] = [("", [])]  # (the opening line, its opens)
    for text in source.split("\n")[: line - 1]:
        m = _SCOPE.match(text)
        if m is None:
            continue
        if m.group("section") is not None:
            stack.append((f"section {m.group('sname')}".rstrip(), []))
        elif m.group("namespace") is not None:
            stack.append((f"namespace {m.group('nname')}", []))
        elif m.group("mutual") is not None:
            stack.append(("", []))  # closed by its `end`, nothing to replay
        elif m.group("end") is not None:
            if len(stack) > 1:
                stack.pop()
        elif not text.rstrip().endswith(" in"):
            stack[-1][1].append(text.rstrip())
    out: list[str] = []
    for opening, opens in stack:
        if opening:
            out.append(opening)
        out.extend(opens)
    return out


@dataclass(frozen=True)
class ModuleCheck:
    """The two files a module's check is split into (module docstring)."""

    module_text: str  # the module, its probe lines commented out
    probe_text: str  # the non-module file that imports it and asks
    probe_line: int  # the probe's line in the module (1-based)
    asked_at: int  # the same probe's line in `probe_text`


def split_module(source: str) -> ModuleCheck | None:
    """The module and the asking file for `source`, or None when it has no `#print axioms`."""
    lines = probe_lines(source)
    if not lines:
        return None
    probe_line = lines[0]
    text = source.split("\n")
    module = [f"-- {t}" if i in lines else t for i, t in enumerate(text, start=1)]
    asking = [f"import {SCRATCH_MODULE}", "", *scope_at(source, probe_line), ""]
    asked_at = len(asking) + 1
    asking.append(text[probe_line - 1])
    return ModuleCheck("\n".join(module), "\n".join(asking) + "\n", probe_line, asked_at)
