"""The `lsrb srbench judge-agreement` command's options and where its figures live, apart from
`agreement` itself: every `lsrb` command builds its parser, and `agreement` imports sympy, scipy and
the checker (~1.2 s) that only this one command needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

PAIRS_DIR: Final = Path(__file__).with_name("judge_pairs")
MEASURED: Final = PAIRS_DIR / "agreement.json"
JUDGES: Final = ("sympy", "llm", "both")
# The shipped labelled sets (`--pairs NAME`), each PAIRS_DIR / NAME.jsonl.
SETS: Final = ("dev", "heldout", "fresh", "adversarial", "adversarial_heldout")


def add_agreement_arguments(parser: Any) -> None:
    parser.add_argument(
        "--pairs", default="dev", help=f"{', '.join(SETS)} (the shipped sets) or a JSONL file of pairs"
    )
    parser.add_argument(
        "--lsrb-sr-judge",
        dest="judge",
        choices=JUDGES,
        default="sympy",
        help="which judge (both: each and their conjunction)",
    )
    parser.add_argument(
        "--lsrb-sr-judge-model", dest="judge_model", default=None, help="the LLM judge's model"
    )
    parser.add_argument(
        "--lsrb-sr-judge-base-url", dest="judge_base_url", default=None, help="the LLM judge's server"
    )
    parser.add_argument(
        "--lsrb-sr-judge-adapter", dest="judge_adapter", default="openai", help="openai, ollama or mock"
    )
    parser.add_argument(
        "--lsrb-sr-judge-api-key-env",
        dest="judge_api_key_env",
        default=None,
        help="variable holding the judge's key",
    )
    parser.add_argument(
        "--disagreements", action="store_true", help="also list every pair a judge and its label disagree on"
    )
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the figures as JSON")
    parser.add_argument(
        "--write",
        action="store_true",
        help=f"store the figures in the package ({MEASURED.name}) for Table 1's header",
    )
