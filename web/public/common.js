// Helpers shared by the site's pages (trace explorer, replay page), loaded before either.
// Data files are <script>s assigning to window.CCL (browsers refuse fetch() of local files).
"use strict";
window.CCLUI = (function () {
  const $ = (id) => document.getElementById(id);
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  };

  // window.CCL[store][name], loading ``file`` once if it is not there yet.
  function loadData(store, name, file) {
    return new Promise((resolve, reject) => {
      const have = (window.CCL || {})[store];
      if (have && have[name]) return resolve(have[name]);
      const s = document.createElement("script");
      s.src = file;
      s.onload = () => resolve(window.CCL[store][name]);
      s.onerror = () => reject(new Error("could not load " + s.src));
      document.body.appendChild(s);
    });
  }

  // One message; a system prompt is stored once by hash (data/traces/prompts.js) and folded.
  function messageBox(m) {
    const box = el("div", null, "msg " + m.role);
    box.appendChild(el("div", m.role, "role"));
    const text = m.prompt ? ((window.CCL.prompts || {})[m.prompt] || "(prompt " + m.prompt + " missing)") : m.content;
    if (m.role === "system") {
      const d = el("details"); d.appendChild(el("summary", "system prompt (" + text.length + " characters)"));
      d.appendChild(el("pre", text)); box.appendChild(d);
    } else {
      box.appendChild(el("pre", text));
    }
    return box;
  }

  return { $, el, loadData, messageBox };
})();
