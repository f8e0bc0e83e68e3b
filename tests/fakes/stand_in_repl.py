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

A proof is the tactic after `:= by` on its line, or the tactic block under it: each line at the
block's column starts a tactic (deeper lines continue it), and the tactics run in order on the
declaration's goal (its binders are the hypotheses, the type after the last `:` the target).
What one tactic does (`step`, the same in a `cmd` and on a proof state):
- `sorry`: closes the goal; Lean's warning `declaration uses `sorry`` at the declaration's name
  and a `sorries` entry with a new proof state (transcript `tactic_sorry`);
- `stop ...`, `apply?`, `exact?`: sorry-equivalents: the goals close, the declaration warns
  `declaration uses `sorry`` and depends on `sorryAx` (lean4 tests: `stop` is `repeat sorry`),
  but no `sorries` entry (the REPL lists `sorry` syntax, REPL/Lean/InfoTree.lean);
- a tactic listed in STAND_IN_CLOSES (JSON list; default below): the goal is closed;
- `native_decide`: the goal is closed, the declaration depends on `Lean.ofReduceBool`;
- `constructor` on a goal `A ∧ B`: the goals `A` and `B`; `exact h`/`assumption` with a
  hypothesis `h` of the goal's type: closed, otherwise Lean's `type mismatch`; `exact x` naming
  no hypothesis: ``Unknown identifier `x` `` (transcript `invalid_tactic`); `have t : T := ...`:
  the hypothesis `t : T` (transcript `pickle_proof_state_1`);
- a name starting `no_such_`: Lean's ``Unknown identifier `no_such_x` `` (transcript
  `invalid_tactic`); a first word `exat`: Lean's parse error `unknown tactic` (transcript
  `unknown_tactic`; on a proof state the REPL answers `{"message": "Lean error:\n<input>:1:1:
  unknown tactic"}`); a tactic with no goal left: `no goals to be solved`; a block of nothing
  but comments: Lean's parse error `unexpected end of input; expected '{' or tactic`;
- a tactic holding `stand_in_slow`: the REPL hangs (the server's timeout must fire);
- a tactic holding `stand_in_garbage`: the REPL prints text that is not JSON, then a blank line;
- a tactic holding `stand_in_flood`: the REPL allocates until its memory cap refuses, then dies
  as Lean's runtime does, with `INTERNAL PANIC: out of memory` on stderr (Lean
  `src/runtime/object.cpp`, `lean_internal_panic_out_of_memory`);
- any other tactic: the goal stays; goals left at the end are Lean's `unsolved goals` error
  over the proof (transcript `incomplete`).
Line comments (`--`) are skipped. An error stops the block (Lean's error recovery admits the
goal: the declaration depends on `sorryAx`).

Proof states (REPL `README.md`, `REPL/Main.lean` `runTactic`): every sorry of a `cmd` and every
tactic step makes a state, numbered from 0 in this process (transcript `pickle_proof_state_1`);
`{"tactic": t, "proofState": n}` runs `t` on state n's goals and answers `{"proofStatus",
"proofState", "goals"}` (`Completed`, `Incomplete: open goals remain`, `Incomplete: contains
sorry` after an error or a sorry-equivalent, with the error in `messages` at 0:0: transcripts
`proof_step`, `proof_branching`, `invalid_tactic`); an unknown state is `{"message": "Unknown
proof state."}` (transcript `unknown_proof_state`). `{"pickleTo": f, "env": n}` answers
`{"env": n}` and `{"unpickleEnvFrom": f}` a new environment with the same names (transcript
`pickle_environment`); `{"pickleTo": f, "proofState": n}` and `{"unpickleProofStateFrom": f}`
answer as a step that changed nothing (transcript `pickle_proof_state_1`). The pickle file is
JSON, not an .olean: only this stand-in reads it.

`#print axioms NAME` gets Lean's report (Lean `src/Lean/Elab/Print.lean`: `'NAME' depends on
axioms: [...]` / `'NAME' does not depend on any axioms`, severity info). `#eval 1` (the server's
health check, `server/repl.py`) prints `1`. Every request is appended to STAND_IN_LOG (one JSON
line), when set.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass, field

DECL = re.compile(r"^(?:noncomputable\s+)?(?:def|theorem|lemma|abbrev)\s+([^\s(:{\[]+)")
DEFAULT_CLOSES = ["exact ⟨hp, hq⟩", "constructor <;> assumption", "trivial", "rfl", "norm_num", "exact hp"]
SORRY_LIKE = re.compile(r"^(?:stop\b|apply\?|exact\?)")
BINDER = re.compile(r"[(\[{]([^()\[\]{}]*?)\s:\s([^()\[\]{}]*)[)\]}]")


def span(line: int, col: int, end_line: int, end_col: int) -> dict[str, dict[str, int]]:
    return {"pos": {"line": line, "column": col}, "endPos": {"line": end_line, "column": end_col}}


@dataclass(frozen=True)
class Goal:
    hyps: tuple[tuple[str, str], ...]
    target: str

    def show(self) -> str:  # the REPL's goal text, names of one type together (transcript `proof_branching`)
        shown: list[tuple[list[str], str]] = []
        for name, typ in self.hyps:
            if shown and shown[-1][1] == typ:
                shown[-1][0].append(name)
            else:
                shown.append(([name], typ))
        return "\n".join([*(f"{' '.join(n)} : {t}" for n, t in shown), f"⊢ {self.target}"])


@dataclass
class Outcome:
    goals: list[Goal]
    error: str | None = None
    parse_error: bool = False
    sorry: bool = False  # a `sorry` (listed in `sorries`)
    sorry_goal: Goal | None = None  # the goal it closed (REPL: the sorry's `goalsBefore.head!`)
    sorry_like: bool = False  # sorryAx without a `sorries` entry
    native: bool = False
    events: list[str] = field(default_factory=list)


def goal_of(header: str) -> Goal:
    """The declaration's goal from its text up to `:= by`: binders as hypotheses, then the target."""
    text = header.rsplit(":=", 1)[0]
    hyps: list[tuple[str, str]] = []
    for names, typ in BINDER.findall(text):
        for name in names.split():
            hyps.append((name, " ".join(typ.split())))
    rest = BINDER.sub(" ", text)
    target = rest.rsplit(":", 1)[-1] if ":" in rest else "True"
    return Goal(tuple(hyps), " ".join(target.split()))


def specials(tactic: str) -> None:
    if "stand_in_slow" in tactic:
        time.sleep(3600)
    if "stand_in_garbage" in tactic:
        raise GarbageOut
    if "stand_in_flood" in tactic:
        flood()


def step(tactic: str, goals: list[Goal], closes: list[str], out: Outcome) -> bool:
    """Run one tactic on `goals` (the first is the main goal); False when it failed (out.error)."""
    tactic = tactic.strip()
    specials(tactic)
    unknown = re.search(r"\bno_such_\w+", tactic)
    if tactic.split(" ", 1)[0] == "exat":
        out.error, out.parse_error = "unknown tactic", True
        return False
    if not goals:
        out.error = "no goals to be solved"
        return False
    if unknown:
        out.error = f"Unknown identifier `{unknown.group(0)}`"
        return False
    main, rest = goals[0], goals[1:]
    if tactic == "sorry":
        out.sorry = True
        out.sorry_goal = out.sorry_goal or main
        out.goals = rest
    elif SORRY_LIKE.match(tactic):
        out.sorry_like = True
        out.goals = [] if tactic.startswith("stop") else rest
    elif tactic in closes:
        out.goals = rest
    elif tactic == "native_decide":
        out.native = True
        out.goals = rest
    elif tactic == "constructor" and " ∧ " in main.target:
        left, right = main.target.split(" ∧ ", 1)
        out.goals = [Goal(main.hyps, left), Goal(main.hyps, right), *rest]
    elif have := re.fullmatch(r"have\s+([\w']+)\s*:\s*(.+?)\s*:=.*", tactic):
        out.goals = [Goal((*main.hyps, (have.group(1), have.group(2))), main.target), *rest]
    elif tactic == "assumption" or re.fullmatch(r"exact [\w.']+", tactic):
        name = tactic.split(" ", 1)[1] if " " in tactic else None
        if name is not None and name not in dict(main.hyps):
            if name.split(".")[0] in dict(
                main.hyps
            ):  # a hypothesis's projection (`h.left`): taken as fitting
                out.goals = rest
                return True
            out.error = f"Unknown identifier `{name}`"
            return False
        found = [n for n, t in main.hyps if t == main.target and (name is None or n == name)]
        if not found:
            typ = dict(main.hyps).get(name or "", "?")
            out.error = ("type mismatch" if name else "tactic 'assumption' failed") + (
                f"\n  {name}\nhas type\n  {typ} : Prop\nbut is expected to have type\n  {main.target} : Prop"
                if name
                else ""
            )
            return False
        out.goals = rest
    else:
        out.goals = goals
    return True


def run_block(tactics: list[str], goal: list[Goal], closes: list[str]) -> tuple[Outcome, int]:
    """Run the tactics in order; (the outcome, the index of the failing tactic or -1)."""
    out = Outcome(list(goal))
    for i, tactic in enumerate(tactics):
        if not step(tactic, out.goals, closes, out):
            return out, i
    return out, -1


def block_tactics(lines: list[str], first: int, *, in_file: bool = True) -> list[tuple[int, str]]:
    """(line index, tactic text) of the tactic block starting at line `first` (in a file, a line
    at column 0 is the next command)."""
    column = len(lines[first]) - len(lines[first].lstrip())
    found: list[tuple[int, str]] = []
    for k in range(first, len(lines)):
        line = re.sub(r"\s*--.*$", "", lines[k])  # Lean skips a line comment
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent < column or (in_file and k > first and indent == 0):
            break
        if indent == column:
            found.append((k, line.strip()))
        elif found:
            found[-1] = (found[-1][0], found[-1][1] + "\n" + line.strip())
    return found


Env = dict[str, list[str]]  # the names declared, each with the axioms its proof uses


class Repl:
    def __init__(self, closes: list[str]) -> None:
        self.closes = closes
        self.envs: list[Env] = []
        self.states: list[list[Goal]] = []

    def new_state(self, goals: list[Goal]) -> int:
        self.states.append(goals)
        return len(self.states) - 1

    def elaborate(self, cmd: str, known: Env) -> tuple[dict[str, object], Env]:
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
                # the proof: after `:= by` on its line (transcript `tactic_sorry`), or the block under it
                j = i
                while j < len(lines) and ":= by" not in lines[j]:
                    j += 1
                if j == len(lines):
                    continue
                by_at = lines[j].index(":= by") + 3
                inline = lines[j][by_at + 2 :]
                goal = goal_of(" ".join(lines[i:j]) + " " + lines[j][:by_at])
                if inline.strip():
                    tactics = [(j, by_at + 2 + len(inline) - len(inline.lstrip()), inline.strip())]
                else:
                    first = next((k for k in range(j + 1, len(lines)) if lines[k].strip()), None)
                    if first is None:
                        continue
                    tactics = [
                        (k, len(lines[k]) - len(lines[k].lstrip()), t) for k, t in block_tactics(lines, first)
                    ]
                if not tactics:  # comments only: Lean's parser wants a tactic after `by`
                    messages.append(
                        {
                            "severity": "error",
                            **span(j + 1, by_at + 2, j + 1, by_at + 2),
                            "data": "unexpected end of input; expected '{' or tactic",
                        }
                    )
                    axioms[name] = ["sorryAx"]
                    continue
                out, failed = run_block([t for _, _, t in tactics], [goal], self.closes)
                used: list[str] = []
                if out.sorry or out.sorry_like or failed >= 0:
                    used.append("sorryAx")
                if out.native:
                    used.append("Lean.ofReduceBool")
                if out.sorry:
                    k, tcol, _ = next(x for x in tactics if x[2] == "sorry")
                    closed = out.sorry_goal or goal
                    sorries.append(
                        {
                            "proofState": self.new_state([closed]),
                            **span(k + 1, tcol, k + 1, tcol + 5),
                            "goal": closed.show(),
                        }
                    )
                if failed >= 0:
                    k, tcol, _ = tactics[failed]
                    messages.append(
                        {"severity": "error", **span(k + 1, tcol, k + 1, len(lines[k])), "data": out.error}
                    )
                elif out.goals:
                    last = tactics[-1][0]
                    messages.append(
                        {
                            "severity": "error",
                            **span(j + 1, by_at, last + 1, len(lines[last])),
                            "data": "unsolved goals\n" + "\n\n".join(g.show() for g in out.goals),
                        }
                    )
                    used.append("sorryAx")
                if (out.sorry or out.sorry_like) and failed < 0:
                    messages.append(
                        {
                            "severity": "warning",
                            **span(number, col, number, col + len(name)),
                            "data": "declaration uses `sorry`",
                        }
                    )
                axioms[name] = sorted(set(used), key=used.index)
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

    def tactic(self, tactic: str, state: object) -> dict[str, object]:
        if not (isinstance(state, int) and 0 <= state < len(self.states)):
            return {"message": "Unknown proof state."}
        tactics = [t for _, t in block_tactics(tactic.split("\n"), 0, in_file=False)]
        if not tactics:
            return {"message": "Lean error:\n<input>:1:1: unexpected end of input; expected '{' or tactic"}
        out, failed = run_block(tactics, self.states[state], self.closes)
        if out.parse_error:
            return {"message": "Lean error:\n<input>:1:1: unknown tactic"}
        if failed >= 0:
            return {
                "proofStatus": "Incomplete: contains sorry",
                "proofState": self.new_state([]),
                "messages": [{"severity": "error", **span(0, 0, 0, 0), "data": out.error}],
                "goals": [],
            }
        status = (
            "Incomplete: open goals remain"
            if out.goals
            else "Incomplete: contains sorry"
            if out.sorry or out.sorry_like
            else "Completed"
        )
        return {
            "proofStatus": status,
            "proofState": self.new_state(out.goals),
            "goals": [g.show() for g in out.goals],
        }

    def answer(self, request: dict[str, object]) -> dict[str, object]:
        if "tactic" in request:
            return self.tactic(str(request["tactic"]), request.get("proofState"))
        if "pickleTo" in request:
            target = str(request["pickleTo"])
            if "proofState" in request:
                state = request["proofState"]
                if not (isinstance(state, int) and 0 <= state < len(self.states)):
                    return {"message": "Unknown proof state."}
                with open(target, "w", encoding="utf-8") as fh:
                    json.dump([[g.hyps, g.target] for g in self.states[state]], fh)
                return self.step_reply(self.states[state])
            env = request.get("env")
            if not (isinstance(env, int) and 0 <= env < len(self.envs)):
                return {"message": "Unknown environment."}
            with open(target, "w", encoding="utf-8") as fh:
                json.dump(self.envs[env], fh)
            return {"env": env}
        if "unpickleEnvFrom" in request:
            with open(str(request["unpickleEnvFrom"]), encoding="utf-8") as fh:
                self.envs.append(json.load(fh))
            return {"env": len(self.envs) - 1}
        if "unpickleProofStateFrom" in request:
            with open(str(request["unpickleProofStateFrom"]), encoding="utf-8") as fh:
                goals = [Goal(tuple((n, t) for n, t in hyps), target) for hyps, target in json.load(fh)]
            return self.step_reply(goals)
        env = request.get("env")
        if env is not None and not (isinstance(env, int) and 0 <= env < len(self.envs)):
            return {"message": "Unknown environment."}
        reply, names = self.elaborate(str(request["cmd"]), self.envs[env] if env is not None else {})
        self.envs.append(names)
        reply["env"] = len(self.envs) - 1
        return reply

    def step_reply(self, goals: list[Goal]) -> dict[str, object]:
        return {
            "proofStatus": "Incomplete: open goals remain" if goals else "Completed",
            "proofState": self.new_state(list(goals)),
            "goals": [g.show() for g in goals],
        }


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
    repl = Repl(json.loads(os.environ.get("STAND_IN_CLOSES") or "null") or DEFAULT_CLOSES)
    log = os.environ.get("STAND_IN_LOG")
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
        try:
            reply = repl.answer(request)
        except GarbageOut:
            sys.stdout.write("uncaught exception: <stand-in garbage>\n\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps(reply, indent=1, ensure_ascii=False) + "\n\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
