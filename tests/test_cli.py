"""scripts/agent.py: one episode, a readable transcript, a JSON verdict as the last line."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def agent(*args, stdin=""):
    return subprocess.run([sys.executable, "-m", "scripts.agent", *args], cwd=ROOT, capture_output=True,
                          text=True, input=stdin)


def test_oracle_episode_prints_transcript_and_verdict():
    r = agent("--template", "ch_contact_email", "--seed", "3", "--policy", "oracle")
    assert r.returncode == 0
    lines = r.stdout.strip().splitlines()
    verdict = json.loads(lines[-1])
    assert verdict["success"] is True and verdict["task_id"] == "ch_contact_email:train:3"
    assert "[assistant]" in r.stdout and "Results:" in r.stdout


def test_terminal_approval_prompt_is_real_and_an_answer_against_the_script_is_unscored():
    r = agent("--template", "ch_contact_email", "--seed", "3", "--approve", "ask", stdin="n\n")
    verdict = json.loads(r.stdout.strip().splitlines()[-1])
    assert "Approve send_email(" in r.stdout
    # the person said no where the script approves: the oracle obeyed, and the validator cannot score that
    assert verdict["success"] is None and verdict["scored"] is False
    assert "send_email: you denied, the script approves" in verdict["note"]
    r = agent("--template", "ch_contact_email", "--seed", "3", "--approve", "ask", stdin="y\n")
    verdict = json.loads(r.stdout.strip().splitlines()[-1])
    assert verdict["success"] is True and "scored" not in verdict  # the same answer as the script


def test_list_prints_the_templates_and_the_system_prompt_is_on_request():
    r = agent("--list")
    assert r.returncode == 0 and "ch_contact_email  (chain, train split)" in r.stdout.splitlines()
    r = agent("--template", "sel_fx", "--seed", "1")
    assert "--show-system prints them" in r.stdout and "Answer every turn with exactly one JSON object" not in r.stdout
    r = agent("--template", "sel_fx", "--seed", "1", "--show-system")
    assert "Answer every turn with exactly one JSON object" in r.stdout


def test_bad_template_seed_and_model_are_clear_errors():
    r = agent("--template", "nope", "--seed", "1")
    assert r.returncode == 2 and "unknown template 'nope'" in r.stderr
    r = agent("--template", "sel_fx", "--seed", "-4")
    assert r.returncode == 2 and "seed must be a non-negative integer" in r.stderr
    r = agent("--template", "sel_fx", "--seed", "1", "--policy", "gpt-9")
    assert r.returncode == 2 and "unknown model 'gpt-9'" in r.stderr
