"""Stage analyze_replay: the replay tables (rates, paired tests, failure map, replay vs episodes) in one JSON file."""
from __future__ import annotations

from pathlib import Path

from ..analysis import AnalyzeConfig
from ..errors import InputError
from ..jsonio import write_json
from ..replay_analysis import build_configs, build_summary, episode_success, load_efficiency, load_rows


def run(cfg: AnalyzeConfig, profile: str, replay: Path, episodes: Path, out: Path) -> dict:
    """Read every graded replay run under ``replay`` and every judged run under ``episodes``; write ``out``."""
    graded, hashes = load_rows(replay, "replay_judge")
    if not graded:
        raise InputError(f"no graded replay run in {replay} (expected <name>/verdicts.jsonl.gz from the "
                         f"replay_judge stage); run the replay and replay_judge stages first")
    judged, ep_hashes = load_rows(episodes, "judge")
    try:
        configs = build_configs(graded, cfg.main_splits)
        summary = build_summary(configs, episode_success(judged, cfg.main_splits), cfg,
                                {**{f"replay/{k}": v for k, v in hashes.items()},
                                 **{f"runs/{k}": v for k, v in ep_hashes.items()}},
                                (load_efficiency(replay, "replay_judge"), load_efficiency(episodes, "judge")))
    except ValueError as e:  # runs that do not line up, or malformed rows
        raise InputError(str(e)) from None
    summary["profile"] = profile
    write_json(out, summary)
    return summary
