/**
 * ragreport explorer: the anywidget front end. This file is generated from the ES modules in
 * ``src/`` by ``scripts/bundle_explorer.py`` (one file: anywidget loads a single module);
 * edit the modules, then run the script. A test checks that this file matches them.
 *
 * Python (``ragreport/explorer/widget.py``) owns the state and the analysis and syncs small
 * traits (``meta``, ``head``, ``ranking``, ``panel``, ``summary``, ``compare``, ...); this
 * module renders them, virtualises the query list (windows fetched with ``rows`` messages,
 * cached per ``order_version``) and the ranking, and handles pure view changes locally before
 * saving the trait that Python validates. Every user string is put in the DOM with
 * ``textContent`` / attributes, never parsed as HTML.
 *
 * Layout: a toolbar, a summary line, then three columns (query list | ranking | per-query
 * panel) that each scroll on their own; below 760 px of width they stack.
 */

import { JUDGE_WAIT, NARROW, NO_KERNEL, STALE_REQUEST } from "./constants.js";
import { h, put } from "./dom.js";
import { makeList } from "./list.js";
import { makePanel } from "./panel.js";
import { makeRanking } from "./ranking.js";
import { makeSummary } from "./summary.js";
import { makeToolbar } from "./toolbar.js";
import { makeView } from "./view.js";

/**
 * Render the explorer into ``el``; returns the cleanup anywidget calls on removal.
 * @param {{model: Model, el: HTMLElement}} ctx
 */
function render({ model, el }) {
  const v = makeView(model, el);
  v.schedule = schedule;
  const { st, get, root, cleanups, onModel, listen, saveSelection, saveK } = v;
  makeToolbar(v);
  makeSummary(v);
  makeList(v);
  makeRanking(v);
  makePanel(v);
  const body = h("div", { class: "rr-body" }, v.listCol, v.rankCol, v.panelCol);
  root.append(v.toolbar, v.summaryEl, v.compareEl, v.errorEl, body);
  put(el, root);

  // ---- keyboard isolation -------------------------------------------------------------------
  // Jupyter Notebook 7 runs its shortcuts in the document's capture phase, before any listener
  // here sees the key. Lumino skips a shortcut only when an element from the key's target up
  // to the one matching the shortcut's selector carries data-lm-suppress-shortcuts, and the
  // notebook's selectors (".jp-Notebook.jp-mod-commandMode :focus") match the focused element
  // itself: so each element of the widget carries it once it takes focus.
  listen(root, "focusin", (ev) => {
    const t = ev.target;
    if (t instanceof Element && !t.hasAttribute("data-lm-suppress-shortcuts")) {
      t.setAttribute("data-lm-suppress-shortcuts", "true");
    }
  });
  // JupyterLab runs them in the bubbling phase: stopped here
  listen(root, "keydown", (ev) => {
    // keep JupyterLab's command-mode shortcuts (a, b, dd, arrows, j, k) out of the widget
    if (/** @type {KeyboardEvent} */ (ev).key !== "Escape") ev.stopPropagation();
    else if (st.passage && !v.passageEl.hidden) {
      // Escape closes the open passage (and stays here); without one it reaches JupyterLab
      v.closePassage();
      ev.stopPropagation();
      ev.preventDefault();
    }
  });

  // ---- model events ---------------------------------------------------------------------
  let queued = false;
  const dirty = new Set();
  function flush() {
    queued = false;
    const parts = new Set(dirty);
    dirty.clear();
    if (parts.has("order")) v.syncOrder();
    if (st.selFromModel || st.versionChanged) {
      const q = get("selected") || "";
      const pos = get("selected_pos");
      if (st.selFromModel || !saveSelection.pending()) {
        st.selQid = q;
        st.selPos = typeof pos === "number" ? pos : -1;
        st.wantPos = null;
        if (st.selFromModel || parts.has("order")) v.listReveal(st.selPos);
      }
      st.selFromModel = false;
      st.versionChanged = false;
    }
    if (parts.has("toolbar")) v.renderToolbar();
    if (parts.has("order") || parts.has("toolbar")) v.renderList();
    if (parts.has("summary")) v.renderSummary();
    if (parts.has("ranking") || parts.has("k")) v.renderRanking();
    if (parts.has("panel") || parts.has("k")) { v.renderPanel(); v.renderRankingHead(); }
    else if (parts.has("order") && !parts.has("ranking")) v.renderRankingHead();
    if (parts.has("error")) v.renderError();
    if (parts.has("report")) v.renderReport();
  }
  /** @param {...string} parts */
  function schedule(...parts) {
    for (const p of parts) dirty.add(p);
    if (!queued) { queued = true; queueMicrotask(flush); }
  }

  const traitParts = {
    meta: ["toolbar", "order", "summary", "ranking", "panel"],
    measure: ["toolbar"], k: ["toolbar", "k"],
    run_a: ["toolbar", "ranking", "panel", "summary"], run_b: ["toolbar", "ranking", "panel", "summary", "order"],
    sort: ["toolbar"], filter_text: ["toolbar", "order"], category: ["toolbar", "order"],
    slice: ["toolbar", "order"],
    fails_only: ["toolbar", "order"],
    order_version: ["order"], n_visible: ["order", "summary"], head: ["order", "toolbar"], selected_pos: ["order"],
    summary: ["summary"], compare: ["summary"], ranking: ["ranking"], panel: ["panel"],
    error: ["error"], report: ["report"],
  };
  // the traits that say what is viewed; the others (summary, compare, panel, ...) are results,
  // some of them sent late by the background statistics
  const VIEW_INPUTS = new Set(["measure", "k", "run_a", "run_b", "sort", "filter_text", "category",
    "slice", "fails_only"]);
  for (const [name, traitPart] of Object.entries(traitParts)) {
    onModel(`change:${name}`, () => {
      let parts = traitPart;
      if (name === "error") { st.dismissed = ""; if (!st.local && get("error")) st.localError = ""; }
      else if (!st.local && VIEW_INPUTS.has(name) && !get("error") && st.localError) {
        // Python changed what is viewed (not an error, not a late result of the background
        // statistics for the same view): the earlier error no longer applies
        st.localError = "";
        parts = [...parts, "error"];
      }
      if (name === "report" && !st.local) {
        st.reportBusy = false;
        const r = get("report") || {};
        if (r.state === "error") { st.localError = r.message || "the report could not be written"; parts = [...parts, "error"]; }
      }
      if (name === "run_a" || name === "run_b" || name === "measure") {
        st.localError = "";
        parts = [...parts, "error"]; // a refused A = B stops showing once the runs change
      }
      schedule(...parts);
    });
  }
  onModel("change:selected", () => {
    if (st.local) return;
    // the kernel's echo of an older selection while a newer one waits to be sent (a key
    // held down): keep the newer one; it goes out with the pending save (as jupyter-scatter
    // skips the echo of a selection it made itself). Python's own selections still apply.
    if (saveSelection.pending() && get("selected") !== st.selQid) return;
    st.selFromModel = true; schedule("order", "ranking");
  });
  /** The judgment of request ``id`` is answered (or given up): the next one can go. @param {string} id */
  function judged(id) {
    if (st.judging && st.judging.id === id) st.judging = null;
    v.gridA.renderWindow(); v.gridB.renderWindow(); v.renderPassage();
  }
  onModel("msg:custom", (/** @type {any} */ msg) => {
    if (msg && typeof msg === "object" && msg.type === "report" && msg.id === null) {
      v.setReportHtml(msg); // written from Python (Explorer.write_report): the same link
      v.renderReport();
      return;
    }
    if (!msg || typeof msg !== "object" || typeof msg.id !== "string") return;
    const req = st.pending.get(msg.id);
    if (!req) return; // another view's request, or one already dropped
    st.pending.delete(msg.id);
    if (msg.type === "rows") {
      st.kernelSilent = false;
      if (msg.order_version !== get("order_version") || msg.order_version !== st.version) return; // stale
      v.storeRows(msg.rows ? { ...msg.rows, start: msg.start } : msg.rows);
      v.renderList();
      if (st.wantPos !== null) v.renderRankingHead();
    } else if (msg.type === "passage") {
      if (st.passage && st.passage.doc_id === msg.doc_id) {
        st.passage.text = typeof msg.text === "string" ? msg.text : "";
        v.renderPassage();
      }
    } else if (msg.type === "judge") {
      judged(msg.id); // the view evaluated again came before this reply
    } else if (msg.type === "error") {
      if (req.type === "report") st.reportBusy = false;
      if (req.type === "judge") judged(msg.id);
      st.localError = String(msg.message || "request failed");
      v.renderError();
      v.renderReport();
    } else if (msg.type === "report") {
      st.reportBusy = false;
      v.setReportHtml(msg);
      v.renderReport();
    }
  });

  // ---- size: stacked layout when narrow, re-render the visible rows ---------------------
  const ro = new ResizeObserver((entries) => {
    for (const entry of entries) {
      const height = entry.contentRect.height;
      if (entry.target === v.listbox) {
        v.listVp.h = height;
        // a narrow list leaves the failure-kind tags out (the value and the delta stay)
        if (entry.contentRect.width > 0) v.listbox.classList.toggle("rr-tight", entry.contentRect.width < 270);
      }
      else if (entry.target === v.gridA.scroller) { v.gridA.vp.h = height; v.gridA.vp.w = entry.contentRect.width; }
      else if (entry.target === v.gridB.scroller) { v.gridB.vp.h = height; v.gridB.vp.w = entry.contentRect.width; }
      else if (entry.target === root) {
        const w = entry.contentRect.width;
        if (w === 0) continue;
        const narrow = w <= NARROW;
        if (narrow !== st.narrow) { st.narrow = narrow; root.classList.toggle("rr-narrow", narrow); }
      }
    }
    v.renderList();
    v.gridA.renderWindow();
    v.gridB.renderWindow();
  });
  for (const target of [root, v.listbox, v.gridA.scroller, v.gridB.scroller]) ro.observe(target);
  cleanups.push(() => ro.disconnect());
  // a window request that is never answered: say so instead of showing dots forever
  // (a notebook reopened without its kernel shows the saved traits; requests go nowhere)
  const watchdog = setInterval(() => {
    const now = performance.now();
    let silent = false;
    for (const [id, p] of st.pending) {
      if (now - p.t <= STALE_REQUEST) continue;
      if (p.type === "judge") {
        if (now - p.t <= JUDGE_WAIT) continue;
        st.pending.delete(id);
        st.localError = NO_KERNEL;
        judged(id);
        v.renderError();
      } else if (p.type === "rows") silent = true;
      else if (p.type === "report" && (get("report") || {}).state !== "busy") {
        st.pending.delete(id);
        st.reportBusy = false;
        st.localError = NO_KERNEL;
        v.renderReport();
        v.renderError();
      } else if (p.type === "passage") {
        st.pending.delete(id);
        if (st.passage && st.passage.text === null) { st.passage.text = NO_KERNEL; v.renderPassage(); }
      }
    }
    if (silent !== st.kernelSilent) { st.kernelSilent = silent; v.renderList(); }
    // a selected query whose ranking never came: say so instead of "loading…" forever
    if (st.staleQid && !st.rankSilent && now - st.staleT > STALE_REQUEST) {
      st.rankSilent = true;
      v.renderRankingHead();
    }
  }, 1000);
  cleanups.push(() => clearInterval(watchdog));
  cleanups.push(() => { saveSelection.cancel(); saveK.cancel(); v.filterLater.cancel(); clearTimeout(st.edgeTimer); });

  // the static snapshot shown as the output before this view: the live view replaces it
  // (JupyterLab's page hides it by CSS; this covers the other hosts)
  const snapId = get("snapshot_id");
  if (snapId && typeof document !== "undefined") {
    const snaps = [...document.querySelectorAll(`[data-rr-snapshot="${CSS.escape(snapId)}"]`)];
    for (const s of snaps) s.style.display = "none";
    cleanups.push(() => { for (const s of snaps) s.style.display = ""; });
  }

  // ---- first render ---------------------------------------------------------------------
  st.narrow = (el.clientWidth || 1000) <= NARROW;
  root.classList.toggle("rr-narrow", st.narrow);
  v.syncOrder();
  st.selQid = get("selected") || "";
  st.selPos = typeof get("selected_pos") === "number" ? get("selected_pos") : -1;
  st.versionChanged = false;
  v.renderToolbar();
  v.renderSummary();
  v.renderList();
  v.listReveal(st.selPos);
  v.renderList();
  v.renderRanking();
  v.renderPanel();
  v.renderError();
  v.renderReport();

  return () => {
    for (const fn of cleanups.splice(0)) { try { fn(); } catch (_) { /* already gone */ } }
    root.remove();
  };
}

export default { render };
