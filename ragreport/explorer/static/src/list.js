/**
 * The query list: its controls (filter, category, slice, sort, "fails a target"), the
 * virtualised listbox (rows from the view's windows), keyboard and mouse selection.
 */

import { FILTER_WAIT, LIST_ROW, LIST_ROW_SHORT, OVERSCAN, SHORT_KINDS } from "./constants.js";
import { h, put, throttle } from "./dom.js";
import { count, deltaClass, fmt, signed } from "./format.js";

/**
 * Build the query list of view ``v`` (adds ``listCol``, ``listbox``, ``listVp``,
 * ``renderList``, ``listReveal``, ``renderListControls`` and ``filterLater`` to it).
 * @param {any} v
 */
export function makeList(v) {
  const { st, uid, get, meta, listen, setLocal, clearLocalError, save, saveSelection, rowAt,
    ensureRows } = v;
  // query list column
  const filterInput = /** @type {HTMLInputElement} */ (h("input", {
    type: "search", "data-role": "filter", class: "rr-filter", placeholder: "filter: query id or text",
    "aria-label": "filter queries by id or text", autocomplete: "off", spellcheck: "false",
  }));
  const categorySel = /** @type {HTMLSelectElement} */ (h("select", {
    "data-role": "category", "aria-label": "category", class: "rr-select",
  }));
  const sortSel = /** @type {HTMLSelectElement} */ (h("select", {
    "data-role": "sort", "aria-label": "sort", class: "rr-select",
  }));
  // the query slices (slices=, --slices): shown only when there are some
  const sliceSel = /** @type {HTMLSelectElement} */ (h("select", {
    "data-role": "slice", "aria-label": "slice", class: "rr-select",
  }));
  sliceSel.hidden = true;
  const failsBox = /** @type {HTMLInputElement} */ (h("input", {
    type: "checkbox", "data-role": "fails-only",
  }));
  const listCount = h("div", { class: "rr-count rr-muted", "aria-live": "polite" });
  const listbox = h("div", {
    class: "rr-listbox", role: "listbox", tabindex: "0", "data-role": "query-list",
    "aria-label": "queries",
  });
  const listSpacer = h("div", { class: "rr-spacer-v" });
  listbox.append(listSpacer);
  const emptyText = h("span");
  const emptyEl = h("div", { class: "rr-empty", "data-role": "empty", role: "status" }, emptyText,
    h("button", {
      type: "button", class: "rr-btn rr-btn-small", text: "Clear filters",
      onclick: () => clearFilters(),
    }));
  emptyEl.hidden = true;
  const listCol = h("section", { class: "rr-col rr-list-col", "aria-label": "query list" },
    h("div", { class: "rr-list-controls" },
      filterInput,
      h("div", { class: "rr-row" }, categorySel, sortSel),
      sliceSel,
      h("label", { class: "rr-check" }, failsBox, h("span", { text: "fails a target" }))),
    listCount, listbox, emptyEl);

  const rowHeight = () => (meta().has_queries ? LIST_ROW : LIST_ROW_SHORT);
  // the list's scroll position and height (updated on scroll and resize, read when drawing)
  const listVp = { top: 0, h: 0 };

  /** Note the first row on screen in ``view_top`` (sent with the next change, not alone). */
  function noteViewTop() {
    const row = Math.max(0, Math.floor(listVp.top / rowHeight()));
    if (get("view_top") !== row) setLocal("view_top", row);
  }

  /** A new filter, category or sort shows its list from the top. */
  function listToTop() {
    listbox.scrollTop = 0;
    listVp.top = 0;
    noteViewTop();
  }

  function renderList() {
    const n = get("n_visible") | 0;
    const rh = rowHeight();
    listbox.classList.toggle("rr-short", rh === LIST_ROW_SHORT);
    listSpacer.style.height = `${n * rh}px`;
    // a shorter list clamps the scroll position now (the browser's scroll event comes later)
    const maxTop = Math.max(0, n * rh - (listVp.h || 480));
    if (listVp.top > maxTop) { listVp.top = maxTop; noteViewTop(); }
    const viewTop = listVp.top;
    const viewH = listVp.h || 480;
    const first = Math.max(0, Math.floor(viewTop / rh) - OVERSCAN);
    const last = Math.min(n - 1, Math.ceil((viewTop + viewH) / rh) + OVERSCAN);
    ensureRows(first, last);
    const m = meta();
    const kinds = new Map((m.categories || []).map((c) => [String(c.code ?? c.id), c]));
    const hasB = get("run_b") >= 0;
    const nodes = [];
    let activeId = "";
    for (let p = first; p <= last; p++) {
      const hit = rowAt(p);
      const selected = p === st.selPos;
      const id = `${uid}-opt-${p}`;
      if (selected) activeId = id;
      const attrs = {
        id, role: "option", class: `rr-opt${selected ? " rr-selected" : ""}`,
        "aria-selected": selected ? "true" : "false", "aria-setsize": String(n),
        "aria-posinset": String(p + 1), "data-pos": String(p), style: `top:${p * rh}px`,
      };
      if (!hit) {
        nodes.push(h("div", { ...attrs, class: `${attrs.class} rr-loading`, "aria-busy": "true" },
          h("span", { class: "rr-muted", text: st.kernelSilent ? "waiting for the kernel\u2026" : "\u2026" })));
        continue;
      }
      const [win, j] = hit;
      const qid = win.qid[j];
      const kind = win.kind ? win.kind[j] : 0;
      const cat = kind ? kinds.get(String(kind)) : undefined;
      const kindLabel = kind ? (cat ? cat.label : `kind ${kind}`) : "";
      const kindShort = cat && SHORT_KINDS[cat.id] ? SHORT_KINDS[cat.id] : kindLabel;
      const a = win.a ? win.a[j] : null;
      const line1 = h("div", { class: "rr-opt-line" },
        h("span", { class: "rr-qid", text: qid, title: qid }),
        win.fails && win.fails[j] ? h("span", { class: "rr-tag rr-tag-fail", text: "fails", title: "fails a target" }) : null,
        win.unjudged && win.unjudged[j] ? h("span", {
          class: "rr-tag rr-tag-unjudged", text: "unjudged", "data-role": "unjudged-tag",
          title: `${fmt(win.unjudged[j][0])}\u2013${fmt(win.unjudged[j][1])} with its unjudged documents read as not relevant and as relevant`,
        }) : null,
        kindLabel ? h("span", { class: `rr-tag ${kind === 1 ? "rr-tag-nojudged" : "rr-tag-kind"}`, text: kindShort, title: kindLabel, "aria-label": kindLabel }) : null,
        h("span", { class: "rr-val", text: fmt(a), title: hasB ? "run A" : undefined }));
      if (hasB && win.delta) {
        const d = win.delta[j];
        line1.append(h("span", {
          class: `rr-delta ${deltaClass(d)}`,
          text: signed(d), title: `B \u2212 A (B = ${fmt(win.b ? win.b[j] : null)})`,
        }));
      }
      const text = win.text ? win.text[j] : "";
      nodes.push(h("div", { ...attrs, "data-query-id": qid }, line1,
        rh === LIST_ROW ? h("div", { class: "rr-opt-text", text: text || "\u00a0", title: text || undefined }) : null));
      if (selected && qid !== st.selQid && st.wantPos === p) {
        // the row arrived for a selection made before it was loaded
        st.wantPos = null;
        chooseQuery(p, qid, true);
      }
    }
    put(listSpacer, ...nodes);
    if (activeId) listbox.setAttribute("aria-activedescendant", activeId);
    else listbox.removeAttribute("aria-activedescendant");
    // count and empty state
    const total = m.n_queries | 0;
    const filtered = (get("filter_text") || "") !== "" || (get("category") || "") !== "" || (get("slice") || "") !== "" || !!get("fails_only");
    listCount.textContent = (filtered ? `${count(n)} of ${count(total)} queries` : `${count(total)} queries`)
      + (st.edge ? ` \u00b7 this is the ${st.edge} query` : "");
    emptyEl.hidden = n > 0;
    listbox.hidden = n === 0;
    if (n === 0) {
      const ft = get("filter_text") || "";
      const parts = [];
      if (ft) parts.push(`\u201c${ft}\u201d`);
      const cat = get("category") || "";
      if (cat) parts.push(`the category \u201c${(m.categories || []).find((c) => String(c.id) === cat)?.label || cat}\u201d`);
      const sl = get("slice") || "";
      if (sl) parts.push(`the slice \u201c${sl}\u201d`);
      if (get("fails_only")) parts.push("\u201cfails a target\u201d");
      emptyText.textContent = parts.length ? `No query matches ${parts.join(" with ")}.` : "No query to show.";
    }
  }

  /** Scroll the list so that position ``pos`` is visible. @param {number} pos */
  function listReveal(pos) {
    if (pos < 0) return;
    const rh = rowHeight();
    const viewH = listVp.h || 480;
    const y = pos * rh;
    /** @param {number} to */
    const go = (to) => {
      listSpacer.style.height = `${(get("n_visible") | 0) * rh}px`;
      listbox.scrollTop = to;
      listVp.top = listbox.scrollTop;
      noteViewTop();
    };
    if (y < listVp.top) go(y);
    else if (y + rh > listVp.top + viewH) go(y + rh - viewH);
  }

  /**
   * Select a query locally at once, then save ``selected`` (debounced for key repeats).
   * @param {number} pos
   * @param {string} qid
   * @param {boolean} [now]
   */
  function chooseQuery(pos, qid, now) {
    st.selPos = pos;
    st.selQid = qid;
    setLocal("selected", qid);
    if (now) { saveSelection.cancel(); save(); } else saveSelection();
  }

  /** Move the selection to position ``pos`` (clamped), loading its row if needed. @param {number} pos */
  function selectPos(pos, now) {
    const n = get("n_visible") | 0;
    if (n <= 0) return;
    clearLocalError(); // the user moved the selection (a click, a key)
    // at either end: say so instead of doing nothing
    st.edge = pos < 0 && st.selPos === 0 ? "first" : pos > n - 1 && st.selPos === n - 1 ? "last" : "";
    if (st.edge) {
      clearTimeout(st.edgeTimer);
      st.edgeTimer = setTimeout(() => { st.edge = ""; renderList(); }, 1500);
    }
    pos = Math.max(0, Math.min(n - 1, pos));
    const hit = rowAt(pos);
    if (hit) {
      st.wantPos = null;
      chooseQuery(pos, hit[0].qid[hit[1]], now);
    } else {
      st.selPos = pos;
      st.wantPos = pos;
    }
    listReveal(pos);
    renderList();
    v.renderRankingHead();
  }

  listen(listbox, "click", (ev) => {
    const opt = /** @type {HTMLElement} */ (ev.target).closest("[role=option]");
    if (!opt) return;
    listbox.focus({ preventScroll: true });
    selectPos(Number(opt.getAttribute("data-pos")), true);
  });
  listen(listbox, "keydown", (ev) => {
    const e = /** @type {KeyboardEvent} */ (ev);
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const page = Math.max(1, Math.floor((listVp.h || 480) / rowHeight()) - 1);
    const from = st.selPos;
    /** @type {number|null} */
    let to = null;
    switch (e.key) {
      case "ArrowDown": case "j": to = from < 0 ? 0 : from + 1; break;
      case "ArrowUp": case "k": to = from < 0 ? 0 : from - 1; break;
      case "PageDown": to = Math.max(0, from) + page; break;
      case "PageUp": to = Math.max(0, from) - page; break;
      case "Home": to = 0; break;
      case "End": to = (get("n_visible") | 0) - 1; break;
      case "Enter": case " ": if (from >= 0) { saveSelection.cancel(); save(); } e.preventDefault(); return;
      default: return;
    }
    e.preventDefault();
    selectPos(to, false);
  });
  listen(listbox, "scroll", () => { listVp.top = listbox.scrollTop; noteViewTop(); renderList(); },
    { passive: true });

  // ---- filter, category, sort, fails-only ------------------------------------------------
  const sendFilter = () => {
    if (filterInput.value !== (get("filter_text") || "")) listToTop();
    setLocal("filter_text", filterInput.value);
    save();
  };
  // the first keystroke after a pause goes at once; a burst of typing waits FILTER_WAIT ms
  const filterLater = throttle(sendFilter, FILTER_WAIT);
  listen(filterInput, "input", () => filterLater());
  listen(filterInput, "keydown", (ev) => {
    const e = /** @type {KeyboardEvent} */ (ev);
    if (e.key === "Enter") { filterLater.cancel(); sendFilter(); }
    else if (e.key === "ArrowDown") { e.preventDefault(); listbox.focus(); selectPos(Math.max(0, st.selPos), true); }
  });
  listen(categorySel, "change", () => { listToTop(); setLocal("category", categorySel.value); save(); });
  listen(sliceSel, "change", () => { listToTop(); setLocal("slice", sliceSel.value); save(); });
  listen(sortSel, "change", () => { listToTop(); setLocal("sort", sortSel.value); save(); });
  listen(failsBox, "change", () => { listToTop(); setLocal("fails_only", failsBox.checked); save(); });

  function clearFilters() {
    filterLater.cancel();
    filterInput.value = "";
    listToTop();
    setLocal("filter_text", "");
    setLocal("category", "");
    if (get("slice")) setLocal("slice", "");
    setLocal("fails_only", false);
    save();
    filterInput.focus();
  }

  function renderListControls() {
    const m = meta();
    // list controls
    const cats = m.categories || [];
    const csig = cats.map((c) => `${c.id}\u0001${c.label}`).join("\u0000");
    if (categorySel.dataset.sig !== csig) {
      put(categorySel, h("option", { value: "", text: "all queries" }),
        ...cats.map((c) => h("option", { value: String(c.id), text: c.label, title: c.label })));
      categorySel.dataset.sig = csig;
    }
    categorySel.value = get("category") || "";
    const slices = m.slices || [];
    const slsig = slices.map((c) => `${c.id}\u0001${c.n}`).join("\u0000");
    if (sliceSel.dataset.sig !== slsig) {
      put(sliceSel, h("option", { value: "", text: "every slice" }),
        ...slices.map((c) => h("option", { value: String(c.id), text: `slice: ${c.label} (${c.n})`, title: c.label })));
      sliceSel.dataset.sig = slsig;
    }
    sliceSel.hidden = slices.length === 0;
    sliceSel.value = get("slice") || "";
    const hasB = get("run_b") >= 0;
    const sorts = (m.sorts || []).filter((o) => hasB || !String(o.id).startsWith("delta"));
    const ssig = sorts.map((o) => o.id).join("\u0000");
    if (sortSel.dataset.sig !== ssig) {
      put(sortSel, ...sorts.map((o) => h("option", { value: o.id, text: o.label })));
      sortSel.dataset.sig = ssig;
    }
    sortSel.value = get("sort");
    failsBox.checked = !!get("fails_only");
    // every query fails a target (the defaults on a real retriever): the filter would keep
    // every row, and no row carries the tag; said, not hidden
    const failsAll = !!(get("head") || {}).fails_all && !get("fails_only");
    failsBox.disabled = failsAll;
    failsBox.title = failsAll ? "every query fails a target: set the targets to tell them apart" : "";
    if (!filterInput.matches(":focus") && !filterLater.pending()) filterInput.value = get("filter_text") || "";
  }
  Object.assign(v, { listCol, listbox, listVp, renderList, listReveal, renderListControls,
    filterLater });
}
