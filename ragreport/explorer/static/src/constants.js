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
export const WINDOW = 250;
/** Rows rendered above and below the visible range. */
export const OVERSCAN = 6;
/** Row heights in px (fixed: the lists are virtualised). */
export const LIST_ROW = 42;
export const LIST_ROW_SHORT = 30;
export const RANK_ROW = 42;
export const CUT_BAND = 22;
/** A ranking grid narrower than this (px) shows the judgment inside the document cell. */
export const COMPACT = 520;
/** Width at or below which the columns stack. */
export const NARROW = 760;
/** Debounce of the filter box (ms), of K while dragging and of keyboard selection. */
export const FILTER_WAIT = 120;
export const K_WAIT = 60;
export const SELECT_WAIT = 40;
/** A window request unanswered after this long means the kernel is gone (ms). */
export const STALE_REQUEST = 4000;
/** Milliseconds a judgment may take (the runs are evaluated again) before the view says the
 * kernel did not answer and lets the person judge again. */
export const JUDGE_WAIT = 30000;
export const NO_KERNEL = "The kernel did not answer: is it running? (Re-run the cell to reconnect.)";
/** Ranks listed in the "relevant beyond the visible range" line before "and N more". */
export const BEYOND_LIST = 12;
export const MINUS = "\u2212";
/** Short tags for the failure kinds in the query list (the full label is the tooltip). */
export const SHORT_KINDS = /** @type {Record<string, string>} */ ({
  beyond_k: "beyond K", not_retrieved: "none retrieved", empty: "empty",
  no_judged: "no judged relevant",
});
