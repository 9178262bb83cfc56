/**
 * A virtualised ranking grid (run A's or run B's): rows around the visible range, the cut-off
 * line at K, relevant documents beyond the visible range, judged relevant ones not retrieved,
 * and the moves of B's documents against A.
 */

import { BEYOND_LIST, COMPACT, CUT_BAND, OVERSCAN, RANK_ROW } from "./constants.js";
import { docIdNode, h, put } from "./dom.js";

/**
 * One virtualised ranking grid of view ``v``.
 * @param {any} v
 * @param {"a"|"b"} side
 */
export function makeGrid(v, side) {
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
