"""The synthetic script: a standalone Lean file that restates a goal and tries one tactic on it.

    import Mathlib                      -- header chosen by the profile (core: nothing)
    set_option autoImplicit false       -- an unknown name is an error, never a new variable
    universe u v                        -- universe names the goal uses

    noncomputable def lsrb_goal         -- the restated goal, named so its axioms can be asked
        (x y : ℕ) (h : x = y) :
        y = x := by
      sorry                             -- control script / the tactic in the tactic script

    #print axioms lsrb_goal             -- the acceptance rule reads this (lean/acceptance.py)

The control script (`... := by sorry`) must compile without errors before the tactic is judged:
if it does not, the restatement is at fault (`reconstruction_failed`), not the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from pytest_lsrb.tactic.lean.acceptance import AxiomProbe, axiom_probe_line
from pytest_lsrb.tactic.lean.goal import Restatement
from pytest_lsrb.tactic.lean.keywords import command_token
from pytest_lsrb.tactic.lean.outcome import Pos

__all__ = ["command_token"]  # re-exported: the guard's rule, kept where callers import it

Header = Literal["core", "mathlib"]
HEADER_IMPORTS: Final[dict[str, tuple[str, ...]]] = {"core": (), "mathlib": ("import Mathlib",)}
OPTIONS_LINE: Final = "set_option autoImplicit false"
GOAL_NAME: Final = "lsrb_goal"
# Notation and names that only exist with Mathlib (used by the `auto` header choice).
_MATHLIB_HINTS: Final = re.compile(
    r"[ℕℤℚℝℂ∑∏∫‖]|\b(?:Finset|Real|Complex|Matrix|Polynomial|MeasureTheory|Filter|Module|"
    r"Ideal|Subgroup|Submodule|IsOpen|Continuous|Differentiable|Measure)\b"
)
# Repositories that build on Lean alone (or on Batteries/Aesop, which `import Mathlib` also
# brings): the only ones whose goals `auto` restates under the core header.
CORE_REPOSITORIES: Final = frozenset(
    {
        "pytest-lsrb/builtin-goals",  # this suite's own goals (suites/.../lean/BuiltinGoals.lean)
        "leanprover/lean4",
        "leanprover/lean4-cli",
        "leanprover/std4",
        "leanprover-community/quote4",
        "deducteam/lean2dk",
        "frenzymath/jixia",
    }
)


def _repository(remote: str) -> str:
    """`owner/name` of a remote URL, lower-cased (`https://github.com/A/B.git` -> `a/b`)."""
    path = remote.strip().rstrip("/").removesuffix(".git").lower()
    return "/".join(path.split("/")[-2:])


def choose_header(setting: str, goal_text: str, repo_remote: str = "") -> Header:
    """`core`, `mathlib`, or for `auto`, decided from the row: Mathlib when the goal's notation
    needs it or the row's repository is not one of `CORE_REPOSITORIES` (SorryDB's repositories
    nearly all build on Mathlib, and the core header cannot restate their goals); core for a
    row without a repository (built-in goals) whose goal needs nothing more."""
    if setting in ("core", "mathlib"):
        return setting  # type: ignore[return-value]
    if _MATHLIB_HINTS.search(goal_text):
        return "mathlib"
    if repo_remote.strip() and _repository(repo_remote) not in CORE_REPOSITORIES:
        return "mathlib"
    return "core"


@dataclass(frozen=True)
class Script:
    """A generated Lean source, where its proof line sits, and how many lines its imports take."""

    text: str
    header_lines: int
    proof_span: tuple[Pos, Pos]  # the `sorry` of a control script, the tactic of a tactic script
    probe: AxiomProbe | None = None  # the `#print axioms` line after the goal

    @property
    def imports(self) -> str:
        return "\n".join(self.text.split("\n")[: self.header_lines])

    @property
    def body(self) -> str:
        """The text after the imports (what the REPL runs in the imports' environment)."""
        return "\n".join(self.text.split("\n")[self.header_lines :])


def _script(restatement: Restatement, header: Header, proof: str, max_heartbeats: int | None) -> Script:
    """`proof` is one line, or a block (a tactic with its nested lines, or a whole proof body
    for `--lsrb-answer proof`) whose lines keep their indentation relative to the first."""
    imports = list(HEADER_IMPORTS[header])
    options = [OPTIONS_LINE] + ([f"set_option maxHeartbeats {max_heartbeats}"] if max_heartbeats else [])
    lines = [*imports, *options, *restatement.preamble(), ""]
    proof_lines = proof.split("\n")
    # named, so Lean can report its axioms; `noncomputable def` elaborates as `example` does
    example = restatement.example_lines(proof_lines, head=f"noncomputable def {GOAL_NAME}")
    lines += example
    # a restated statement may span several lines: count the text's lines, not the list's items
    last_lineno = "\n".join(lines).count("\n") + 1
    first_lineno = last_lineno - (len(proof_lines) - 1)
    span = ((first_lineno, 2), (last_lineno, 2 + len(proof_lines[-1])))
    lines += ["", axiom_probe_line(GOAL_NAME)]
    text = "\n".join(lines) + "\n"
    probe = AxiomProbe(text.count("\n"), GOAL_NAME)
    return Script(text, len(imports), span, probe)


def control_script(restatement: Restatement, header: Header, max_heartbeats: int | None = None) -> Script:
    return _script(restatement, header, "sorry", max_heartbeats)


def tactic_script(
    restatement: Restatement, header: Header, tactic: str, max_heartbeats: int | None = None
) -> Script:
    """The goal proved by `tactic`: one line, or a block whose later lines are indented relative
    to its first (a nested `have ... := by` block, or a whole proof body)."""
    return _script(restatement, header, tactic.strip("\n").rstrip(), max_heartbeats)
