"""The report and the static site, built from the smoke study and loaded in headless Chromium."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from subproc import run_py

from ccl.report.artifacts import Missing, load_artifacts
from ccl.report.render import block, markdown_to_html, stale_blocks
from ccl.report.site import pipeline_commands
from ccl.report.tables import Table, TableError, check_table, fmt_cell

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
PAGES = ("index.html", "methods.html", "figures.html", "traces.html", "replay.html")


def build(root: Path, site: Path) -> None:
    run_py("-m", "scripts.build_report", "--root", str(root))
    run_py("-m", "scripts.export_web", "--root", str(root), "--out", str(site))


@pytest.fixture(scope="module")
def study_copy(smoke_study, tmp_path_factory) -> Path:
    """A private copy of the smoke study (tests here rewrite its artifacts)."""
    root = tmp_path_factory.mktemp("web") / "study"
    shutil.copytree(smoke_study, root, symlinks=True)
    return root


@pytest.fixture(scope="module")
def site(study_copy) -> Path:
    out = study_copy.parent / "site"
    build(study_copy, out)
    return out


# ------------------------------------------------------------------ unit: cells, checks, blocks
def test_cells_format_intervals_counts_and_undefined_values():
    assert fmt_cell({"mean": 12.345, "low": 4.0, "high": 20.06, "n": 32}) == "12.3 [4.0, 20.1] n=32"
    assert fmt_cell({"mean": 100.0, "low": 100.0, "high": 100.0, "n": 1}) == "100.0 [100.0, 100.0] n=1"
    assert fmt_cell({"mean": 60.5, "n": 38}) == "60.5 (n=38)"
    assert fmt_cell(None) == "—" and fmt_cell(True) == "yes" and fmt_cell(12000) == "12,000"
    assert fmt_cell([]) == "none" and fmt_cell(["torch", "mlx"]) == "torch, mlx"


def test_a_cell_without_a_value_or_a_table_without_a_source_fails_the_build():
    with pytest.raises(TableError, match=r"row 0, column 'b'"):
        check_table(Table("t", "T", ["a", "b"], [["1", None]], ["results/summary.json"]))
    with pytest.raises(TableError, match="no source"):
        check_table(Table("t", "T", ["a"], [["1"]], []))
    with pytest.raises(KeyError, match="unknown_table"):
        block("unknown_table", {})


def test_stale_blocks_are_named():
    fresh = "x\n<!-- BEGIN:a -->\n1\n<!-- END:a -->\n<!-- BEGIN:b -->\n2\n<!-- END:b -->\n"
    assert stale_blocks(fresh, fresh) == []
    assert stale_blocks(fresh.replace("2\n", "3\n"), fresh) == ["b"]


def test_pipeline_commands_expand_foreach_stages():
    cmds = dict(pipeline_commands(ROOT / "dvc.yaml", ROOT / "params.yaml"))
    assert cmds["train@B_s0"] == "python -m scripts.train B_s0"
    assert cmds["evaluate@A_base"] == "python -m scripts.evaluate --name A_base"
    assert "build_report" in cmds and "export_web" in cmds
    runs = yaml.safe_load((ROOT / "params.yaml").read_text())["runs"]  # the run matrix comes from params
    assert [c for c in cmds if c.startswith("evaluate_run@")] == [f"evaluate_run@{r}" for r in runs]


# ------------------------------------------------------------------ end to end on the smoke study
def test_report_has_every_table_from_its_artifacts(study_copy, site):
    md = (study_copy / "results" / "report.md").read_text()
    for name in ("success_by_split", "leniency", "diagnostics", "paired", "datasets", "leakage", "teacher",
                 "training", "replay_by_split", "replay_paired", "failure_worst", "replay_vs_episode"):
        assert f"<!-- BEGIN:{name} -->" in md and f"<!-- END:{name} -->" in md
    assert "### 2.1 What counts as success" in md
    lenient = next(r for r in json.loads((study_copy / "results" / "summary.json").read_text())["leniency"]["rows"]
                   if r["config"] == "oracle" and r["split"] == "all")
    assert f"| oracle | all | {fmt_cell(lenient['strict'])} | {fmt_cell(lenient['writeup'])} |" in md
    summary = json.loads((study_copy / "results" / "summary.json").read_text())
    oracle = next(r for r in summary["success_by_split"]["rows"] if r["config"] == "oracle")
    assert f"| oracle | 1 | task | {fmt_cell(oracle['eval_id'])} |" in md
    run_summary = json.loads((study_copy / "runs" / "C_s0" / "summary.json").read_text())
    assert run_summary["adapter_sha256"] in md  # the training table lists the adapter hash
    assert run_py("-m", "scripts.build_report", "--root", str(study_copy), "--check").returncode == 0


def test_a_changed_number_reaches_the_page_and_the_old_report_is_stale(study_copy, site, tmp_path):
    root = tmp_path / "study"
    shutil.copytree(study_copy, root, symlinks=True)
    path = root / "results" / "summary.json"
    summary = json.loads(path.read_text())
    row = next(r for r in summary["success_by_split"]["rows"] if r["config"] == "oracle")
    assert "87.6 [" not in (site / "index.html").read_text()
    row["eval_id"].update(mean=87.6, low=80.0, high=95.0)
    path.write_text(json.dumps(summary))
    r = run_py("-m", "scripts.build_report", "--root", str(root), "--check", ok=False)
    assert r.returncode == 1 and "success_by_split" in r.stderr
    build(root, tmp_path / "site")
    assert "87.6 [80.0, 95.0]" in (tmp_path / "site" / "index.html").read_text()
    row["eval_id"].update(low=90.0)  # a corrupt artifact: the mean outside its own interval
    path.write_text(json.dumps(summary))
    r = run_py("-m", "scripts.export_web", "--root", str(root), "--out", str(tmp_path / "site2"), ok=False)
    assert r.returncode == 2 and "oracle eval_id: mean 87.6 lies outside its interval" in r.stderr


def test_a_missing_artifact_is_named_with_its_stage(study_copy, tmp_path):
    root = tmp_path / "study"
    shutil.copytree(study_copy, root, symlinks=True)
    (root / "data" / "v1" / "teacher").unlink()  # a symlink in the study
    art = load_artifacts(root)
    assert isinstance(art.get("data/v1/teacher/summary.json"), Missing)
    build(root, tmp_path / "site")
    methods = (tmp_path / "site" / "methods.html").read_text()
    assert "data/v1/teacher/summary.json" in methods and "<code>accept_teacher</code> stage" in methods
    (root / "results" / "replay_summary.json").unlink()
    build(root, tmp_path / "site3")
    assert "`analyze_replay` stage" in (tmp_path / "site3" / "data" / "replay" / "index.js").read_text()
    assert "results/replay_summary.json" in (root / "results" / "report.md").read_text()


def test_site_has_stamp_figures_and_traces(site):
    index = (site / "index.html").read_text()
    assert 'id="stamp"' in index and "at commit" in index
    assert (site / "figures" / "success_by_split.png").stat().st_size > 1000
    assert (site / "figures" / "loss_curves.png").exists()
    traces = (site / "data" / "traces" / "index.js").read_text()
    assert '"C_s0"' in traces and '"oracle"' in traces


# ------------------------------------------------------------------ headless Chromium
@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("headless browser test needs Debian's chromium and chromium-driver "
                    "(apt-get install chromium chromium-driver; .ci/run installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--allow-file-access-from-files", f"--user-data-dir={tmp_path_factory.mktemp('chrome')}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def console_errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_every_page_renders_without_console_errors(site, browser):
    from selenium.webdriver.common.by import By

    for page in PAGES:
        browser.get((site / page).as_uri())
        assert browser.find_element(By.TAG_NAME, "h1").text, page
        assert not console_errors(browser), (page, console_errors(browser))
    browser.get((site / "index.html").as_uri())
    assert len(browser.find_elements(By.TAG_NAME, "table")) >= 8
    browser.get((site / "methods.html").as_uri())
    text = browser.find_element(By.TAG_NAME, "main").text
    assert "sha256" in text and "python -m scripts.train B_s0" in text


def test_trace_explorer_shows_an_episode_on_click(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser.get((site / "traces.html").as_uri())
    wait = WebDriverWait(browser, 20)
    Select(browser.find_element(By.ID, "f-config")).select_by_value("oracle")
    item = wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#trace-list li")))
    task_id = item.get_attribute("data-task")
    item.click()
    verdict = wait.until(EC.visibility_of_element_located((By.ID, "verdict")))
    assert verdict.text.startswith("SUCCESS")
    assert browser.find_element(By.CSS_SELECTOR, "#trace-detail h2").text == task_id
    roles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#messages .role")]
    assert roles[:2] == ["system", "user"] and "assistant" in roles
    assert not console_errors(browser), console_errors(browser)


def test_a_result_cell_opens_its_episodes(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get((site / "index.html").as_uri())
    browser.find_element(By.CSS_SELECTOR, 'a[href="traces.html#config=oracle&split=eval_ood"]').click()
    WebDriverWait(browser, 20).until(EC.presence_of_element_located((By.CSS_SELECTOR, "#trace-list li")))
    assert browser.find_element(By.ID, "f-split").get_attribute("value") == "eval_ood"
    assert browser.find_element(By.ID, "trace-count").text == "4 of 8 episodes"  # smoke: 4 tasks per split


def test_a_failure_map_cell_lists_exactly_its_decisions(site, browser):
    """The replay page's heat map comes from replay_summary.json; clicking a cell lists its decisions,
    as many as the cell counts, each with prefix, model action, gold action and an episode link."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    summary = json.loads((site.parent / "study" / "results" / "replay_summary.json").read_text())
    fm = summary["failure_map"]["configs"]["C"]["by_kind"]
    i, j = next((i, j) for i, row in enumerate(fm["counts"]) for j, n in enumerate(row) if n)
    label, verdict, count = fm["rows"][i], fm["columns"][j], fm["counts"][i][j]
    browser.get((site / "replay.html").as_uri() + "#config=C&axis=kind")
    wait = WebDriverWait(browser, 20)
    cell = wait.until(EC.element_to_be_clickable(
        (By.CSS_SELECTOR, f'#heatmap td[data-label="{label}"][data-verdict="{verdict}"]')))
    assert cell.text == str(count)
    cell.click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "r-count"), f"{count} decisions"))
    boxes = browser.find_elements(By.CSS_SELECTOR, "#r-decisions details.decision")
    assert len(boxes) == count and browser.find_element(By.ID, "r-title").text == f"C: {label} × {verdict}"
    boxes[0].find_element(By.TAG_NAME, "summary").click()
    assert boxes[0].find_element(By.CSS_SELECTOR, ".gold-action").text
    roles = [e.get_attribute("textContent") for e in boxes[0].find_elements(By.CSS_SELECTOR, ".prefix .role")]
    assert roles[:2] == ["system", "user"]
    link = boxes[0].find_element(By.TAG_NAME, "a").get_attribute("href")
    assert "traces.html#config=C_s0&task=" in link
    assert not console_errors(browser), console_errors(browser)


def test_a_worst_cell_in_the_report_opens_its_decisions(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    worst = json.loads((site.parent / "study" / "results" / "replay_summary.json").read_text())["failure_worst"]
    first = worst["rows"][0]  # the table's first row: its cell is the report's first link with a verdict
    browser.get((site / "index.html").as_uri())
    assert browser.find_elements(By.CSS_SELECTOR, 'a[href^="replay.html#config=C&split="]')  # replay_by_split cells
    link = browser.find_element(By.CSS_SELECTOR, 'a[href^="replay.html#config="][href*="&verdict="]')
    assert link.text == first["cell"]
    link.click()
    wait = WebDriverWait(browser, 20)
    wait.until(EC.text_to_be_present_in_element((By.ID, "r-count"), "decisions"))
    n = int(browser.find_element(By.ID, "r-count").text.split()[0])
    assert n == first["count"] and len(browser.find_elements(By.CSS_SELECTOR, "#r-decisions details.decision")) == n
    assert browser.find_element(By.ID, "r-title").text == f"{first['config']}: {first['cell']}"


def test_the_site_publishes_the_checked_report_and_refuses_a_stale_one(study_copy, tmp_path):
    root = tmp_path / "study"
    shutil.copytree(study_copy, root, symlinks=True)
    report = root / "results" / "report.md"
    report.write_text(report.read_text().replace("## 1. Question and hypotheses",
                                                 "## 1. Question and hypotheses (as written)"))
    run_py("-m", "scripts.export_web", "--root", str(root), "--out", str(tmp_path / "site"))
    assert "Question and hypotheses (as written)" in (tmp_path / "site" / "index.html").read_text()
    path = root / "results" / "summary.json"
    summary = json.loads(path.read_text())
    next(r for r in summary["success_by_split"]["rows"] if r["config"] == "oracle")["eval_id"].update(
        mean=87.6, low=80.0, high=95.0)
    path.write_text(json.dumps(summary))
    r = run_py("-m", "scripts.export_web", "--root", str(root), "--out", str(tmp_path / "site2"), ok=False)
    assert r.returncode == 2 and "success_by_split" in r.stderr and "run the build_report stage first" in r.stderr


def test_report_html_escapes_raw_html_and_drops_the_block_markers():
    html = markdown_to_html("a\n\n<!-- BEGIN:t -->\n| x |\n| --- |\n| <b>1</b> |\n<!-- END:t -->\n\n"
                            "no results/runs/<name>/trials.jsonl.gz\n")
    assert "results/runs/&lt;name&gt;/trials.jsonl.gz" in html and "<b>" not in html and "&lt;b&gt;1" in html
    assert "BEGIN" not in html and "<table>" in html


def test_a_missing_figures_reason_renders_code_and_escapes_html():
    from ccl.report.figures import FIGURES
    from ccl.report.site import figures_html
    first = next(iter(FIGURES))
    html = figures_html({n: ("No rows in `results/summary.json`: no eval_catalog_<k> split" if n == first else None)
                         for n in FIGURES})
    assert "No rows in <code>results/summary.json</code>: no eval_catalog_&lt;k&gt; split" in html and "`" not in html


# ------------------------------------------------------------------ phone and desktop widths
@pytest.mark.parametrize("width", [390, 1400])
def test_every_page_fits_phone_and_desktop_widths(site, browser, width, tmp_path_factory):
    """No page scrolls sideways (wide tables scroll inside themselves); the trace explorer's list and
    episode never overlap: side by side on a desktop, one above the other on a phone. Screenshots go
    to $CCL_SCREENSHOTS when set."""
    import os

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait
    shots = Path(os.environ.get("CCL_SCREENSHOTS") or tmp_path_factory.mktemp("screens"))
    shots.mkdir(parents=True, exist_ok=True)
    browser.set_window_size(width, 900)
    try:
        for page in PAGES:
            browser.get((site / page).as_uri())
            WebDriverWait(browser, 20).until(EC.presence_of_element_located((By.TAG_NAME, "h1")))
            wide = browser.execute_script("return document.documentElement.scrollWidth - "
                                          "document.documentElement.clientWidth")
            assert wide <= 0, f"{page} at {width}px is {wide}px wider than the screen"
            browser.save_screenshot(str(shots / f"{page.removesuffix('.html')}-{width}.png"))
        browser.get((site / "traces.html").as_uri() + "#config=oracle")
        WebDriverWait(browser, 20).until(EC.element_to_be_clickable((By.CSS_SELECTOR, "#trace-list li"))).click()
        WebDriverWait(browser, 20).until(EC.visibility_of_element_located((By.ID, "verdict")))
        lst, detail = browser.execute_script(
            "return ['trace-list', 'trace-detail'].map((id) => document.getElementById(id).getBoundingClientRect())"
            ".map((r) => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom}));")
        if width >= 1000:
            assert lst["right"] <= detail["left"], (lst, detail)  # side by side
        else:
            assert detail["top"] >= lst["bottom"] - 1, (lst, detail)  # stacked, no overlap
        browser.save_screenshot(str(shots / f"traces-episode-{width}.png"))
        assert not browser.execute_script("return document.documentElement.scrollWidth - "
                                          "document.documentElement.clientWidth > 0")
    finally:
        browser.set_window_size(1280, 900)


def test_the_trace_explorers_hash_holds_every_filter_both_ways(site, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select, WebDriverWait
    wait = WebDriverWait(browser, 20)
    browser.get((site / "traces.html").as_uri() + "#config=oracle&split=eval_ood&outcome=true&q=%3Aeval%3A")
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#trace-list li")))
    value = lambda i: browser.find_element(By.ID, i).get_attribute("value")  # noqa: E731
    assert (value("f-config"), value("f-split"), value("f-outcome"), value("f-text")) == ("oracle", "eval_ood", "true", ":eval:")
    Select(browser.find_element(By.ID, "f-outcome")).select_by_value("false")
    hash_ = browser.execute_script("return location.hash")
    assert all(part in hash_ for part in ("config=oracle", "split=eval_ood", "outcome=false", "q=%3Aeval%3A")), hash_
    assert browser.find_element(By.ID, "trace-count").text.startswith("0 of 8")  # the oracle fails nothing
    browser.get((site / "traces.html").as_uri() + "#config=nope")
    wait.until(lambda b: "Unknown configuration 'nope'" in b.find_element(By.ID, "trace-count").text)
    browser.get((site / "traces.html").as_uri() + "#config=oracle&outcome=maybe")
    wait.until(lambda b: "Unknown outcome 'maybe'" in b.find_element(By.ID, "trace-count").text)


def test_the_readme_brief_is_rewritten_from_the_artifacts_and_checked(study_copy, tmp_path):
    root = tmp_path / "study"
    shutil.copytree(study_copy, root, symlinks=True)
    run_py("-m", "scripts.build_report", "--root", str(root))
    readme = (root / "README.md").read_text()
    summary = json.loads((root / "results" / "summary.json").read_text())
    c = next(r for r in summary["success_by_split"]["rows"] if r["config"] == "C")["all"]
    brief = readme.split("<!-- BEGIN:results-in-brief -->\n")[1].split("<!-- END:results-in-brief -->")[0]
    assert f"C (1 seed) {c['mean']:.1f}% [{c['low']:.1f}, {c['high']:.1f}]" in brief and "results/report.md" in brief
    assert run_py("-m", "scripts.build_report", "--root", str(root), "--check").returncode == 0
    (root / "README.md").write_text(readme.replace("C (1 seed)", "C (9 seeds)"))
    r = run_py("-m", "scripts.build_report", "--root", str(root), "--check", ok=False)
    assert r.returncode == 1 and "results-in-brief" in r.stderr
    (root / "README.md").write_text("# no block\n")
    r = run_py("-m", "scripts.build_report", "--root", str(root), ok=False)
    assert r.returncode == 2 and "no results-in-brief block" in r.stderr
