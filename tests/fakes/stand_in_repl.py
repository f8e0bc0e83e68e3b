"""A stand-in for the Lean REPL (leanprover-community/repl) under a real Kimina server, where no
Lean toolchain can be installed. Run as a program: it speaks the REPL's protocol on stdin/stdout
and answers with the REPL's and Lean's own messages, decided by rules instead of elaboration.

Protocol (REPL `README.md`, `REPL/Main.lean`): one JSON command per request, requests separated
by a blank line; `{"cmd": text}` elaborates `text` from scratch (its `import` lines first) and
`{"cmd": text, "env": n}` elaborates it in environment `n`; every reply is a JSON object followed
by a blank line, holding `env` (the new environment's number, counting from 0 in this process),
`messages` and `sorries` when there are any (transcripts `tactic_sorry`, `incomplete`,
`import_lean` in ../shared/data/lean-repl-transcripts). An unknown environment is
`{"message": "Unknown environment."}` (transcript `unknown_environment`).

Environments are modelled exactly where it matters here: each holds the names declared in it
and in the environment it extends, so a declaration that already exists is refused with Lean's
`'NAME' has already been declared` (Lean `src/Lean/Elab/DeclUtil.lean`, `checkNotAlreadyDeclared`)
— what a snippet run in another snippet's environment gets.

What a proof does is decided by its first tactic line (the line after `:= by`):
- `sorry`: Lean's warning `declaration uses `sorry`` at the declaration's name and a `sorries`
  entry (transcript `tactic_sorry`);
- a tactic listed in STAND_IN_CLOSES (JSON list; default below): the goal is closed, no message;
- a tactic holding `stand_in_slow`: the REPL hangs (the server's timeout must fire);
- a tactic holding `stand_in_garbage`: the REPL prints text that is not JSON, then a blank line;
- a tactic holding `stand_in_flood`: the REPL allocates until its memory cap refuses, then dies
  as Lean's runtime does, with `INTERNAL PANIC: out of memory` on stderr (Lean
  `src/runtime/object.cpp`, `lean_internal_panic_out_of_memory`);
- any other tactic: Lean's `unsolved goals` error over the proof (transcript `incomplete`).
`#print axioms NAME` gets Lean's report (Lean `src/Lean/Elab/Print.lean`: `'NAME' depends on
axioms: [...]` / `'NAME' does not depend on any axioms`, severity info): `[sorryAx]` after a sorry
or an error (Lean adds a failed declaration with `sorryAx`), `[Lean.ofReduceBool]` after
`native_decide`. `#eval 1` (the server's health check, `server/repl.py`) prints `1`.
Every request is appended to STAND_IN_LOG (one JSON line), when set.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

DECL = re.compile(r"^(?:noncomputable\s+)?(?:def|theorem|lemma|abbrev)\s+([^\s(:{\[]+)")
DEFAULT_CLOSES = ["exact ⟨hp, hq⟩", "constructor <;> assumption", "trivial", "rfl", "norm_num", "exact hp"]


def span(line: int, col: int, end_line: int, end_col: int) -> dict[str, dict[str, int]]:
    return {"pos": {"line": line, "column": col}, "endPos": {"line": end_line, "column": end_col}}


Env = dict[str, list[str]]  # the names declared, each with the axioms its proof uses


def elaborate(cmd: str, known: Env, closes: list[str]) -> tuple[dict[str, object], Env]:
    lines = cmd.split("\n")
    messages: list[dict[str, object]] = []
    sorries: list[dict[str, object]] = []
    declared = set(known)
    axioms: Env = dict(known)
    for i, line in enumerate(lines):
        number = i + 1
        match = DECL.match(line)
        if match:
            name = match.group(1)
            col = match.start(1)
            if name in declared:
                messages.append(
                    {
                        "severity": "error",
                        **span(number, col, number, col + len(name)),
                        "data": f"'{name}' has already been declared",
                    }
                )
                continue  # the old declaration stays as it was
            declared.add(name)
            # the proof: the first non-blank line after the one ending in `:= by`
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(":= by"):
                j += 1
            tactic_line = next((k for k in range(j + 1, len(lines)) if lines[k].strip()), None)
            if tactic_line is None:
                continue
            tactic = lines[tactic_line].strip()
            tcol = len(lines[tactic_line]) - len(lines[tactic_line].lstrip())
            if "stand_in_slow" in tactic:
                time.sleep(3600)
            if "stand_in_garbage" in tactic:
                raise GarbageOut
            if "stand_in_flood" in tactic:
                flood()
            if tactic == "sorry":
                messages.append(
                    {
                        "severity": "warning",
                        **span(number, col, number, col + len(name)),
                        "data": "declaration uses `sorry`",
                    }
                )
                sorries.append(
                    {
                        "proofState": len(sorries),
                        **span(tactic_line + 1, tcol, tactic_line + 1, tcol + 5),
                        "goal": "⊢ " + line.split(":", 1)[-1].removesuffix(":= by").strip(),
                    }
                )
                axioms[name] = ["sorryAx"]
            elif tactic in closes:
                axioms[name] = []
            elif tactic == "native_decide":
                axioms[name] = ["Lean.ofReduceBool"]
            else:
                by_col = lines[j].rindex("by")
                messages.append(
                    {
                        "severity": "error",
                        **span(j + 1, by_col, tactic_line + 1, len(lines[tactic_line])),
                        "data": "unsolved goals\n⊢ " + " ".join(x.strip() for x in lines[i : j + 1]),
                    }
                )
                axioms[name] = ["sorryAx"]
        elif line.startswith("#print axioms "):
            name = line[len("#print axioms ") :].strip()
            found = axioms.get(name, [])
            data = (
                f"'{name}' depends on axioms: [{', '.join(found)}]"
                if found
                else f"'{name}' does not depend on any axioms"
            )
            messages.append({"severity": "info", **span(number, 0, number, 13), "data": data})
        elif line.strip() == "#eval 1":
            messages.append({"severity": "info", **span(number, 0, number, 5), "data": "1"})
    reply: dict[str, object] = {}
    if sorries:
        reply["sorries"] = sorries
    if messages:
        reply["messages"] = messages
    return reply, axioms


class GarbageOut(Exception):
    pass


def flood() -> None:
    hog = []
    try:
        while True:
            hog.append(bytearray(16 * 1024 * 1024))
    except MemoryError:
        hog.clear()
        sys.stderr.write("INTERNAL PANIC: out of memory\n")
        sys.stderr.flush()
        os._exit(1)


def main() -> None:
    closes = json.loads(os.environ.get("STAND_IN_CLOSES") or "null") or DEFAULT_CLOSES
    log = os.environ.get("STAND_IN_LOG")
    envs: list[Env] = []
    buf: list[str] = []
    for line in sys.stdin:
        if line.strip():
            buf.append(line)
            continue
        if not buf:
            continue
        request = json.loads("".join(buf))
        buf = []
        if log:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"pid": os.getpid(), **request}) + "\n")
        env = request.get("env")
        if env is not None and not (isinstance(env, int) and 0 <= env < len(envs)):
            reply: dict[str, object] = {"message": "Unknown environment."}
        else:
            try:
                reply, names = elaborate(str(request["cmd"]), envs[env] if env is not None else {}, closes)
            except GarbageOut:
                sys.stdout.write("uncaught exception: <stand-in garbage>\n\n")
                sys.stdout.flush()
                continue
            envs.append(names)
            reply["env"] = len(envs) - 1
        sys.stdout.write(json.dumps(reply, indent=1, ensure_ascii=False) + "\n\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
