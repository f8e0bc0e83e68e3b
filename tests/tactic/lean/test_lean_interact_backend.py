"""The LeanInteract backend with LeanInteract's real classes (PyPI `lean-interact`: its
`LeanREPLConfig` and `LeanServer` run unchanged) over the stand-in REPL of
tests/fakes/stand_in_repl.py, laid out as a built REPL checkout (`<dir>/.lake/build/bin/repl`,
what `LeanServer.start` runs through `lake env`). Issue #29 item 5: an offline machine with a
REPL configured never clones one from GitHub; a reply that is not JSON and a death at the memory
cap end as the environment's, never as a traceback. Skipped without lean-interact (the `lean`
extra)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from lean_fakes import FAKE_LAKE, install

from pytest_lsrb.tactic.lean.backend import (
    ReplBackend,
    lean_interact_available,
    local_repl_dir,
    make_repl_backend,
)

pytestmark = pytest.mark.skipif(
    not lean_interact_available(), reason="lean-interact is not installed (pip install -e '.[lean]')"
)

STAND_IN = Path(__file__).resolve().parents[2] / "fakes" / "stand_in_repl.py"
SOURCE = (
    "theorem lsrb_goal (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  {tactic}\n\n#print axioms lsrb_goal\n"
)


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(a built REPL checkout, our `lake`), on a PATH that holds nothing else: no git, no network
    tool; LeanInteract could not clone a REPL here if it tried."""
    bin_dir = tmp_path / "bin"
    lake = install(bin_dir, "lake", FAKE_LAKE)
    checkout = tmp_path / "repl"
    (checkout / "lean-toolchain").parent.mkdir(parents=True)
    (checkout / "lean-toolchain").write_text("leanprover/lean4:v4.22.0\n", encoding="utf-8")
    install(checkout / ".lake" / "build" / "bin", "repl", STAND_IN.read_text(encoding="utf-8"))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("STAND_IN_LOG", raising=False)
    return checkout, lake


def backend(checkout: Path, lake: Path, memory_mb: int | None = None) -> ReplBackend:
    return make_repl_backend(
        project=None,
        timeout_s=60,
        memory_mb=memory_mb,
        repl_command=[str(checkout / ".lake" / "build" / "bin" / "repl")],
        lake_command=str(lake),
        prefer="lean_interact",
    )


def test_the_repl_dir_of_a_repl_command() -> None:
    assert local_repl_dir(["/opt/repl/.lake/build/bin/repl"]) == Path("/opt/repl")
    assert local_repl_dir(["/usr/bin/repl"]) is None and local_repl_dir(None) is None


def test_a_configured_repl_is_used_offline(offline: tuple[Path, Path]) -> None:
    b = backend(*offline)
    assert b.name == "lean_interact" and b.unavailable() is None
    closed = b.check(SOURCE.format(tactic="exact ⟨hp, hq⟩"), rel_path="A.lean")
    left = b.check(SOURCE.format(tactic="simp"), rel_path="A.lean")
    b.close()
    assert closed.status == "ok", closed.detail
    assert [m.data for m in closed.messages] == ["'lsrb_goal' does not depend on any axioms"]
    assert left.status == "ok" and left.errors and left.errors[0].data.startswith("unsolved goals")


def test_a_repl_command_that_is_no_checkout_is_refused_not_cloned(offline: tuple[Path, Path]) -> None:
    _, lake = offline
    b = make_repl_backend(
        project=None,
        timeout_s=60,
        memory_mb=None,
        repl_command=[sys.executable],
        lake_command=str(lake),
        prefer="lean_interact",
    )
    assert "is not one" in (b.unavailable() or "")


def test_an_answer_that_is_not_json_is_the_harnesss_and_the_repl_restarts(offline: tuple[Path, Path]) -> None:
    b = backend(*offline)
    garbled = b.check(SOURCE.format(tactic="exact stand_in_garbage"), rel_path="A.lean")
    after = b.check(SOURCE.format(tactic="exact ⟨hp, hq⟩"), rel_path="A.lean")
    b.close()
    assert garbled.status == "failed" and "not JSON" in garbled.detail  # no JSONDecodeError escapes
    assert after.status == "ok" and not after.errors


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LeanInteract caps memory on Linux only")
def test_a_death_at_the_memory_cap_is_memory_limit(offline: tuple[Path, Path]) -> None:
    b = backend(*offline, memory_mb=400)
    died = b.check(SOURCE.format(tactic="exact stand_in_flood"), rel_path="A.lean")
    after = b.check(SOURCE.format(tactic="exact ⟨hp, hq⟩"), rel_path="A.lean")
    b.close()
    assert died.status == "memory_limit", died.detail
    assert "memory cap of 400 MiB" in died.detail
    assert after.status == "ok", after.detail
    assert os.environ["PATH"].count(os.pathsep) == 0  # still offline


@pytest.mark.slow
def test_proof_states_through_lean_interact(offline: tuple[Path, Path]) -> None:
    """Issue #41 items 2 and 5: `tactic` requests on the proof state of a `cmd`'s sorry travel
    through LeanInteract's `LeanServer.run_dict` as through our client; a state from before a
    restart is refused, never sent to the new process."""
    from pytest_lsrb.tactic.lean.proofstate import TacticStep

    b = backend(*offline)
    loaded = b.check(SOURCE.format(tactic="sorry"), rel_path="A.lean")
    assert loaded.status == "ok" and loaded.sorries and loaded.sorries[0].proof_state is not None
    state, generation = loaded.sorries[0].proof_state, b.generation
    split = b.run_tactic("constructor", state, generation=generation)
    assert isinstance(split, TacticStep) and len(split.goals) == 2 and split.proof_state is not None
    done = b.run_tactic("exact hp\nexact hq", split.proof_state, generation=generation)
    wrong = b.run_tactic("exact no_such_lemma", state, generation=generation)
    b.close()
    assert isinstance(done, TacticStep) and done.closes and done.status == "Completed"
    assert isinstance(wrong, TacticStep) and "Unknown identifier" in (wrong.lean_error or "")
    lost = b.run_tactic("constructor", state, generation=generation + 1)
    assert not isinstance(lost, TacticStep) and lost.status == "failed"
