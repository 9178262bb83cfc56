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

// ---- src/constants.js --------------------------------------------------------------------

/**
 * The explorer's sizes, delays and labels, and the shapes of the traits it draws.
 */

/**
 * @typedef {{id: string, label: string, title?: string, cutoff?: boolean}} Family
 * @typedef {{id: string, label: string, code?: number}} Choice
 * @typedef {{runs: string[], families: Family[], k_max: number, n_queries: number,
 *   has_docs: boolean, has_queries: boolean, version: string, categories: Choice[],
 *   sorts: Choice[]}} Meta
 * @typedef {{start: number, qid: string[], text: string[], a: (number|null)[],
 *   b?: (number|null)[], delta?: (number|null)[], kind: number[], fails?: boolean[]}} Rows
 * @typedef {{rank: number[], doc_id: string[], score: (number|null)[],
 *   grade: (number|null)[], relevant: boolean[], text: string[], move?: (number|null)[],
 *   tie?: (number[]|null)[]}} RankRows
 * @typedef {{rows: RankRows, missing_relevant: string[], n_ret?: number, n_rel?: number,
 *   move?: (number|null)[]}} RunRanking
 * @typedef {{qid: string, query_text: string, k: number, n_ret: number, n_rel: number,
 *   rows: RankRows, missing_relevant: string[], b?: RunRanking}} Ranking
 * @typedef {{label: string, value: (number|null), pass: (boolean|null)}} TargetRow
 * @typedef {{label: string, title?: string, a: (number|null), b?: (number|null)}} MeasureRow
 * @typedef {{family: string, ks: number[], query_a: (number|null)[], mean_a: (number|null)[],
 *   query_b?: (number|null)[], mean_b?: (number|null)[]}} Curve
 * @typedef {{targets: TargetRow[], measures: MeasureRow[], curve: Curve, kind: string,
 *   judged_at_k?: (number|null)}} Panel
 * @typedef {{state: string, path?: string, url?: string, message?: string}} ReportState
 * @typedef {{get(name: string): any, set(name: string, value: any): void,
 *   save_changes(): void, on(event: string, cb: Function): void,
 *   off(event: string, cb?: Function): void, send(msg: object): void}} Model
 */

/** Rows per window requested with a ``rows`` message (the protocol allows up to 500). */
const WINDOW = 250;
/** Rows rendered above and below the visible range. */
const OVERSCAN = 6;
/** Row heights in px (fixed: the lists are virtualised). */
const LIST_ROW = 42;
const LIST_ROW_SHORT = 30;
const RANK_ROW = 42;
const CUT_BAND = 22;
/** A ranking grid narrower than this (px) shows the judgment inside the document cell. */
const COMPACT = 520;
/** Width at or below which the columns stack. */
const NARROW = 760;
/** Debounce of the filter box (ms), of K while dragging and of keyboard selection. */
const FILTER_WAIT = 120;
const K_WAIT = 60;
const SELECT_WAIT = 40;
/** A window request unanswered after this long means the kernel is gone (ms). */
const STALE_REQUEST = 4000;
/** Milliseconds a judgment may take (the runs are evaluated again) before the view says the
 * kernel did not answer and lets the person judge again. */
const JUDGE_WAIT = 30000;
const NO_KERNEL = "The kernel did not answer: is it running? (Re-run the cell to reconnect.)";
/** Ranks listed in the "relevant beyond the visible range" line before "and N more". */
const BEYOND_LIST = 12;
const MINUS = "\u2212";
/** Short tags for the failure kinds in the query list (the full label is the tooltip). */
const SHORT_KINDS = /** @type {Record<string, string>} */ ({
  beyond_k: "beyond K", not_retrieved: "none retrieved", empty: "empty",
  no_judged: "no judged relevant",
});

// ---- src/dom.js --------------------------------------------------------------------------

/**
 * DOM helpers: elements built from attributes and text (never parsed as HTML), SVG, safe
 * links, and the debounce/throttle of the view's saves.
 */

/**
 * Create an element. ``attrs``: ``class``, ``text`` (textContent), ``data-*``/``aria-*``/any
 * attribute (strings), ``on<event>`` listeners; children: nodes or strings (text nodes).
 * @param {string} tag
 * @param {Record<string, any>} [attrs]
 * @param {...(Node|string|null|undefined|false)} children
 * @returns {HTMLElement}
 */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") el.className = String(value);
      else if (key === "text") el.textContent = String(value);
      else if (key.startsWith("on") && typeof value === "function") {
        el.addEventListener(key.slice(2), value);
      } else el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child);
  }
  return el;
}

/**
 * Replace the children of ``el`` (null, undefined and false are left out).
 * @param {Element} el
 * @param {...(Node|string|null|undefined|false)} nodes
 */
function put(el, ...nodes) {
  el.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined && n !== false));
}

/**
 * Create an SVG element.
 * @param {string} tag
 * @param {Record<string, string|number>} [attrs]
 * @returns {SVGElement}
 */
function s(tag, attrs) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  if (attrs) for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/**
 * Only URLs that cannot run script: relative paths, http(s) and file.
 * @param {string|undefined} url
 */
function safeUrl(url) {
  if (typeof url !== "string" || url === "") return null;
  const scheme = /^\s*([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url);
  if (scheme && !["http", "https", "file"].includes(scheme[1].toLowerCase())) return null;
  return url;
}

/**
 * A document id on its own line, with break opportunities after ``#``, ``/``, ``_`` and ``-``
 * (text nodes and ``<wbr>``: never parsed as HTML).
 * @param {string} id
 */
function docIdNode(id) {
  const span = h("span", { class: "rr-doc-id", title: id });
  for (const part of String(id).split(/(?<=[#/_-])/)) {
    if (span.firstChild) span.append(document.createElement("wbr"));
    span.append(part);
  }
  return span;
}

/**
 * @param {Function} fn
 * @param {number} wait
 */
function debounce(fn, wait) {
  /** @type {any} */
  let timer = null;
  const run = (/** @type {any[]} */ ...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => { timer = null; fn(...args); }, wait);
  };
  run.cancel = () => { clearTimeout(timer); timer = null; };
  run.pending = () => timer !== null;
  return run;
}

/**
 * Leading and trailing throttle: the first call after a pause runs at once, a burst of calls
 * runs once more ``wait`` ms after the last one.
 * @param {Function} fn
 * @param {number} wait
 */
function throttle(fn, wait) {
  let last = -Infinity;
  const later = debounce(() => { last = performance.now(); fn(); }, wait);
  const run = () => {
    if (performance.now() - last > wait && !later.pending()) { last = performance.now(); fn(); }
    else later();
  };
  run.cancel = later.cancel;
  run.pending = later.pending;
  return run;
}

// ---- src/format.js -----------------------------------------------------------------------

/**
 * Numbers as the reports show them (``ragreport.present``): values, signed differences,
 * p-values and counts. Pure functions, no DOM.
 */


/**
 * ``x`` with ``d`` decimals exactly as Python's ``f"{x:.{d}f}"`` prints it: correctly rounded,
 * an exact tie (x * 2**(d+1) an odd integer: the only binary values halfway between two
 * d-decimal numbers) to the even last digit, where ``toFixed`` would round it up; "-0.0000"
 * for a negative value that rounds to zero (and for -0), as Python does.
 * @param {number} x
 * @param {number} d
 */
function fixedEven(x, d) {
  const neg = x < 0 || Object.is(x, -0);
  const ax = Math.abs(x);
  const j = ax * 2 ** (d + 1);
  let t;
  if (Number.isInteger(j) && j % 2 === 1 && j * 5 ** d < 2 ** 53) {
    let n = (j * 5 ** d - 1) / 2;  // the lower neighbour, times 10**d
    if (n % 2 === 1) n += 1;
    const digits = String(n).padStart(d + 1, "0");
    t = d ? `${digits.slice(0, -d)}.${digits.slice(-d)}` : digits;
  } else {
    t = ax.toFixed(d);
  }
  return (neg ? "-" : "") + t;
}

/**
 * A value as the reports show it (``present.shown``: 4 decimals), "–" for none.
 * @param {number|null|undefined} v
 */
function fmt(v) {
  return typeof v === "number" && Number.isFinite(v) ? fixedEven(v, 4) : "\u2013";
}

/**
 * A signed difference with a real minus sign (``present.signed``), "±" when it shows as zero.
 * @param {number|null|undefined} v
 */
function signed(v) {
  if (typeof v !== "number" || !Number.isFinite(v)) return "\u2013";
  const t = fixedEven(Math.abs(v), 4);
  if (t === fixedEven(0, 4)) return `\u00b1${t}`;
  return (v > 0 ? "+" : MINUS) + t;
}

/**
 * A p-value as the report shows it (``present.p_text``): "< 0.001" below 0.001, two
 * significant digits below 0.1 (trailing zeros dropped, as Python's ``.2g``), else 2 decimals.
 * @param {number|null|undefined} p
 */
function pval(p) {
  if (typeof p !== "number" || Number.isNaN(p)) return "\u2013";
  if (p < 0.001) return "< 0.001";
  if (p >= 0.1) return fixedEven(p, 2);
  const t = fixedEven(p, p < 0.01 ? 4 : 3);
  return t.replace(/0+$/, "").replace(/\.$/, "");
}

/**
 * Is a difference a tie (zero once rounded to 12 decimals, the rule of
 * ``analysis.compare.outcomes``)? numpy's ``round(d, 12)`` is ``rint(d * 1e12) / 1e12``,
 * zero exactly when |d * 1e12| <= 0.5 (half to even).
 * @param {number} d
 */
function isTie(d) {
  return Math.abs(d * 1e12) <= 0.5;
}

/**
 * The class of a difference: good above, bad below, muted (``tie``) when it is a tie.
 * @param {number|null|undefined} d
 * @param {string} [tie]
 */
function deltaClass(d, tie = "rr-muted") {
  if (typeof d !== "number" || !Number.isFinite(d) || isTie(d)) return tie;
  return d > 0 ? "rr-good" : "rr-bad";
}

/** @param {number} n */
function count(n) {
  return Number(n || 0).toLocaleString("en-US");
}

// ---- src/list.js -------------------------------------------------------------------------

/**
 * The query list: its controls (filter, category, slice, sort, "fails a target"), the
 * virtualised listbox (rows from the view's windows), keyboard and mouse selection.
 */


/**
 * Build the query list of view ``v`` (adds ``listCol``, ``listbox``, ``listVp``,
 * ``renderList``, ``listReveal``, ``renderListControls`` and ``filterLater`` to it).
 * @param {any} v
 */
function makeList(v) {
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

// ---- src/curve.js ------------------------------------------------------------------------

/**
 * The selected query's metric-vs-K curve against each run's mean curve, as inline SVG.
 */


/**
 * The query's curve against the mean, as inline SVG with axis ticks.
 * @param {any} view the view (its traits)
 * @param {Curve} c
 * @param {boolean} hasB
 * @returns {Node[]}
 */
function curve(view, c, hasB) {
  const { get, meta } = view;
  const W = 320; const H = 176;
  const L = 34; const R = 10; const T = 10; const B = 28;
  const ks = c.ks;
  const kmax = ks[ks.length - 1] || 1;
  const log = kmax > 60;
  const fx = (/** @type {number} */ k) => {
    const f = log ? Math.log(k) / Math.log(kmax) : kmax === 1 ? 0 : (k - 1) / (kmax - 1);
    return L + f * (W - L - R);
  };
  const fy = (/** @type {number} */ v) => T + (1 - Math.max(0, Math.min(1, v))) * (H - T - B);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "rr-curve", role: "img",
    "aria-label": `${c.family}@K of this query (solid) and the mean over all queries (dashed), K = 1 to ${kmax}` });
  // grid and y ticks
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    svg.append(s("line", { x1: L, x2: W - R, y1: fy(v), y2: fy(v), class: "rr-gridline" }));
    const t = s("text", { x: L - 4, y: fy(v) + 3.5, "text-anchor": "end", class: "rr-tick" });
    t.textContent = v === 0 || v === 1 ? String(v) : v.toFixed(2);
    svg.append(t);
  }
  // x ticks
  /** @type {number[]} */
  let xt = [];
  if (log) { for (let p = 1; p <= kmax; p *= 10) xt.push(p); if (xt[xt.length - 1] !== kmax) xt.push(kmax); }
  else {
    const step = [1, 2, 5, 10, 20, 25, 50].find((st) => kmax / st <= 6) || Math.ceil(kmax / 5);
    xt = [1];
    for (let v = step; v < kmax; v += step) if (v > 1) xt.push(v);
    if (xt[xt.length - 1] !== kmax) xt.push(kmax);
  }
  xt = xt.filter((v, i) => i === 0 || fx(v) - fx(xt[i - 1]) > 16 || v === kmax);
  svg.append(s("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "rr-axis" }));
  svg.append(s("line", { x1: L, x2: L, y1: T, y2: H - B, class: "rr-axis" }));
  for (const v of xt) {
    svg.append(s("line", { x1: fx(v), x2: fx(v), y1: H - B, y2: H - B + 4, class: "rr-axis" }));
    const t = s("text", { x: fx(v), y: H - B + 14, "text-anchor": "middle", class: "rr-tick" });
    t.textContent = String(v);
    svg.append(t);
  }
  const xl = s("text", { x: (L + W - R) / 2, y: H - 2, "text-anchor": "middle", class: "rr-tick rr-axis-label" });
  xl.textContent = log ? "K (log scale)" : "K";
  svg.append(xl);
  // cut-off K
  const k = Math.max(1, Math.min(kmax, get("k") | 0));
  svg.append(s("line", { x1: fx(k), x2: fx(k), y1: T, y2: H - B, class: "rr-curve-k" }));
  /**
   * @param {(number|null)[]|undefined} ys
   * @param {string} cls
   * @param {boolean} [across] draw through the Ks without a value (the mean curve past the
   *   evaluated curves is computed at a few Ks spread to the deepest K, not at every K)
   */
  const path = (ys, cls, across = false) => {
    if (!ys) return;
    let d = "";
    let pen = false;
    for (let i = 0; i < ks.length; i++) {
      const v = ys[i];
      if (typeof v !== "number" || !Number.isFinite(v)) { pen = pen && across; continue; }
      d += `${pen ? "L" : "M"}${fx(ks[i]).toFixed(1)} ${fy(v).toFixed(1)}`;
      pen = true;
    }
    if (d) svg.append(s("path", { d, class: cls, fill: "none" }));
  };
  path(c.mean_a, "rr-line rr-line-a rr-line-mean", true);
  if (hasB) path(c.mean_b, "rr-line rr-line-b rr-line-mean", true);
  path(c.query_a, "rr-line rr-line-a");
  if (hasB) path(c.query_b, "rr-line rr-line-b");
  const legend = h("div", { class: "rr-legend" },
    h("span", { class: "rr-leg rr-leg-a" }, h("span", { class: "rr-leg-line", "aria-hidden": "true" }), `${hasB ? "A " : ""}this query`),
    h("span", { class: "rr-leg rr-leg-a" }, h("span", { class: "rr-leg-line rr-leg-dash", "aria-hidden": "true" }), "mean"),
    hasB ? h("span", { class: "rr-leg rr-leg-b" }, h("span", { class: "rr-leg-line", "aria-hidden": "true" }), "B this query") : null,
    hasB ? h("span", { class: "rr-leg rr-leg-b" }, h("span", { class: "rr-leg-line rr-leg-dash", "aria-hidden": "true" }), "B mean") : null,
    h("span", { class: "rr-leg rr-leg-k" }, h("span", { class: "rr-leg-line", "aria-hidden": "true" }), `K = ${k}`));
  const fam = (meta().families || []).find((f) => f.id === c.family);
  return [h("h3", { class: "rr-h", text: `${fam ? fam.label : c.family}@K: this query vs the mean`,
    title: fam && fam.title ? fam.title : undefined }), svg, legend];
}

// ---- src/panel.js ------------------------------------------------------------------------

/**
 * The panel column: the passage of the document opened in a grid, and the selected query's
 * targets, measures at K and curve.
 */


/**
 * Build the panel column of view ``v`` (adds ``panelCol``, ``passageEl``, ``openPassage``,
 * ``closePassage``, ``renderPassage`` and ``renderPanel`` to it).
 * @param {any} v
 */
function makePanel(v) {
  const { st, get, meta, request } = v;
  // panel column
  const passageEl = h("div", { class: "rr-passage", "data-role": "passage", role: "region",
    "aria-label": "passage" });
  passageEl.hidden = true;
  const panelEl = h("div", { class: "rr-panel" });
  const panelCol = h("section", { class: "rr-col rr-panel-col", "data-role": "panel",
    "aria-label": "the selected query" }, passageEl, panelEl);

  // ---- passage side panel -------------------------------------------------------------------
  /**
   * @param {string} side
   * @param {number} i
   * @param {RankRows} rows
   */
  function openPassage(side, i, rows) {
    const ranking = get("ranking") || {};
    const docId = rows.doc_id[i];
    st.passage = { side, index: i, doc_id: docId, text: null, qid: ranking.qid,
      run: side === "a" ? get("run_a") : get("run_b") };
    if (meta().has_docs) request({ type: "passage", qid: ranking.qid, doc_id: docId });
    (side === "a" ? v.gridB : v.gridA).g.active = -1;
    renderPassage();
    v.gridA.renderWindow(); v.gridB.renderWindow();
  }

  function closePassage() {
    const side = st.passage ? st.passage.side : "a";
    const hadFocus = passageEl.contains(document.activeElement);
    st.passage = null; v.gridA.g.active = -1; v.gridB.g.active = -1;
    renderPassage(); v.gridA.renderWindow(); v.gridB.renderWindow();
    // the close button is gone with the passage: the keys go back to its ranking, never to
    // the page (or to JupyterLab's notebook shortcuts)
    if (hadFocus) (side === "b" ? v.gridB : v.gridA).scroller.focus({ preventScroll: true });
  }

  function renderPassage() {
    const p = st.passage;
    const ranking = get("ranking") || {};
    if (!p || p.qid !== ranking.qid) {
      passageEl.hidden = true;
      put(passageEl);
      return;
    }
    // the runs may have changed (swap, another run): follow the run, find the document again
    if (p.run === get("run_a")) p.side = "a"; else if (p.run === get("run_b")) p.side = "b";
    /** @param {string} side */
    const rowsOf = (side) => (side === "b" ? (get("run_b") >= 0 ? ranking.b?.rows : undefined) : ranking.rows);
    /** @type {RankRows|undefined} */
    let rows = rowsOf(p.side);
    if (!rows || rows.doc_id[p.index] !== p.doc_id) {
      const other = p.side === "a" ? "b" : "a";
      const here = rows ? rows.doc_id.indexOf(p.doc_id) : -1;
      const there = here < 0 && rowsOf(other) ? /** @type {RankRows} */ (rowsOf(other)).doc_id.indexOf(p.doc_id) : -1;
      if (here >= 0) p.index = here;
      else if (there >= 0) { p.side = other; p.index = there; rows = rowsOf(other); }
      else rows = undefined;
    }
    const activeA = p.side === "a" && rows ? p.index : -1;
    const activeB = p.side === "b" && rows ? p.index : -1;
    if (v.gridA.g.active !== activeA || v.gridB.g.active !== activeB) {
      v.gridA.g.active = activeA; v.gridB.g.active = activeB;
      v.gridA.renderWindow(); v.gridB.renderWindow();
    }
    const i = p.index;
    const grade = rows ? rows.grade[i] : null;
    const rel = rows ? rows.relevant[i] : false;
    const runs = meta().runs || [];
    const runName = runs[p.side === "b" ? get("run_b") : get("run_a")] || "";
    let body;
    if (p.text !== null) body = h("div", { class: "rr-passage-text", text: p.text || "(empty passage)" });
    else if (!meta().has_docs) body = h("div", { class: "rr-passage-text rr-muted", text: "No passage texts were given (pass docs= to the explorer)." });
    else body = h("div", { class: "rr-passage-text" }, rows && rows.text[i] ? rows.text[i] : "",
      h("span", { class: "rr-muted", text: " \u2026 loading the full text" }));
    passageEl.hidden = false;
    put(passageEl, 
      h("div", { class: "rr-passage-head" },
        h("span", { class: "rr-passage-title", title: p.doc_id },
          h("span", { class: "rr-doc-id", text: p.doc_id })),
        h("button", { type: "button", class: "rr-btn rr-btn-small", "aria-label": "close passage", text: "\u00d7",
          onclick: () => closePassage() })),
      h("div", { class: "rr-passage-meta rr-muted", "data-role": "passage-meta", text: rows
        ? `rank ${rows.rank[i]} in ${runName}${otherRank(p.side, p.doc_id)} \u00b7 ${grade === null || grade === undefined ? "unjudged" : rel ? `relevant (grade ${grade})` : `not relevant (grade ${grade})`}`
        : "not in the rankings shown" }),
      rows ? judgeLine(p.side, i, rows) : null,
      body);
  }

  /**
   * The grade buttons of the open passage, when its document can be judged here.
   * @param {string} side
   * @param {number} i
   * @param {RankRows} rows
   */
  function judgeLine(side, i, rows) {
    const grid = side === "b" ? v.gridB : v.gridA;
    const J = meta().judging;
    if (!J || !grid.judgeable(rows, i)) return null;
    const pending = st.judging && st.judging.doc_id === rows.doc_id[i] && st.judging.qid === get("ranking")?.qid;
    const grade = rows.grade[i];
    return h("div", { class: "rr-passage-judge", "data-role": "passage-judge", role: "group",
      "aria-label": "judge this document" },
    h("span", { class: "rr-muted", text: pending ? "judging\u2026 " : "Judge: " }),
    ...(J.grades || []).map((/** @type {number} */ gr) => h("button", {
      type: "button", class: "rr-btn rr-btn-small rr-judge-btn", "data-grade": String(gr), text: String(gr),
      title: `grade ${gr} (key ${gr} in the ranking)`,
      "aria-pressed": (pending ? st.judging.grade === gr : grade === gr) ? "true" : "false",
      onclick: () => grid.judge(i, gr),
    })));
  }

  /**
   * In the A/B view, the document's rank in the other run too ("" with one run).
   * @param {string} side
   * @param {string} docId
   */
  function otherRank(side, docId) {
    if (get("run_b") < 0) return "";
    const ranking = get("ranking") || {};
    const other = side === "a" ? ranking.b : ranking;
    const name = (meta().runs || [])[side === "a" ? get("run_b") : get("run_a")] || "";
    if (!other || !other.rows) return "";
    const at = other.rows.doc_id.indexOf(docId);
    if (at >= 0) return `, rank ${other.rows.rank[at]} in ${name}`;
    return other.truncated > 0 ? `, not in ${name}'s first ${other.rows.rank.length}`
      : `, not retrieved by ${name}`;
  }

  function renderPanel() {
    const P = get("panel") || {};
    const R = get("ranking") || {};
    if (!R.qid) { put(panelEl); return; }
    const hasB = get("run_b") >= 0;
    const nodes = [];
    // targets
    const targets = P.targets || [];
    nodes.push(h("h3", { class: "rr-h", text: "Targets (this query)" }));
    if (targets.length) {
      nodes.push(h("ul", { class: "rr-targets" }, ...targets.map((t) => h("li", {
        class: t.pass === true ? "rr-pass" : t.pass === false ? "rr-fail" : "",
      }, h("span", { class: "rr-t-label", text: t.label }), h("span", { class: "rr-num", text: fmt(t.value) }),
        h("strong", { class: "rr-t-mark", text: t.pass === true ? "\u2713 pass" : t.pass === false ? "\u2717 fails" : "n/a" })))));
    } else nodes.push(h("p", { class: "rr-muted", text: "No targets configured." }));
    // measures at K
    const measures = P.measures || [];
    nodes.push(h("h3", { class: "rr-h", text: `Measures at K = ${get("k")}` }));
    const headRow = h("tr", {}, h("th", { scope: "col", text: "measure" }), h("th", { scope: "col", class: "rr-num", text: hasB ? "A" : "value" }));
    if (hasB) headRow.append(h("th", { scope: "col", class: "rr-num", text: "B" }), h("th", { scope: "col", class: "rr-num", text: `B ${MINUS} A` }));
    const trs = measures.map((mr) => {
      const tr = h("tr", {}, h("th", { scope: "row", text: mr.label, title: mr.title || undefined }),
        h("td", { class: "rr-num", text: fmt(mr.a) }));
      if (hasB) {
        const d = typeof mr.a === "number" && typeof mr.b === "number" ? mr.b - mr.a : null;
        tr.append(h("td", { class: "rr-num", text: fmt(mr.b) }),
          h("td", { class: `rr-num ${deltaClass(d, "")}`, text: signed(d) }));
      }
      return tr;
    });
    nodes.push(h("div", { class: "rr-measures-wrap" },
      h("table", { class: "rr-measures" }, h("thead", {}, headRow), h("tbody", {}, ...trs))));
    // curve
    if (P.curve && Array.isArray(P.curve.ks) && P.curve.ks.length) nodes.push(...curve(v, P.curve, hasB));
    put(panelEl, ...nodes);
  }
  Object.assign(v, { panelCol, passageEl, openPassage, closePassage, renderPassage, renderPanel });
}

// ---- src/grid.js -------------------------------------------------------------------------

/**
 * A virtualised ranking grid (run A's or run B's): rows around the visible range, the cut-off
 * line at K, relevant documents beyond the visible range, judged relevant ones not retrieved,
 * and the moves of B's documents against A.
 */


/**
 * One virtualised ranking grid of view ``v``.
 * @param {any} v
 * @param {"a"|"b"} side
 */
function makeGrid(v, side) {
  const { st, listen, meta } = v;
  const title = h("div", { class: "rr-grid-title" });
  const scroller = h("div", { class: "rr-grid-scroll", tabindex: "0" });
  const header = h("div", { class: "rr-grid-row rr-grid-header", role: "row", "aria-rowindex": "1" });
  const inner = h("div", { class: "rr-grid-inner" });
  scroller.append(inner);
  const grid = h("div", { class: "rr-grid", role: "grid", "aria-label": `ranking, run ${side.toUpperCase()}`,
    "data-side": side }, header, scroller);
  const beyond = h("div", { class: "rr-beyond", "data-role": "beyond", "aria-live": "polite" });
  const missing = h("div", { class: "rr-missing", "data-role": "missing" });
  const wrap = h("div", { class: `rr-grid-wrap rr-grid-${side}` }, title, grid, beyond, missing);
  /** @type {{rows: RankRows|null, k: number, n: number, relIdx: number[], compare: boolean,
   *   missing: string[], showAllMissing: boolean, active: number, moves: (number|null)[]|null,
   *   compact: boolean, qid: string|undefined}} */
  const g = { rows: null, k: 10, n: 0, relIdx: [], compare: false, missing: [],
    showAllMissing: false, active: -1, moves: null, compact: false, qid: "" };
  // the scroll position and size, kept here so that drawing never forces a layout
  const vp = { top: 0, h: 0, w: 0 };

  /** @param {number} i */
  const top = (i) => i * RANK_ROW + (i >= g.k && g.k < g.n ? CUT_BAND : 0);

  function setHeader() {
    const cols = g.compact ? [["rank", "#"], ["doc", "document \u00b7 judgment"]]
      : [["rank", "#"], ["doc", "document"], ["grade", "judgment"], ["score", "score"]];
    if (g.compare) cols.push(["move", "move"]);
    put(header, ...cols.map(([c, t]) => h("div", {
      class: `rr-cell rr-c-${c}`, role: "columnheader", text: t,
      title: c === "move" ? "rank in A minus rank in B (up = moved up in B)"
        : c === "score" ? "the retriever's score; \u2261 marks a score tied with another document's" : undefined,
    })));
  }

  /**
   * @param {RankRows|null} rows
   * @param {number} k
   * @param {string[]} missingRel
   * @param {boolean} compare
   * @param {(number|null)[]|null} [moves]
   * @param {string} [qid]
   */
  function update(rows, k, missingRel, compare, moves, qid) {
    const same = rows === g.rows;
    const kChanged = k !== g.k;
    g.rows = rows; g.k = k; g.compare = compare; g.moves = moves || null;
    g.n = rows && rows.rank ? rows.rank.length : 0;
    g.missing = missingRel || [];
    if (qid !== g.qid) { g.qid = qid; scrollTo(0); } // another query: from rank 1
    else if (kChanged && g.n > 0) {
      // a new K: its cut line comes into view
      const y = Math.min(k, g.n) * RANK_ROW;
      const viewH = vp.h || 480;
      if (y < vp.top || y + CUT_BAND > vp.top + viewH) scrollTo(Math.max(0, y - viewH / 2));
    }
    if (!same) {
      g.relIdx = [];
      if (rows) for (let i = 0; i < g.n; i++) if (rows.relevant[i]) g.relIdx.push(i);
      g.showAllMissing = false;
      if (!st.passage || st.passage.side !== side) g.active = -1;
    }
    grid.setAttribute("aria-rowcount", String(g.n + 1));
    wrap.classList.toggle("rr-compare-mode", compare);
    setHeader();
    inner.style.height = `${g.n * RANK_ROW + (g.n > 0 ? CUT_BAND : 0)}px`;
    renderWindow();
    renderMissing();
  }

  function renderWindow() {
    // narrow grids put the judgment inside the document cell and leave the score out
    const compact = vp.w > 0 && vp.w < COMPACT;
    if (compact !== g.compact) {
      g.compact = compact;
      wrap.classList.toggle("rr-compact", compact);
      setHeader();
    }
    const rows = g.rows;
    const n = g.n;
    const viewTop = vp.top;
    const viewH = vp.h || 480;
    /** @type {Node[]} */
    const nodes = [];
    if (!rows || n === 0) {
      nodes.push(h("div", { class: "rr-grid-none rr-muted", role: "row" },
        h("div", { role: "gridcell", text: rows ? "Nothing was retrieved for this query." : "" })));
      put(inner, ...nodes);
      put(beyond);
      return;
    }
    const adj = (y) => (g.k < n && y > g.k * RANK_ROW ? y - CUT_BAND : y);
    let first = Math.floor(adj(viewTop) / RANK_ROW) - OVERSCAN;
    let last = Math.ceil(adj(viewTop + viewH) / RANK_ROW) + OVERSCAN;
    first = Math.max(0, first); last = Math.min(n - 1, last);
    for (let i = first; i <= last; i++) nodes.push(row(rows, i));
    const cutAt = Math.min(g.k, n);
    if (cutAt >= first && cutAt <= last + 1) {
      const label = g.k <= n ? `cut-off at K = ${g.k}`
        : `cut-off at K = ${g.k}: only ${n} retrieved`;
      nodes.push(h("div", {
        class: g.k > n ? "rr-cut rr-cut-end" : "rr-cut", role: "separator", "data-role": "cut", "aria-label": label,
        style: `top:${cutAt * RANK_ROW}px`,
      }, h("span", { text: label })));
    }
    put(inner, ...nodes);
    // relevant rows entirely below the visible part
    const lastVisible = Math.floor((adj(viewTop + viewH) - 1) / RANK_ROW);
    const below = g.relIdx.filter((i) => i > lastVisible);
    if (below.length === 0) { put(beyond); return; }
    const shown = below.slice(0, BEYOND_LIST);
    const parts = [h("span", { text: below.length === 1
      ? "Relevant beyond the visible range: rank " : "Relevant beyond the visible range: ranks " })];
    shown.forEach((i, j) => {
      if (j > 0) parts.push(document.createTextNode(", "));
      parts.push(h("button", { type: "button", class: "rr-link-btn", text: String(rows.rank[i]),
        title: `show rank ${rows.rank[i]}`,
        // the button goes with the line it is in: the keys stay with the ranking
        onclick: () => { reveal(i); scroller.focus({ preventScroll: true }); } }));
    });
    if (below.length > shown.length) {
      parts.push(document.createTextNode(` and ${below.length - shown.length} more`));
    }
    put(beyond, ...parts);
  }

  /**
   * The score of row ``i``, with a tie mark when other documents have the same score (their
   * order is trec_eval's, by document id, not the retriever's; the values depend on it).
   * @param {RankRows} rows
   * @param {number} i
   * @param {boolean} [inline] a tag inside the document cell (the compact grid)
   */
  function scoreCell(rows, i, inline = false) {
    const sc = rows.score ? rows.score[i] : null;
    const tie = rows.tie ? rows.tie[i] : null;
    const text = typeof sc === "number" ? String(Number(sc.toPrecision(6))) : "";
    const attrs = inline ? { class: "rr-c-score rr-score-tag", text: text ? ` score ${text}` : "" }
      : { class: "rr-cell rr-c-score", role: "gridcell", text };
    if (!tie) return h(inline ? "span" : "div", attrs);
    const title = `tied with ranks ${tie[0]}\u2013${tie[1]}: their order is trec_eval's (document id, descending), not the retriever's`;
    return h(inline ? "span" : "div", { ...attrs, class: `${attrs.class} rr-tied`, title, text: undefined },
      inline ? " score " : null,
      h("span", { class: "rr-tie-mark", text: "\u2261 ", "aria-label": "tied score," }), text);
  }

  /**
   * Whether row ``i`` can be judged here: judging is on and the qrels leave it unjudged
   * (or it was judged here, and can be judged again).
   * @param {RankRows} rows
   * @param {number} i
   */
  function judgeable(rows, i) {
    const grade = rows.grade[i];
    return !!meta().judging && (grade === null || grade === undefined
      || !!(rows.judged_here && rows.judged_here[i]));
  }

  /**
   * Judge row ``i`` at ``grade``: a ``judge`` message; the kernel appends it to the file and
   * sends the view evaluated again. A row the qrels judge is refused here, with a note.
   * @param {number} i
   * @param {number} grade
   */
  function judge(i, grade) {
    const rows = g.rows;
    const J = meta().judging;
    if (!rows || !J || i < 0 || i >= g.n || !(J.grades || []).includes(grade)) return;
    const doc = rows.doc_id[i];
    if (!judgeable(rows, i)) {
      st.localError = `${doc} is judged in the qrels: only unjudged documents can be judged here`;
      v.renderError();
      return;
    }
    if (st.judging) return; // one judgment at a time: the next follows its answer
    const id = v.request({ type: "judge", qid: g.qid, doc_id: doc, grade });
    st.judging = { qid: g.qid, doc_id: doc, grade, id };
    renderWindow();
    v.renderPassage();
  }

  /**
   * The grade buttons of a judgeable row (out of the tab order: the keys judge the active row).
   * @param {RankRows} rows
   * @param {number} i
   */
  function judgeButtons(rows, i) {
    const J = meta().judging;
    const doc = rows.doc_id[i];
    const grade = rows.grade[i];
    const pending = st.judging && st.judging.qid === g.qid && st.judging.doc_id === doc;
    return h("span", { class: `rr-judge${pending ? " rr-judge-pending" : ""}`, role: "group",
      "aria-label": `judge ${doc}` }, ...(J.grades || []).map((/** @type {number} */ gr) => h("button", {
      type: "button", class: "rr-judge-btn", "data-role": "judge", "data-grade": String(gr),
      tabindex: "-1", text: String(gr), title: `judge ${doc}: grade ${gr} (key ${gr})`,
      "aria-pressed": (pending ? st.judging.grade === gr : grade === gr) ? "true" : "false",
    })));
  }

  /**
   * @param {RankRows} rows
   * @param {number} i
   */
  function row(rows, i) {
    const grade = rows.grade[i];
    const rel = !!rows.relevant[i];
    const unjudged = grade === null || grade === undefined;
    const canJudge = judgeable(rows, i);
    const mine = !!(rows.judged_here && rows.judged_here[i]);
    const cls = ["rr-grid-row", "rr-rank-row", rel ? "rr-rel" : unjudged ? "rr-unjudged" : "rr-nonrel"];
    if (i >= g.k) cls.push("rr-below");
    if (i === g.active) cls.push("rr-active");
    const gradeText = (unjudged ? "unjudged" : rel ? `relevant (${grade})`
      : grade === 0 ? "not relevant" : `not relevant (${grade})`) + (mine ? " \u00b7 judged here" : "");
    if (mine) cls.push("rr-judged-here");
    const snippet = rows.text && rows.text[i] ? h("span", { class: "rr-snippet", text: ` ${rows.text[i]}` }) : null;
    const cells = [
      h("div", { class: "rr-cell rr-c-rank", role: "gridcell", text: String(rows.rank[i]) }),
      g.compact
        ? h("div", { class: "rr-cell rr-c-doc", role: "gridcell" },
          docIdNode(rows.doc_id[i]),
          h("span", { class: "rr-c-grade rr-grade-tag rr-grade-text", text: gradeText }),
          // a row to judge has its grade buttons on the passage's line (the passage opens
          // beside the ranking when the row is chosen)
          scoreCell(rows, i, true), canJudge ? judgeButtons(rows, i) : snippet)
        : h("div", { class: "rr-cell rr-c-doc", role: "gridcell" },
          docIdNode(rows.doc_id[i]), snippet),
    ];
    if (!g.compact) {
      cells.push(h("div", { class: "rr-cell rr-c-grade", role: "gridcell" },
        h("span", { class: "rr-grade-text", text: gradeText }), canJudge ? judgeButtons(rows, i) : null));
      cells.push(scoreCell(rows, i));
    }
    if (g.compare) {
      const moves = g.moves || rows.move;
      const mv = moves ? moves[i] : null;
      let text = "new";
      let effect = rel ? "good" : "neutral";
      let title = rel ? "relevant, not retrieved by A" : "not retrieved by A";
      if (typeof mv === "number") {
        if (mv === 0) { text = "="; effect = "neutral"; title = "same rank as in A"; } else {
          const up = mv > 0;
          text = `${up ? "\u25b2" : "\u25bc"}${Math.abs(mv)}`;
          if (unjudged) { effect = "neutral"; title = `unjudged, moved ${up ? "up" : "down"} ${Math.abs(mv)}`; } else {
            const good = rel === up;
            effect = good ? "good" : "bad";
            title = `${rel ? "relevant" : "not relevant"}, moved ${up ? "up" : "down"} ${Math.abs(mv)}: ${good ? "helps" : "hurts"} the measure`;
          }
        }
      }
      cls.push(`rr-move-${effect}`);
      cells.push(h("div", { class: `rr-cell rr-c-move rr-${effect}`, role: "gridcell", text, title }));
    }
    return h("div", {
      class: cls.join(" "), role: "row", "aria-rowindex": String(i + 2), "data-index": String(i),
      "data-doc-id": rows.doc_id[i], "aria-selected": i === g.active ? "true" : "false",
      style: `top:${top(i)}px`,
    }, ...cells);
  }

  function renderMissing() {
    const miss = g.missing;
    if (!g.rows || miss.length === 0) {
      put(missing);
      missing.hidden = true;
      return;
    }
    missing.hidden = false;
    const limit = g.showAllMissing ? miss.length : 8;
    const items = miss.slice(0, limit).map((d) => h("li", { text: d }));
    const more = miss.length > limit ? h("button", {
      type: "button", class: "rr-link-btn", text: `show all ${miss.length}`,
      onclick: () => { g.showAllMissing = true; renderMissing(); },
    }) : null;
    put(missing, 
      h("span", { class: "rr-missing-title", text: `Judged relevant, not retrieved (${miss.length}):` }),
      h("ul", { class: "rr-missing-list" }, ...items), more);
  }

  /** Scroll row i into view. @param {number} i */
  function reveal(i) {
    const y = top(i);
    const viewH = vp.h || 480;
    if (y < vp.top) scrollTo(y);
    else if (y + RANK_ROW > vp.top + viewH) scrollTo(y + RANK_ROW - viewH);
    renderWindow();
  }

  /** @param {number} y */
  function scrollTo(y) {
    scroller.scrollTop = y;
    vp.top = scroller.scrollTop;
  }

  /** @param {number} i */
  function activate(i) {
    if (!g.rows || i < 0 || i >= g.n) return;
    g.active = i;
    reveal(i);
    v.openPassage(side, i, g.rows);
  }

  listen(scroller, "scroll", () => { vp.top = scroller.scrollTop; renderWindow(); }, { passive: true });
  listen(inner, "click", (ev) => {
    const target = /** @type {HTMLElement} */ (ev.target);
    const r = target.closest("[data-index]");
    if (!r) return;
    const i = Number(r.getAttribute("data-index"));
    const btn = target.closest("[data-grade]");
    activate(i);
    if (btn) {
      judge(i, Number(btn.getAttribute("data-grade")));
      scroller.focus({ preventScroll: true }); // the next key judges or moves here
    }
  });
  listen(scroller, "keydown", (ev) => {
    const e = /** @type {KeyboardEvent} */ (ev);
    const step = { ArrowDown: 1, ArrowUp: -1, j: 1, k: -1 }[e.key];
    if (step) { activate(Math.max(0, Math.min(g.n - 1, (g.active < 0 ? -1 : g.active) + step))); e.preventDefault(); }
    else if (e.key === "Home") { activate(0); e.preventDefault(); }
    else if (e.key === "End") { activate(g.n - 1); e.preventDefault(); }
    else if (/^[0-9]$/.test(e.key) && meta().judging && g.active >= 0 && !e.repeat
      && !e.ctrlKey && !e.metaKey && !e.altKey) {
      judge(g.active, Number(e.key)); e.preventDefault();
    }
  });

  return { wrap, title, update, renderWindow, g, reveal, scroller, vp, judge, judgeable };
}

// ---- src/ranking.js ----------------------------------------------------------------------

/**
 * The ranking column: the selected query's head (id, text, facts, notes) and the grids of
 * run A and run B.
 */


/**
 * Build the ranking column of view ``v`` (adds ``rankCol``, ``gridA``, ``gridB``,
 * ``renderRankingHead`` and ``renderRanking`` to it).
 * @param {any} v
 */
function makeRanking(v) {
  const { st, get, meta, rowAt } = v;
  // ranking column
  const rankHead = h("div", { class: "rr-rank-head" });
  const gridsEl = h("div", { class: "rr-grids" });
  const rankCol = h("section", { class: "rr-col rr-rank-col", "data-role": "ranking",
    "aria-label": "ranking of the selected query" }, rankHead, gridsEl);

  const gridA = makeGrid(v, "a");
  const gridB = makeGrid(v, "b");

  function renderRankingHead() {
    const R = get("ranking") || {};
    const qid = st.selQid || R.qid || "";
    const stale = !!qid && R.qid !== qid;
    if (!stale) { st.staleQid = ""; st.rankSilent = false; }
    else if (st.staleQid !== qid) { st.staleQid = qid; st.staleT = performance.now(); st.rankSilent = false; }
    rankCol.classList.toggle("rr-stale", stale);
    rankCol.classList.toggle("rr-silent", stale && st.rankSilent);
    v.panelCol.classList.toggle("rr-stale", stale);
    v.panelCol.classList.toggle("rr-silent", stale && st.rankSilent);
    rankCol.setAttribute("aria-busy", stale && !st.rankSilent ? "true" : "false");
    if (!qid) {
      put(rankHead, h("div", { class: "rr-muted", text: "Select a query in the list." }));
      return;
    }
    let text = "";
    if (!stale) text = R.query_text || "";
    else {
      const hit = st.selPos >= 0 ? rowAt(st.selPos) : null;
      if (hit) text = hit[0].text ? hit[0].text[hit[1]] : "";
    }
    const facts = [];
    if (!stale) {
      facts.push(`${count(R.n_ret)} retrieved`, `${count(R.n_rel)} judged relevant`);
      const panel = get("panel") || {};
      if (panel.kind) facts.push(panel.kind);
      if (typeof panel.judged_at_k === "number") facts.push(`${panel.judged_label || `Judged@${get("k")}`} ${fmt(panel.judged_at_k)}`);
    } else if (!st.rankSilent) facts.push("loading\u2026");
    const hiddenSel = !stale && get("selected") === qid && get("selected_pos") === -1;
    const J = meta().judging;
    const judgeNote = J ? h("div", { class: "rr-note rr-judge-note", "data-role": "judging-note",
      title: J.path, text: `Judge an unjudged document: select it, then key ${(J.grades || []).join("/")} `
        + `(or click a grade) \u00b7 ${count(J.count)} judgment${J.count === 1 ? "" : "s"} in ${J.path}` }) : null;
    put(rankHead, 
      h("div", { class: "rr-q-title" },
        h("span", { class: "rr-q-id", "data-role": "ranking-qid", text: qid }),
        text ? h("span", { class: "rr-q-text", text, title: text }) : null),
      facts.length ? h("div", { class: "rr-q-facts rr-muted", text: facts.join(" \u00b7 ") }) : null,
      stale && st.rankSilent ? h("div", { class: "rr-note rr-note-bad", "data-role": "ranking-silent", role: "alert",
        text: "The kernel did not answer: rerun the cell" }) : null,
      hiddenSel ? h("div", { class: "rr-note", "data-role": "hidden-note", role: "status",
        text: `${qid} is hidden by the current filter` }) : null,
      judgeNote);
  }

  function renderRanking() {
    renderRankingHead();
    const R = get("ranking") || {};
    const k = Math.max(1, get("k") | 0);
    const runs = meta().runs || [];
    const hasB = get("run_b") >= 0 && R.b && R.b.rows;
    gridsEl.classList.toggle("rr-two", !!hasB);
    const parts = [gridA.wrap];
    put(gridA.title, 
      h("span", { class: "rr-swatch rr-swatch-a", "aria-hidden": "true" }),
      h("span", { class: "rr-run-name", text: hasB ? `A: ${runs[get("run_a")] || ""}` : runs[get("run_a")] || "" }));
    gridA.update(R.rows || null, k, R.missing_relevant || [], false, null, R.qid);
    if (hasB) {
      put(gridB.title, 
        h("span", { class: "rr-swatch rr-swatch-b", "aria-hidden": "true" }),
        h("span", { class: "rr-run-name", text: `B: ${runs[get("run_b")] || ""}` }),
        h("span", { class: "rr-muted rr-legend-moves" },
          h("span", { class: "rr-good", text: " \u25b2 helps" }), " / ", h("span", { class: "rr-bad", text: "\u25bc hurts" })));
      gridB.update(R.b.rows, k, R.b.missing_relevant || [], true, R.b.move || null, R.qid);
      parts.push(gridB.wrap);
    }
    if (gridsEl.childElementCount !== parts.length || gridsEl.firstChild !== gridA.wrap) put(gridsEl, ...parts);
    // the cut line is in view after a new query or a new K
    v.renderPassage();
  }
  Object.assign(v, { rankCol, gridA, gridB, renderRankingHead, renderRanking });
}

// ---- src/summary.js ----------------------------------------------------------------------

/**
 * The summary line (each run's mean and interval, the targets), the paired test of B
 * against A, and the error line.
 */


/**
 * Build the summary of view ``v`` (adds ``summaryEl``, ``compareEl``, ``errorEl``,
 * ``renderSummary``, ``renderError`` and ``errorMessage`` to it).
 * @param {any} v
 */
function makeSummary(v) {
  const { st, get, meta } = v;
  // summary and paired test
  const summaryEl = h("div", { class: "rr-summary", "data-role": "summary" });
  const compareEl = h("div", { class: "rr-compare", "data-role": "compare", "aria-live": "polite" });
  const errorText = h("span", { class: "rr-error-text" });
  const errorEl = h("div", { class: "rr-error", "data-role": "error", role: "alert" },
    errorText,
    h("button", {
      type: "button", class: "rr-btn rr-btn-small", "aria-label": "dismiss error", text: "\u00d7",
      onclick: () => { st.dismissed = errorMessage(); st.localError = ""; renderError(); },
    }));
  errorEl.hidden = true;

  function renderSummary() {
    const sm = get("summary") || {};
    const nodes = [];
    if (sm.label) {
      nodes.push(h("span", { class: "rr-sum-label", text: `${sm.label} mean`, title: sm.title || undefined }));
      // run A first, then B, then the others (the order of the target chips and the grids)
      const allRuns = meta().runs || [];
      const rank = (/** @type {any} */ r) => {
        const idx = allRuns.indexOf(r.name);
        return idx === get("run_a") ? -2 : idx === get("run_b") ? -1 : idx;
      };
      [...(sm.runs || [])].sort((x, y) => rank(x) - rank(y)).forEach((/** @type {any} */ r) => {
        const ci = typeof r.lo === "number" ? ` [${fmt(r.lo)}, ${fmt(r.hi)}]` : sm.pending ? " [interval\u2026]" : "";
        const idx = (meta().runs || []).indexOf(r.name);
        nodes.push(h("span", { class: "rr-sum-run" },
          h("span", { class: "rr-swatch", "aria-hidden": "true",
            style: `background: var(--rr-run-${Math.max(0, idx) % 7})` }),
          h("span", { class: "rr-run-name", text: r.name }),
          h("span", { class: "rr-num", text: ` ${fmt(r.mean)}` }),
          ci ? h("span", { class: "rr-muted rr-num", text: ci, title: sm.level ? `${Math.round(sm.level * 100)}% bootstrap interval` : "bootstrap interval" }) : null));
      });
      // targets: one chip per target, the value of each run in it
      /** @type {Map<string, any[]>} */
      const byLabel = new Map();
      for (const t of sm.targets || []) {
        if (!byLabel.has(t.label)) byLabel.set(t.label, []);
        byLabel.get(t.label)?.push(t);
      }
      if (byLabel.size) nodes.push(h("span", { class: "rr-sum-label rr-sum-targets", text: "Targets" }));
      for (const [label, ts] of byLabel) nodes.push(targetChip(label, ts, (sm.runs || []).length > 1));
    }
    // the filter, category, slice and "fails" choose the rows of the list, not the queries
    // the means and the paired test are over: said, when they hide some
    const listed = get("n_visible");
    // run A's queries (the summary follows run A; meta's count is the first run A's)
    const runA = (sm.runs || []).find((/** @type {any} */ r) => r.name === (meta().runs || [])[get("run_a")]);
    const all = runA && typeof runA.n === "number" ? runA.n : meta().n_queries;
    if (sm.label && typeof listed === "number" && typeof all === "number" && listed < all) {
      nodes.push(h("span", { class: "rr-muted rr-sum-scope", "data-role": "summary-scope",
        text: `over all ${count(all)} queries of run A, not only the ${count(listed)} listed` }));
    }
    put(summaryEl, ...nodes);
    const c = get("compare") || {};
    const runs = meta().runs || [];
    if (c && c.label !== undefined && get("run_b") >= 0
        && (c.run_a !== runs[get("run_a")] || c.run_b !== runs[get("run_b")])) {
      // the runs changed here and Python's comparison of the new pair is not in yet: the
      // numbers shown would be the previous pair's, under the new pair's names
      compareEl.hidden = false;
      put(compareEl,
        h("span", { class: "rr-sum-label", text: "Paired test" }),
        h("span", { class: "rr-muted", "data-role": "compare-updating",
          text: `B ${MINUS} A: updating for ${runs[get("run_b")] || ""} against ${runs[get("run_a")] || ""}\u2026` }));
    } else if (c && c.label !== undefined && get("run_b") >= 0) {
      const sig = c.significant;
      compareEl.hidden = false;
      const stats = c.pending ? " \u00b7 paired tests running\u2026" :
        ` \u00b7 t-test p = ${pval(c.p_t)} \u00b7 randomisation p = ${pval(c.p_rand)}`;
      put(compareEl, 
        h("span", { class: "rr-sum-label", text: "Paired test" }),
        h("span", { text: `${c.label}, B ${MINUS} A = ` }),
        h("span", { class: `rr-num ${deltaClass(c.delta, "")}`, text: signed(c.delta) }),
        typeof c.lo === "number" ? h("span", { class: "rr-muted rr-num", text: ` [${signed(c.lo)}, ${signed(c.hi)}]`, title: "bootstrap interval of the difference" }) : null,
        h("span", { text: `${stats} \u00b7 ${count(c.n)} queries: B better on ${count(c.wins)}, worse on ${count(c.losses)}, tied on ${count(c.ties)} \u00b7 ` }),
        c.pending ? null : h("strong", { class: sig ? "" : "rr-muted", text: sig ? "significant" : "not significant" }));
    } else {
      compareEl.hidden = true;
      put(compareEl);
    }
  }

  /**
   * One target with the value of each run (A, then B).
   * @param {string} label
   * @param {any[]} ts
   * @param {boolean} named
   */
  function targetChip(label, ts, named) {
    const all = ts.every((t) => t.pass === true);
    const none = ts.every((t) => t.pass === false);
    const chip = h("span", { class: `rr-chip ${all ? "rr-pass" : none ? "rr-fail" : ""}`, title: ts[0].title || undefined },
      h("span", { class: "rr-chip-label", text: `${label}:` }));
    const allRuns = meta().runs || [];
    ts.forEach((t) => {
      const idx = allRuns.indexOf(t.run);
      const side = idx === get("run_a") ? "A" : idx === get("run_b") ? "B" : "";
      const short = typeof t.run === "string" && t.run.length > 14 ? `${t.run.slice(0, 13)}\u2026` : t.run;
      chip.append(h("span", { class: `rr-chip-val ${t.pass === true ? "rr-good" : t.pass === false ? "rr-bad" : ""}`,
        title: named && t.run ? `${side ? `run ${side}: ` : ""}${t.run}` : undefined, "data-run": t.run || undefined },
      named && t.run ? h("span", { class: "rr-chip-run" },
        h("span", { class: "rr-swatch", "aria-hidden": "true", style: `background: var(--rr-run-${Math.max(0, idx) % 7})` }),
        h("span", { class: "rr-chip-run-name", text: short })) : null,
      h("span", { class: "rr-num", text: ` ${fmt(t.value)}` }),
      h("span", { text: t.pass === true ? " \u2713" : t.pass === false ? " \u2717" : "" }),
      // a target on the interval that these queries cannot decide
      t.outcome === "inconclusive" ? h("span", { class: "rr-muted", "data-role": "inconclusive",
        text: " inconclusive", title: "the interval holds the threshold: these queries cannot tell" }) : null));
    });
    chip.setAttribute("aria-label", `${label}: ${ts.map((t) => `${named && t.run ? `${t.run} ` : ""}${fmt(t.value)} ${t.pass === true ? "passes" : t.pass === false ? "fails" : "not checked"}${t.outcome === "inconclusive" ? " (inconclusive)" : ""}`).join(", ")}`);
    return chip;
  }

  function errorMessage() { return st.localError || get("error") || ""; }

  function renderError() {
    const msg = errorMessage();
    const show = msg !== "" && msg !== st.dismissed;
    errorEl.hidden = !show;
    errorText.textContent = show ? msg : "";
  }
  Object.assign(v, { summaryEl, compareEl, errorEl, renderSummary, renderError, errorMessage });
}

// ---- src/toolbar.js ----------------------------------------------------------------------

/**
 * The toolbar: the measure, K (slider and box), runs A and B with the swap, and the report
 * button with its link; ``renderToolbar`` draws the traits into them.
 */


/**
 * Build the toolbar of view ``v`` (adds ``toolbar``, ``renderToolbar``, ``renderReport`` and
 * ``setReportHtml`` to it).
 * @param {any} v
 */
function makeToolbar(v) {
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

// ---- src/view.js -------------------------------------------------------------------------

/**
 * One rendered view's context: the model, the local view state, the saves of traits, the
 * protocol with the kernel (requests matched on their id) and the cache of the list's row
 * windows (fetched with ``rows`` messages, per ``order_version``). The parts of the view
 * (toolbar, summary, list, ranking, panel) add their elements and functions to it.
 */


let viewCounter = 0;

/**
 * The context of a view rendered into ``el``.
 * @param {Model} model
 * @param {HTMLElement} el
 * @returns {any}
 */
function makeView(model, el) {
  /** @type {any} */
  const v = { model, el };
  const uid = `rrx${++viewCounter}`;
  /** @type {(() => void)[]} */
  const cleanups = [];
  /**
   * @param {string} event
   * @param {Function} cb
   */
  const onModel = (event, cb) => {
    model.on(event, cb);
    cleanups.push(() => model.off(event, cb));
  };
  /**
   * @param {EventTarget} target
   * @param {string} event
   * @param {EventListener} cb
   * @param {any} [opts]
   */
  const listen = (target, event, cb, opts) => {
    target.addEventListener(event, cb, opts);
    cleanups.push(() => target.removeEventListener(event, cb, opts));
  };
  /** @param {string} name */
  const get = (name) => model.get(name);
  /** @returns {Meta} */
  const meta = () => get("meta") || {};

  // ---- local view state ------------------------------------------------------------------
  const st = {
    /** order_version the cached windows belong to */
    version: -1,
    /** @type {Map<number, Rows>} window index -> rows */
    windows: new Map(),
    /** @type {Map<string, {type: string, keys?: string[], t: number, version?: number}>} */
    pending: new Map(),
    nextId: 1,
    /** selection as shown: position in the visible order and query id */
    selPos: -1,
    selQid: "",
    /** @type {number|null} a position selected before its row arrived */
    wantPos: null,
    /** a local model.set is running (its change events are ours) */
    local: false,
    /** flags collected between model events and the next flush */
    selFromModel: false,
    versionChanged: false,
    /** @type {{side: string, index: number, doc_id: string, text: string|null, qid: string,
     *   run: number}|null} */
    passage: null,
    /** @type {{qid: string, doc_id: string, grade: number, id: string}|null} a judgment on
     * its way (its request's id) */
    judging: null,
    reportBusy: false,
    localError: "",
    dismissed: "",
    narrow: false,
    kernelSilent: false,
    /** the query whose ranking is awaited, since when, and whether the wait is over */
    staleQid: "",
    staleT: 0,
    rankSilent: false,
    /** "first" or "last" for a moment after a key tried to go past an end */
    edge: "",
    /** @type {any} */
    edgeTimer: null,
  };

  /**
   * Set a trait from the view (its change event is marked as ours).
   * @param {string} name
   * @param {any} value
   */
  function setLocal(name, value) {
    st.local = true;
    try { model.set(name, value); } finally { st.local = false; }
    // the next thing asked here (K, a filter, runs...): an error said here no longer applies.
    // Not the scroll position, nor the selection, which is also set when a row arrives
    // from the kernel or a throttled save fires (selectPos clears it on the user's move)
    if (name !== "view_top" && name !== "selected") clearLocalError();
  }
  function clearLocalError() {
    if (!st.localError) return;
    st.localError = "";
    v.schedule("error");
  }
  const save = () => { model.save_changes(); };
  // the selection sent is the newest one made here (an echo may have set an older one)
  const saveSelection = throttle(() => {
    if (st.selQid && get("selected") !== st.selQid) setLocal("selected", st.selQid);
    save();
  }, SELECT_WAIT);
  const saveK = throttle(save, K_WAIT);

  /**
   * Send a request; the reply is matched on its ``id``.
   * @param {Record<string, any>} msg
   * @param {string[]} [keys] the row windows it brings
   */
  function request(msg, keys) {
    const id = `${uid}-${st.nextId++}`;
    st.pending.set(id, { type: msg.type, keys, t: performance.now(), version: msg.version });
    const out = { ...msg, id };
    delete out.version;
    model.send(out);
    return id;
  }

  const root = h("div", {
    class: "rr-explorer", "data-lm-suppress-shortcuts": "true", role: "region",
    "aria-label": "ragreport explorer",
  });

  /** @param {number} pos @returns {[Rows, number]|null} */
  function rowAt(pos) {
    const w = Math.floor(pos / WINDOW);
    const win = st.windows.get(w);
    if (!win) return null;
    const j = pos - win.start;
    if (j < 0 || j >= win.qid.length) return null;
    return [win, j];
  }

  /**
   * Request the windows covering rows [first, last] that are neither cached nor on their way,
   * in one message (two windows at most), then the neighbouring window (prefetch) when the
   * range is near a window's edge.
   * @param {number} first
   * @param {number} last
   */
  function ensureRows(first, last) {
    const n = get("n_visible") | 0;
    if (n <= 0) return;
    const version = get("order_version");
    const lastW = Math.floor((n - 1) / WINDOW);
    const inflight = new Set();
    for (const p of st.pending.values()) for (const key of p.keys || []) inflight.add(key);
    const wanted = (/** @type {number} */ w) => w >= 0 && w <= lastW && !st.windows.has(w)
      && !inflight.has(`${version}:${w}`);
    /** @param {number[]} ws */
    const ask = (ws) => {
      if (!ws.length) return;
      request({ type: "rows", start: ws[0] * WINDOW,
        end: Math.min(n, (ws[ws.length - 1] + 1) * WINDOW), version },
      ws.map((w) => `${version}:${w}`));
      for (const w of ws) inflight.add(`${version}:${w}`);
    };
    const w0 = Math.floor(first / WINDOW);
    const w1 = Math.floor(last / WINDOW);
    const need = [];
    for (let w = w0; w <= w1; w++) if (wanted(w)) need.push(w);
    // contiguous runs of at most two windows (the protocol's 500 rows)
    for (let i = 0; i < need.length;) {
      const run = [need[i]];
      while (i + run.length < need.length && run.length < 2
        && need[i + run.length] === run[run.length - 1] + 1) run.push(need[i + run.length]);
      ask(run);
      i += run.length;
    }
    if (first % WINDOW < WINDOW / 4 && wanted(w0 - 1)) ask([w0 - 1]);
    if (last % WINDOW > (3 * WINDOW) / 4 && wanted(w1 + 1)) ask([w1 + 1]);
  }

  /** @param {Rows} rows */
  function storeRows(rows) {
    if (!rows || !Array.isArray(rows.qid)) return;
    const start = rows.start | 0;
    // split what arrived into aligned windows (a reply may be clamped or unaligned)
    for (let off = 0; off < rows.qid.length;) {
      const pos = start + off;
      const w = Math.floor(pos / WINDOW);
      const end = Math.min(rows.qid.length, (w + 1) * WINDOW - start);
      if (pos === w * WINDOW || !st.windows.has(w)) {
        /** @type {any} */
        const win = { start: pos };
        for (const [key, col] of Object.entries(rows)) {
          if (Array.isArray(col)) win[key] = col.slice(off, end);
        }
        if (pos === w * WINDOW) st.windows.set(w, win);
      }
      off = end;
    }
  }

  function syncOrder() {
    const version = get("order_version");
    const head = get("head");
    if (version !== st.version) {
      st.version = version;
      st.windows.clear();
      for (const [id, p] of st.pending) if (p.type === "rows") st.pending.delete(id);
      // the same order with new columns (tags computed in the background): the rows are
      // fetched again, the list stays where it is
      if (!(head && head.same_order)) st.versionChanged = true;
    }
    if (head && Array.isArray(head.qid) && (head.start | 0) === 0) {
      storeRows(head);
      // the windows the view draws next (around the selection and the scroll position),
      // sent with the order so that an order change takes one round trip
      if (Array.isArray(head.near)) for (const block of head.near) storeRows(block);
    }
  }

  Object.assign(v, { uid, cleanups, onModel, listen, get, meta, st, setLocal, clearLocalError,
    save, saveSelection, saveK, request, root, rowAt, ensureRows, storeRows, syncOrder });
  return v;
}

// ---- src/explorer.js ---------------------------------------------------------------------

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
