/**
 * The selected query's metric-vs-K curve against each run's mean curve, as inline SVG.
 */

import { h, s } from "./dom.js";

/**
 * The query's curve against the mean, as inline SVG with axis ticks.
 * @param {any} view the view (its traits)
 * @param {Curve} c
 * @param {boolean} hasB
 * @returns {Node[]}
 */
export function curve(view, c, hasB) {
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
