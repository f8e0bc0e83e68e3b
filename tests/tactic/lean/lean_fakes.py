"""Fake Lean executables for tests at the process boundary (no Lean toolchain exists here).

- `lean`: `lean --json FILE` prints messages chosen by rules, or misbehaves as FAKE_LEAN_MODE says:
  `hang`, `die` (SIGKILL), `segv` (SIGSEGV), `flood` (allocates until refused) or `abort` (a stack
  trace on stderr, exit 134, no message of Lean's); `ACTION-if:TEXT` only for files holding TEXT;
  several `;`-separated entries, the first that applies wins. Rules (JSON in FAKE_LEAN_RULES): a
  list of `{"contains": text, "absent": text, "messages": [{"severity", "data", "at": text,
  "to_end": bool}]}`; each rule whose `contains` occurs in the file (and whose optional `absent`
  does not) emits its messages, placed at the first occurrence of `at` (and reaching the end of the
  file when `to_end`). With no rule matching, a file with `sorry` gets Lean's `declaration uses
  'sorry'` warning. Every `#print axioms NAME` command (several may share a line; each report sits
  at its own `#print`) gets Lean's report on the declaration NAME resolves to from the current
  namespace: transitive, as `collectAxioms` is (see the comment at the code; a rule's `axioms` are
  those of the declaration holding its text), listed in `Name.lt` order, the name printed in full
  and unescaped (`'t'' ...`); FAKE_LEAN_AXIOM_NAMES=short prints axiom names relative to the file's
  `open`s, as Leans that use `MessageData.ofConstName` do; `unknown constant 'X'` for a name that is
  no declaration; in a file that starts with `module`, Lean's refusal instead. FAKE_LEAN_IMPORTED
  (JSON: full name -> axioms) stands for a repository's built modules; `-o FILE.olean` writes the
  file's table of axioms, which a later `import` of that module finds on LEAN_PATH. Every call is
  appended to FAKE_LEAN_LOG (its argv, cwd and the checked file's text).
- `lake`: `lake env CMD...` runs CMD, `lake lean FILE -- ARGS` runs `lean ARGS FILE`;
  `lake build` / `lake exe cache get` are logged to FAKE_LAKE_LOG and exit with
  FAKE_LAKE_BUILD_RC (default 0).
- `repl`: replays a recorded REPL transcript: for the i-th request it checks that it equals the
  i-th request of X.in and prints the i-th reply of X.expected.out (FAKE_REPL_MODE=hang-at:N,
  die-at:N or flood-at:N misbehave at the N-th request instead).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

FAKE_LEAN = r"""
import json, os, signal, sys, time
mode = os.environ.get("FAKE_LEAN_MODE", "rules")
log = os.environ.get("FAKE_LEAN_LOG")
path = sys.argv[-1]
if log:
    with open(log, "a") as fh:
        entry = {"argv": sys.argv[1:], "cwd": os.getcwd()}
        if os.path.isfile(path):
            entry["text"] = open(path, encoding="utf-8").read()
        fh.write(json.dumps(entry) + "\n")
if sys.argv[1:] == ["--version"]:
    print("Lean (version 4.22.0, x86_64-unknown-linux-gnu, commit 4f1d6ea3b4ce, Release)")
    sys.exit(0)
checked = open(path, encoding="utf-8").read() if os.path.isfile(path) else ""
for entry in mode.split(";"):
    action, _, needle = entry.partition("-if:")
    if needle and needle not in checked:
        continue
    if action == "hang":
        time.sleep(3600)
    if action == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "segv":
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file
        os.kill(os.getpid(), signal.SIGSEGV)
    if action == "abort":
        sys.stderr.write("terminate called after throwing an instance of 'lean::exception'\n")
        sys.exit(134)
    if action == "flood":
        hog = []
        while True:
            hog.append(bytearray(32 * 1024 * 1024))
    if action in ("hang", "die", "segv", "abort", "flood"):
        break
text = open(path, encoding="utf-8").read()
lines = text.split("\n")

def pos_of(needle):
    i = text.index(needle)
    line = text.count("\n", 0, i) + 1
    col = i - (text.rfind("\n", 0, i) + 1)
    return line, col

def end_of_file():
    return len(lines), len(lines[-1])

emitted = []
for rule in json.loads(os.environ.get("FAKE_LEAN_RULES", "[]")):
    if rule["contains"] not in text or rule.get("absent", "\0") in text:
        continue
    for m in rule["messages"]:
        line, col = pos_of(m["at"])
        if m.get("to_end"):
            eline, ecol = end_of_file()
        else:
            eline, ecol = pos_of(m["at"])
            ecol += len(m["at"])
        emitted.append({"severity": m["severity"], "pos": {"line": line, "column": col},
                        "endPos": {"line": eline, "column": ecol}, "fileName": path,
                        "data": m["data"], "keepFullRange": False, "caption": ""})
# Lean's addDecl (src/Lean/AddDecl.lean): `logWarning "declaration uses 'sorry'"` when the
# declaration holds a sorry and no error was logged (one warning per declaration).
if not emitted and "sorry" in text:
    for kw in ("example", "theorem", "lemma", "def"):
        if kw in text:
            line, col = pos_of(kw)
            emitted.append({"severity": "warning", "pos": {"line": line, "column": col},
                            "endPos": {"line": line, "column": col + len(kw)}, "fileName": path,
                            "data": "declaration uses 'sorry'"})
            break
# -- `#print axioms`: what Lean's `printAxiomsOf` (src/Lean/Elab/Print.lean) reports --------
# `collectAxioms` walks the constant's value and every constant it uses, so the axioms are
# transitive: a theorem that uses a lemma proved by `sorry` depends on `sorryAx` too. Here each
# declaration of the file (keyword at column 0, up to the next command) depends directly on
# `sorryAx` when its text (comments and strings skipped) holds `sorry`/`admit`/`stop`/`apply?`, on
# `Lean.ofReduceBool` for `native_decide`, on an `axiom` it names; a rule's `axioms` replace the
# direct ones of the declaration holding the rule's text (of every declaration when none holds
# it). Declarations it names add theirs: this file's, those of FAKE_LEAN_IMPORTED (JSON: full
# name -> axioms, a repository's built modules) and those of an `import`ed module compiled by this
# fake with `-o` (found on LEAN_PATH). `set_option debug.skipKernelTC true in` before
# `decide +kernel` adds nothing: Lean adds the auxiliary lemma without the kernel's check
# (`addDecl`, src/Lean/AddDecl.lean) and `#print axioms` cannot see the bypass, so the report is
# clean, as real Lean's is.
import functools, re
COMMENT_OR_STRING = re.compile(r"/-.*?-/|--[^\n]*|\"(?:[^\"\\\n]|\\.)*\"", re.S)
DECL = re.compile(r"^(?:@\[[^\]]*\]\s*)*"
                  r"(?:(?:private|protected|noncomputable|partial|unsafe|nonrec|public|meta)\s+)*"
                  r"(theorem|lemma|def|abbrev|instance|opaque|axiom|structure|inductive|class)\s+([^\s:({\[⦃]+)")
CONTINUES = re.compile(r"^(?:\||--|/-|where\b|deriving\b|termination_by\b|decreasing_by\b|[)\]}⟩])")
PROBE = re.compile(r"#print\s+axioms\s+(\S+)")
is_module = next((l.strip() for l in lines if l.strip() and not l.strip().startswith("--")), "") == "module"

def name_cmp(a, b):  # Lean's Name.cmp: prefixes first, then the last component
    if not a or not b:
        return (len(a) > 0) - (len(b) > 0)
    head = name_cmp(a[:-1], b[:-1])
    return head if head else (a[-1] > b[-1]) - (a[-1] < b[-1])

def ordered(axioms):
    return sorted(set(axioms), key=functools.cmp_to_key(lambda x, y: name_cmp(x.split("."), y.split("."))))

known = dict(json.loads(os.environ.get("FAKE_LEAN_IMPORTED", "{}")))
for line in lines:
    m = re.match(r"^(?:public\s+)?(?:meta\s+)?import\s+(?:all\s+)?(\S+)", line)
    if m:
        for folder in os.environ.get("LEAN_PATH", "").split(os.pathsep):
            olean = os.path.join(folder, *m.group(1).split(".")) + ".olean"
            if folder and os.path.isfile(olean):
                known.update(json.load(open(olean, encoding="utf-8")))
rule_axioms = [r for r in json.loads(os.environ.get("FAKE_LEAN_RULES", "[]"))
               if r["contains"] in text and "axioms" in r]
decls = []  # [full name, first line, last line, text]
namespaces = []
for i, line in enumerate(lines):
    ns = re.match(r"^namespace\s+(\S+)", line)
    if ns:
        namespaces.append(ns.group(1))
    elif re.match(r"^end\b", line) and namespaces and line.split()[1:] == [namespaces[-1]]:
        namespaces.pop()
    m = DECL.match(line)
    if m is None:
        continue
    short = re.sub(r"\.\{[^}]*\}$", "", m.group(2))
    full = short[len("_root_."):] if short.startswith("_root_.") else ".".join([*namespaces, short])
    last = i
    for j in range(i + 1, len(lines)):
        if lines[j].strip() and not lines[j][0].isspace() and not CONTINUES.match(lines[j]):
            break
        last = j
    decls.append([full, i, last, "\n".join(lines[i:last + 1]), m.group(1)])
offsets = [sum(len(l) + 1 for l in lines[:d[1]]) for d in decls]
table = {}
for k, (full, first, last, body, kw) in enumerate(decls):
    bare = COMMENT_OR_STRING.sub(" ", body)
    own = [r["axioms"] for r in rule_axioms
           if offsets[k] <= text.index(r["contains"]) < offsets[k] + len(body)
           or not any(o <= text.index(r["contains"]) < o + len(d[3]) for o, d in zip(offsets, decls))]
    if own:
        found = set(own[-1])
    elif kw == "axiom":
        found = {full}
    else:
        found = set()
        if re.search(r"(?<![\w.'])(?:sorry|admit|stop|apply\?)(?![\w'])", bare):
            found.add("sorryAx")
        if "native_decide" in bare:
            found.add("Lean.ofReduceBool")
    head = bare.split(":=", 1)[0] if kw != "axiom" else ""
    for other, axioms in [*((d[0], table[d[0]]) for d in decls[:k]), *known.items()]:
        tail = other.split(".")[-1]
        if re.search(r"(?<![\w'])(?:" + re.escape(other) + "|" + re.escape(tail) + r")(?![\w'])", bare):
            found.update(axioms)
    table[full] = ordered(found)
short_names = os.environ.get("FAKE_LEAN_AXIOM_NAMES") == "short"
opened = {n for l in lines if l.startswith("open ") and not l.rstrip().endswith(" in") for n in l.split()[1:]}

def shown(axiom):
    # Lean versions that print the list with `MessageData.ofConstName` shorten by the `open`s
    head, _, last = axiom.rpartition(".")
    return last if short_names and head in opened else axiom

def resolve(name, line_no):
    name = name[len("_root_."):] if name.startswith("_root_.") else name
    visible = {d[0] for d in decls if d[1] < line_no} | set(known)
    current = []
    for l in lines[:line_no]:
        ns = re.match(r"^namespace\s+(\S+)", l)
        if ns:
            current.append(ns.group(1))
        elif re.match(r"^end\b", l) and current and l.split()[1:] == [current[-1]]:
            current.pop()
    for depth in range(len(current), -1, -1):
        candidate = ".".join([*current[:depth], name])
        if candidate in visible:
            return candidate
    return None

for i, line in enumerate(lines):
    if "#exit" in line:
        break  # Lean stops reading the file there
    if not line.startswith("#print"):
        continue
    for m in PROBE.finditer(line):
        col = m.start()
        where = {"pos": {"line": i + 1, "column": col}, "endPos": {"line": i + 1, "column": col + 6},
                 "fileName": path, "keepFullRange": False, "caption": ""}
        if is_module:  # elabPrintAxioms, src/Lean/Elab/Print.lean
            emitted.append({"severity": "error", **where, "data": "cannot use `#print axioms` in a `module`; "
                            "consider temporarily removing the `module` header or placing the command "
                            "in a separate file"})
            continue
        full = resolve(m.group(1), i)
        if full is None:  # throwUnknownConstant, src/Lean/Exception.lean
            emitted.append({"severity": "error", **where, "data": f"unknown constant '{m.group(1)}'"})
            continue
        found = table.get(full, known.get(full, []))
        data = (f"'{full}' depends on axioms: [{', '.join(shown(a) for a in found)}]" if found
                else f"'{full}' does not depend on any axioms")
        emitted.append({"severity": "information", **where, "data": data})
if "-o" in sys.argv and not any(m["severity"] == "error" for m in emitted):
    olean = sys.argv[sys.argv.index("-o") + 1]  # what a later `import` of this module reads
    os.makedirs(os.path.dirname(olean), exist_ok=True)
    with open(olean, "w", encoding="utf-8") as fh:
        json.dump(table, fh)
    # what the kernel never saw: declarations elaborated under `debug.skipKernelTC`, or holding
    # FAKE_LEAN_UNCHECKED (a metaprogram that adds to the environment unchecked), for the fake
    # lean4checker, which replays the module through the kernel
    marks = ["debug.skipKernelTC true", *filter(None, [os.environ.get("FAKE_LEAN_UNCHECKED")])]
    unchecked = [d[0] for d in decls if any(mark in d[3] for mark in marks)]
    with open(olean + ".unchecked", "w", encoding="utf-8") as fh:
        json.dump(unchecked, fh)
for m in emitted:
    print(json.dumps(m, ensure_ascii=False))
sys.exit(1 if any(m["severity"] == "error" for m in emitted) else 0)
"""

FAKE_LAKE = r"""
import os, sys
args = sys.argv[1:]
if args[:1] == ["env"]:
    os.execvp(args[1], args[1:])
if args[:1] == ["lean"]:  # `lake lean FILE -- ARGS`: lean ARGS FILE
    rest = args[3:] if args[2:3] == ["--"] else args[2:]
    os.execvp("lean", ["lean", *rest, args[1]])
log = os.environ.get("FAKE_LAKE_LOG")
if log:
    with open(log, "a") as fh:
        fh.write(" ".join(args) + "\t" + os.getcwd() + "\n")
if args[:1] == ["build"]:
    sys.exit(int(os.environ.get("FAKE_LAKE_BUILD_RC", "0")))
sys.exit(0)
"""

# lean4checker (github.com/leanprover/lean4checker): `lean4checker MODULE` finds MODULE's
# .olean on the search path and replays its declarations through the kernel. Messages from its
# Main.lean (`object file '...' of module ... does not exist`, the usage line) and its tests'
# Lean4CheckerTests/*.expected.out (`lean4checker found a problem in MODULE`, then
# `uncaught exception: (kernel) ...`); an uncaught exception exits 1. A declaration the fake
# lean compiled under `debug.skipKernelTC` is what the kernel rejects (FAKE_LEAN4CHECKER_LOG
# gets each call's argv).
FAKE_LEAN4CHECKER = r"""
import json, os, sys
log = os.environ.get("FAKE_LEAN4CHECKER_LOG")
if log:
    with open(log, "a") as fh:
        fh.write(json.dumps(sys.argv[1:]) + "\n")
args = sys.argv[1:]
if len(args) != 1:
    print("uncaught exception: Usage: lake exe lean4checker Mathlib.Data.Nat.Basic", file=sys.stderr)
    sys.exit(1)
module = args[0]
folders = [f for f in os.environ.get("LEAN_PATH", "").split(os.pathsep) if f]
found = [os.path.join(f, *module.split(".")) + ".olean" for f in folders]
olean = next((o for o in found if os.path.isfile(o)), None)
if olean is None:
    where = module.replace(".", "/") + ".olean"
    print(f"uncaught exception: object file '{where}' of module {module} does not exist", file=sys.stderr)
    sys.exit(1)
side = olean + ".unchecked"
unchecked = json.load(open(side, encoding="utf-8")) if os.path.isfile(side) else []
if unchecked:
    print(f"lean4checker found a problem in {module}")
    print("uncaught exception: (kernel) declaration type mismatch, '" + unchecked[0] + "' has type\n  Prop\n"
          "but it is expected to have type\n  False", file=sys.stderr)
    sys.exit(1)
sys.exit(0)
"""

FAKE_REPL = r"""
import json, os, re, signal, sys, time
base = sys.argv[1]

def blocks(text):
    return [b for b in re.split(r"\n[ \t]*\n", text) if b.strip()]

def decode(block):
    return json.loads(block.replace("\r", "").replace("\n", ""))

requests = [decode(b) for b in blocks(open(base + ".in", encoding="utf-8").read())]
replies = [decode(b) for b in blocks(open(base + ".expected.out", encoding="utf-8").read())]
mode, _, at = os.environ.get("FAKE_REPL_MODE", "").partition("-at:")
i = 0
buf = []
for line in sys.stdin:
    if line.strip():
        buf.append(line)
        continue
    if not buf:
        continue
    request = decode("".join(buf))
    buf = []
    if mode and at and i == int(at):
        if mode == "hang":
            time.sleep(3600)
        if mode == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "flood":
            hog = []
            while True:
                hog.append(bytearray(32 * 1024 * 1024))
    if i >= len(requests) or request != requests[i]:
        reply = {"message": "fake repl: unexpected request " + json.dumps(request)[:200]}
    else:
        reply = replies[i]
    i += 1
    print(json.dumps(reply, indent=1, ensure_ascii=False))
    print()
    sys.stdout.flush()
"""


def install(bin_dir: Path, name: str, source: str) -> Path:
    """Write `source` as a Python program and an executable `bin_dir/name` that runs it."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    program = bin_dir / f"_{name}.py"
    program.write_text(source, encoding="utf-8")
    exe = bin_dir / name
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{program}" "$@"\n', encoding="utf-8")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return exe


FAKE_GIT = r"""
import os, shutil, sys
args = sys.argv[1:]
log = os.environ.get("FAKE_GIT_LOG")
if log:
    with open(log, "a") as fh:
        fh.write(" ".join(args) + "\n")
if args[0] == "init":
    os.makedirs(".git", exist_ok=True)
elif args[0] == "fetch" and os.environ.get("FAKE_GIT_FAIL"):
    sys.stderr.write("fatal: repository not found\n")
    sys.exit(128)
elif "checkout" in args:
    shutil.copytree(os.environ["FAKE_GIT_TREE"], ".", dirs_exist_ok=True)
elif args[0] == "rev-parse":
    print(os.environ.get("FAKE_GIT_COMMIT", ""))
"""


def install_toolchain(bin_dir: Path) -> dict[str, Path]:
    return {
        "lean": install(bin_dir, "lean", FAKE_LEAN),
        "lake": install(bin_dir, "lake", FAKE_LAKE),
        "repl": install(bin_dir, "repl", FAKE_REPL),
        "git": install(bin_dir, "git", FAKE_GIT),
        "lean4checker": install(bin_dir, "lean4checker", FAKE_LEAN4CHECKER),
    }


def path_with(bin_dir: Path) -> str:
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


def path_without_lean() -> str:
    """PATH minus every folder that holds a `lean` or `lake` executable."""
    keep = [
        d
        for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and not any((Path(d) / exe).exists() for exe in ("lean", "lake"))
    ]
    return os.pathsep.join(keep)
