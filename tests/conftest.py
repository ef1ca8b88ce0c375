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
