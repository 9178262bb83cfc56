"""Issue 13's report views: unjudged documents marked in every per-query ranking (HTML,
Markdown, JSON, explorer), the 11-point interpolated precision-recall curve, and reports that
ask for every new measure (counts on their own axis, no [0, 1] interval for a count).

:func:`unjudged_report` is reused by ``test_browser_report.py``.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from test_report_html import section

import ragreport
from ragreport.analysis.failures import judged_at, unjudged_in_top
from ragreport.report import Report, build_report
from ragreport.report.cells import QueryDetail
from ragreport.targets import parse_targets

WHEN = "2026-01-02T03:04:05Z"

# q1: x (unjudged) a (grade 2) y (unjudged) b (grade 0: judged, not relevant) c (grade 1) z
# q2: d (grade 1) only; q3: judged but nothing retrieved (empty retrieval)
QRELS = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1}, "q3": {"e": 1}}
RUN = {"q1": {"x": 6.0, "a": 5.0, "y": 4.0, "b": 3.0, "c": 2.0, "z": 1.0},
       "q2": {"d": 1.0}, "q3": {}}


def unjudged_result(**kwargs: object) -> ragreport.EvaluationResult:
    return ragreport.evaluate(QRELS, RUN, ["P@5", "nDCG@5", "RR"], name="mixed",
                              **kwargs)  # type: ignore[arg-type]


def unjudged_report() -> Report:
    """One run whose worst queries hold unjudged, judged non-relevant and relevant rows."""
    return build_report([unjudged_result()], parse_targets({"P@5": 0.5}),
                        generated_at=WHEN, docs={"x": "an unjudged passage"})


def _detail(rep: Report, qid: str) -> QueryDetail:
    return next(q for w in rep.worst for q in w.queries if q.query_id == qid)


# -- the model ---------------------------------------------------------------------------------


def test_unjudged_counts_in_the_model() -> None:
    rep = unjudged_report()
    q1, q2, q3 = (_detail(rep, q) for q in ("q1", "q2", "q3"))
    assert (q1.top_k, q1.unjudged_top_k) == (5, 2)
    assert q1.unjudged_text == "2 of the top 5 unjudged"
    assert (q2.top_k, q2.unjudged_top_k) == (1, 0)
    assert (q3.top_k, q3.unjudged_top_k) == (0, 0)
    assert q3.unjudged_text == "nothing retrieved"
    judged = {r.doc_id: r.judged for r in q1.rows}
    assert judged == {"x": False, "a": True, "y": False, "b": True, "c": True, "z": False}
    b = next(r for r in q1.rows if r.doc_id == "b")  # judged non-relevant, not unjudged
    assert (b.grade, b.grade_value, b.relevant) == ("0", 0.0, False)
    x = q1.rows[0]
    assert (x.grade, x.grade_value, x.score_value) == ("unjudged", None, 6.0)


def test_unjudged_in_top_counts_only_the_top_k() -> None:
    r = unjudged_result()
    i = r.ranking.query_index("q1")
    assert [unjudged_in_top(r, i, k) for k in (1, 2, 3, 6, 100)] == [
        (1, 1), (2, 1), (3, 2), (6, 3), (6, 3)]


def test_judged_at_k_is_the_measure() -> None:
    q1 = _detail(unjudged_report(), "q1")
    judged = ragreport.evaluate(QRELS, RUN, ["Judged@5"])
    want = float(judged.values("Judged@5")[judged.ranking.query_index("q1")])
    assert q1.judged_at_k == want == pytest.approx(3 / 5)
    r = unjudged_result()  # evaluated without Judged: computed from the ranking
    assert judged_at(r, 5).tolist() == judged.values("Judged@5").tolist()


# -- HTML --------------------------------------------------------------------------------------


def test_html_marks_unjudged_rows_by_text_and_class() -> None:
    page = unjudged_report().to_html()
    sec = section(page, "worst")
    q1 = next(d for d in sec.find("details", cls="query")
              if "q1" in d.find("summary")[0].text())
    # the closed summary already says it
    badge = q1.find("summary")[0].find("span", cls="unjudged-count")
    assert [b.text() for b in badge] == ["2 unjudged in top 5"]
    meta = " ".join(q1.find("p", cls="qmeta")[0].text().split())
    assert "2 of the top 5 unjudged" in meta
    rows = q1.find("table", cls="ranking")[0].find("tbody")[0].find("tr")
    by_doc = {r.find("td", cls="docid")[0].text(): r for r in rows if r.find("td", cls="docid")}
    for doc in ("x", "y", "z"):
        row = by_doc[doc]
        assert "unjudged-row" in row.classes() and "nonrel" not in row.classes()
        grade = " ".join(row.find("td", cls="grade")[0].text().split())
        assert grade == "? unjudged"
        assert row.find("span", cls="unjudged")
    nonrel = by_doc["b"]
    assert "nonrel" in nonrel.classes()
    assert " ".join(nonrel.find("td", cls="grade")[0].text().split()) == "○ 0 not relevant"
    assert "rel" in by_doc["a"].classes()
    assert "relevant" in by_doc["a"].find("td", cls="grade")[0].text()
    # a query whose top K is fully judged has no badge; an empty one says so
    q2 = next(d for d in sec.find("details", cls="query")
              if "q2" in d.find("summary")[0].text())
    assert not q2.find("summary")[0].find("span", cls="unjudged-count")
    assert "0 of the top 1 unjudged" in " ".join(q2.text().split())
    q3 = next(d for d in sec.find("details", cls="query")
              if "q3" in d.find("summary")[0].text())
    assert "nothing retrieved" in q3.find("p", cls="qmeta")[0].text()


def test_html_shows_judged_at_k() -> None:
    page = unjudged_report().to_html()
    q1 = next(d for d in section(page, "worst").find("details", cls="query")
              if "q1" in d.find("summary")[0].text())
    meta = " ".join(q1.find("p", cls="qmeta")[0].text().split())
    assert "2 of the top 5 unjudged · Judged@5 = 0.6000" in meta


# -- Markdown and JSON -------------------------------------------------------------------------


def test_markdown_worst_table_counts_unjudged() -> None:
    md = unjudged_report().to_markdown()
    head = next(line for line in md.splitlines() if line.startswith("| Query |"))
    assert head.endswith("| Unjudged in top 5 |")
    q1 = next(line for line in md.splitlines() if line.startswith("| q1 |"))
    assert q1.endswith("| 2 of 5 (Judged 0.6000) |")
    q3 = next(line for line in md.splitlines() if line.startswith("| q3 |"))
    assert q3.endswith("| — |")
    assert "no judgment (no qrels line)" in md


def test_markdown_without_unjudged_has_no_column() -> None:
    r = ragreport.evaluate({"q": {"a": 1, "b": 0}}, {"q": ["b", "a"]}, ["P@2"], name="full")
    md = build_report([r], generated_at=WHEN).to_markdown()
    assert "Unjudged" not in md


def test_json_ranking_marks_unjudged() -> None:
    doc = json.loads(unjudged_report().to_json())
    q1 = next(q for q in doc["worst_queries"]["mixed"] if q["query_id"] == "q1")
    assert (q1["top_k"], q1["unjudged_top_k"]) == (5, 2)
    assert [(d["doc_id"], d["judged"], d["grade"]) for d in q1["ranking"]] == [
        ("x", False, None), ("a", True, 2.0), ("y", False, None), ("b", True, 0.0),
        ("c", True, 1.0)]  # the top K only
    assert q1["ranking"][0] == {"rank": 1, "doc_id": "x", "score": 6.0, "grade": None,
                                "judged": False, "relevant": False}
    q3 = next(q for q in doc["worst_queries"]["mixed"] if q["query_id"] == "q3")
    assert (q3["top_k"], q3["unjudged_top_k"], q3["ranking"]) == (0, 0, [])


# -- the precision-recall curve ----------------------------------------------------------------


LEVELS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


@pytest.fixture(scope="module")
def example() -> Report:
    from test_report_html import example_report

    return example_report()


def test_pr_curve_is_the_mean_of_iprec(example: Report) -> None:
    """The curve's points are the means of the IPrec@r measure, bit for bit (the measure is
    checked against trec_eval's iprec_at_recall in test_measures_new.py)."""
    from ragreport.examples import example_files

    pr = example.pr_curve
    assert pr is not None and pr.levels == LEVELS and pr.rel == 1
    f = example_files()
    for path in f.runs:
        r = ragreport.evaluate(f.qrels, path, [f"IPrec@{lv}" for lv in LEVELS])
        assert pr.series[r.run_name] == [r.mean(f"IPrec@{lv}") for lv in LEVELS]
        assert pr.queries[r.run_name] == r.n_queries == 41
    # each point is a mean of non-increasing curves: the line never rises
    for ys in pr.series.values():
        assert all(a >= b for a, b in itertools.pairwise(ys))


def test_pr_curve_in_html(example: Report) -> None:
    page = example.to_html()
    sec = section(page, "pr-curve")
    svg = sec.find("svg", cls="plot")
    assert len(svg) == 1 and svg[0].attrs["role"] == "img"
    assert svg[0].attrs["aria-label"] == "11-point interpolated precision-recall curve"
    assert svg[0].find("title")[0].text() == "11-point interpolated precision-recall curve"
    desc = svg[0].find("desc")[0].text()
    pr = example.pr_curve
    assert pr is not None
    for run in ("bm25", "tfidf"):
        assert f"{run}: 0.0 {pr.series[run][0]:.4f}," in desc
        assert f"1.0 {pr.series[run][10]:.4f}" in desc
    caption = " ".join(sec.find("figcaption")[0].text().split())
    assert "highest precision at any rank holding at least lround(r·R) of the R relevant" in caption
    assert "iprec_at_recall" in caption
    table = sec.find("table", cls="pr-table")[0]
    head = [" ".join(th.text().split()) for th in table.find("thead")[0].find("th")]
    assert head == ["Recall", "bm25", "tfidf"]
    rows = table.find("tbody")[0].find("tr")
    assert [r.find("th")[0].text() for r in rows] == [f"{lv:.1f}" for lv in LEVELS]
    assert [[td.text() for td in r.find("td")] for r in rows] == [
        [pr.shown("bm25")[j], pr.shown("tfidf")[j]] for j in range(11)]
    # the table of contents links to it; the axis labels are text
    assert 'href="#pr-curve"' in page
    assert "recall level r" in svg[0].text() and "mean interpolated precision" in svg[0].text()


def test_pr_curve_in_markdown_and_json(example: Report) -> None:
    pr = example.pr_curve
    assert pr is not None
    md = example.to_markdown()
    block = md[md.index("<details><summary>Precision-recall curve"):]
    block = block[: block.index("</details>")]
    assert "| Recall | bm25 | tfidf |" in block
    assert f"| 0.5 | {pr.shown('bm25')[5]} | {pr.shown('tfidf')[5]} |" in block
    assert len([line for line in block.splitlines() if line.startswith("| ")]) == 12
    doc = json.loads(example.to_json())
    assert doc["pr_curve"] == {"recall": LEVELS, "rel": 1, "precision": pr.series}


def test_pr_curve_hostile_run_names_escaped() -> None:
    from test_report_html import SCRIPT, hostile_report

    page = hostile_report().to_html()
    sec = section(page, "pr-curve")
    desc = sec.find("desc")[0]
    assert SCRIPT in desc.text()  # shown as text
    assert "<script>" not in page.split('<section id="pr-curve">')[1].split("</section>")[0]


def test_pr_curve_without_relevant_documents() -> None:
    r = ragreport.evaluate({"q": {"a": 0}}, {"q": ["a", "b"]}, ["P@1"])
    rep = build_report([r], generated_at=WHEN)
    assert rep.pr_curve is not None and rep.pr_curve.series[r.run_name] == [0.0] * 11
    assert "pr-plot" in rep.to_html()


# -- every new measure in a report -------------------------------------------------------------

NEW_MEASURES = ["SetP", "SetR", "SetF", "NumQ", "Judged@10", "Judged", "Bpref", "IPrec@0.5",
                "ERR@10", "ERR", "RBP(p=0.8)", "RBP(p=0.8)@10", "R_cap@10", "NumRet", "NumRel",
                "NumRelRet", "Hits@5", "Hits"]
SUMMED = {"NumQ", "NumRet", "NumRel", "NumRelRet"}  # trec_eval sums them (Family.aggregate)
NEW_TARGETS = {"NumRet": ">= 40", "NumQ": ">= 1", "IPrec@0.5": "> 0.3", "Judged@10": ">= 0.9",
               "Bpref": "> 0.3", "RBP(p=0.8)@10": "> 0.2", "SetP": "> 0.05",
               "R_cap@10": "> 0.2", "ERR@10": "> 0.1", "Hits@5": "> 1"}


def test_report_with_every_new_measure(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """``ragreport report`` with every new measure as summary measures and as targets: counts
    get no [0, 1] interval, no histogram on [0, 1] and their trec_eval total; only measures
    with a K get a curve; a target on IPrec@r is marked on the precision-recall plot."""
    from ragreport.cli.app import main
    from ragreport.measures import parse_measure

    targets = tmp_path / "targets.toml"
    targets.write_text("".join(f'"{m}" = "{t}"\n' for m, t in NEW_TARGETS.items()))
    out = {k: tmp_path / f"r.{k}" for k in ("html", "md", "json")}
    argv = ["report", "--example", "--targets", str(targets), "--html", str(out["html"]),
            "--markdown", str(out["md"]), "--json", str(out["json"])]
    for m in NEW_MEASURES:
        argv += ["-m", m]
    assert main(argv) == 0
    terminal = capsys.readouterr().out
    assert main(["check", *argv[1:]]) == 0  # every target passes
    capsys.readouterr()

    canonical = [str(parse_measure(m)) for m in NEW_MEASURES]
    # not in [0, 1]: the counts, and graded RBP (above 1 with grades above 1)
    unbounded = {m for m in canonical if not parse_measure(m).family.bounded}
    assert {"NumQ", "NumRet", "Hits@5", "Hits"} <= unbounded
    assert {m for m in canonical if parse_measure(m).family.aggregate == "sum"} == SUMMED
    doc = json.loads(out["json"].read_text())
    for run in ("bm25", "tfidf"):
        assert set(canonical) <= set(doc["means"][run])
        assert not set(doc["intervals"][run]) & unbounded
        assert {m for m in canonical if parse_measure(m).family.bounded} <= set(
            doc["intervals"][run])
        assert doc["totals"][run] == {"NumQ": 41.0, "NumRet": 2050.0,
                                      "NumRel": pytest.approx(doc["means"][run]["NumRel"] * 41),
                                      "NumRelRet": pytest.approx(
                                          doc["means"][run]["NumRelRet"] * 41)}
        for m in canonical:
            lo_hi = doc["intervals"][run].get(m)
            if lo_hi is not None:
                assert 0.0 <= lo_hi[0] <= lo_hi[1] <= 1.0
    # curves: the families with a K, and nothing else
    assert set(doc["curves"]) >= {"Judged", "ERR", "RBP(p=0.8)", "R_cap", "Hits"}
    assert not set(doc["curves"]) & {"SetP", "SetR", "SetF", "NumQ", "Bpref", "IPrec",
                                     "NumRet", "NumRel", "NumRelRet"}
    assert max(doc["curves"]["Hits"]["bm25"]) > 1  # a count: its axis is not [0, 1]
    assert doc["all_passed"] and len(doc["targets"]) == len(NEW_TARGETS)

    page = out["html"].read_text()
    summary = section(page, "summary")
    rows = {r.find("th")[0].text(): r for r in summary.find("tbody")[0].find("tr")}
    assert set(canonical) <= set(rows)
    for m in canonical:
        cells = rows[m].find("td")
        text = " ".join(cells[0].text().split())
        if m in unbounded:
            assert "[" not in text  # no [0, 1] interval for a count
        else:
            assert re.search(r"\[\d\.\d{4}, \d\.\d{4}\]", text), (m, text)
    assert "total 41" in " ".join(rows["NumQ"].text().split())
    assert "total 2050" in " ".join(rows["NumRet"].text().split())
    dists = [h.text() for h in section(page, "distributions").find("h3")]
    assert not set(dists) & unbounded  # histograms on [0, 1]: bounded measures only
    assert {m for m in canonical if m not in unbounded} <= set(dists)
    pr = section(page, "pr-curve")
    assert "Target IPrec@0.5 > 0.3: hollow diamond." in pr.find("figcaption")[0].text()
    assert "target &gt; 0.3" in page.split('id="pr-plot"')[1].split("</svg>")[0]

    md = out["md"].read_text()
    assert "| NumQ | 1.0000 (total 41) | 1.0000 (total 41) ±0.0000 |" in md
    assert "| NumRet | 50.0000 (total 2050) |" in md
    assert "NumRet   " in terminal and "50.0000 (total 2050)" in terminal


def test_evaluate_trec_format_with_every_new_measure(
        capsys: pytest.CaptureFixture[str]) -> None:
    from ragreport.cli.app import main
    from ragreport.examples import example_files

    f = example_files()
    argv = ["evaluate", str(f.qrels), str(f.runs[0]), "--format", "trec"]
    for m in NEW_MEASURES:
        argv += ["-m", m]
    assert main(argv) == 0
    rows = {}
    for line in capsys.readouterr().out.splitlines():
        name, qid, value = line.split("\t")
        if qid == "all":
            rows[name.rstrip()] = value
    assert rows["num_q"] == "41" and rows["num_ret"] == "2050"
    for name in ("set_P", "set_recall", "set_F", "judged_10", "bpref", "iprec_at_recall_0.50",
                 "err_10", "r_cap_10", "num_rel", "num_rel_ret", "hits_5"):
        assert re.fullmatch(r"\d+(\.\d{4})?", rows[name]), name


@pytest.mark.parametrize(("no_relevant", "cell"), [("zero", "2 (scored 0)"),
                                                   ("skip", "2 (skipped)")])
def test_health_says_once_what_became_of_queries_without_a_relevant_document(
        no_relevant: str, cell: str) -> None:
    """One number and what was done with those queries ('No relevant document ⚠ 2' stood
    beside 'Skipped (no relevant) 0', which seemed to disagree)."""
    import ragreport
    from ragreport.report import build_report

    files = ragreport.example_files()
    r = ragreport.evaluate(files.qrels, files.runs[0], ["RR"], no_relevant=no_relevant)
    rep = build_report([r], [], stats=False, generated_at="2026-01-01T00:00:00Z")
    html, md = rep.to_html(), rep.to_markdown()
    health = html[html.index('<section id="health">'):]
    health = health[:health.index("</table>")]
    assert f'<td class="num warn">{cell}</td>' in health and "Skipped" not in health
    assert f"no relevant document: {cell}" in md
