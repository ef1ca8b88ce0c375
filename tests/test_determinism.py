"""Same seed, same bytes: tasks and oracle episodes are identical across processes,
whatever the interpreter's hash seed."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
import hashlib
from ccl.artifacts.jsonio import dumps
from ccl.episode.oracle import OraclePolicy
from ccl.episode.runtime import run_episode
from ccl.world.tasks import TEMPLATES, generate_task
h = hashlib.sha256()
for name in sorted(TEMPLATES):
    for seed in range(5):
        for rename in (None, "heldout"):
            task = generate_task(name, seed, "eval", rename=rename)
            h.update(dumps(task).encode())
            h.update(dumps(run_episode(task, OraclePolicy()).record()).encode())
print(h.hexdigest())
"""


def digest(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def test_tasks_and_oracle_episodes_are_byte_identical_across_processes():
    a, b = digest("1"), digest("12345")
    assert len(a) == 64 and a == b
