"""The options reference page, written from the option table (`engine.option_table`) so it lists
every option with the help `pytest --help` prints: the docs build renders it (docs/hooks.py), and
`tests/docs/test_options_page.py` checks it against `pytest --help`."""

from __future__ import annotations

from typing import Any

from pytest_lsrb.engine.option_table import OPTIONS, SRBENCH, TACTIC, Option

GROUPS: tuple[tuple[str, tuple[str, ...] | None, str], ...] = (
    ("Every suite", None, "Options every suite reads."),
    ("goal_to_tactic_proposal_v1 (Lean)", TACTIC, "Options only the Lean tactic suite reads."),
    ("llm_srbench", SRBENCH, "Options only llm_srbench reads."),
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(opt: Option) -> str:
    if opt.flag:
        return "off"
    value: Any = opt.default
    if value is None or value == "":
        return "–"
    return f"`{value}`"


def _values(opt: Option) -> str:
    if opt.flag:
        return "flag"
    if opt.choices:
        return ", ".join(f"`{c}`" for c in opt.choices)
    name = getattr(opt.type, "__name__", "")
    return {
        "_int": "integer",
        "_opt_int": "integer",
        "_opt_float": "number",
        "float": "number",
        "_int_or_auto": "integer or `auto`",
        "bool": "flag",
    }.get(name, "text")


def render_options_page() -> str:
    """The page's Markdown: one table per group, one row per option, in the table's order."""
    lines = [
        "# Options reference",
        "",
        "<!-- Generated at build time from pytest_lsrb/engine/option_table.py by docs/hooks.py:",
        "     edit the option table, not this page. -->",
        "",
        f"Every run option of pytest-lsrb ({len(OPTIONS)} in all) with its default and meaning, as",
        "`pytest --help` prints them. Every option is `--lsrb-<name>` on the command line; a suite's",
        "`suite.toml` `[defaults]` table may set any of them as `<name>` with `_` for `-` (the command",
        "line wins over the suite's default, which wins over the built-in one), and the Python API takes",
        "them as keyword arguments of the",
        "same name (`pytest_lsrb.api.run(suite, max_items=5)`, see [the Python API](api.md)).",
        "",
        "**The run's identity**: changing an option changes what the run measures, so it changes the",
        "run's `config_hash` (a resume with another value is refused), except for the options marked",
        "*not in the run's identity* (where to write, how fast to call), which can change between a run",
        "and its resume.",
        "",
        "Every value is checked before the run starts; a bad one stops it in one sentence (exit 4 from",
        "`pytest`, 2 from `lsrb run`), see [troubleshooting](troubleshooting.md).",
    ]
    for title, tasks, blurb in GROUPS:
        rows = [o for o in OPTIONS if o.tasks == tasks]
        if not rows:
            continue
        lines += ["", f"## {title}", "", blurb, ""]
        lines += ["| option | default | meaning |", "|---|---|---|"]
        for opt in rows:
            values = _values(opt)
            notes = [f"values: {values}"] if opt.choices or "auto" in values else []
            if not opt.identity:
                notes.append("not in the run's identity")
            extra = f" ({'; '.join(notes)})" if notes else ""
            meaning = _cell(opt.help + extra)
            lines.append(f"| `--lsrb-{opt.name}` | {_cell(_default(opt))} | {meaning} |")
    others = [o for o in OPTIONS if o.tasks not in {g[1] for g in GROUPS}]
    if others:
        lines += ["", "## Other suites", "", "| option | suite(s) | default | meaning |", "|---|---|---|---|"]
        for opt in others:
            lines.append(
                f"| `--lsrb-{opt.name}` | {', '.join(opt.tasks or ())} | {_cell(_default(opt))} | "
                f"{_cell(opt.help)} |"
            )
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
