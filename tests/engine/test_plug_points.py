"""Open plug points (issue #39): a registry takes a built-in name, an installed package's entry
point or a "pkg.mod:Class" spec, and says in one sentence which one it could not load; every
verification outcome declares whose it is, and one that does not is refused, never guessed.

The "installed package" here is a real distribution on sys.path (a `*.dist-info` folder with its
`entry_points.txt`, as pip writes it), found by `importlib.metadata` like any other."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lsrb_testing import install_distribution

from pytest_lsrb import api
from pytest_lsrb.adapters import ADAPTERS, create_adapter
from pytest_lsrb.adapters.base import AdapterConfig
from pytest_lsrb.core.errors import LsrbUsageError
from pytest_lsrb.core.registry import Registry
from pytest_lsrb.engine.verifier import (
    DOMAINS,
    UndeclaredOutcome,
    VerificationResult,
    VerifierConfig,
    create_verifier,
    declare_outcomes,
    outcome_domain,
)
from pytest_lsrb.tools.plugins import listing

PLUGIN = '''
import time

from pydantic import BaseModel

from pytest_lsrb import Adapter, GenerationRequest, GenerationResult, Message, Task
from pytest_lsrb import VerificationResult, Verifier, stream_jsonl, verification_fields


class EchoAdapter(Adapter):
    """Answers `rfl` to every goal."""

    name = "echo"

    def __init__(self, config):
        self.model = config.model or "echo-1"

    def generate(self, request):
        return GenerationResult(text="rfl", latency_ms=0.1)

    def identity(self):
        return {"adapter": self.name, "model": self.model}


class NotAnAdapter:
    def __init__(self, config):
        pass


class Row(BaseModel):
    item_id: str
    word: str

    def content_hash(self):
        return self.word


class WordTask(Task):
    name = "word"
    verification_modes = ("mystery_check", "none")

    def load_rows(self, suite, index_path):
        return stream_jsonl(index_path, Row)

    def run_attempt(self, ctx):
        result = ctx.adapter.generate(
            GenerationRequest((Message("user", ctx.case.row.word),), ctx.case.attempt_seed, ctx.sampling)
        )
        fields = {"proposal": result.text, "valid": True, "nonempty": True}
        fields.update(verification_fields(ctx.verifier.verify(ctx.case.row, result.text, attempt_seed=0)))
        return fields

    def mock_answer(self, context, seed):
        return "x"


class MysteryVerifier(Verifier):
    """Declares `fine`, then returns an outcome it never declared."""

    mode = "mystery_check"
    outcomes = {"fine": None}

    def __init__(self, config):
        pass

    def verify(self, row, proposal, *, attempt_seed):
        return VerificationResult(attempted=True, success=False, outcome="mystery_outcome")


class Undeclared(Verifier):
    mode = "undeclared"

    def verify(self, row, proposal, *, attempt_seed):
        return VerificationResult(attempted=True, success=True, outcome="fine")


class NotAVerifier:
    """The methods of one, but no `pytest_lsrb.Verifier`: refused, as a task or adapter is."""

    mode = "duck"
    outcomes = {"fine": None}

    def __init__(self, config):
        pass
'''

ENTRY_POINTS = """
[pytest_lsrb.adapters]
echo = fakeplug_mod:EchoAdapter
broken = fakeplug_mod:Missing
notadapter = fakeplug_mod:NotAnAdapter
mock = fakeplug_mod:EchoAdapter

[pytest_lsrb.tasks]
word = fakeplug_mod:WordTask
llm_srbench = fakeplug_mod:WordTask

[pytest_lsrb.verifiers]
mystery_check = fakeplug_mod:MysteryVerifier
undeclared = fakeplug_mod:Undeclared
duck = fakeplug_mod:NotAVerifier
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`fakeplug` 1.0 installed into a folder on sys.path, as pip --target lays it out."""
    modules = {"fakeplug_mod": PLUGIN}
    return install_distribution(tmp_path / "site", "fakeplug", ENTRY_POINTS, modules, monkeypatch)


def one_sentence(exc: pytest.ExceptionInfo[LsrbUsageError]) -> str:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text, text
    return text


def test_a_spec_loads_its_class_and_a_bad_one_is_named_in_one_sentence(installed: Path) -> None:
    registry = Registry({"known": "fakeplug_mod:EchoAdapter"}, group="lsrb.none", what="adapter", where="--x")
    assert registry.load("known").__name__ == "EchoAdapter"
    assert registry.load("fakeplug_mod:EchoAdapter") is registry.load("known")
    with pytest.raises(LsrbUsageError) as gone:
        registry.load("no_such_module_zz:Thing")
    assert "--x: cannot import 'no_such_module_zz' for 'no_such_module_zz:Thing'" in one_sentence(gone)
    with pytest.raises(LsrbUsageError) as missing:
        registry.load("fakeplug_mod:Nope")
    assert one_sentence(missing) == "--x: module 'fakeplug_mod' has no 'Nope' (from 'fakeplug_mod:Nope')."
    with pytest.raises(LsrbUsageError) as unknown:
        registry.load("nope")
    assert "--x: unknown adapter 'nope' (known: known;" in one_sentence(unknown)


def test_an_entry_point_loads_and_lsrb_list_names_its_package(installed: Path) -> None:
    assert ADAPTERS.load("echo").__name__ == "EchoAdapter"
    assert {"mock", "echo", "broken"} <= set(ADAPTERS)
    adapters = listing().split("\n\n")[1].splitlines()
    assert adapters[0] == "adapters (--lsrb-adapter; entry points: pytest_lsrb.adapters)"
    rows: dict[str, str] = {}
    for line in adapters[1:]:  # (the first line of a name: the built-in before a package's)
        rows.setdefault(line.split()[0], line.split(maxsplit=1)[1])
    assert rows["mock"].split() == ["built-in", "pytest_lsrb.adapters.mock:MockAdapter"]
    assert rows["echo"].split("  ")[0] == "entry point (fakeplug 1.0)"
    assert rows["echo"].endswith("  fakeplug_mod:EchoAdapter")
    # a package's name that a built-in already has: listed as shadowed, the built-in loads
    shadowed = [line.split() for line in adapters if "shadowed" in line]
    assert shadowed == [["mock", "entry", "point", "(fakeplug", "1.0),", "shadowed", "by", "the", "built-in",
                         "fakeplug_mod:EchoAdapter"]]  # fmt: skip
    assert ADAPTERS.load("mock").__name__ == "MockAdapter"
    with pytest.raises(LsrbUsageError) as broken:
        ADAPTERS.load("broken")
    text = one_sentence(broken)
    assert text.startswith("--lsrb-adapter: the adapter 'broken' of fakeplug 1.0 (entry point "), text
    with pytest.raises(LsrbUsageError) as wrong:
        create_adapter(AdapterConfig(name="notadapter"))
    assert "is not a subclass of pytest_lsrb.Adapter" in one_sentence(wrong)


def test_the_built_in_families_are_pytest_lsrbs_own_entry_points(installed: Path) -> None:
    """The engine names no family: the built-in tasks and verifiers are entry points of
    pytest-lsrb's own distribution (pyproject.toml), listed as built-in and winning over a
    package's entry point of the same name, as a built-in adapter does."""
    from pytest_lsrb.engine.task import TASKS
    from pytest_lsrb.engine.verifier import VERIFIERS

    assert TASKS.builtins == {} and VERIFIERS.builtins == {}
    assert TASKS.builtin_names() == ["goal_to_tactic_proposal_v1", "llm_srbench"]
    assert VERIFIERS.builtin_names() == ["equation", "none", "repo_replay", "synthetic"]
    assert TASKS.load("llm_srbench").__module__ == "pytest_lsrb.srbench.task"
    tasks = listing().split("\n\n")[0].splitlines()
    assert [line.split()[:2] for line in tasks if line.startswith("  llm_srbench")] == [
        ["llm_srbench", "built-in"],
        ["llm_srbench", "entry"],
    ]
    assert [line.split()[0] for line in tasks if "shadowed by the built-in" in line] == ["llm_srbench"]


def test_an_install_older_than_the_source_is_said_in_one_sentence() -> None:
    """A registry whose built-ins are pytest-lsrb's own entry points, with none installed (the
    metadata of an install made before they were added): one sentence saying to reinstall, not
    'unknown task'."""
    stale = Registry({}, group="pytest_lsrb.no_such_group", what="task", where="--x", own_entry_points=True)
    with pytest.raises(LsrbUsageError) as old:
        stale.load("goal_to_tactic_proposal_v1")
    assert one_sentence(old) == (
        "pytest-lsrb's own entry points of pytest_lsrb.no_such_group are missing: the installed "
        "metadata is older than the source; install it again (`pip install -e .` in a clone)."
    )


def test_an_adapter_from_another_package_runs_a_suite(installed: Path, tmp_path: Path) -> None:
    result = api.run(
        "goal_to_tactic_proposal_v1",
        adapter="echo",
        max_items=2,
        output_dir=tmp_path / "o",
        pytest_args=["-q"],
    )
    assert result.summary is not None and result.exit_code == 0
    assert [(r["adapter"], r["model"], r["tactic"]) for r in result.records] == [
        ("echo", "echo-1", "rfl")
    ] * 2


def test_a_verifier_must_declare_whose_each_outcome_is(installed: Path) -> None:
    with pytest.raises(LsrbUsageError) as none:
        create_verifier(VerifierConfig(mode="undeclared"))
    assert "declares no `outcomes` table" in one_sentence(none)
    with pytest.raises(LsrbUsageError) as duck:
        create_verifier(VerifierConfig(mode="duck"))
    assert one_sentence(duck) == "--lsrb-verification: 'duck' is not a subclass of pytest_lsrb.Verifier."
    with pytest.raises(LsrbUsageError) as bad:
        declare_outcomes("my_verifier", {"oops": "user"})
    assert one_sentence(bad) == (
        "my_verifier: outcome 'oops' has domain 'user', not one of model, environment, harness or None."
    )
    import pytest_lsrb.tactic.lean.outcome  # noqa: F401  (declares Lean's `timeout` as the environment's)

    with pytest.raises(LsrbUsageError) as clash:
        declare_outcomes("my_verifier", {"timeout": "model"})
    assert (
        "outcome 'timeout' is declared 'model' here but 'environment' by pytest_lsrb.tactic"
        in one_sentence(clash)
    )


def test_an_undeclared_outcome_is_refused_never_guessed() -> None:
    result = VerificationResult(attempted=True, success=False, outcome="never_declared_zz")
    with pytest.raises(UndeclaredOutcome) as exc:
        _ = result.error_domain
    assert "verification outcome 'never_declared_zz' declares no domain" in one_sentence(exc)
    assert outcome_domain("not_attempted") is None


def test_a_run_stops_at_the_first_undeclared_outcome(
    installed: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "word_suite"
    suite.mkdir()
    (suite / "suite.toml").write_text(
        '[suite]\nname = "word"\ntask = "word"\nindex = "index.jsonl"\nprompt = "prompt.md"\n',
        encoding="utf-8",
    )
    (suite / "prompt.md").write_text("{{word}}\n", encoding="utf-8")
    rows = "".join(f'{{"item_id": "w{i}", "word": "w{i}"}}\n' for i in range(3))
    (suite / "index.jsonl").write_text(rows, encoding="utf-8")
    (suite / "test_word.py").write_text(
        textwrap.dedent(
            """
            from pytest_lsrb import Attempt


            def test_word(lsrb_attempt: Attempt) -> None:
                lsrb_attempt.check()
            """
        ),
        encoding="utf-8",
    )
    result = api.run(suite, output_dir=tmp_path / "o", pytest_args=["-q", "-rs"])
    assert result.records == []  # nothing was recorded with a guessed domain
    assert result.exit_code != 0
    shown = capfd.readouterr().out
    assert "stopping the run: verification outcome 'mystery_outcome' declares no domain" in shown, shown


DOMAIN_OR_NONE = st.sampled_from([*DOMAINS, None])


def declared(name: str) -> tuple[bool, str | None]:
    try:
        return True, outcome_domain(name)
    except UndeclaredOutcome:
        return False, None


@given(st.dictionaries(st.from_regex(r"law_[a-z]{1,12}", fullmatch=True), DOMAIN_OR_NONE, min_size=1))
def test_a_declared_outcome_reads_back_as_declared(table: dict[str, str | None]) -> None:
    """The law of the outcome tables: what a table declares is what `outcome_domain` says, a table
    declared again is the same declaration, and another domain for a declared name is refused
    (an earlier example's declaration included) and changes nothing."""
    before = {name: declared(name) for name in table}
    if any(was and domain != table[name] for name, (was, domain) in before.items()):
        with pytest.raises(LsrbUsageError, match="is declared"):
            declare_outcomes("law_verifier", table)
        assert {name: declared(name) for name in table} == before
        return
    declare_outcomes("law_verifier", table)
    assert {name: outcome_domain(name) for name in table} == table
    declare_outcomes("law_verifier_again", table)  # the same domains: accepted
    name, domain = next(iter(table.items()))
    other = next(d for d in [*DOMAINS, None] if d != domain)
    with pytest.raises(LsrbUsageError, match=f"outcome '{name}' is declared"):
        declare_outcomes("law_other", {name: other})
    assert outcome_domain(name) == domain


HALF_WRITTEN = """
from pytest_lsrb import DiscoveryMethod, HttpAdapter, Task, Verifier


class NoBody(HttpAdapter):
    name = "no_body"
    generate_path = "/v1/x"


class NoVerify(Verifier):
    mode = "no_verify"
    outcomes = {"ok": None}


class NoDiscover(DiscoveryMethod):
    name = "no_discover"


class NoRows(Task):
    name = "no_rows"
"""


def test_a_plug_in_that_leaves_its_base_abstract_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A subclass that does not write what its base asks (an HttpAdapter with no request_body
    and parse_reply, ...) is refused in one sentence naming what is missing, before any model
    call; it was an INTERNALERROR traceback (`TypeError: Can't instantiate abstract class`)."""
    from pytest_lsrb.engine.task import get_task
    from pytest_lsrb.srbench.methods import get_method

    (tmp_path / "half_written_zz.py").write_text(HALF_WRITTEN)
    monkeypatch.syspath_prepend(str(tmp_path))
    made = {
        "--lsrb-adapter": lambda: create_adapter(AdapterConfig(name="half_written_zz:NoBody")),
        "--lsrb-verification": lambda: create_verifier(VerifierConfig(mode="half_written_zz:NoVerify")),
        "--lsrb-sr-method": lambda: get_method("half_written_zz:NoDiscover"),
        "suite.toml [suite] task": lambda: get_task("half_written_zz:NoRows"),
    }
    texts = {}
    for where, make in made.items():
        with pytest.raises(LsrbUsageError) as refused:
            make()
        texts[where] = one_sentence(refused)
        assert texts[where].startswith(f"{where}: 'half_written_zz:"), texts[where]
    assert texts["--lsrb-adapter"] == (
        "--lsrb-adapter: 'half_written_zz:NoBody' does not write parse_reply, request_body, "
        "which every subclass of pytest_lsrb.HttpAdapter must."
    )
    assert (
        "does not write verify, which every subclass of pytest_lsrb.Verifier must"
        in texts["--lsrb-verification"]
    )
    assert (
        "does not write discover, which every subclass of pytest_lsrb.DiscoveryMethod must"
        in texts["--lsrb-sr-method"]
    )
    assert "which every subclass of pytest_lsrb.Task must" in texts["suite.toml [suite] task"]
