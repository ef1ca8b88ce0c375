""".ci/run reads the commands it runs from the README (so the two never drift): the default suite's
command after ``<!-- test-command -->`` and the slow tests' after ``<!-- slow-test-command -->``."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def command_after(marker: str, readme: Path) -> str:
    """What .ci/run's own ``command_after`` prints for ``marker``, run on ``readme`` (copied beside a copy
    of .ci/run's function so the repository's README is not the one read)."""
    script = (ROOT / ".ci" / "run").read_text()
    function = script[script.index("command_after() {"):script.index("\n}\n", script.index("command_after() {")) + 3]
    out = subprocess.run(["bash", "-c", f"{function}\ncommand_after {marker}"], cwd=readme.parent,
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_both_commands_are_read_from_the_readme():
    assert command_after("test-command", ROOT / "README.md") == \
        "bash scripts/install.sh && .venv/bin/python -m pytest -q"
    assert command_after("slow-test-command", ROOT / "README.md") == ".venv/bin/python -m pytest -q -m slow"


def _readme(tmp_path, text: str) -> Path:
    (tmp_path / "README.md").write_text(text)
    return tmp_path / "README.md"


def test_an_indented_block_is_read_and_a_missing_marker_gives_nothing(tmp_path):
    readme = _readme(tmp_path, "# x\n\n- item:\n\n  <!-- slow-test-command -->\n  ```bash\n"
                               "  run --this\n  ```\n\n<!-- test-command -->\n```\nfirst\n```\n")
    assert command_after("slow-test-command", readme) == "run --this"
    assert command_after("test-command", readme) == "first"
    assert command_after("other-command", readme) == ""


def test_anything_but_one_fenced_command_line_gives_nothing(tmp_path):
    """Prose after the marker, an empty block, a comment or two lines: nothing, so .ci/run stops with an
    error instead of running prose (which could name .ci/run itself) or passing on a comment."""
    for body in ("prose, then `bash .ci/run`\n```\nx\n```\n",  # no fence right after the marker
                 "```bash\n```\n`bash .ci/run` again\n",  # an empty block
                 "```bash\n# a comment\n```\n",
                 "```bash\none\ntwo\n```\n",
                 "```bash\n\n```\n"):
        readme = _readme(tmp_path, f"<!-- test-command -->\n\n{body}")
        assert command_after("test-command", readme) == "", body
