/**
 * One rendered view's context: the model, the local view state, the saves of traits, the
 * protocol with the kernel (requests matched on their id) and the cache of the list's row
 * windows (fetched with ``rows`` messages, per ``order_version``). The parts of the view
 * (toolbar, summary, list, ranking, panel) add their elements and functions to it.
 */

import { K_WAIT, SELECT_WAIT, WINDOW } from "./constants.js";
import { h, throttle } from "./dom.js";

let viewCounter = 0;

/**
 * The context of a view rendered into ``el``.
 * @param {Model} model
 * @param {HTMLElement} el
 * @returns {any}
 */
export function makeView(model, el) {
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
