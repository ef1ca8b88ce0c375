import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def smoke_data(tmp_path_factory):
    """The smoke profile's task splits (build_datasets run once per test session)."""
    out = tmp_path_factory.mktemp("data")
    subprocess.run([sys.executable, "scripts/build_datasets.py", "--profile", "smoke", "--out", str(out)],
                   cwd=ROOT, check=True, capture_output=True)
    return out / "tasks"


@pytest.fixture(scope="session")
def smoke_distilled(smoke_data):
    """The smoke data root with the distill stage's output in teacher/ (run once per session)."""
    root = smoke_data.parent
    subprocess.run([sys.executable, "scripts/distill.py", "--profile", "smoke", "--data", str(smoke_data),
                    "--out", str(root / "teacher")], cwd=ROOT, check=True, capture_output=True)
    return root
