"""The families of tests a report names, each with the one label every page gives it.

Templates print a family's label as ``F.<family>`` (``ccl.report.render``) and the replay table's note
takes it from here, so no page spells a label of its own; ``build_report --check`` then reads the
written report, the README's brief and the site's pages back (``promises.family_label_problems``):
a sentence that names a family and says how it is labelled or corrected must carry that family's label.

Study 1's families, as ``docs/preregistration.md`` ("Family and correction", "Secondary and exploratory
analyses") fixes them and the analysis computes them:

- primary: the three contrasts, Holm over those alone (``ccl.analysis.contrasts``);
- secondary: the same contrasts under the write-up's definition, and the write-up's table of paired
  comparisons, each its own Holm family (pre-registered as secondary families A and B);
- replay: the pre-registration lists decision-point replay as "Secondary, descriptive" and names no
  replay test; ``ccl.analysis.replay.replay_paired`` compares configurations on replay pass with Holm
  over those comparisons alone (the write-up's comparisons without the oracle's). So it is secondary
  and descriptive, and Holm-corrected within its own family; neither "exploratory and uncorrected"
  nor a pre-registered test family;
- exploratory: success by family, depth and fault injection, and serving, with no correction.

Every page prints a family's p-values with ``p_text``: the summaries store them exact and unrounded, and
one too small for the digits shown is a bound ("< 0.0001"), never "0.0000".
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """A family of tests as the pages name it."""

    label: str  # the one wording every page uses for it
    mentions: tuple[str, ...]  # regular expressions (case-insensitive) that name the family in a sentence
    holm: bool | None = None  # its p-values are Holm-adjusted within the family (None: not checked)


STUDY1_FAMILIES: dict[str, Family] = {
    "primary": Family("primary, pre-registered, Holm over these contrasts alone", (r"\bprimary contrasts?\b",), True),
    "secondary": Family("secondary, pre-registered, each with its own Holm correction",
                        (r"\bwrite-up's (?:success )?definition\b", r"\bwrite-up's table of paired comparisons\b"),
                        True),
    "replay": Family("secondary and descriptive, Holm-corrected within its own family", (r"\breplay\b",), True),
    "exploratory": Family("exploratory and uncorrected",
                          (r"\bby (?:task )?family\b", r"\bby (?:gold workflow )?depth\b", r"\bfaults\b",
                           r"\bfault injection\b"), False),
}

# what the templates see as ``F``: family -> label
LABELS = {name: f.label for name, f in STUDY1_FAMILIES.items()}


def replay_paired_note(n_flips: int, n_tests: int) -> str:
    """The replay tests' table note, worded here from the artifact's numbers (``replay_summary.json``:
    its stats and ``replay_paired``) so that it names the family by its label, as every page does."""
    return ("a - b in replay pass (percentage points), main splits pooled. CI: task-cluster bootstrap of the "
            "difference of pooled rates; p: two-sided sign-flip test on per-task differences of pass counts "
            f"({n_flips} flips; smallest attainable p = {1 / (1 + n_flips):.6f}); p_holm: Holm over these {n_tests} "
            f"tests only, the replay family ({LABELS['replay']}; the oracle's comparison is left out, as it made "
            "the golden set). Training-seed variance is not in these intervals. * = significant after Holm.")


P_COLUMNS = ("p", "p_holm")  # the p-value columns of a summary's tables


def p_text(p: float, decimals: int = 4) -> str:
    """A p-value with ``decimals`` decimals, or the bound "< 0.0001" when it is too small to show: an exact
    p is never 0, and "0.0000" would read as one."""
    floor = 10.0 ** -decimals
    return f"< {floor:.{decimals}f}" if p < floor else f"{p:.{decimals}f}"


def p_relation(p: float, decimals: int = 4) -> str:
    """``p_text`` for prose after "p": "= 0.0232", or "< 0.0001" (never "= < 0.0001")."""
    text = p_text(p, decimals)
    return text if text.startswith("<") else f"= {text}"
