// Replay page: a configuration's failure map (verdict counts by decision kind or gold tool) and,
// for a clicked cell or a split, its decisions with prefix, model action, gold action and verdict.
// Counts come from results/replay_summary.json (data/replay/index.js); the decisions listed for a
// cell are selected here by the same rule, so the list's length must equal the cell's count.
"use strict";
(function () {
  const CCL = window.CCL || {};
  const R = CCL.replay || { configs: {} };
  const { $, el, loadData, messageBox } = window.CCLUI;
  const state = { config: null, rows: [] };

  const loadConfig = (name) => loadData("replayRows", name, R.configs[name].file);

  // The label(s) a decision has on an axis: ccl.analysis.replay's rule.
  function labels(r, axis) {
    if (axis === "kind") return [r.kind];
    const tools = Array.from(new Set(r.ready_tools)).sort();
    return tools.length ? tools : [R.final];
  }

  function hash(params) {
    return Object.entries(params).map(([k, v]) => k + "=" + encodeURIComponent(v)).join("&");
  }

  function renderMap(axis) {
    const pane = $("r-map");
    pane.replaceChildren();
    const info = R.configs[state.config];
    const m = info && info.map && info.map["by_" + axis];
    if (!m) { pane.appendChild(el("p", "No decisions on the main splits for this configuration.")); return; }
    const t = el("table"); t.id = "heatmap";
    const head = el("tr"); head.appendChild(el("th", axis === "kind" ? "kind \\ verdict" : "tool \\ verdict"));
    for (const v of m.columns) head.appendChild(el("th", v));
    head.appendChild(el("th", "decisions"));
    t.appendChild(head);
    m.rows.forEach((label, i) => {
      const tr = el("tr"); tr.appendChild(el("th", label));
      m.columns.forEach((verdict, j) => {
        const n = m.counts[i][j];
        const td = el("td", n || "");
        td.dataset.label = label; td.dataset.verdict = verdict; td.dataset.count = n;
        if (n) {
          const share = n / m.totals[i];
          const hue = verdict === "pass" ? "22, 121, 74" : "179, 38, 30";
          td.style.background = "rgba(" + hue + ", " + (0.12 + 0.75 * share).toFixed(3) + ")";
          td.style.cursor = "pointer";
          td.title = label + " × " + verdict + ": " + n + " of " + m.totals[i] + " (" + (100 * share).toFixed(1) + "%)";
          td.addEventListener("click", () => {
            location.hash = hash({ config: state.config, axis: axis, label: label, verdict: verdict });
          });
        }
        tr.appendChild(td);
      });
      tr.appendChild(el("td", m.totals[i]));
      t.appendChild(tr);
    });
    pane.appendChild(t);
  }

  function decisionBox(r) {
    const d = el("details", null, "decision");
    d.dataset.task = r.task_id;
    const ok = r.verdict === "pass";
    d.appendChild(el("summary", (ok ? "✓ " : "✗ ") + r.task_id + " #" + r.index + " · " + r.split + " · " + r.kind +
      " · " + r.verdict + (state.rows.some((x) => x.run !== r.run) ? " · " + r.run : "")));
    d.appendChild(el("p", "verdict " + r.verdict + (r.strict ? "" : " (action not schema-exact)"), "verdict " + (ok ? "ok" : "fail")));
    d.appendChild(el("h4", "Model action"));
    d.appendChild(el("pre", r.text, "model-action"));
    d.appendChild(el("h4", "Gold action (ready gold tools: " + (r.ready_tools.join(", ") || "none: the final answer") + ")"));
    d.appendChild(el("pre", r.gold, "gold-action"));
    const link = el("a", "this configuration's whole episode on the task");
    link.href = "traces.html#" + hash({ config: r.run, task: r.task_id });
    d.appendChild(link);
    d.appendChild(el("h4", "Prefix (" + r.n + " messages)"));
    const msgs = el("div", null, "prefix");
    for (const m of ((CCL.replayPrefixes || {})[r.task_id] || []).slice(0, r.n)) msgs.appendChild(messageBox(m));
    d.appendChild(msgs);
    return d;
  }

  function renderDecisions(p) {
    const axis = p.get("axis") || $("r-axis").value, label = p.get("label"), verdict = p.get("verdict");
    const split = p.get("split");
    let rows = [], title = "";
    if (label && verdict) {
      rows = state.rows.filter((r) => r.verdict === verdict && labels(r, axis).includes(label));
      title = state.config + ": " + label + " × " + verdict;
    } else if (split) {
      rows = state.rows.filter((r) => r.split === split);
      title = state.config + ": every decision on " + split;
    }
    $("r-title").textContent = title;
    $("r-count").textContent = title ? rows.length + " decisions" : "Choose a cell of the map.";
    const list = $("r-decisions");
    list.replaceChildren();
    for (const r of rows) list.appendChild(decisionBox(r));
  }

  async function fromHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    const config = p.get("config") || $("r-config").value;
    if (!config || !R.configs[config]) return;
    if (p.get("axis") && p.get("axis") !== $("r-axis").value) $("r-axis").value = p.get("axis");
    if (config !== state.config) {
      $("r-config").value = config;
      const rows = await loadConfig(config);
      const now = new URLSearchParams(location.hash.slice(1)).get("config") || config;
      if (now !== config) return;  // another configuration was chosen while this one loaded
      state.config = config;
      state.rows = rows;
    }
    renderMap($("r-axis").value);
    renderDecisions(p);
  }

  function init() {
    const sel = $("r-config");
    if (R.missing) { $("r-note").textContent = R.missing; return; }
    for (const [name, info] of Object.entries(R.configs)) {
      const o = el("option", name + " (" + info.decisions + " graded decisions)"); o.value = name; sel.appendChild(o);
    }
    if (!sel.options.length) { $("r-note").textContent = "No replayed configuration is exported."; return; }
    $("r-note").textContent = R.note;
    sel.addEventListener("change", () => { location.hash = hash({ config: sel.value, axis: $("r-axis").value }); });
    $("r-axis").addEventListener("change", () => { location.hash = hash({ config: sel.value, axis: $("r-axis").value }); });
    window.addEventListener("hashchange", fromHash);
    if (!location.hash) location.hash = hash({ config: sel.value, axis: "kind" }); else fromHash();
  }
  init();
})();
