"""What a pre-registration promised the report would say, checked on the written text.

``build_report --check`` runs these on the written report (and the README's brief and the site's
pages); each returns a list of problems, empty when the promise is kept, so a study's own report
(another page, another mapping of families, another budget) can reuse them as they are:

- ``stage_time_problems(text, record, budget_minutes)``: the run's stage-time table, every row, with its
  total, and the sentence saying whether the run exceeded the pre-registered budget;
- ``attempt_problems(text, attempts)``: the limitations name every attempt that stopped (its folder
  and the stage it stopped at) and the run the published numbers come from;
- ``family_label_problems(text, families)``: every family's label appears, and a sentence that names a
  family and says how it is labelled or corrected carries that family's label and no other;
- ``conclusion_problems(text, families, contrasts, alpha, names)``: one conclusion sentence per contrast of
  each family, whose "detected" or "not detected", direction, estimate, interval and Holm p agree with the
  summary's row (read back from the words and numbers, not compared with a rendering).
"""
from __future__ import annotations

import html as html_lib
import re
from decimal import Decimal
from typing import Any, Mapping, Sequence

from .families import Family
from .run_time import budget_sentence, exceeds, minutes, time_rows


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def page_text(page: str) -> str:
    """An HTML page's text: block elements become paragraphs, table cells ' | ', entities unescaped."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S | re.I)
    page = re.sub(r"</?(?:p|div|li|ul|ol|h[1-6]|tr|table|thead|tbody|figure|figcaption|pre|blockquote|section|nav|"
                  r"header|footer|main|br)\b[^>]*>", "\n\n", page, flags=re.I)
    page = re.sub(r"</?t[dh]\b[^>]*>", " | ", page, flags=re.I)
    return html_lib.unescape(re.sub(r"<[^>]+>", "", page))


# ------------------------------------------------------------------ run time, stage by stage
def stage_time_problems(text: str, record: Mapping[str, Any], budget_minutes: float) -> list[str]:
    """The report holds the record's table row by row, in order, with the total, and the sentence that
    says whether the total exceeded ``budget_minutes``."""
    lines = [_squash(ln) for ln in text.splitlines()]
    problems, at = [], 0
    missing = []
    for step, took in time_rows(record):
        row = f"| {step} | {took} |"
        found = next((i for i in range(at, len(lines)) if lines[i] == row), None)
        if found is None:
            missing.append(row)
        else:
            at = found + 1
    if missing:
        problems.append(f"run time: the stage-time table lacks {len(missing)} of its {len(time_rows(record))} rows "
                        f"(or has them out of order), first {missing[0]!r}")
    total, flat = minutes(record["total_s"]), _squash(text)
    if _squash(budget_sentence(record, budget_minutes)) not in flat:
        verdict = "exceeded" if exceeds(record, budget_minutes) else "kept"
        problems.append(f"run time: no sentence states that the run took {total} and {verdict} the pre-registered "
                        f"budget of {budget_minutes} minutes (expected {budget_sentence(record, budget_minutes)!r})")
    if exceeds(record, budget_minutes) and "within the pre-registered budget" in flat:
        problems.append(f"run time: the report says the run was within the budget, but {total} exceeds "
                        f"{budget_minutes} minutes")
    return problems


# ------------------------------------------------------------------ limitations: the attempts before the run
LIMITATIONS = re.compile(r"^(?P<level>#{1,6}) [^\n]*\blimitations\b[^\n]*$", re.I | re.M)


def limitations_section(text: str) -> str | None:
    """The Markdown section whose heading names the limitations, up to the next heading at its level or above."""
    m = LIMITATIONS.search(text)
    if not m:
        return None
    end = re.compile(rf"^#{{1,{len(m['level'])}}} ", re.M).search(text, m.end())
    return text[m.end():end.start() if end else len(text)]


def attempt_problems(text: str, attempts: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """``attempts``: (folder, record) of every attempt of the run in order, the published run last. The
    limitations name each attempt that stopped (its folder and failed stage) and the published run."""
    if not attempts:
        return []
    *earlier, (final, last) = attempts
    problems = []
    if last.get("exit_status") not in (0, None):
        problems.append(f"attempts: the published run ({final}) did not finish (exit status {last['exit_status']})")
    stopped = [(f, r) for f, r in earlier if r.get("exit_status") != 0]
    if not stopped:
        return problems
    section = limitations_section(text)
    if section is None:
        return [*problems, f"attempts: the report has no limitations section to list the {len(stopped)} attempt(s) "
                           f"that stopped ({', '.join(f for f, _ in stopped)})"]
    for folder, rec in stopped:
        if folder not in section:
            problems.append(f"attempts: the limitations do not mention the attempt that stopped ({folder})")
        stage = rec.get("failed_stage")
        if stage and stage not in section:
            problems.append(f"attempts: the limitations do not name the stage the attempt in {folder} stopped at "
                            f"({stage})")
    if final not in section:
        problems.append(f"attempts: the limitations do not name the run the published numbers come from ({final})")
    return problems


# ------------------------------------------------------------------ families of tests: one label each
UNCORRECTED = re.compile(r"\buncorrected\b|\bno correction\b|\bnot corrected\b|\bwithout (?:any )?correction\b", re.I)
CORRECTED = re.compile(r"\bHolm[- ](?:corrected|adjusted)\b", re.I)
OWN_FAMILY = re.compile(r"\bfamily of (?:its|their) own\b|\b(?:its|their) own family\b", re.I)
PARAGRAPH = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*] |\||#|\d+\. ))")
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`*'\"\[])")


def _families(families: Mapping[str, Family | str]) -> dict[str, Family]:
    """A bare label names its family by its key."""
    return {n: f if isinstance(f, Family) else Family(f, (rf"\b{re.escape(n)}\b",)) for n, f in families.items()}


def _sentences(text: str, fams: Mapping[str, Family]) -> list[tuple[str, set[str]]]:
    """Each sentence with the families it names; one that names none continues the sentence before it in
    its paragraph when that one named exactly one family (a table note's later sentences, say)."""
    text = re.sub(r"<!--.*?-->", "\n\n", text, flags=re.S)
    out = []
    for para in PARAGRAPH.split(text):
        last: set[str] = set()
        for s in (_squash(s) for s in SENTENCE.split(para) if s.strip()):
            named = {n for n, f in fams.items() if any(re.search(p, s, re.I) for p in f.mentions)}
            if named:
                last = named if len(named) == 1 else set()
            out.append((s, named or last))
    return out


def _sentence_problems(s: str, named: set[str], fams: Mapping[str, Family], where: str) -> list[str]:
    low = s.lower()
    labels = {n: f.label.lower() for n, f in fams.items()}
    cues = [lab for lab in labels.values() if lab in low]
    bare = low
    for lab in sorted(labels.values(), key=len, reverse=True):
        bare = bare.replace(lab, " ")
    cues += [m.group(0) for rx in (UNCORRECTED, CORRECTED, OWN_FAMILY) for m in [rx.search(bare)] if m]
    quote = s if len(s) <= 240 else s[:237] + "..."
    problems = []
    for n in sorted(named):
        f = fams[n]
        if cues and labels[n] not in low:
            problems.append(f"{where}: a sentence labels the {n} family ({cues[0]!r}) without its label "
                            f"{f.label!r}: {quote!r}")
            continue
        for g in sorted(set(fams) - named):  # its own label, and another family's beside it
            if labels[g] in low and labels[g] not in labels[n]:
                problems.append(f"{where}: a sentence gives the {n} family the label of the {g} family "
                                f"({fams[g].label!r}): {quote!r}")
        if f.holm is True and UNCORRECTED.search(bare):
            problems.append(f"{where}: a sentence calls the {n} family uncorrected, but its tests are Holm-corrected: "
                            f"{quote!r}")
        if f.holm is False and CORRECTED.search(bare):
            problems.append(f"{where}: a sentence calls the {n} family Holm-corrected, but it is not corrected: "
                            f"{quote!r}")
    return problems


def family_label_problems(text: str, families: Mapping[str, Family | str], where: str = "report",
                          require: bool = True) -> list[str]:
    """``families``: family -> its label (a ``Family``, or a bare label that the family's name marks in
    prose). Every label appears in ``text`` (with ``require``; a site page that never names a family need
    not), and every sentence that names a family and labels it (any family's label, 'uncorrected',
    'Holm-corrected', 'its own family') carries that family's label, no other family's, and says nothing
    about correction that contradicts it."""
    fams = _families(families)
    flat = _squash(text).lower()
    problems = [f"{where}: the {n} family's label {f.label!r} appears nowhere"
                for n, f in fams.items() if require and f.label.lower() not in flat]
    for s, named in _sentences(text, fams):
        problems += _sentence_problems(s, named, fams, where)
    return list(dict.fromkeys(problems))


# ------------------------------------------------------------------ conclusions: one sentence per contrast
# "<a> was [not ]detected to beat|be worse than <b> (`<contrast>`, <family>): <diff> points [<low>, <high>],
# Holm p <p>." (study 2's brief and page write them; ccl/report/study2.py ``conclusion``); a contrast not
# computed: "<a> against <b> (`<contrast>`, <family>): not computed ..."
CONCLUSION = re.compile(
    r"(?<![\w-])(?P<a>\w[^.:;()`|\[\]]*?) was (?P<neg>not )?detected to (?P<verb>beat|be worse than) "
    r"(?P<b>[^.:;()`|\[\]]+?) "
    r"\(`(?P<contrast>[\w-]+)`, (?P<family>[\w ]+)\): (?P<diff>[+-]?\d+(?:\.\d+)?) points "
    r"\[(?P<low>[+-]?\d+(?:\.\d+)?), (?P<high>[+-]?\d+(?:\.\d+)?)\], "
    r"Holm p (?P<p>< ?\d+(?:\.\d+)?|\d+(?:\.\d+)?(?:e[+-]?\d+)?)")
NOT_COMPUTED = re.compile(r"\(`(?P<contrast>[\w-]+)`, (?P<family>[\w ]+)\): not computed\b")


def _printed_half_unit(number: str) -> float:
    """Half a unit in the last digit ``number`` prints: how far the value it stands for may lie from it."""
    return 0.5 * 10.0 ** Decimal(number).as_tuple().exponent


def _matches(printed: str, value: float) -> bool:
    return abs(float(printed) - value) <= _printed_half_unit(printed) * (1 + 1e-9)


def _p_matches(printed: str, p: float) -> bool:
    """A printed p against the summary's: a bound ("< 0.000001") holds, a number rounds to it."""
    if printed.startswith("<"):
        return p < float(printed.lstrip("< "))
    return _matches(printed, p)


def _conclusion_row_problems(m: re.Match, row: Mapping[str, Any], alpha: float, names: Mapping[str, str],
                             where: str) -> list[str]:
    """One sentence ``m`` against its contrast's summary row."""
    c, fam = m["contrast"], m["family"]
    tag = f"{where}: the conclusion on {c} ({fam})"
    detected = row["p_holm"] <= alpha  # recomputed here, not the row's own flag: the check is on the numbers
    problems = []
    if not m["neg"] and not detected:
        problems.append(f"{tag} says detected, but its Holm p {row['p_holm']:.4g} exceeds alpha {alpha}")
    if m["neg"] and detected:
        problems.append(f"{tag} says not detected, but its Holm p {row['p_holm']:.4g} is at most alpha {alpha}")
    if not m["neg"] and detected and (m["verb"] == "beat") != (row["diff"] > 0):
        problems.append(f"{tag} says {m['a']} was detected to {m['verb']} {m['b']}, but the difference is "
                        f"{row['diff']:+.1f} points")
    want_a, want_b = names.get(row["a"], row["a"]), names.get(row["vs"], row["vs"])
    if (m["a"], m["b"]) != (want_a, want_b):
        problems.append(f"{tag} compares {m['a']!r} with {m['b']!r}, not {want_a!r} with {want_b!r}")
    for key in ("diff", "low", "high"):
        if not _matches(m[key], row[key]):
            problems.append(f"{tag} gives {key} {m[key]}, the summary {row[key]:+.4f}")
    if not _p_matches(m["p"], row["p_holm"]):
        problems.append(f"{tag} gives Holm p {m['p']}, the summary {row['p_holm']:.4g}")
    return problems


def conclusion_problems(text: str, families: Mapping[str, Mapping[str, Any]], contrasts: Sequence[str],
                        alpha: float, names: Mapping[str, str] | None = None, where: str = "brief") -> list[str]:
    """``families``: family (as the sentences name it, e.g. "primary") -> the summary's family, whose ``rows``
    hold each computed contrast (``contrast``, ``a``, ``vs``, ``diff``, ``low``, ``high``, ``p_holm``);
    ``names``: configuration -> its name in the sentences. Each contrast of each family has exactly one
    conclusion in ``text`` and it agrees with its row: "detected" exactly when Holm p <= ``alpha``, a detected
    difference in its direction ("beat" above 0, "be worse than" below), the estimate, interval and Holm p as
    the row's rounded to the digits printed; a contrast without a row is said to be not computed."""
    names, flat = names or {}, _squash(text)
    said = [(m, m["contrast"], m["family"]) for m in CONCLUSION.finditer(flat)]
    absent = [(None, m["contrast"], m["family"]) for m in NOT_COMPUTED.finditer(flat)]
    problems = [f"{where}: a conclusion names {c} ({fam}), which is not a contrast of that family"
                for _, c, fam in said + absent if fam not in families or c not in contrasts]
    for fam, family in families.items():
        rows = {r["contrast"]: r for r in family["rows"]}
        for c in contrasts:
            found = [m for m, mc, mf in said + absent if (mc, mf) == (c, fam)]
            if len(found) != 1:
                problems.append(f"{where}: {len(found)} conclusion sentences on {c} ({fam}), not one")
            elif c not in rows:
                if found[0] is not None:
                    problems.append(f"{where}: the conclusion on {c} ({fam}) gives numbers, but the summary has no "
                                    "row for it (not computed)")
            elif found[0] is None:
                problems.append(f"{where}: the conclusion on {c} ({fam}) says not computed, but the summary has it")
            else:
                problems += _conclusion_row_problems(found[0], rows[c], alpha, names, where)
    return problems
