"""The files DVC's metrics and plots commands read: copied from the analysis and the step logs."""
import json

from ccl.artifacts import dvc_views
from ccl.artifacts.jsonio import write_json, write_jsonl


def cell(mean, n=32, low=0.0, high=100.0):
    return {"mean": mean, "low": low, "high": high, "n": n}


SUMMARY = {
    "success_by_split": {"rows": [
        {"config": "A_base", "seeds": 1, "ci": "task", "eval_id": cell(0.0), "eval_ood": cell(3.125), "all": cell(1.5625, 64)},
        {"config": "B", "seeds": 3, "ci": "hierarchical", "eval_id": cell(50.0), "eval_ood": cell(25.0),
         "all": cell(37.5, 64, 30.0, 45.0)}]},
    "leniency": {"rows": [
        {"config": "B", "split": "eval_id", "writeup": cell(60.0)},
        {"config": "B", "split": "all", "writeup": cell(44.0, 64)},
        {"config": "A_base", "split": "all", "writeup": cell(2.0, 64)}]},
}


def test_metrics_copy_the_strict_cells_and_the_writeups_pooled_cell():
    assert dvc_views.metrics(SUMMARY) == {
        "A_base": {"eval_id": 0.0, "eval_ood": 3.125, "all": 1.5625, "all_writeup": 2.0},
        "B": {"eval_id": 50.0, "eval_ood": 25.0, "all": 37.5, "all_writeup": 44.0}}


def test_written_views_replace_stale_files(tmp_path):
    summary, runs = tmp_path / "summary.json", tmp_path / "runs"
    write_json(summary, SUMMARY)
    write_jsonl(runs / "B_s0" / "train_log.jsonl", [{"step": 0, "loss": 0.9, "lr": 1e-3}, {"step": 1, "loss": 0.5}])
    metrics, plots = tmp_path / "results" / "metrics", tmp_path / "results" / "plots"
    write_json(metrics / "gone.json", {"all": 1.0})  # a configuration no longer analysed
    assert dvc_views.write(summary, runs, metrics, plots) == {"configs": 2, "runs": 1}
    assert sorted(p.name for p in metrics.iterdir()) == ["A_base.json", "B.json"]
    assert json.loads((metrics / "B.json").read_text())["all"] == 37.5
    assert (plots / "train_loss" / "B_s0.csv").read_text() == "step,loss\n0,0.9\n1,0.5\n"
    assert (plots / "strict_success" / "all.csv").read_text() == (
        "config,strict_success_pct,low,high,n\nA_base,1.5625,0.0,100.0,64\nB,37.5,30.0,45.0,64\n")
    assert sorted(p.name for p in (plots / "strict_success").iterdir()) == ["all.csv", "eval_id.csv", "eval_ood.csv"]
