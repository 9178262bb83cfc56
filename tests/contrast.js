// The WCAG contrast of every piece of text under a root, against the colour behind it:
// backgrounds composed up the tree (alpha blended over the page's canvas), text colour with
// its alpha (and the opacity of its ancestors) blended over that background. Text = element
// with a non-blank text node of its own, a form control showing a value, or SVG <text>.
// Hidden, zero-size, disabled and aria-hidden elements are left out (WCAG exempts inactive
// controls). Colours are read through a 1x1 canvas, so any CSS colour syntax works.
// Used by tests/labserver.py (CONTRAST_JS): page.evaluate(CONTRAST_JS, rootOrSelector).
(root) => {
  if (typeof root === 'string') root = document.querySelector(root);
  if (!root) return {error: 'root not found'};
  const cv = document.createElement('canvas'); cv.width = cv.height = 1;
  const ctx = cv.getContext('2d', {willReadFrequently: true});
  const cache = new Map();
  function rgba(str) {
    if (cache.has(str)) return cache.get(str);
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = '#010203'; ctx.fillStyle = str;
    ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data;
    const out = [d[0], d[1], d[2], d[3] / 255];
    cache.set(str, out); return out;
  }
  const over = (top, bot) => {           // top (rgba) over an opaque bottom (rgb)
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + bot[i] * (1 - a));
  };
  function lum(c) {
    const f = v => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  }
  function ratio(a, b) {
    const la = lum(a), lb = lum(b);
    return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
  }
  function background(el) {
    const chain = [];
    let opacity = 1;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const cs = getComputedStyle(e);
      chain.push(cs.backgroundColor);
      opacity *= parseFloat(cs.opacity || '1');
    }
    // the canvas: the root element's background, else white
    let bg = [255, 255, 255];
    for (let i = chain.length - 1; i >= 0; i--) bg = over(rgba(chain[i]), bg);
    return {bg, opacity};
  }
  function visible(el) {
    if (el.closest('[aria-hidden="true"]')) return false;
    const cs = getComputedStyle(el);
    if (cs.visibility !== 'visible' || cs.display === 'none') return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  }
  const out = [];
  const els = [root, ...root.querySelectorAll('*')];
  for (const el of els) {
    const tag = el.tagName.toLowerCase();
    let text = '';
    if (tag === 'input' || tag === 'select' || tag === 'textarea') {
      if (tag === 'input' && ['range', 'checkbox', 'radio', 'hidden', 'color'].includes(el.type)) continue;
      text = tag === 'select' ? (el.selectedOptions[0] ? el.selectedOptions[0].text : '') : el.value;
    } else if (tag === 'option' || tag === 'style' || tag === 'script') {
      continue;
    } else {
      for (const n of el.childNodes) if (n.nodeType === 3) text += n.data;
    }
    text = text.trim();
    if (!text || !visible(el)) continue;
    if (el.disabled || el.closest('[disabled], [aria-disabled="true"]')) continue;
    const cs = getComputedStyle(el);
    const isSvg = el instanceof SVGElement;
    let fg = rgba(isSvg && cs.fill && cs.fill !== 'none' && !cs.fill.startsWith('url') ? cs.fill : cs.color);
    const {bg, opacity} = background(el);
    const eff = [fg[0], fg[1], fg[2], fg[3] * opacity];
    const fgc = over(eff, bg);
    const size = parseFloat(cs.fontSize);
    const bold = parseInt(cs.fontWeight, 10) >= 700;
    const large = size >= 24 || (bold && size >= 18.66);
    const r = ratio(fgc, bg);
    const path = [];
    for (let e = el; e && e !== root.parentElement && path.length < 4; e = e.parentElement) {
      path.unshift(e.tagName.toLowerCase() + (e.dataset && e.dataset.role ? `[data-role=${e.dataset.role}]` : '')
                   + (e.classList && e.classList.length ? '.' + [...e.classList].slice(0, 2).join('.') : ''));
    }
    out.push({text: text.slice(0, 60), ratio: Math.round(r * 100) / 100, need: large ? 3 : 4.5,
              fg: fgc.map(Math.round), bg: bg.map(Math.round), size, bold, path: path.join(' > ')});
  }
  return {items: out};
}
