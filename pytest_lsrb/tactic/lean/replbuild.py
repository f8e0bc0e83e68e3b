"""The Lean REPL built for a checkout's own Lean version.

SorryDB repositories have no `repl` dependency, so `lake exe repl` cannot run in them. Instead
leanprover-community/repl is cloned at the tag naming the checkout's Lean version (its
`lean-toolchain`, e.g. `leanprover/lean4:v4.22.0` -> tag `v4.22.0`; the REPL tags its releases by
the Lean version they are built with) into `<cache>/repl/<tag>`, built once with `lake build`,
and run as `lake env <repl binary>` from the checkout, so it sees the checkout's packages.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Final

from pytest_lsrb.tactic.lean.checkout import CheckoutCache, CheckoutFailure
from pytest_lsrb.tactic.lean.gitrefs import git_environment, remote_problem
from pytest_lsrb.tactic.lean.locks import file_lock
from pytest_lsrb.tactic.lean.process import run_before

REPL_REMOTE: Final = "https://github.com/leanprover-community/repl"
_TOOLCHAIN: Final = re.compile(r"^(?:leanprover/lean4:)?(?P<tag>v\d+\.\d+\.\d+(?:-rc\d+)?)$")


def repl_tag(checkout: Path) -> str | None:
    """The REPL tag for the checkout's `lean-toolchain` (a release or rc), or None."""
    try:
        text = (checkout / "lean-toolchain").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    m = _TOOLCHAIN.match(text)
    return m["tag"] if m else None


def repl_command(
    cache: CheckoutCache, checkout: Path, *, timeout_s: float, memory_mb: int | None
) -> list[str]:
    """`[lake, env, <repl>]` for the checkout's Lean version, cloning and building the REPL once
    per version (raises CheckoutFailure: `checkout_failed` for no usable toolchain line or a
    failed clone, `build_failed` for a failed build)."""
    tag = repl_tag(checkout)
    if tag is None:
        raise CheckoutFailure(
            "checkout_failed",
            f"{checkout / 'lean-toolchain'}: no Lean release named (leanprover/lean4:vX.Y.Z), so no REPL "
            "version to build; set the profile's repl_command",
        )
    problem = remote_problem(REPL_REMOTE, allow_local=False)
    assert problem is None, problem  # a constant; checked like a row's remote all the same
    git, lake = cache.git_command, cache.lake_command
    target = cache.root / "repl" / tag
    binary = target / ".lake" / "build" / "bin" / "repl"
    ready = target.with_name(tag + ".ready")
    env = git_environment(allow_local=False)  # the REPL's remote is https; lake may run git
    with file_lock(target.with_name(tag + ".lock")):
        if not ready.exists():
            deadline = time.monotonic() + timeout_s
            if not (target / ".git").exists():
                shutil.rmtree(target, ignore_errors=True)  # what a failed clone left
                target.mkdir(parents=True)
                clone = [git, "clone", "-q", "--depth", "1", "--branch", tag, "--", REPL_REMOTE, str(target)]
                done = run_before(clone, deadline=deadline, cwd=target.parent, memory_mb=memory_mb, env=env)
                if done.status != "exited" or done.returncode != 0:
                    raise CheckoutFailure(
                        "checkout_failed", f"cloning the REPL at {tag} failed: {done.detail}"
                    )
            built = run_before([lake, "build"], deadline=deadline, cwd=target, memory_mb=memory_mb, env=env)
            if built.status != "exited" or built.returncode != 0:
                raise CheckoutFailure("build_failed", f"building the REPL at {tag} failed: {built.detail}")
            ready.write_text(tag, encoding="utf-8")
    return [lake, "env", str(binary)]
