"""The Lean options an answer may not set: the one deny list, each entry with its Lean source.

`set_option NAME VALUE in tac` is an ordinary tactic (`set_option maxRecDepth 2000 in simp` is
common Mathlib style) and is allowed, except where the option changes the rules the answer is
judged by or moves its failure into another column:

- the kernel check: an option of the `debug` group (`debug.skipKernelTC`,
  `src/Lean/AddDecl.lean` `register_builtin_option debug.skipKernelTC`: "skip kernel type checker.
  WARNING: setting this option to true may compromise soundness"; `debug.byAsSorry`,
  `src/Lean/Elab/Term.lean`: "replace `by ..` blocks with `sorry`"). `set_option
  debug.skipKernelTC true in exact (by decide +kernel : False).elim` closes a false goal with a
  clean `#print axioms` (issue #29). The whole `debug.` prefix is refused: its options exist to
  switch checks off;
- a limit set to "no limit": `maxHeartbeats 0` (`src/Lean/CoreM.lean` `register_builtin_option
  maxHeartbeats`: "... 0 means no limit"), `synthInstance.maxHeartbeats 0`
  (`src/Lean/Meta/SynthInstance.lean`, the same words): the model's own non-terminating tactic
  would become a wall-clock `timeout`, which is the environment's column;
- a recursion limit past what the native stack holds: `maxRecDepth` above `MAX_REC_DEPTH`
  (`src/Lean/Util/RecDepth.lean` `register_builtin_option maxRecDepth`, default
  `defaultMaxRecDepth := 512` in `src/Init/Prelude.lean`). `maxRecDepth 0` is not unbounded:
  `withIncRecDepth` fails at once, which is the answer's own `lean_error`;
- output floods: `trace.*` (`src/Lean/Util/Trace.lean`: every `registerTraceClass` declares the
  option `trace.<class>`), which can print a message per unification step.

Everything else (`pp.*`, `linter.*`, `maxRecDepth 2000`, `maxHeartbeats 400000`, `simprocs`,
`backward.*`) is Lean's to judge.
"""

from __future__ import annotations

from typing import Final

DENIED_PREFIXES: Final = ("debug.", "trace.")
UNLIMITED_AT_ZERO: Final = frozenset({"maxHeartbeats", "synthInstance.maxHeartbeats"})
# about 200 times Lean's default of 512.
MAX_REC_DEPTH: Final = 100_000


def denied_option(name: str, value: str) -> str | None:
    """Why an answer may not set option `name` to `value` (one sentence), or None."""
    if name.startswith(DENIED_PREFIXES):
        group = name.split(".", 1)[0]
        return f"set_option {name}: the `{group}` options switch Lean's checks off or flood its output"
    if name in UNLIMITED_AT_ZERO and _nat(value) == 0:
        return f"set_option {name} 0 removes the limit (Lean: 0 means no limit)"
    if name == "maxRecDepth" and (_nat(value) or 0) > MAX_REC_DEPTH:
        return f"set_option maxRecDepth {value} is past {MAX_REC_DEPTH}: a native stack overflow is a crash"
    return None


def _nat(value: str) -> int | None:
    text = value.replace("_", "")
    return int(text) if text.isdigit() else None
