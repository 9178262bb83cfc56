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
export function h(tag, attrs, ...children) {
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
export function put(el, ...nodes) {
  el.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined && n !== false));
}

/**
 * Create an SVG element.
 * @param {string} tag
 * @param {Record<string, string|number>} [attrs]
 * @returns {SVGElement}
 */
export function s(tag, attrs) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  if (attrs) for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/**
 * Only URLs that cannot run script: relative paths, http(s) and file.
 * @param {string|undefined} url
 */
export function safeUrl(url) {
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
export function docIdNode(id) {
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
export function debounce(fn, wait) {
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
export function throttle(fn, wait) {
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
