"""Stage analyze_replay: the replay tables (rates, paired tests, failure map, replay vs episodes) in one JSON file."""
from __future__ import annotations

from pathlib import Path

from ..analysis.replay import build_configs, build_summary, episode_success, load_efficiency, load_rows
from ..analysis.runs import AlignmentError, AnalyzeConfig
from ..artifacts.jsonio import write_json
from ..errors import InputError


def run(cfg: AnalyzeConfig, profile: str, replay: Path, episodes: Path, out: Path) -> dict:
    """Read every graded replay run under ``replay`` and every judged run under ``episodes``; write ``out``."""
    graded, hashes = load_rows(replay, "replay_judge")
    if not graded:
        raise InputError(f"no graded replay run in {replay} (expected <name>/verdicts.jsonl.gz from the "
                         f"replay_judge stage); run the replay and replay_judge stages first")
    judged, ep_hashes = load_rows(episodes, "judge")
    replay_eff, replay_eff_hashes = load_efficiency(replay, "replay_judge")
    episode_eff, episode_eff_hashes = load_efficiency(episodes, "judge")
    inputs = {**{f"replay/{k}": v for k, v in {**hashes, **replay_eff_hashes}.items()},
              **{f"episodes/{k}": v for k, v in {**ep_hashes, **episode_eff_hashes}.items()}}
    try:
        configs = build_configs(graded, cfg.main_splits)
        summary = build_summary(configs, episode_success(judged, cfg.main_splits), cfg, inputs,
                                (replay_eff, episode_eff))
    except AlignmentError as e:  # runs or configurations that answered different decisions
        raise InputError(str(e)) from None
    except KeyError as e:  # a row without a field the analysis needs
        raise InputError(f"{replay} or {episodes}: a row lacks field {e}; rerun the replay_judge and judge "
                         f"stages") from None
    summary["profile"] = profile
    write_json(out, summary)
    return summary
