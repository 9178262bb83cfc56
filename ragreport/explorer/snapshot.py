"""The static HTML snapshot of an explorer view, from the widget's trait dicts: what a
notebook shows without a widget manager (nbconvert, GitHub), and the MIME bundle's
``text/html``."""

from __future__ import annotations

from typing import Any

__all__ = ["SNAPSHOT_ROWS", "render_snapshot"]

#: Rows of the list, and of the ranking, in the static snapshot.
SNAPSHOT_ROWS = 50
SNAPSHOT_TEMPLATE = "explorer_snapshot.html.j2"


def render_snapshot(meta: dict[str, Any], summary: dict[str, Any], head: dict[str, Any],
                    ranking: dict[str, Any], panel: dict[str, Any], compare: dict[str, Any],
                    *, k: int, n_visible: int, filter_text: str = "",
                    rows: int = SNAPSHOT_ROWS, snapshot_id: str = "") -> str:
    """The static HTML snapshot of a view, from the widget's trait dicts (Jinja2 template
    ``explorer_snapshot.html.j2``, autoescaped: every id and text is escaped).

    ``snapshot_id`` (the widget's model id) marks the snapshot shown as its own output beside
    the live view, which hides it (see ``Explorer._ipython_display_``)."""
    import jinja2
    from markupsafe import Markup

    from .. import palette
    from ..analysis.failures import FAILURE_KINDS
    from ..present import html_finalize, shown, signed, snippet
    from ..report.html import default_template_dir

    def num(x: Any, digits: int = 4) -> str:
        return "–" if x is None else shown(float(x), digits)

    def delta(x: Any) -> str:
        return "–" if x is None else signed(float(x))

    labels = {c["code"]: c["label"] for c in meta.get("categories", [])}
    n = min(rows, len(head.get("qid", [])))
    has_b = "b" in head
    list_rows = [{"pos": head.get("start", 0) + j + 1, "qid": head["qid"][j],
                  "text": head["text"][j], "a": head["a"][j],
                  "b": head["b"][j] if has_b else None,
                  "delta": head["delta"][j] if has_b else None,
                  "kind": labels.get(head["kind"][j], FAILURE_KINDS.get(head["kind"][j], "")),
                  "fails": bool(head.get("fails", [False] * n)[j])} for j in range(n)]
    ranking_rows: list[dict[str, Any]] = []
    beyond: list[int] = []
    if ranking.get("rows"):
        cols = ranking["rows"]
        shown_n = min(k, len(cols["rank"]), rows)
        ranking_rows = [{name: cols[name][j] for name in cols} for j in range(shown_n)]
        beyond = [cols["rank"][j] for j in range(shown_n, len(cols["rank"]))
                  if cols["relevant"][j]][:20]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(default_template_dir()), encoding="utf-8"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True, auto_reload=False, finalize=html_finalize)
    template = env.get_template(SNAPSHOT_TEMPLATE)
    out: str = template.render(
        meta=meta, summary=summary, compare=compare, ranking=ranking, panel=panel, k=k,
        n_visible=n_visible, filter_text=filter_text, list_rows=list_rows,
        shown_rows=len(list_rows), has_b=has_b, ranking_rows=ranking_rows, beyond=beyond,
        num=num, delta=delta, snip=snippet, snapshot_id=snapshot_id,
        palette_css=Markup(palette.css_variables()))
    return out
