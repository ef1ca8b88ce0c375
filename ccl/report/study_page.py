"""What the pre-registered studies' pages (``ccl.report.study2``, ``ccl.report.study3``) share: Markdown
tables and cells, the conclusion sentence of one contrast, the table of a family of contrasts, the MDE curve,
the task-family table, the stage-time record and the deviations file.

Each page keeps its own wording around these and passes what differs (its names, contrasts, outcome, the
family table's interval heading and whether it shows seeds). A summary without per-family successes gets
"n/a" where that table would stand.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..artifacts.inputs import read_record
from ..config import read_yaml
from ..errors import InputError
from ..vocabulary import Contrast


@dataclass(frozen=True)
class Page:
    """A study's page as built: its Markdown, its HTML and the README's block of its results in brief."""
    markdown: str
    html: str
    brief: str


def md_table(columns: list[str], rows: list[list]) -> str:
    """A Markdown table; cells are written as given (already formatted)."""
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def pct(cell: dict | None) -> str:
    """A success cell of the summary (percent, with its interval), or "n/a"."""
    if not cell:
        return "n/a"
    return f"{cell['mean']:.1f} [{cell['low']:.1f}, {cell['high']:.1f}]"


def p_text(p: float) -> str:
    """A p-value to 4 significant digits, or the bound "< 0.000001" below it (the summary stores it exact)."""
    return "< 0.000001" if p < 1e-6 else f"{p:.4g}"


def num(v: object) -> str:
    """A monitor's value: floats to 4 significant digits, anything else as it is."""
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def unadjusted_sentence(summary: dict) -> str:
    """What the intervals are: the page and the brief both say it (``promises`` checks the page)."""
    return (f"The {100 * (1 - summary['alpha']):.0f}% intervals are unadjusted: only the p-values are "
            "Holm-adjusted, within each family.")


def conclusion(contrast: Contrast, row: dict | None, role: str, names: Mapping[str, str]) -> str:
    """One contrast's answer in one family: detected or not (Holm p against alpha, the row's ``significant``),
    the direction of a detected difference, the estimate, its unadjusted interval and Holm p; configurations
    are called by ``names`` (their code name where it has none). ``promises.conclusion_problems`` reads the
    sentence back against the summary."""
    def name(config: str) -> str:
        return names.get(config, config)

    tag = f"(`{contrast.name}`, {role})"
    if row is None:
        return (f"{name(contrast.a)} against {' and '.join(map(name, contrast.comparators))} {tag}: not computed "
                "(it enters Holm with p = 1).")
    verdict = ("was not detected to beat" if not row["significant"] else
               "was detected to beat" if row["diff"] > 0 else "was detected to be worse than")
    return (f"{name(row['a'])} {verdict} {name(row['vs'])} {tag}: {row['diff']:+.1f} points "
            f"[{row['low']:+.1f}, {row['high']:+.1f}], Holm p {p_text(row['p_holm'])}.")


def family_table(rows: list[dict], contrasts: Sequence[Contrast], mde: Mapping[str, float], *, ci_label: str,
                 seeds: bool) -> str:
    """A family's contrasts in ``contrasts``' order: each side's success, the difference, its interval, exact
    and Holm p, the MDE ("n/a" where ``mde`` has none), the tasks, the tasks each side wins, each side's seeds
    (with ``seeds``) and the observed q. A contrast the summary lacks enters Holm with p = 1 and says so."""
    columns = ["contrast", "a (%)", "b (%)", "a - b", ci_label, "exact p", "Holm p", "MDE", "tasks", "wins a / b",
               *(["seeds a / b"] if seeds else []), "observed q (%)"]
    by_name = {r["contrast"]: r for r in rows}
    out = []
    for c in contrasts:
        r = by_name.get(c.name)
        if r is None:
            out.append([f"`{c.name}`", "not computed (enters Holm with p = 1)"] + [""] * (len(columns) - 2))
            continue
        part = r["components"][0]
        m = mde.get(c.name)
        out.append([f"`{c.name}`", f"{r['a_success']:.1f}", f"{part['b_success']:.1f}", f"{r['diff']:+.1f}",
                    f"[{r['low']:+.1f}, {r['high']:+.1f}]", p_text(r["p"]), p_text(r["p_holm"]),
                    "n/a" if m is None else f"{100 * m:.1f}", r["n"], f"{part['a_wins']} / {part['b_wins']}",
                    *([f"{r['seeds_a']} / {part['seeds_b']}"] if seeds else []),
                    f"{100 * part['reverse_share']:.1f}"])
    return md_table(columns, out)


def curve_table(power: dict, names: Sequence[str]) -> str:
    """The MDE of each named contrast against the planning value q (the pre-registration's curve)."""
    rows = [[f"{100 * point['reverse_share']:.1f}", *("n/a" if point.get(n) is None else f"{100 * point[n]:.1f}"
                                                      for n in names)] for point in power["curve"]]
    return md_table(["q (%)", *(f"`{n}` MDE" for n in names)], rows)


def task_family_table(summary: dict, outcome: str, label: str) -> str:
    """The summary's successes per configuration and task family on ``outcome`` (ccl.analysis.task_families),
    headed ``label``; "n/a" for a summary without them."""
    rows = [[f"`{r['config']}`", r["family"], r["tasks"], f"{r[f'{outcome}_successes']:g}"]
            for r in summary.get("families_of_tasks", [])]
    return md_table(["configuration", "task family", "tasks", label], rows) if rows else "n/a"


def stage_times(path: Path) -> dict:
    """The run's stage-time record, or an empty one before the run has written it."""
    return read_record(path, "timed_repro") if path.is_file() else {}


def recorded(times: dict) -> bool:
    """Whether ``times`` is a run's record (``scripts/stage_times.py --json``) rather than the placeholder
    committed before the run."""
    return "total_s" in times


def _deviation(item: Any) -> bool:
    """A sentence, or a mapping with its sentence under ``deviation`` and, for an attempt that was stopped,
    that attempt's folder (``attempt``) and when it stopped (``stopped``), both or neither."""
    if isinstance(item, str):
        return True
    if not isinstance(item, dict) or not isinstance(item.get("deviation"), str):
        return False
    extra = set(item) - {"deviation"}
    return extra in (set(), {"attempt", "stopped"}) and all(isinstance(item[k], str) for k in extra)


def deviation_items(path: Path) -> list:
    """A study's recorded deviations (a list of the items ``_deviation`` accepts; none before the file exists)."""
    items = read_yaml(path, InputError) if path.is_file() else []
    if not isinstance(items, list) or not all(_deviation(i) for i in items):
        raise InputError(f"{path}: expected a list of sentences, or of mappings with the sentence under 'deviation' "
                         f"(and 'attempt' and 'stopped' for an attempt that was stopped), got {items!r}")
    return items


def deviation_sentences(path: Path) -> list[str]:
    """The recorded deviations, one sentence each."""
    return [i if isinstance(i, str) else i["deviation"] for i in deviation_items(path)]
