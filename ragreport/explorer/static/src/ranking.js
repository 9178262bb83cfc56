/**
 * The ranking column: the selected query's head (id, text, facts, notes) and the grids of
 * run A and run B.
 */

import { h, put } from "./dom.js";
import { count, fmt } from "./format.js";
import { makeGrid } from "./grid.js";

/**
 * Build the ranking column of view ``v`` (adds ``rankCol``, ``gridA``, ``gridB``,
 * ``renderRankingHead`` and ``renderRanking`` to it).
 * @param {any} v
 */
export function makeRanking(v) {
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
