// Trace explorer: lists episodes per configuration and task, shows one episode in full.
// Data arrive as <script> files assigning to window.CCL (works from file:// and any static
// server). Live mode appears only when the page is served by scripts/serve.py.
"use strict";
(function () {
  const CCL = window.CCL || {};
  const { $, el, loadData, messageBox } = window.CCLUI;
  const state = { config: null, episodes: [] };

  const loadConfig = (name) => loadData("traces", name, CCL.index[name].file);

  function filtered() {
    const split = $("f-split").value, outcome = $("f-outcome").value, q = $("f-text").value.toLowerCase();
    return state.episodes.filter((e) =>
      (!split || e.split === split) &&
      (!outcome || String(Boolean(e.verdict.success)) === outcome) &&
      (!q || e.task_id.toLowerCase().includes(q) || ((CCL.tasks[e.task_id] || {}).request || "").toLowerCase().includes(q)));
  }

  function renderList() {
    const list = $("trace-list");
    list.replaceChildren();
    const eps = filtered();
    $("trace-count").textContent = eps.length + " of " + state.episodes.length + " episodes";
    for (const e of eps) {
      const li = el("li", (e.verdict.success ? "✓ " : "✗ ") + e.task_id + " — " + ((CCL.tasks[e.task_id] || {}).request || ""));
      li.className = "verdict " + (e.verdict.success ? "ok" : "fail");
      li.dataset.task = e.task_id;
      li.addEventListener("click", () => { location.hash = hashFor({ task: e.task_id }); });
      list.appendChild(li);
    }
  }

  function kvTable(obj) {
    const t = el("table");
    for (const [k, v] of Object.entries(obj)) {
      const tr = el("tr"); tr.appendChild(el("th", k));
      tr.appendChild(el("td", typeof v === "object" ? JSON.stringify(v) : v)); t.appendChild(tr);
    }
    return t;
  }

  function callsTable(calls) {
    const t = el("table");
    const head = el("tr");
    for (const h of ["turn", "tool", "args", "outcome", "observation"]) head.appendChild(el("th", h));
    t.appendChild(head);
    for (const c of calls) {
      const tr = el("tr");
      for (const k of ["turn", "tool", "args", "outcome", "observation"]) {
        const v = c[k]; tr.appendChild(el("td", typeof v === "object" && v !== null ? JSON.stringify(v) : v));
      }
      t.appendChild(tr);
    }
    return t;
  }

  // The URL hash holds every filter and the open episode, both ways: a link restores the view, and
  // each change is written back (replaceState, so filtering does not fill the history).
  const FILTERS = { split: "f-split", outcome: "f-outcome", q: "f-text" };

  function hashFor(extra) {
    const p = new URLSearchParams();
    p.set("config", $("f-config").value);
    for (const [key, id] of Object.entries(FILTERS)) if ($(id).value) p.set(key, $(id).value);
    for (const [k, v] of Object.entries(extra || {})) if (v) p.set(k, v);
    return p.toString();
  }

  function filtersChanged() {
    const task = new URLSearchParams(location.hash.slice(1)).get("task");
    history.replaceState(null, "", "#" + hashFor({ task: task }));
    renderList();
  }

  function problem(text) {
    $("trace-list").replaceChildren();
    $("trace-count").textContent = text;
  }

  function showEpisode(e) {
    const pane = $("trace-detail");
    pane.replaceChildren();
    const task = CCL.tasks[e.task_id] || {};
    pane.appendChild(el("h2", e.task_id));
    pane.appendChild(el("p", task.request || ""));
    pane.appendChild(el("p", "config " + state.config + " · split " + e.split + " · family " + e.family +
      " · role " + (task.role || "?") + " · expected status " + (task.expected_status || "?") +
      " · scripted approvals " + JSON.stringify(task.approvals || {})));
    const v = el("p", (e.verdict.success ? "SUCCESS" : "FAILURE") + " (strict) · " +
      (e.verdict.success_writeup ? "success" : "failure") + " by the write-up's definition · ended by " +
      e.end_reason + " · status " + e.status, "verdict " + (e.verdict.success ? "ok" : "fail"));
    v.id = "verdict"; pane.appendChild(v);
    if (e.verdict.reasons && e.verdict.reasons.length) pane.appendChild(el("p", "reasons (both definitions): " + e.verdict.reasons.join("; ")));
    if (e.verdict.strict_reasons && e.verdict.strict_reasons.length) pane.appendChild(el("p", "strict-only reasons: " + e.verdict.strict_reasons.join("; ")));
    pane.appendChild(el("h3", "Messages"));
    const msgs = el("div"); msgs.id = "messages";
    for (const m of e.messages) msgs.appendChild(messageBox(m));
    pane.appendChild(msgs);
    pane.appendChild(el("h3", "Calls (" + e.calls.length + ")"));
    pane.appendChild(callsTable(e.calls));
    pane.appendChild(el("h3", "Final answer"));
    pane.appendChild(el("pre", e.final === null ? "(none)" : e.final));
    pane.appendChild(el("h3", "Diagnostics"));
    const diag = Object.assign({}, e.verdict); delete diag.reasons; delete diag.strict_reasons;
    pane.appendChild(kvTable(diag));
    const top = pane.getBoundingClientRect().top;  // a click low in a long list: bring the episode into view
    if (top < 0 || top > window.innerHeight * 0.8) pane.scrollIntoView({ block: "start" });
  }

  async function fromHash() {
    const p = new URLSearchParams(location.hash.slice(1));
    const config = p.get("config") || $("f-config").value;
    if (!Object.hasOwn(CCL.index, config)) {
      problem("Unknown configuration '" + config + "' in the link; exported: " + Object.keys(CCL.index).join(", ") + ".");
      return;
    }
    for (const [key, id] of Object.entries(FILTERS)) {
      const value = p.get(key) || "";
      const box = $(id);
      if (box.tagName === "SELECT" && value && ![...box.options].some((o) => o.value === value)) {
        problem("Unknown " + key + " '" + value + "' in the link; valid: " + [...box.options].map((o) => o.value).filter(Boolean).join(", ") + ".");
        return;
      }
      box.value = value;
    }
    if (config !== state.config) {
      $("f-config").value = config;
      state.config = config;
      const episodes = await loadConfig(config);
      if (state.config !== config) return;  // another link arrived while this one loaded: it wins
      state.episodes = episodes;
    }
    renderList();
    const task = p.get("task");
    const ep = task && state.episodes.find((e) => e.task_id === task);
    if (ep) showEpisode(ep);
    else if (task) $("trace-detail").replaceChildren(el("p", "No episode of task '" + task + "' in " + config + "."));
  }

  // ---------------------------------------------------------------- live mode (scripts/serve.py)
  async function setupLive() {
    if (!location.protocol.startsWith("http")) return;
    try {
      const r = await fetch("api/health");
      if (!r.ok) return;
    } catch (err) { return; }
    $("live").hidden = false;
    $("live-run").addEventListener("click", runLive);
  }

  async function runLive() {
    const out = $("live-out");
    out.replaceChildren();
    const body = { task_id: $("live-task").value.trim(), split: $("live-split").value, model: $("live-model").value.trim() };
    const r = await fetch("api/episode", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    if (!r.ok) { out.appendChild(el("p", "error " + r.status + ": " + (await r.text()), "verdict fail")); return; }
    const reader = r.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i); buf = buf.slice(i + 1);
        if (!line.trim()) continue;
        const ev = JSON.parse(line);
        if (ev.event === "start") out.appendChild(el("p", ev.task.id + ": " + ev.task.request));
        else if (ev.event === "message") out.appendChild(messageBox(ev.message));
        else if (ev.event === "end") out.appendChild(el("p", ev.verdict.success ? "SUCCESS" : "FAILURE", "verdict " + (ev.verdict.success ? "ok" : "fail")));
        else if (ev.event === "error") out.appendChild(el("p", "error: " + ev.error.message, "verdict fail"));
      }
    }
  }

  function init() {
    const sel = $("f-config");
    for (const [name, info] of Object.entries(CCL.index || {})) {
      const o = el("option", name + " (" + info.success + "/" + info.episodes + " successful)"); o.value = name; sel.appendChild(o);
    }
    if (!sel.options.length) { $("trace-count").textContent = "No evaluated configuration is exported."; return; }
    sel.addEventListener("change", () => { location.hash = hashFor(); });
    for (const id of ["f-split", "f-outcome"]) $(id).addEventListener("change", filtersChanged);
    $("f-text").addEventListener("input", filtersChanged);
    window.addEventListener("hashchange", fromHash);
    if (!location.hash) location.hash = "config=" + encodeURIComponent(sel.value); else fromHash();
    setupLive();
  }
  init();
})();
