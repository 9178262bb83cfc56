"""How numbers, names and user text are shown: one formatting module for every output.

The report (HTML, Markdown, JSON, terminal), the explorer, the notebook helpers and the CLI
format through these functions, so a value reads the same everywhere and a target decision
(made on the shown value, see :func:`ragreport.targets.passes`) agrees with what is printed.
Nothing here imports more than :mod:`ragreport.measures`.
"""

from __future__ import annotations

import html as _html
import math
import re

from ..measures import FAMILIES, Measure, parse_family, parse_measure
from .phrases import no_relevant_text, plural, tie_summary

__all__ = [
    "BREAK",
    "DISPLAY_DIGITS",
    "SNIPPET_CHARS",
    "byte_size",
    "curve_title",
    "direction_mark",
    "html_escape",
    "md_escape",
    "md_html_escape",
    "measure_label",
    "measure_title",
    "ms_text",
    "no_relevant_text",
    "p_clause",
    "p_pair_text",
    "p_text",
    "pct",
    "plural",
    "shown",
    "signed",
    "snippet",
    "tie_summary",
    "total_text",
]

#: Decimals every output shows; the target decision uses the same rounded value.
DISPLAY_DIGITS = 4

#: Characters of a passage shown beside a ranked document.
SNIPPET_CHARS = 240


def threshold_text(threshold: float) -> str:
    """A target's threshold as every view writes it: as given, shortest form.

    >>> threshold_text(0.85), threshold_text(1.0), threshold_text(3)
    ('0.85', '1', '3')
    """
    return f"{threshold:g}"


def target_rule(op: str, threshold: float) -> str:
    """A target's rule as every view writes it (``"> 0.85"``).

    >>> target_rule(">=", 0.5)
    '>= 0.5'
    """
    return f"{op} {threshold_text(threshold)}"


def shown(value: float, digits: int = DISPLAY_DIGITS) -> str:
    """The value as every output prints it (fixed, ``digits`` decimals).

    Parameters
    ----------
    value : float
        The number.
    digits : int
        Decimals.

    Returns
    -------
    str
        The fixed-point text.

    >>> shown(0.84996), shown(0.85), shown(1.0, 2)
    ('0.8500', '0.8500', '1.00')
    """
    return f"{value:.{digits}f}"


def signed(x: float, digits: int = DISPLAY_DIGITS) -> str:
    """A difference with its sign (a true minus sign); ``±`` when it shows as zero.

    Parameters
    ----------
    x : float
        The difference.
    digits : int
        Decimals.

    Returns
    -------
    str
        The text with ``+``, ``−`` or ``±``.

    >>> signed(0.25), signed(-0.125), signed(0.00001)
    ('+0.2500', '−0.1250', '±0.0000')
    """
    s = shown(abs(x), digits)
    if s == shown(0.0, digits):
        return "±" + s
    return ("+" if x > 0 else "−") + s


def snippet(text: str | None, limit: int = SNIPPET_CHARS) -> str:
    """``text`` on one line (whitespace runs become one space), cut to ``limit`` characters
    with an ellipsis; ``""`` for no text.

    Parameters
    ----------
    text : str or None
        The text.
    limit : int
        Maximum characters.

    Returns
    -------
    str
        One line, at most ``limit`` characters.

    >>> snippet("a  long\\n passage", 9), snippet(None), snippet("short")
    ('a long p…', '', 'short')
    """
    if not text:
        return ""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)].rstrip() + "…"


def pct(x: float, digits: int = 0) -> str:
    """A fraction as a percentage.

    Parameters
    ----------
    x : float
        The fraction.
    digits : int
        Decimals of the percentage.

    Returns
    -------
    str
        The percentage, ``–`` for NaN.

    >>> pct(0.95), pct(0.125, 1), pct(float("nan"))
    ('95%', '12.5%', '–')
    """
    if math.isnan(x):
        return "–"
    return f"{x:.{digits}%}"


def ms_text(ms: float) -> str:
    """A latency in milliseconds as every output shows it: about three significant digits
    (no decimal from 100 ms on, one from 10 ms, two from 1 ms, three significant below).

    Parameters
    ----------
    ms : float
        Milliseconds.

    Returns
    -------
    str
        The number, without the unit.

    >>> ms_text(1234.56), ms_text(42.25), ms_text(3.14159), ms_text(0.01234), ms_text(0.0)
    ('1235', '42.2', '3.14', '0.0123', '0')
    """
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3g}"


def p_text(p: float) -> str:
    """A p-value as tables show it: two significant digits, ``< 0.001`` below that.

    Parameters
    ----------
    p : float
        The p-value.

    Returns
    -------
    str
        The text, ``< 0.001`` or ``–`` for NaN.

    >>> p_text(0.0001), p_text(0.01234), p_text(0.5), p_text(float("nan"))
    ('< 0.001', '0.012', '0.50', '–')
    """
    if math.isnan(p):
        return "–"
    if p < 0.001:
        return "< 0.001"
    return f"{p:.2g}" if p < 0.1 else f"{p:.2f}"


def byte_size(n: int) -> str:
    """A byte count as people read it.

    >>> byte_size(999), byte_size(26211), byte_size(3_500_000)
    ('999 B', '25.6 KiB', '3.3 MiB')
    """
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024 / 1024:.1f} MiB"


def p_pair_text(raw: float, adjusted: float, family: int) -> str:
    """A raw p-value and, when its Holm family holds more than one comparison, the adjusted
    one beside it (one comparison: Holm leaves it as it is).

    >>> p_pair_text(0.45, 0.45, 1), p_pair_text(0.2, 0.8, 4)
    ('0.45', '0.20, Holm 0.80')
    """
    return p_text(raw) if family <= 1 else f"{p_text(raw)}, Holm {p_text(adjusted)}"


def p_clause(p: float) -> str:
    """``p = `` and the p-value as :func:`p_text` shows it (``p < 0.001`` below that).

    Parameters
    ----------
    p : float
        The p-value.

    Returns
    -------
    str
        The clause, for a sentence or a tooltip.

    >>> p_clause(0.01234), p_clause(0.00001)
    ('p = 0.012', 'p < 0.001')
    """
    text = p_text(p)
    return "p " + text if text.startswith("<") else "p = " + text


def _measure(measure: str | Measure) -> Measure:
    """A measure, or a family named without K (``"P"``, ``"nDCG"``)."""
    if isinstance(measure, Measure):
        return measure
    if "@" in measure:
        return parse_measure(measure)
    return parse_family(measure)


def measure_label(measure: str | Measure, k: int | None = None) -> str:
    """The short name of a measure, always with its K when it has one: ``nDCG@10``.

    ``k`` sets the cutoff of a family that takes one (``nDCG`` or ``RR`` with ``k=10``); a
    measure of a family without cutoffs (``Rprec``, ``IPrec@0.5``) keeps its name.

    Parameters
    ----------
    measure : str or Measure
        A measure or a family.
    k : int or None
        The cutoff to show (default: the measure's own).

    Returns
    -------
    str
        The short label (``nDCG@10``).

    >>> measure_label("nDCG", 10), measure_label("P@5"), measure_label("RR", 10)
    ('nDCG@10', 'P@5', 'RR@10')
    >>> measure_label("Rprec", 3)
    'Rprec'
    """
    m = _measure(measure)
    if k is not None and m.family.cutoff != "none" and m.family.at == "cutoff":
        m = m.at(int(k))
    return str(m)


#: Full names, for tooltips, where the family's title is an abbreviation or terse.
_FULL_NAMES = {
    "P": "precision",
    "R": "recall",
    "F1": "harmonic mean of precision and recall",
    "HitRate": "hit rate (a relevant document retrieved)",
    "Hits": "relevant documents retrieved",
    "RR": "reciprocal rank of the first relevant document",
    "nDCG": "normalised discounted cumulative gain",
    "AP": "average precision",
    "Rprec": "R-precision (precision at the number of relevant documents)",
    "Judged": "share of retrieved documents that are judged",
    "Bpref": "binary preference",
    "IPrec": "interpolated precision at a recall level",
    "ERR": "expected reciprocal rank",
    "RBP": "rank-biased precision",
    "R_cap": "capped recall",
}


def measure_title(measure: str | Measure) -> str:
    """The full name of a measure's family, for tooltips.

    Parameters
    ----------
    measure : str or Measure
        A measure or a family.

    Returns
    -------
    str
        The full name, for a tooltip.

    >>> measure_title("nDCG@10")
    'normalised discounted cumulative gain'
    >>> measure_title("SetP"), measure_title("P")
    ('set precision', 'precision')
    """
    m = _measure(measure)
    return _FULL_NAMES.get(m.name, FAMILIES[m.name].title.lower())


#: What :func:`escape_controls` shows as an escape: C0 and C1 controls (ESC sequences, ``\r``,
#: ``\b``, NUL...), DEL, the bidirectional controls, U+2028/U+2029, U+FEFF, lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069\ufeff\ud800-\udfff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape_char(m: re.Match[str]) -> str:
    c = m.group(0)
    if c in _NAMED:
        return _NAMED[c]
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


#: The same but tab, line feed and carriage return (a page shows them as spaces).
_UNSAFE_BUT_WHITESPACE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f"
                                    "\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff"
                                    "\ud800-\udfff]")


def escape_controls(text: str, *, whitespace: bool = True) -> str:
    r"""``text`` with every control character shown as an escape (``\x1b``, ``\r``,
    ``\u202e``): inert in a terminal, a CI log, a plot and a page, the same text in each.
    Anything else, backslashes included, is unchanged; so are tabs and line breaks when
    ``whitespace`` is False (a page shows them as spaces).

    >>> escape_controls("run\x1b[31m\x07"), escape_controls("q1")
    ('run\\x1b[31m\\x07', 'q1')
    >>> escape_controls("a\nb\x1b", whitespace=False)
    'a\nb\\x1b'
    """
    unsafe = _UNSAFE if whitespace else _UNSAFE_BUT_WHITESPACE
    return unsafe.sub(_escape_char, text) if unsafe.search(text) is not None else text


def html_finalize(value: object) -> object:
    r"""Every value a Jinja2 template writes (its ``finalize``), with control characters
    (ESC, BEL, NUL, the bidirectional controls...) shown as escapes, as the terminal shows
    them: user text in a page never carries raw control bytes. Tabs and line breaks are kept
    (a page shows them as spaces); ``Markup`` (already escaped, such as an inline SVG) stays
    ``Markup``; anything but text is returned as it is.

    >>> html_finalize("run\x1b[2J"), html_finalize(3)
    ('run\\x1b[2J', 3)
    """
    if not isinstance(value, str):
        return value
    out = escape_controls(value, whitespace=False)
    if out is value:
        return value
    from markupsafe import Markup

    return Markup(out) if isinstance(value, Markup) else out


def html_escape(text: object) -> str:
    r"""``text`` escaped for HTML text and attribute values.

    Parameters
    ----------
    text : object
        Any value (converted with ``str``).

    Returns
    -------
    str
        Text safe inside HTML elements and quoted attributes.

    Control characters are shown as escapes (:func:`escape_controls`; tabs and line breaks
    kept).

    >>> html_escape('<a href="x">&</a>')
    '&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;'
    >>> html_escape("tag\x1b[31m")
    'tag\\x1b[31m'
    """
    return _html.escape(escape_controls(str(text), whitespace=False), quote=True)


# ---- Markdown (GitHub-flavoured) -----------------------------------------------------------

# Markdown context: backslash escapes for Markdown punctuation, entities for HTML and for the
# backslash itself (a user backslash must never turn our ``\|`` into ``\\|``).
_MD_TABLE = str.maketrans({
    "\\": "&#92;",
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    "|": "\\|",
    "`": "\\`",
    "*": "\\*",
    "_": "\\_",
    "[": "\\[",
    "]": "\\]",
    "~": "\\~",
    "#": "\\#",
})

# Raw-HTML context (inside ``<summary>``, where Markdown escapes are not processed): entities only.
_HTML_TABLE = str.maketrans({
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    '"': "&quot;",
    "'": "&#39;",
    "|": "&#124;",
    "`": "&#96;",
    "*": "&#42;",
    "_": "&#95;",
    "[": "&#91;",
    "]": "&#93;",
    "~": "&#126;",
    "\\": "&#92;",
})

# C0/C1 control characters (other than whitespace, which is collapsed) are dropped.
_CONTROLS = {c: None for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]}


def _flat(text: str) -> str:
    """One line: whitespace runs (newlines included) become one space, controls are dropped."""
    return " ".join(str(text).split()).translate(_CONTROLS)


def _clip(text: str, limit: int | None) -> str:
    flat = _flat(text)
    if limit is None or len(flat) <= limit:
        return flat
    return flat[: max(limit - 1, 0)].rstrip() + "…"


#: What splits a reference GitHub would make live. GitHub finds mentions, issue references and
#: bare links in the *rendered* text (after Markdown), so a backslash or an entity (``\\@``,
#: ``&#64;``) does not stop them (github/markup#1168, github/cmark-gfm#181); an empty HTML
#: comment does: it is dropped from the page, but it splits the text node in two, so that
#: neither half matches. Unlike a zero-width space it leaves no invisible character in text a
#: reader copies from the page.
BREAK = "<!-- -->"

# positions (in the plain text) where BREAK goes: after an '@' that starts a name (at the
# start or after a character that is not an ASCII letter, digit or '_', as GitHub reads
# mentions: @user, @org/team, (x)@5; 'nDCG@10' and 'a@b' are no mention) or that precedes a
# commit id (owner/repo@0123abc); after '#' before a digit (#123, owner/repo#123); after 'GH-'
# before a digit; inside '://' and after 'www' (bare links: GitHub turns an issue URL into a
# live reference)
_LIVE = re.compile(r"(?<=@)(?<![A-Za-z0-9_]@)(?=\S)|(?<=@)(?=[0-9a-f]{7})|(?<=#)(?=[0-9])"
                   r"|(?<=\bGH-)(?=[0-9])|(?<=:)(?=//)|(?<=\bwww)(?=\.)", re.I)


def _inert(text: str, table: dict[int, str]) -> str:
    """``text`` translated with ``table``, with :data:`BREAK` wherever GitHub would link."""
    cuts = [m.start() for m in _LIVE.finditer(text)]
    if not cuts:
        return text.translate(table)
    parts = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return BREAK.join(p.translate(table) for p in parts)


def md_escape(text: str, limit: int | None = None) -> str:
    """``text`` made safe for a Markdown table cell or paragraph (GitHub-flavoured).

    Newlines become spaces; ``|`` becomes ``\\|``; backticks, ``*``, ``_``, ``[``, ``]``, ``~``
    and ``#`` are backslash-escaped (no code span, emphasis or link can start); ``&``, ``<``,
    ``>``, ``"`` and ``\\`` become HTML entities; an empty HTML comment (:data:`BREAK`) splits
    what GitHub would make a mention, an issue reference or a link. With ``limit``, the text is
    first cut to that many characters (an ellipsis marks the cut), so an escape is never cut
    in half.

    Parameters
    ----------
    text : str
        User text.
    limit : int or None
        Maximum characters (default: no limit).

    Returns
    -------
    str
        Text that Markdown shows literally, on one line.

    >>> md_escape("[x](javascript:alert(1))")
    '\\\\[x\\\\](javascript:alert(1))'
    >>> md_escape("line one\\nline two", limit=12)
    'line one li…'
    >>> md_escape("@octocat fixes #12")
    '@<!-- -->octocat fixes \\\\#<!-- -->12'
    """
    return _inert(_clip(text, limit), _MD_TABLE)


def md_html_escape(text: str, limit: int | None = None) -> str:
    """``text`` made safe inside raw HTML in Markdown (``<summary>``): entities only, on one
    line, with :data:`BREAK` where GitHub would link.

    Parameters
    ----------
    text : str
        User text.
    limit : int or None
        Maximum characters (default: no limit).

    Returns
    -------
    str
        Text shown literally by Markdown and by the HTML it is rendered to.

    >>> md_html_escape('"><img src=x>')
    '&quot;&gt;&lt;img src=x&gt;'
    >>> md_html_escape("@org/team GH-7")
    '@<!-- -->org/team GH-<!-- -->7'
    """
    return _inert(_clip(text, limit), _HTML_TABLE)


def direction_mark(delta: float) -> str:
    """``"up"``, ``"down"`` or ``"same"``: the direction of a delta as shown (a delta that
    rounds to 0 is the same).

    >>> direction_mark(0.01), direction_mark(-0.00004), direction_mark(-0.2)
    ('up', 'same', 'down')
    """
    s = shown(abs(delta))
    if s == shown(0.0):
        return "same"
    return "up" if delta > 0 else "down"


def curve_title(family: Measure, documents: bool = False) -> str:
    """``"nDCG@K (normalised discounted cumulative gain)"``: the label once, the full name
    after it.

    >>> from ragreport.measures import Measure
    >>> curve_title(Measure("nDCG")), curve_title(Measure("P"), documents=True)
    ('nDCG@K (normalised discounted cumulative gain)', 'P@K (precision), documents')
    """
    return (f"{measure_label(family)}@K ({measure_title(family)})"
            + (", documents" if documents else ""))


def total_text(total: float | None) -> str:
    """``"2050"`` (a whole number as digits), ``""`` without a total.

    >>> total_text(2050.0), total_text(None), total_text(2.5)
    ('2050', '', '2.5000')
    """
    if total is None:
        return ""
    return str(int(total)) if float(total).is_integer() else shown(total)
