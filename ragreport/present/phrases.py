"""Phrases of the reports: counts with their noun, and the one-line summaries a section
says first (shared by the HTML, the Markdown and the terminal)."""

from __future__ import annotations

__all__ = ["no_relevant_text", "plural", "tie_summary"]


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word`` in the singular when ``n`` is 1, else in the plural (``many``, by
    default ``word + "s"``): "1 query", "0 queries", "3 runs".

    Parameters
    ----------
    n : int
        The count.
    word : str
        The singular.
    many : str or None
        The plural, when it is not ``word + "s"``.

    Returns
    -------
    str
        ``"{n} {word}"`` or ``"{n} {many}"``.

    >>> plural(1, "query", "queries"), plural(0, "query", "queries"), plural(3, "run")
    ('1 query', '0 queries', '3 runs')
    >>> plural(1, "query id"), plural(2, "query id")
    ('1 query id', '2 query ids')
    """
    return f"{n} {word if n == 1 else (many or word + 's')}"


def tie_summary(exposed: int, flips: int) -> str:
    """The one line a report's tie exposure says first: whether any target decision depends
    on the order of tied scores (``flips``), over the ``exposed`` (run, measure) pairs with
    tied scores across their cut or a tie-dependent query.

    >>> tie_summary(7, 0)
    'no target decision depends on the order of tied scores (7 run-measure pairs have ties)'
    >>> tie_summary(2, 1)
    '1 target decision depends on the order of tied scores'
    """
    if flips:
        return (f"{plural(flips, 'target decision')} "
                f"{'depends' if flips == 1 else 'depend'} on the order of tied scores")
    return ("no target decision depends on the order of tied scores "
            f"({plural(exposed, 'run-measure pair')} {'has' if exposed == 1 else 'have'} ties)")


def no_relevant_text(scored: int, skipped: int) -> str:
    """The queries without a relevant document and what was done with them: scored 0 (the
    default, as trec_eval) or left out (``no_relevant="skip"``); one number, never two that
    seem to disagree.

    >>> no_relevant_text(2, 0), no_relevant_text(0, 2), no_relevant_text(0, 0)
    ('2 (scored 0)', '2 (skipped)', '0')
    """
    if skipped:
        return f"{skipped} (skipped)"
    return f"{scored} (scored 0)" if scored else "0"
