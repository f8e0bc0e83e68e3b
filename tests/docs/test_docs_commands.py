"""Every command in the docs runs (issue #33): the marked blocks of each page run in order on the
mock adapter, the sample outputs match what the commands print, skipped blocks say why, and every
`--lsrb-*` option and `lsrb` subcommand any block names exists. Markers: `docblocks.py`."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from docblocks import Block, blocks, normalized
from lsrb_testing import REPO

from pytest_lsrb.cli import build_parser
from pytest_lsrb.engine.option_sets import every_option
from pytest_lsrb.tools.lineup import MODELS_FLAG

OPTIONS = every_option()

DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))
ALL = [b for page in PAGES for b in blocks(page)]
COMMANDS = [b for b in ALL if b.is_command]
RUN_PAGES = sorted({b.page for b in ALL if b.marker == "run"})
SKIPPED = [b for b in COMMANDS if b.marker == "skip"]


def test_the_docs_have_pages_and_runnable_commands() -> None:
    assert len(PAGES) >= 14, PAGES
    assert sum(b.marker == "run" for b in COMMANDS) >= 10


def test_every_command_block_says_whether_it_runs() -> None:
    unmarked = [b.where for b in COMMANDS if b.marker not in ("run", "skip", "llama")]
    assert not unmarked, (
        f"command blocks with no <!-- run -->, <!-- llama --> or <!-- skip: reason --> marker: {unmarked}"
    )
    assert all(b.arg.strip() for b in SKIPPED), [b.where for b in SKIPPED if not b.arg.strip()]
    outputs = [b for b in ALL if b.marker == "output"]
    assert all(b.lang == "text" for b in outputs), [b.where for b in outputs]


# the table's options, and `lsrb run`'s own --lsrb-models (several models: tools/lineup.py)
KNOWN_OPTIONS = {f"--lsrb-{o.name}" for o in OPTIONS} | {MODELS_FLAG}


def _subcommands() -> set[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")  # argparse's subparsers action
    return set(action.choices or ())


def test_every_option_and_subcommand_the_docs_name_exists() -> None:
    subcommands = _subcommands()
    wrong: list[str] = []
    for block in ALL:
        for flag in re.findall(r"--lsrb-[a-z0-9-]*[a-z0-9](?![a-z0-9*-])", block.code):
            if flag not in KNOWN_OPTIONS:
                wrong.append(f"{block.where}: {flag}")
        if block.is_command:
            for sub in re.findall(r"(?:^|[\s;&|(])lsrb ([a-z][a-z-]*)", block.code):
                if sub not in subcommands:
                    wrong.append(f"{block.where}: lsrb {sub}")
    readme = [b for b in blocks(REPO / "README.md") if b.is_command]
    for block in readme:
        for flag in re.findall(r"--lsrb-[a-z0-9-]*[a-z0-9](?![a-z0-9*-])", block.code):
            if flag not in KNOWN_OPTIONS:
                wrong.append(f"{block.where}: {flag}")
        for sub in re.findall(r"(?:^|[\s;&|(])lsrb ([a-z][a-z-]*)", block.code):
            if sub not in subcommands:
                wrong.append(f"{block.where}: lsrb {sub}")
    for page in [*PAGES, REPO / "README.md"]:  # inline code too: `lsrb schemas` was once wrong
        text = page.read_text(encoding="utf-8")
        for sub in re.findall(r"`lsrb ([a-z][a-z-]*)\b(?!:)", text):
            if sub not in subcommands:
                wrong.append(f"{page.name}: `lsrb {sub}")
        for flag in re.findall(r"`(--lsrb-[a-z0-9-]*[a-z0-9])(?![a-z0-9*-])", text):
            if flag not in KNOWN_OPTIONS:
                wrong.append(f"{page.name}: {flag}")
    assert not wrong, wrong


def test_the_readmes_count_of_blocks_not_run_is_exact() -> None:
    # the README promises the docs' commands run; the number it names as not run is the count of
    # skip markers, so adding a skipped block means saying so there (issue #42)
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    claim = re.search(r"Every command block in them is run by the tests .*? except (\d+),", text)
    assert claim, "the README no longer says how many docs command blocks the tests do not run"
    assert int(claim.group(1)) == len(SKIPPED), (
        f"the README says {claim.group(1)} command blocks are not run; the docs have {len(SKIPPED)} "
        f"marked skip: {[b.where for b in SKIPPED]}"
    )


@pytest.mark.parametrize("block", SKIPPED, ids=[b.where for b in SKIPPED])
def test_a_skipped_block_says_why(block: Block) -> None:
    print(f"{block.where}: not run: {block.arg}")
    pytest.skip(f"{block.where}: {block.arg}")


def _scratch(tmp_path: Path) -> Path:
    """A folder laid out like the checkout for the commands: suites/, profiles/, examples/ linked,
    ../shared beside it when the checkout has one."""
    work = tmp_path / "work"
    work.mkdir()
    for name in ("suites", "profiles", "examples"):
        (work / name).symlink_to(REPO / name)
    shared = REPO.parent / "shared"
    if shared.is_dir():
        (tmp_path / "shared").symlink_to(shared)
    return work


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "80"  # the terminal width pytest formats its lines to, as in the samples
    return env


def _run(block: Block, work: Path) -> subprocess.CompletedProcess[str]:
    if block.lang in ("python", "py"):
        script = work / f"_block_{block.line}.py"
        script.write_text(block.code, encoding="utf-8")
        cmd = [sys.executable, str(script)]
    else:
        cmd = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=work, env=_env(), timeout=600)


def _shown(line: str, got: set[str]) -> bool:
    """`line` was printed; a `…` in a sample line stands for any text (a path of the scratch folder)."""
    if "…" not in line:
        return normalized(line) in got
    pattern = re.compile(".*".join(re.escape(part) for part in normalized(line).split("…")))
    return any(pattern.fullmatch(printed) for printed in got)


def _check_output(sample: Block, printed: str) -> None:
    got = {normalized(line) for line in printed.splitlines()}
    missing = [line for line in sample.code.splitlines() if line.strip() and not _shown(line, got)]
    assert not missing, f"{sample.where}: the sample's lines not printed by the command above it: {missing}"


@pytest.mark.parametrize(
    "page",
    # the quickstart, a newcomer's first page, is the docs' one end-to-end test in the default run
    [pytest.param(p, marks=pytest.mark.smoke) if p.name == "quickstart.md" else p for p in RUN_PAGES],
    ids=[p.name for p in RUN_PAGES],
)
def test_the_commands_of_a_page_run(page: Path, tmp_path: Path) -> None:
    work = _scratch(tmp_path)
    last, llama = "", False
    for block in blocks(page):
        if block.is_command and block.marker in ("run", "llama"):
            llama = block.marker == "llama"  # its output samples are checked by test_docs_llama.py
        if block.marker == "run" and block.is_command:
            if "../shared" in block.code and not (tmp_path / "shared").exists():
                pytest.skip(f"{block.where} reads ../shared/data, which is not present beside the checkout")
            proc = _run(block, work)
            last = proc.stdout + proc.stderr
            assert proc.returncode == block.status, (
                f"{block.where} exited {proc.returncode} (expected {block.status}):\n"
                f"{shlex.quote(block.code)}\n{last[-4000:]}"
            )
        elif block.marker == "output" and not llama:
            assert last, f"{block.where}: an output sample with no runnable block above it"
            _check_output(block, last)
