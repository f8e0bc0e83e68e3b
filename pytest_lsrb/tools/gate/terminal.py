"""The gate's section of the terminal summary (and of `lsrb compare`'s output)."""

from __future__ import annotations

from typing import Any, Final

from pytest_lsrb.tools.gate.checks import EXIT_REGRESSION, GateResult

GATE_FILE: Final = "gate.json"
SHOWN_FLIPS: Final = 10  # items listed per direction in the terminal; gate.json has them all


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _p(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2g}" if value < 0.001 else f"{value:.4f}"


def title(result: GateResult) -> str:
    verdict = "REGRESSION" if result.regressed else "ok"
    against = f" against baseline {result.baseline_dir}" if result.baseline_dir else ""
    if result.missing_baseline is not None:
        against = " without a baseline (the first run, declared)"
    return f"lsrb gate: {verdict}{against}"


def result_lines(result: GateResult) -> list[str]:
    """The gate's terminal section (without its title line)."""
    holm = any(c.p_adjusted != c.p_value for c in result.checks)
    p_label = "p (Holm)" if holm else "p"
    header = (
        "metric",
        "baseline",
        "current",
        "change",
        "95% CI",
        "limit",
        "items",
        p_label,
        "test",
        "verdict",
    )
    rows = [header]
    first = (
        [
            f"no baseline at {result.missing_baseline}: this run is declared the first "
            "(baseline-missing=pass), so nothing was compared"
            + ("; the floors and ceilings below still hold" if result.checks else "")
        ]
        if result.missing_baseline is not None
        else []
    )
    for c in result.checks:
        test = c.test or "-"
        if c.test:
            test += f" ({len(c.down)} down, {len(c.up)} up)"
        rows.append(
            (
                c.metric,
                _num(c.baseline),
                _num(c.current),
                _num(c.change, signed=True),
                "-" if c.ci is None else f"[{c.ci[0]:+.3f}, {c.ci[1]:+.3f}]",
                c.threshold,
                str(c.items),
                _p(c.p_adjusted if c.kind == "max_drop" else None),
                test,
                "REGRESSED" if c.regressed else "ok",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = first + (
        ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        if result.checks
        else []
    )
    for c in result.checks:
        if c.regressed and c.kind == "max_drop":
            moved = "rose" if c.direction == "lower" else "fell"
            lines.append(
                f"{c.metric} {moved} by {abs(c.change or 0.0):.3f} (from {_num(c.baseline)} to "
                f"{_num(c.current)}; allowed {c.limit:g}), p = {_p(c.p_adjusted)} < alpha {result.alpha:g}"
            )
        elif c.regressed and c.kind == "max":
            lines.append(f"{c.metric} is {_num(c.current)}, above the maximum {c.limit:g}")
        elif c.regressed:
            lines.append(f"{c.metric} is {_num(c.current)}, below the minimum {c.limit:g}")
    lines += sensitivity_lines(result, holm)
    drops = [c for c in result.checks if c.kind == "max_drop"]
    flips = next((c for c in drops if c.regressed), drops[0] if drops else None)
    if flips is not None:
        for label, ids in (("got worse", flips.down), ("got better", flips.up)):
            if ids:
                shown = ", ".join(ids[:SHOWN_FLIPS])
                more = f" (+{len(ids) - SHOWN_FLIPS} more in {GATE_FILE})" if len(ids) > SHOWN_FLIPS else ""
                lines.append(f"items that {label} on {flips.metric} ({len(ids)}): {shown}{more}")
    if result.baseline_dir:
        notes = [f"{result.paired_items} items in both runs"]
        if result.only_in_baseline or result.only_in_current:
            notes.append(f"{result.only_in_baseline} only in the baseline, {result.only_in_current} only now")
        if result.same_selection is False:
            notes.append("the runs selected different rows (selected_rows_hash differs)")
        lines.append("compared: " + "; ".join(notes))
    if result.unjudged_baseline or result.unjudged_current:
        lines.append(
            "left out (infrastructure errors, profile skips): "
            f"{result.unjudged_baseline} attempts in the baseline, "
            f"{result.unjudged_current} now"
        )
    if result.regressed:
        lines.append(f"exit status {EXIT_REGRESSION}: a model regression")
    return lines


def sensitivity_lines(result: GateResult, holm: bool) -> list[str]:
    """What each drop test could detect with the items at hand; a warning only where a limit the
    user set above 0 is finer than that (with the default limit, 0, "any significant drop", a drop
    too small to detect is noise by definition: nothing to warn about)."""
    lines: list[str] = []
    tested = [c for c in result.checks if c.kind == "max_drop"]
    for c in tested:
        if not c.items:
            continue
        at = f"p < {result.alpha:g}" + (f", Holm over {len(tested)} metrics" if holm else "")
        if c.test == "exact McNemar" and c.min_detectable is None:
            lines.append(
                f"{c.metric}: {c.items} items are too few for any drop to be significant ({at}); "
                "this gate cannot fail on it"
            )
            continue
        if c.min_detectable is None:
            why = (
                "the paired differences have no variance"
                if c.test == "paired bootstrap"
                else "a quantile's change has no closed-form detectable size"
            )
            drop = "rise" if c.direction == "lower" else "drop"
            lines.append(f"{c.metric}: the smallest detectable {drop} is not estimable ({why})")
            continue
        how = "even with no item improving" if c.test == "exact McNemar" else "at 80% power"
        drop = "rise" if c.direction == "lower" else "drop"
        lines.append(
            f"{c.metric}: the smallest {drop} detectable on {c.items} items is "
            f"{c.min_detectable:.3f} ({at}, {how})"
        )
        if c.limit > 0 and c.limit + 1e-12 < c.min_detectable:
            lines.append(
                f"WARNING: {c.metric}: the allowed {drop} {c.limit:g} is below that; a {drop} between "
                f"{c.limit:g} and {c.min_detectable:.3f} passes as noise. Use more items (or samples)."
            )
    return lines


def write_terminal(terminalreporter: Any, result: GateResult) -> None:
    terminalreporter.write_sep("=", title(result), red=result.regressed, green=not result.regressed)
    for line in result_lines(result):
        terminalreporter.write_line(line)
