"""The budget law across a crash and the printed resume, end to end (issue #46 item 3): a `-n 2`
run at `--lsrb-concurrency 16` against a 32-slot llama.cpp stand-in, SIGKILLed while requests are
in flight (its controller, one worker, or the whole group), then `--lsrb-resume` at once: what the
server billed over both sessions stays within `--lsrb-max-total-tokens`. Before, the group's kill
then the resume billed 14,273 tokens for a 12,000 budget, the controller's 13,048
(bench/attack_budget_crash.py). The law itself, over every order of deaths and resumes, is
tests/engine/test_budget_crash.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.crash_runs import VICTIMS, crash_then_resume
from lsrb_testing import REPO

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")


@pytest.mark.parametrize("victim", VICTIMS)
def test_a_crash_then_the_resume_never_spends_past_the_budget(tmp_path: Path, victim: str) -> None:
    for seed in (1,):
        outcome = crash_then_resume(REPO, tmp_path, victim, seed)
        assert outcome.billed <= outcome.budget, outcome
        assert len(outcome.sessions) >= 2, outcome  # the resume ran
