"""Lean 4 keywords: the words Lean's parsers declare as tokens, so none of them can be a name.

`COMMAND_KEYWORDS` is the one list of words that start a command (a declaration, a scope, a
syntax extension, a `#` query): an answer is a tactic or a proof body, and one of these in it ends
the proof and runs a command of its own (lean/script.py's `command_token`, the guard, the answer
reader's end of a proof). Collected from the command parsers, leanprover/lean4 at 00c1b82:

- `src/Lean/Parser/Command.lean`: `declaration` (`def`, `theorem`, `abbrev`, `opaque`, `axiom`,
  `instance`, `example`, `inductive`, `class` (`class inductive`), `structure`, and the modifiers
  `private`, `protected`, `public`, `noncomputable`, `unsafe`, `partial`, `nonrec`), `section`,
  `namespace`, `end`, `variable`, `universe`, `mutual`, `deriving instance`, `attribute`,
  `export`, `open` (a command unless it is the `open ... in` tactic), `set_option` (likewise),
  `initialize`, `builtin_initialize`, `include`, `omit`, `add_decl_doc`, `unseal`, `seal`,
  `init_quot`, `import` (`Module.lean`'s header), `#check`, `#eval`, `#print`, ... (`HASH_COMMANDS`);
- `src/Lean/Parser/Syntax.lean`: `syntax`, `macro`, `macro_rules`, `elab`, `elab_rules`,
  `notation`, `infix`, `infixl`, `infixr`, `prefix`, `postfix`, `declare_syntax_cat`,
  `binder_predicate`;
- `src/Lean/Elab/BuiltinCommand.lean` / `Lean/Elab/Frontend` meta commands: `run_cmd`,
  `run_elab`, `run_meta`; `register_builtin_option`/`register_option` (Lean.Data.Options);
- Batteries and Mathlib's common commands (`Mathlib/Tactic/Lemma.lean` `lemma`,
  `Batteries/Tactic/Alias.lean` `alias`, `Mathlib/Tactic/IrreducibleDef.lean` `irreducible_def`,
  `Mathlib/Util/AssertExists.lean` `assert_not_exists`, `Batteries/Util/LibraryNote.lean`
  `library_note`, `Mathlib/Tactic/Simps/Basic.lean` `initialize_simps_projections`,
  `Mathlib/Tactic/Attr/Register.lean` `register_simp_attr`, `Mathlib/Mathport/Notation.lean`
  `notation3`, `Mathlib/Tactic/ScopedNS.lean` `scoped[NS]`, `Batteries/Util/ProofWanted.lean`
  `proof_wanted`, `Mathlib/Tactic/Recall.lean` `recall`, `Mathlib/Util/CompileInductive.lean`
  `compile_inductive`, `Mathlib/Tactic/SuppressCompilation.lean` `suppress_compilation`).

`run_tac` and `by_elab` are not commands but run meta code of their own inside a proof; they are
kept with the commands (lean/script.py's reason). `LEAN_KEYWORDS` is every keyword, for quoting a
name that is one (`«this»`).
"""

from __future__ import annotations

import re
from typing import Final

from pytest_lsrb.tactic.lean.lexer import code_view

# Declarations and their modifiers (Command.lean's `declaration`, `declModifiers`) and Mathlib's.
DECLARATION_KEYWORDS: Final = frozenset(
    {
        *("def", "theorem", "lemma", "abbrev", "opaque", "axiom", "instance", "example"),
        *("inductive", "coinductive", "structure", "class", "private", "protected", "public"),
        *("noncomputable", "unsafe", "partial", "nonrec", "irreducible_def", "alias"),
        *("proof_wanted",),
    }
)
# Commands around declarations: scopes, options, imports, syntax extensions, meta commands.
OTHER_COMMAND_KEYWORDS: Final = frozenset(
    {
        *("section", "namespace", "end", "variable", "universe", "mutual", "deriving"),
        *("attribute", "export", "open", "set_option", "initialize", "builtin_initialize"),
        *("include", "omit", "add_decl_doc", "unseal", "seal", "init_quot", "import"),
        *("syntax", "macro", "macro_rules", "elab", "elab_rules", "notation", "notation3"),
        *("infix", "infixl", "infixr", "prefix", "postfix", "declare_syntax_cat"),
        *("binder_predicate", "run_cmd", "run_elab", "run_meta", "register_builtin_option"),
        *("register_option", "assert_not_exists", "library_note", "initialize_simps_projections"),
        *("register_simp_attr", "recall", "compile_inductive", "suppress_compilation"),
        *("universes", "variables", "axioms"),  # Lean 3 spellings: never a Lean 4 tactic
    }
)
# `#` commands, named one by one: Mathlib's `#s` (Finset.card) and `#α` (Cardinal.mk) are
# notation, not commands.
HASH_COMMANDS: Final = (
    *("eval", "exit", "print", "check_failure", "check", "reduce", "synth", "guard_msgs"),
    *("guard_expr", "guard_target", "guard", "help", "where", "version", "time", "lint"),
    *("find_home", "find", "simp", "norm_num", "conv", "whnfR", "whnf", "explode"),
    *("count_heartbeats", "instances", "html", "widget", "test", "sample", "kernel_reduce"),
    *("unfold?", "push_neg", "long_names", "minimize_imports", "compile", "eval_output"),
    *("trace_state", "adaptation_note", "leansearch", "loogle", "moogle"),
)
# Meta code inside a proof (not commands, refused with them: they can admit a goal or do IO).
META_TACTIC_KEYWORDS: Final = frozenset({"run_tac", "by_elab"})
COMMAND_KEYWORDS: Final = DECLARATION_KEYWORDS | OTHER_COMMAND_KEYWORDS
# The two commands that are also tactics when followed by `in` (`open Foo in simp`).
IN_TACTICS: Final = frozenset({"open", "set_option"})

_TERM_AND_TACTIC_KEYWORDS: Final = frozenset(
    [
        *("by", "fun", "λ", "have", "show", "from", "at", "with", "then", "else", "if", "let"),
        *("do", "match", "in", "where", "calc", "this", "suffices", "obtain", "Type", "Sort"),
        *("Prop", "forall", "exists", "mut", "return", "for", "unless", "termination_by"),
        *("decreasing_by", "using", "only", "says", "local", "scoped", "module", "meta"),
        *("nomatch", "nofun", "try", "catch", "finally", "break", "continue", "extends"),
    ]
)
LEAN_KEYWORDS: Final = _TERM_AND_TACTIC_KEYWORDS | COMMAND_KEYWORDS


def quote_name(name: str) -> str:
    """`name` as Lean must write it: `«this»` for a keyword, unchanged otherwise."""
    return f"«{name}»" if name in LEAN_KEYWORDS else name


_WORDS: Final = "|".join(
    re.escape(w) for w in sorted(COMMAND_KEYWORDS | META_TACTIC_KEYWORDS, key=len, reverse=True)
)
_HASH: Final = "|".join(re.escape(w) for w in sorted(HASH_COMMANDS, key=len, reverse=True))
# A keyword is a whole token: not part of a longer name (`my_def`, `h.end`, `«theorem»`).
_COMMAND_TOKEN: Final = re.compile(rf"(?<![\w.'«!?])(#(?:{_HASH})!?|(?:{_WORDS}))(?![\w'!?])")
_IN_TACTIC: Final = re.compile(r"(?:open|set_option)\b[^\n]*?\bin\b")


def command_token(text: str) -> str | None:
    """The first command keyword in the code of `text` (comments and strings are not code), or
    None. `open ... in` and `set_option ... in` are tactics, not commands (the guard judges the
    option itself)."""
    code = code_view(text)
    for match in _COMMAND_TOKEN.finditer(code):
        word = match.group(1)
        if word in IN_TACTICS and _IN_TACTIC.match(code, match.start()):
            continue
        return word
    return None
