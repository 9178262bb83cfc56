/**
 * The summary line (each run's mean and interval, the targets), the paired test of B
 * against A, and the error line.
 */

import { MINUS } from "./constants.js";
import { h, put } from "./dom.js";
import { count, deltaClass, fmt, pval, signed } from "./format.js";

/**
 * Build the summary of view ``v`` (adds ``summaryEl``, ``compareEl``, ``errorEl``,
 * ``renderSummary``, ``renderError`` and ``errorMessage`` to it).
 * @param {any} v
 */
export function makeSummary(v) {
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
