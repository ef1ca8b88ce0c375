"""A study design declared in a file of its own rather than in ``ccl.vocabulary`` and params.yaml.

Studies 1 and 2 name their primary families in ``ccl.vocabulary`` (``PRIMARY_FAMILIES``) and their runs in
their parameters files. Study 3 (docs/preregistration-3.md) declares its design in ``study3/design.yaml``:
which runs make each configuration (its seeds), the primary family and the secondary family. Putting them in
``ccl.vocabulary`` or in ``ccl.config``'s sections would change a dependency of every published stage of
the earlier studies; the pre-registration quotes this file, and the power and analysis stages read it.

    configs:              # configuration -> its runs, one per training seed; each run's adapter folder
      C_plus: {C_plus_s0: study3/runs/C_plus_s0, C_plus_s1: study3/runs/C_plus_s1}
    primary_contrasts:    # Holm over these
      - {name: C_dagger_vs_C_plus, a: C_dagger, comparators: [C_plus]}
    secondary_contrasts:  # Holm over these, a family of their own
      - {name: C_plus_vs_C, a: C_plus, comparators: [C]}
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..config import read_yaml
from ..errors import InputError
from ..vocabulary import Contrast, parse_run_name


@dataclass(frozen=True)
class StudyDesign:
    """The declared design: configurations with their runs (run -> adapter folder), and the two families."""

    configs: Mapping[str, Mapping[str, str]]
    primary: tuple[Contrast, ...]
    secondary: tuple[Contrast, ...]

    def seeds(self, config: str) -> int:
        return len(self.configs[config])

    @property
    def runs(self) -> dict[str, str]:
        """Every run -> its adapter folder, in the file's order."""
        return {run: adapter for runs in self.configs.values() for run, adapter in runs.items()}


def contrasts(entries: Any, where: str) -> tuple[Contrast, ...]:
    """The contrasts of a list of ``{name, a, comparators}``, in order; an InputError naming the entry otherwise."""
    if not isinstance(entries, Sequence) or isinstance(entries, str) or not entries:
        raise InputError(f"{where}: expected a non-empty list of {{name, a, comparators}}")
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping) or set(entry) != {"name", "a", "comparators"}:
            raise InputError(f"{where}[{i}]: must have exactly the keys name, a, comparators; got {entry!r}")
        comparators = entry["comparators"]
        if (not isinstance(comparators, Sequence) or isinstance(comparators, str) or not comparators
                or not all(isinstance(c, str) and c for c in comparators)):
            raise InputError(f"{where}[{i}].comparators: expected a non-empty list of names")
        if not isinstance(entry["name"], str) or not isinstance(entry["a"], str) or entry["a"] in comparators:
            raise InputError(f"{where}[{i}]: name and a must be strings, a not among its comparators")
        out.append(Contrast(entry["name"], entry["a"], tuple(comparators)))
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise InputError(f"{where}: a contrast name repeats: {names}")
    return tuple(out)


def _configs(value: Any, where: str) -> dict[str, dict[str, str]]:
    if not isinstance(value, Mapping) or not value:
        raise InputError(f"{where}: expected a mapping configuration -> {{run: adapter folder}}")
    out = {}
    for config, runs in value.items():
        # an empty mapping is a configuration whose every run was excluded (docs/preregistration-3.md): its
        # contrasts enter Holm with p = 1
        if not isinstance(runs, Mapping):
            raise InputError(f"{where}.{config}: expected a mapping run -> adapter folder ({{}} when every run was excluded)")
        for run, adapter in runs.items():
            of, seed = parse_run_name(str(run))
            if of != config or seed is None:
                raise InputError(f"{where}.{config}: run {run!r} is not {config}_s<seed>")
            if not isinstance(adapter, str) or not adapter:
                raise InputError(f"{where}.{config}.{run}: expected an adapter folder, got {adapter!r}")
        out[str(config)] = {str(r): str(a) for r, a in runs.items()}
    return out


def read_design(path: Path) -> StudyDesign:
    """The design file at ``path``; an InputError naming the key and the file when it is malformed, or when a
    contrast names a configuration the file does not list."""
    values = read_yaml(path, InputError)
    if not isinstance(values, Mapping) or set(values) != {"configs", "primary_contrasts", "secondary_contrasts"}:
        raise InputError(f"{path}: expected exactly the keys configs, primary_contrasts, secondary_contrasts")
    configs = _configs(values["configs"], f"{path}: configs")
    design = StudyDesign(configs, contrasts(values["primary_contrasts"], f"{path}: primary_contrasts"),
                         contrasts(values["secondary_contrasts"], f"{path}: secondary_contrasts"))
    for c in (*design.primary, *design.secondary):
        unknown = [n for n in (c.a, *c.comparators) if n not in configs]
        if unknown:
            raise InputError(f"{path}: contrast {c.name} names {', '.join(unknown)}, not among configs")
    return design
