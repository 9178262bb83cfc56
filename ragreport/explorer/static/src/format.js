/**
 * Numbers as the reports show them (``ragreport.present``): values, signed differences,
 * p-values and counts. Pure functions, no DOM.
 */

import { MINUS } from "./constants.js";

/**
 * ``x`` with ``d`` decimals exactly as Python's ``f"{x:.{d}f}"`` prints it: correctly rounded,
 * an exact tie (x * 2**(d+1) an odd integer: the only binary values halfway between two
 * d-decimal numbers) to the even last digit, where ``toFixed`` would round it up; "-0.0000"
 * for a negative value that rounds to zero (and for -0), as Python does.
 * @param {number} x
 * @param {number} d
 */
export function fixedEven(x, d) {
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
export function fmt(v) {
  return typeof v === "number" && Number.isFinite(v) ? fixedEven(v, 4) : "\u2013";
}

/**
 * A signed difference with a real minus sign (``present.signed``), "±" when it shows as zero.
 * @param {number|null|undefined} v
 */
export function signed(v) {
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
export function pval(p) {
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
export function isTie(d) {
  return Math.abs(d * 1e12) <= 0.5;
}

/**
 * The class of a difference: good above, bad below, muted (``tie``) when it is a tie.
 * @param {number|null|undefined} d
 * @param {string} [tie]
 */
export function deltaClass(d, tie = "rr-muted") {
  if (typeof d !== "number" || !Number.isFinite(d) || isTie(d)) return tie;
  return d > 0 ? "rr-good" : "rr-bad";
}

/** @param {number} n */
export function count(n) {
  return Number(n || 0).toLocaleString("en-US");
}
