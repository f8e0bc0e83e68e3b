"""The run options of the Lean tactic family (goal_to_tactic_proposal_v1): declared here, found by
the engine through pytest-lsrb's entry point `pytest_lsrb.options` (pyproject.toml), listed by
`pytest --help` in their own group, and part of a run only when its suite's task is this one.

Light on purpose: `pytest --help` imports this module in every pytest session of the venv.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pytest_lsrb.engine.option_spec import Bounds, Option, OptionSet, integer, optional_integer

TASK_NAME: Final = "goal_to_tactic_proposal_v1"

OPTIONS: Final = OptionSet(
    kind="task",
    owners=(TASK_NAME,),
    title=f"Lean ({TASK_NAME}): what the model answers and how Lean checks it",
    options=(
        Option("profiles", str, None, "replay profile file or folder (repo_replay/synthetic)"),
        Option(
            "allow-local-remotes",
            bool,
            False,
            "repo_replay may clone index rows whose repo_remote is a local path or file:// URL "
            "(off: an index from elsewhere cannot point git at this machine's repositories)",
            identity=False,
            flag=True,
        ),
        Option(
            "allow-native-decide",
            bool,
            False,
            "Lean verification accepts proofs that trust the compiler (native_decide: Lean.ofReduceBool); "
            "off: such a proof is lean_error/native_decide (a profile's allow_native_decide also allows it)",
            flag=True,
        ),
        Option(
            "answer",
            str,
            "tactic",
            "what the model is asked for and judged on: tactic (the card's one next tactic), proof "
            "(the whole proof body replaces the sorry, as SorryDB and the prover papers measure) or "
            "search (SorryDB's tactic-by-tactic search on the REPL's proof states; the proof found is "
            "checked as a whole file)",
            choices=("tactic", "proof", "search"),
        ),
        Option(
            "screen",
            str,
            "on",
            "Lean over a REPL: run each answer on the sorry's proof state first and compile the whole "
            "patched file only for answers that close there (the verdicts are the same; off: every "
            "answer compiles its file)",
            # the verdicts are the same either way (tests/tactic/verifiers/test_screening.py)
            identity=False,
            choices=("on", "off"),
        ),
        Option(
            "forbid-search-tactics",
            bool,
            False,
            "refuse exact?/apply?/rw?/hint as forbidden_token (off: SorryDB's policy - a search tactic "
            "whose proof holds no sorryAx closes; apply?'s admitted goal fails the axiom check)",
            flag=True,
        ),
        Option(
            "strict-inherited-sorry",
            bool,
            False,
            "repo_replay: an answer that reaches sorryAx only through a lemma the file or its imports "
            "prove by sorry fails (lean_error/inherited_sorry); off: SorryDB's rule - it closes, recorded "
            "inherited_sorry (a profile's reject_inherited_sorry also sets it)",
            flag=True,
        ),
        Option(
            "search-iterations",
            integer,
            10,
            "--lsrb-answer search: at most N model calls per attempt, one tactic each (SorryDB's "
            "TacticByTacticStrategy and run_tactic_agent.py default: 10)",
            identity=False,  # in a search run's identity (TacticTask.configure), no other's
        ),
        Option(
            "search-parse",
            str,
            "sorrydb",
            "--lsrb-answer search: how a step is read from an answer: sorrydb (SorryDB's parser: the "
            "first fenced block with a leading `lean` cut off, so a ```lean4 block is not of the form "
            "`[n] tactic` and the search stops) or lenient (reasoning dropped, any fence tag removed: "
            "prover models answer in ```lean4 fences by training)",
            identity=False,  # in a search run's identity (TacticTask.configure), no other's
            choices=("sorrydb", "lenient"),
        ),
        Option(
            "search-failures",
            integer,
            3,
            "--lsrb-answer search: stop after N consecutive failed tactics (SorryDB's "
            "max_consecutive_failures)",
            identity=False,  # in a search run's identity (TacticTask.configure), no other's
        ),
        Option(
            "feedback-rounds",
            integer,
            0,
            "after a wrong answer, ask again up to N times, showing the model its earlier raw answers "
            "and Lean's reply in SorryDB's feedback section (SorryDB's self-correcting protocol: its "
            "max_iterations counts every proposal, so the leaderboard's max_iterations=16 is N=15); "
            "needs a Lean verification mode; the attempt's verdict is its last round's",
            bounds=Bounds(0, 20),
        ),
        Option(
            "context",
            str,
            "goal",
            "what the prompt shows: goal (the goal state only) or file (also the file the sorry is in, "
            "as SorryDB's strategies cut it: its raw lines up to and including the sorry's line, the "
            "target marked as SorryDB's prompts mark it; repo_replay: the repository's file, "
            "synthetic: the restated goal's script)",
            choices=("goal", "file"),
        ),
        Option(
            "context-lines",
            optional_integer,
            None,
            "with --lsrb-context file, --lsrb-prompt sorrydb or --lsrb-answer search: only the last N "
            "lines of the file up to the sorry (unset or 0: the whole file, as SorryDB's strategies "
            "show it; SorryDB keeps 300 for its Kimina and Goedel providers)",
            bounds=Bounds(0, 10_000_000),
        ),
        Option(
            "prompt",
            str,
            "suite",
            "whose words ask the model: suite (the suite's templates) or sorrydb (SorryDB's own "
            "prompts word for word: its one-shot prompt with the file up to the sorry, and its "
            "self-correcting prompt in every round of --lsrb-feedback-rounds, the <feedback> section "
            "in place; needs --lsrb-answer proof and a Lean verification mode)",
            choices=("suite", "sorrydb"),
        ),
        Option(
            "max-heartbeats",
            optional_integer,
            None,
            "Lean's maxHeartbeats for checking an answer (synthetic, and repo_replay with lean --json); "
            "overrides the profile's max_heartbeats; unset: the profile's, else Lean's default",
        ),
    ),
)

# The choice lists are spelled once above (`tactic.answer.ANSWER_MODES`, `tactic.search.SEARCH_PARSERS`
# read them with `OPTIONS.choices_of`).
ANSWER_MODES: Final = OPTIONS.choices_of("answer")


@dataclass(frozen=True)
class LeanOptions:
    """The Lean verifiers' view of the run's options (`VerifierConfig.options`, by run-config
    key). A verifier made outside a run (no options) gets these defaults; `screen` is off there,
    so a library caller's requests stay as asked (a run's default is on)."""

    profiles: str | None = None
    allow_local_remotes: bool = False
    allow_native_decide: bool = False
    max_heartbeats: int | None = None
    answer: str = "tactic"
    forbid_search_tactics: bool = False
    strict_inherited_sorry: bool = False
    screen: bool = False

    @classmethod
    def read(cls, options: Mapping[str, Any]) -> LeanOptions:
        heartbeats = options.get("max_heartbeats")
        profiles = options.get("profiles")
        return cls(
            profiles=None if profiles is None else str(profiles),
            allow_local_remotes=bool(options.get("allow_local_remotes")),
            allow_native_decide=bool(options.get("allow_native_decide")),
            max_heartbeats=None if heartbeats is None else int(heartbeats),
            answer=str(options.get("answer") or ANSWER_MODES[0]),
            forbid_search_tactics=bool(options.get("forbid_search_tactics")),
            strict_inherited_sorry=bool(options.get("strict_inherited_sorry")),
            screen=options.get("screen") in ("on", True),
        )
