"""The options reference page, written from the declarations (`engine.option_table` for every
suite's, each installed family's `OptionSet`, `engine.option_sets`) so it lists every option with
the help `pytest --help` prints, in the same groups: the docs build renders it (docs/hooks.py),
and `tests/docs/test_options_page.py` checks it against `pytest --help`."""

from __future__ import annotations

from collections.abc import Iterable

from pytest_lsrb.engine.option_sets import installed_sets
from pytest_lsrb.engine.option_spec import TASK, VERIFIER, Option, OptionSet
from pytest_lsrb.engine.option_table import FAMILIES_AFTER, GROUPS, OPTIONS


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(opt: Option) -> str:
    if opt.flag:
        return "off"
    shown = opt.shown_default()
    return "–" if shown is None else f"`{shown}`"


def _table(options: Iterable[Option]) -> list[str]:
    lines = ["| option | default | meaning |", "|---|---|---|"]
    for opt in options:
        notes = [] if opt.flag else [f"values: {opt.accepts()}"]
        if not opt.identity:
            notes.append("not in the run's identity")
        extra = f" ({'; '.join(notes)})" if notes else ""
        lines.append(f"| `{opt.flag_name}` | {_cell(_default(opt))} | {_cell(opt.help + extra)} |")
    return lines


def _whose(option_set: OptionSet) -> str:
    names = ", ".join(f"`{n}`" for n in option_set.owners)
    if option_set.kind == TASK:
        return f"Options of the suites whose task is {names}: refused by any other suite."
    if option_set.kind == VERIFIER:
        return f"Options of `--lsrb-verification` {names}: refused by a run that checks with another."
    return (
        f"Options of the {option_set.kind} {names}: part of a run only when its task plugs that "
        f"{option_set.kind} in, refused otherwise."
    )


def render_options_page() -> str:
    """The page's Markdown: one table per `--help` group, one row per option, in their order."""
    sets = installed_sets().sets
    total = len(OPTIONS) + sum(len(s.options) for s in sets)
    lines = [
        "# Options reference",
        "",
        "<!-- Written by `python docs/hooks.py` (and afresh by the site's build) from",
        "     pytest_lsrb/engine/option_table.py (the options every suite reads) and each family's",
        "     option set (pytest_lsrb/tactic/options.py, pytest_lsrb/srbench/option_table.py): edit",
        "     those, not this page; tests/docs/test_docs_site.py fails when it falls behind. -->",
        "",
        f"Every run option of pytest-lsrb and its installed families ({total} in all) with its default",
        "and meaning, in the groups `pytest --help` prints them in. Every option is `--lsrb-<name>` on",
        "the command line; a suite's `suite.toml` `[defaults]` table may set any of them as `<name>`",
        "with `_` for `-` (the command line wins over the suite's default, which wins over the built-in",
        "one), and the Python API takes them as keyword arguments of the same name",
        "(`pytest_lsrb.api.run(suite, max_items=5)`, see [the Python API](api.md)).",
        "",
        "**Whose options**: the first groups are read by every suite. A family's options (a task's,",
        "a verifier's, a discovery method's) are part of a run only when their owner is in it; given",
        "to another run they are refused in one sentence that names whose they are. A family",
        "outside pytest-lsrb declares its own the same way ([extending](extending.md#options)).",
        "",
        "**The run's identity**: changing an option changes what the run measures, so it changes the",
        "run's `config_hash` (a resume with another value is refused), except for the options marked",
        "*not in the run's identity* (where to write, how fast to call), which can change between a run",
        "and its resume. Options of owners that are not in a run are not in its identity either.",
        "",
        "Every value is checked before the run starts; a bad one stops it in one sentence naming what",
        "is valid (exit 4 from `pytest`, 2 from `lsrb run`), see [troubleshooting](troubleshooting.md).",
    ]
    by_group: dict[str, list[Option]] = {name: [] for name in GROUPS}
    for opt in OPTIONS:
        by_group.setdefault(opt.group, []).append(opt)
    for name, options in by_group.items():
        if options:
            lines += ["", f"## {GROUPS.get(name, name).split(':')[0].capitalize()}", ""]
            lines += [GROUPS.get(name, name).split(": ", 1)[-1].capitalize() + ".", ""]
            lines += _table(options)
        if name == FAMILIES_AFTER:
            for option_set in sets:
                lines += ["", f"## {option_set.title.split(':')[0]}", "", _whose(option_set), ""]
                lines += _table(option_set.options)
    lines += _suite_defaults()
    return "\n".join(lines) + "\n"


def _suite_defaults() -> list[str]:
    """The built-in suites' `[defaults]` tables, as their suite.toml files say."""
    from pytest_lsrb.core.textfiles import read_toml
    from pytest_lsrb.engine.suite import SUITE_FILE, builtin_suites_dir

    lines = [
        "",
        "## The built-in suites' defaults",
        "",
        "What each built-in suite's `suite.toml` `[defaults]` sets (it wins over the built-in default",
        "above; the command line wins over it).",
    ]
    for path in sorted(builtin_suites_dir().glob(f"*/{SUITE_FILE}")):
        defaults = read_toml(path).get("defaults", {})
        lines += ["", f"**{path.parent.name}**: " + ", ".join(f"`{k} = {v!r}`" for k, v in defaults.items())]
    return lines
