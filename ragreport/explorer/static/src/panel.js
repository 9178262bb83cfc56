/**
 * The panel column: the passage of the document opened in a grid, and the selected query's
 * targets, measures at K and curve.
 */

import { MINUS } from "./constants.js";
import { curve } from "./curve.js";
import { h, put } from "./dom.js";
import { deltaClass, fmt, signed } from "./format.js";

/**
 * Build the panel column of view ``v`` (adds ``panelCol``, ``passageEl``, ``openPassage``,
 * ``closePassage``, ``renderPassage`` and ``renderPanel`` to it).
 * @param {any} v
 */
export function makePanel(v) {
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
