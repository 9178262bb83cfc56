/**
 * The toolbar: the measure, K (slider and box), runs A and B with the swap, and the report
 * button with its link; ``renderToolbar`` draws the traits into them.
 */

import { h, put, safeUrl } from "./dom.js";

/**
 * Build the toolbar of view ``v`` (adds ``toolbar``, ``renderToolbar``, ``renderReport`` and
 * ``setReportHtml`` to it).
 * @param {any} v
 */
export function makeToolbar(v) {
  const { st, get, meta, listen, setLocal, save, saveK, request, root, cleanups } = v;
  // toolbar
  const measureSel = /** @type {HTMLSelectElement} */ (h("select", {
    "data-role": "measure", "aria-label": "measure", class: "rr-select",
  }));
  const kSlider = /** @type {HTMLInputElement} */ (h("input", {
    type: "range", min: "1", step: "1", "data-role": "k-slider", "aria-label": "cut-off K",
    class: "rr-k-slider",
  }));
  const kInput = /** @type {HTMLInputElement} */ (h("input", {
    type: "number", min: "1", step: "1", "data-role": "k-input", "aria-label": "cut-off K",
    class: "rr-k-input", inputmode: "numeric",
  }));
  const kMax = h("span", { class: "rr-muted rr-kmax" });
  const runASel = /** @type {HTMLSelectElement} */ (h("select", {
    "data-role": "run-a", "aria-label": "run A", class: "rr-select",
  }));
  const runBSel = /** @type {HTMLSelectElement} */ (h("select", {
    "data-role": "run-b", "aria-label": "run B", class: "rr-select",
  }));
  const swapBtn = /** @type {HTMLButtonElement} */ (h("button", {
    type: "button", "data-role": "swap", "aria-label": "swap runs A and B", class: "rr-btn rr-swap",
    title: "swap runs A and B", text: "\u21c4",
  }));
  const runsGroup = h("div", { class: "rr-group rr-runs" },
    h("label", { class: "rr-field" }, h("span", { class: "rr-lab", text: "A" }), runASel),
    swapBtn,
    h("label", { class: "rr-field" }, h("span", { class: "rr-lab", text: "B" }), runBSel));
  const reportBtn = /** @type {HTMLButtonElement} */ (h("button", {
    type: "button", "data-role": "report-button", class: "rr-btn rr-report-btn",
    text: "Write HTML report",
  }));
  const reportLink = /** @type {HTMLAnchorElement} */ (h("a", {
    "data-role": "report-link", class: "rr-report-link", target: "_blank",
    rel: "noopener noreferrer",
  }));
  reportLink.hidden = true;
  /** the written path, as text beside the link */
  const reportPath = h("span", { "data-role": "report-path", class: "rr-report-path" });
  reportPath.hidden = true;
  /** the report as a blob: URL (opens in any host: JupyterLab, Notebook, VS Code, Colab) */
  const blob = { url: "", path: "" };
  function setReportHtml(/** @type {any} */ msg) {
    if (typeof msg.html !== "string" || msg.state !== "done") return;
    if (blob.url) URL.revokeObjectURL(blob.url);
    blob.url = URL.createObjectURL(new Blob([msg.html], { type: "text/html" }));
    blob.path = typeof msg.path === "string" ? msg.path : "";
  }
  const toolbar = h("div", { class: "rr-toolbar", role: "toolbar", "aria-label": "explorer controls" },
    h("label", { class: "rr-field" }, h("span", { class: "rr-lab", text: "Measure" }), measureSel),
    h("div", { class: "rr-group rr-k" },
      h("label", { class: "rr-field" }, h("span", { class: "rr-lab", text: "K" }), kSlider),
      kInput, kMax),
    runsGroup,
    h("div", { class: "rr-spacer" }),
    h("div", { class: "rr-group rr-report" }, reportLink, reportPath, reportBtn));


  // ---- measure, K, runs --------------------------------------------------------------------
  listen(measureSel, "change", () => { setLocal("measure", measureSel.value); save(); });
  /** @param {number} v */
  function clampK(v) {
    const kmax = Math.max(1, meta().k_max | 0 || 1);
    return Math.max(1, Math.min(kmax, Math.round(v) || 1));
  }
  listen(kSlider, "input", () => {
    const k = clampK(Number(kSlider.value));
    kInput.value = String(k);
    setLocal("k", k);
    saveK();
  });
  const kFromInput = () => {
    if (kInput.value === "") return;
    const k = clampK(Number(kInput.value));
    kInput.value = String(k);
    kSlider.value = String(k);
    if (k !== get("k")) { setLocal("k", k); saveK.cancel(); save(); }
  };
  listen(kInput, "change", kFromInput);
  listen(kInput, "keydown", (ev) => { if (/** @type {KeyboardEvent} */ (ev).key === "Enter") kFromInput(); });

  /**
   * @param {number} a
   * @param {number} b
   */
  function setRuns(a, b) {
    if (b >= 0 && a === b) {
      st.localError = "run A and run B must differ";
      runASel.value = String(get("run_a"));
      runBSel.value = String(get("run_b"));
      v.renderError();
      return;
    }
    st.localError = "";
    if (a !== get("run_a")) setLocal("run_a", a);
    if (b !== get("run_b")) setLocal("run_b", b);
    save();
  }
  listen(runASel, "change", () => setRuns(Number(runASel.value), get("run_b")));
  listen(runBSel, "change", () => setRuns(get("run_a"), Number(runBSel.value)));
  listen(swapBtn, "click", () => {
    const a = get("run_a"); const b = get("run_b");
    if (b < 0) return;
    setRuns(b, a);
  });

  // ---- report ---------------------------------------------------------------------------
  listen(reportBtn, "click", () => {
    st.reportBusy = true;
    st.localError = "";
    renderReport();
    request({ type: "report" });
  });

  function renderToolbar() {
    const m = meta();
    const k = get("k") | 0;
    const fams = m.families || [];
    const sig = fams.map((f) => f.id).join("\u0000");
    if (measureSel.dataset.sig !== sig) {
      put(measureSel, ...fams.map((f) => h("option", { value: f.id })));
      measureSel.dataset.sig = sig;
    }
    fams.forEach((f, i) => {
      const opt = /** @type {HTMLOptionElement} */ (measureSel.options[i]);
      opt.textContent = f.cutoff === false ? f.label : `${f.label}@${k}`;
      opt.title = f.title || f.label;
    });
    measureSel.value = get("measure");
    const cur = fams.find((f) => f.id === get("measure"));
    measureSel.title = cur ? cur.title || cur.label : "";
    const kmax = Math.max(1, m.k_max | 0);
    kSlider.max = String(kmax); kInput.max = String(kmax);
    kSlider.value = String(k);
    if (!kInput.matches(":focus")) kInput.value = String(k);
    kMax.textContent = `of ${kmax}`;
    // runs
    const runs = m.runs || [];
    const rsig = runs.join("\u0000");
    if (runASel.dataset.sig !== rsig) {
      put(runASel, ...runs.map((r, i) => h("option", { value: String(i), text: r })));
      put(runBSel, h("option", { value: "-1", text: "none" }),
        ...runs.map((r, i) => h("option", { value: String(i), text: r })));
      runASel.dataset.sig = rsig;
    }
    runASel.value = String(get("run_a"));
    runBSel.value = String(get("run_b"));
    runASel.title = runs[get("run_a")] || "";
    runBSel.title = runs[get("run_b")] || "";
    runsGroup.hidden = runs.length < 2;
    swapBtn.disabled = get("run_b") < 0;
    root.style.setProperty("--rrx-run-a", `var(--rr-run-${Math.max(0, get("run_a")) % 7})`);
    root.style.setProperty("--rrx-run-b", `var(--rr-run-${Math.max(0, get("run_b")) % 7})`);
    v.renderListControls();
  }

  function renderReport() {
    const r = get("report") || {};
    const busy = st.reportBusy || r.state === "busy";
    reportBtn.disabled = busy;
    reportBtn.setAttribute("aria-busy", busy ? "true" : "false");
    reportBtn.textContent = busy ? "Writing report\u2026" : "Write HTML report";
    // the blob of the report just written; else a file:// URL (a relative files/ link would
    // open the host's own page in JupyterLab: no link then, the path stays as text)
    const own = blob.url && blob.path === r.path ? blob.url : null;
    const url = own || (typeof r.url === "string" && r.url.startsWith("file:") ? safeUrl(r.url) : null);
    if (!busy && r.state === "done" && (url || r.path)) {
      reportLink.hidden = !url;
      if (url) reportLink.setAttribute("href", url); else reportLink.removeAttribute("href");
      // opened in a new tab, never downloaded: the file is written already, its path beside
      reportLink.removeAttribute("download");
      reportLink.textContent = "Open report";
      reportLink.title = r.path || "";
      reportPath.hidden = !r.path;
      reportPath.textContent = r.path ? `written to ${r.path}` : "";
      reportPath.title = r.path || "";
    } else if (busy || r.state !== "done") {
      reportLink.hidden = true;
      reportPath.hidden = true;
    }
  }
  cleanups.push(() => { if (blob.url) URL.revokeObjectURL(blob.url); blob.url = ""; });
  Object.assign(v, { toolbar, renderToolbar, renderReport, setReportHtml });
}
