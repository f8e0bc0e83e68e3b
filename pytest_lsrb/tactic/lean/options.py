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
- a limit past its ceiling (`CEILINGS`, the one table of them): the heartbeat budgets
  `maxHeartbeats` (`src/Lean/CoreM.lean` `register_builtin_option maxHeartbeats`, default 200000:
  "... 0 means no limit") and `synthInstance.maxHeartbeats` (`src/Lean/Meta/SynthInstance.lean`,
  default 20000, the same words) at 0 or above `MAX_HEARTBEATS`, and the recursion limit
  `maxRecDepth` (`src/Lean/Util/RecDepth.lean`, default `defaultMaxRecDepth := 512` in
  `src/Init/Prelude.lean`) above `MAX_REC_DEPTH`. A budget is there so that the model's own
  non-terminating tactic ends as Lean's heartbeat error, the model's; without one, or with one
  so large it never runs out (`maxHeartbeats 100000000000`, refused since issue #47), it would
  become a wall-clock `timeout`, the environment's column; a recursion depth past what the
  native stack holds is a crash, the environment's too. The heartbeat ceiling is 20 times Lean's
  default budget (4,000,000: the largest `set_option maxHeartbeats N in` in public Lean
  repositories is 3,200,000); the value is read as Lean reads a numeral (`0x0` is 0).
  `maxRecDepth 0` is not unbounded: `withIncRecDepth` fails at once, the answer's own
  `lean_error`;
- output floods: `trace.*` (`src/Lean/Util/Trace.lean`: every `registerTraceClass` declares the
  option `trace.<class>`), which can print a message per unification step.

Everything else (`pp.*`, `linter.*`, `maxRecDepth 2000`, `maxHeartbeats 400000`, `simprocs`,
`backward.*`) is Lean's to judge.
"""

from __future__ import annotations

from typing import Final

DENIED_PREFIXES: Final = ("debug.", "trace.")
# Lean's default heartbeat budget (maxHeartbeats) times 20.
MAX_HEARTBEATS: Final = 4_000_000
# about 200 times Lean's default of 512.
MAX_REC_DEPTH: Final = 100_000
# The limits an answer may raise, each up to its ceiling; those where 0 means "no limit".
CEILINGS: Final = {
    "maxHeartbeats": MAX_HEARTBEATS,
    "synthInstance.maxHeartbeats": MAX_HEARTBEATS,
    "maxRecDepth": MAX_REC_DEPTH,
}
UNLIMITED_AT_ZERO: Final = frozenset({"maxHeartbeats", "synthInstance.maxHeartbeats"})
_RADIX: Final = {"0x": 16, "0X": 16, "0b": 2, "0B": 2, "0o": 8, "0O": 8}


def denied_option(name: str, value: str) -> str | None:
    """Why an answer may not set option `name` to `value` (one sentence), or None."""
    if name.startswith(DENIED_PREFIXES):
        group = name.split(".", 1)[0]
        return f"set_option {name}: the `{group}` options switch Lean's checks off or flood its output"
    ceiling = CEILINGS.get(name)
    if ceiling is None:
        return None
    number = lean_nat(value)
    if number == 0 and name in UNLIMITED_AT_ZERO:
        return f"set_option {name} {value} removes the limit (Lean: 0 means no limit)"
    if number is not None and number > ceiling:
        return (
            f"set_option {name} {value} is past the ceiling of {ceiling:,} (a limit that never "
            "runs out ends as a wall-clock timeout or a crash, not as the answer's own error)"
        )
    return None


def lean_nat(value: str) -> int | None:
    """A natural-number literal as Lean reads it (decimal, `0x`, `0b`, `0o`; `_` between digits
    ignored), else None."""
    radix = _RADIX.get(value[:2], 10)
    digits = (value[2:] if radix != 10 else value).replace("_", "")  # `1_000`, as before #47
    if not digits or not digits.isascii():
        return None
    try:
        return int(digits, radix) if digits.isalnum() else None
    except ValueError:
        return None
