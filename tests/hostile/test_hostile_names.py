"""Hostile-input catalogue, area "names": measure names, targets, and text that reaches other
programs (terminals, CI logs, pull-request comments, plots).

Each row runs ``ragreport`` in a fresh folder (see ``tests/hostile.py``): a refusal exits 2 with
one stderr line saying what was received; a legal name gives the peers' numbers (pytrec_eval's,
or a hand count for ranx's ``hits@k``); user text is printed inert.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from hostile import QRELS, RUN, Case, CaseResult, run_case, trec_means

from ragreport.report.cells import Curve, Distribution
from ragreport.report.plots import curve_svg, distribution_svg
from ragreport.textout import terminal_safe

FILES = {"qrels.txt": QRELS, "run.txt": RUN}
EVAL = ["evaluate", "qrels.txt", "run.txt"]
CHECK = ["check", "qrels.txt", "run.txt", "--no-stats", "--jobs", "1"]
TREC_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def _dicts() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in QRELS.splitlines():
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    run: dict[str, dict[str, float]] = {}
    for line in RUN.splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    return qrels, run


def pytrec(measures: set[str]) -> dict[str, float]:
    """pytrec_eval's means over the catalogue's queries (trec_eval names as keys)."""
    import pytrec_eval

    qrels, run = _dicts()
    per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    names = next(iter(per_query.values())).keys()
    return {m: sum(v[m] for v in per_query.values()) / len(per_query) for m in names}


def same_as_pytrec(measure: str, expected_names: list[str]) -> Callable[[CaseResult], None]:
    """The ``all`` rows of ``--format trec`` are exactly ``expected_names``, each equal (to the
    4 printed decimals) to pytrec_eval's value."""

    def check(r: CaseResult) -> None:
        got = trec_means(r.stdout)
        got.pop("num_q")
        assert list(got) == expected_names
        ref = pytrec({measure})
        for name, value in got.items():
            assert value == pytest.approx(ref[name], abs=5e-5), name

    return check


def per_query(r: CaseResult) -> dict[str, dict[str, float]]:
    """``evaluate -q`` (table layout, ids without spaces): {query: {measure: value}}."""
    lines = r.stdout.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("query "))
    names = lines[head].split()[1:]
    rows = [ln.split() for ln in lines[head + 1:] if ln.strip()]
    return {q: dict(zip(names, map(float, vs), strict=True)) for q, *vs in rows}


def hits_by_hand(r: CaseResult) -> None:
    # q1 ranks d1 (1), d2 (2), d9; q2: d5, then d8 (3) and d3 (1) tied at 0.5, d8 first (doc
    # id descending); q3: d6, d7 (1). Hits counts the relevant ones, HitRate only says "any".
    rows = per_query(r)
    assert rows == {
        "q1": {"Hits@1": 1.0, "Hits@3": 2.0, "Hits": 2.0, "HitRate@1": 1.0},
        "q2": {"Hits@1": 0.0, "Hits@3": 2.0, "Hits": 2.0, "HitRate@1": 0.0},
        "q3": {"Hits@1": 0.0, "Hits@3": 1.0, "Hits": 1.0, "HitRate@1": 0.0},
    }
    assert re.search(r"^Hits@3\s+1\.6667$", r.stdout, re.M)  # averaged, as ranx does


def num_rel_ret_by_hand(r: CaseResult) -> None:
    # ir_measures' NumRet(rel=N): the retrieved documents with grade >= N, summed over the
    # queries: q1 d1 (1), d2 (2); q2 d3 (1), d8 (3); q3 d7 (1)
    got = trec_means(r.stdout)
    assert got["num_rel_ret(rel=1)"] == 5 and got["num_rel_ret(rel=2)"] == 2


def hits_trec(r: CaseResult) -> None:
    lines = r.stdout.splitlines()
    assert "hits_3                \tq2\t2.0000" in lines
    assert "hits_3                \tall\t1.6667" in lines


def targets_computed(r: CaseResult) -> None:
    ref = pytrec({"ndcg", "ndcg_cut", "map_cut"})
    rows = dict(re.findall(r"^(\S+)\s+>= \S+\s+(\d\.\d{4}) PASS\s+pass$", r.stdout, re.M))
    assert list(rows) == ["nDCG", "P(rel=2)@5", "nDCG(gain=exp)@10", "AP@5", "Hits@3"]
    assert float(rows["nDCG"]) == pytest.approx(ref["ndcg"], abs=5e-5)
    assert float(rows["AP@5"]) == pytest.approx(ref["map_cut_5"], abs=5e-5)
    assert rows["Hits@3"] == "1.6667"
    # P(rel=2)@5: q1 has d2 (2) at rank 2, q2 has d8 (3) at rank 2: (1 + 1 + 0) / 5 / 3
    assert rows["P(rel=2)@5"] == "0.1333"
    assert r.stdout.endswith("all targets passed\n")


def no_control_bytes(r: CaseResult) -> None:
    out = r.stdout
    assert re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", out) is None
    for line in out.splitlines():
        assert not line.lstrip().startswith("::"), line
        assert "##[" not in line, line


def escaped_ids(*expected: str) -> Callable[[CaseResult], None]:
    def check(r: CaseResult) -> None:
        no_control_bytes(r)
        for text in expected:
            assert text in r.stdout, text

    return check


def json_exact(r: CaseResult) -> None:
    no_control_bytes(r)
    assert "\u202e" not in r.stdout and "\\u202e" in r.stdout
    data = json.loads(r.stdout)
    assert sorted(data["per_query"]) == sorted(["q\u202eevil", "q\x1b[31mred", "::error::boom"])
    assert data["run"] == "##[error]tag"


def html_legend(*names: str) -> Callable[[CaseResult], None]:
    def check(r: CaseResult) -> None:
        html = (r.tmp / "out.html").read_text(encoding="utf-8")
        for name in names:
            escaped = name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            # the legend of the first curve plot holds every run name, as written
            assert html.count(f">{escaped}<") >= 1, name

    return check


_RAW_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def html_inert(*expected: str) -> Callable[[CaseResult], None]:
    """No raw control character in the page (plots included) nor on stderr (matplotlib's
    'Glyph missing' warnings wrote the run's tag there raw); ``expected`` escapes shown."""
    def check(r: CaseResult) -> None:
        html = (r.tmp / "out.html").read_text(encoding="utf-8")
        assert _RAW_CONTROL.search(html) is None, _RAW_CONTROL.search(html)
        assert _RAW_CONTROL.search(r.stderr) is None and "Glyph" not in r.stderr, r.stderr
        no_control_bytes(r)
        for text in expected:
            assert text in html, text

    return check


def markdown_inert(r: CaseResult) -> None:
    md = (r.tmp / "out.md").read_text(encoding="utf-8")
    assert "@<!-- -->octocat" in md and "x\\#<!-- -->12" in md
    assert re.search(r"(?:^|[^A-Za-z0-9_])@octocat", md) is None


TARGET_TOML = ('"nDCG" = 0.1\n"P(rel=2)@5" = 0.1\n"nDCG(gain=exp)@10" = 0.1\n'
               '"AP@5" = 0.1\n"hits@3" = 1\n')

BIDI_QRELS = QRELS.replace("q1 ", "q\u202eevil ").replace("q2 ", "q\x1b[31mred ").replace(
    "q3 ", "::error::boom ")
BIDI_RUN = RUN.replace("q1 ", "q\u202eevil ").replace("q2 ", "q\x1b[31mred ").replace(
    "q3 ", "::error::boom ")
JSONL_RUN = ('{"query_id": "q1\\r\\u0085x\\u0000\\b", "retrieved": ["d1", "d2"]}\n'
             '{"query_id": "  ::add-mask::secret", "retrieved": ["d3"]}\n'
             '{"query_id": "q ##[error]boom", "retrieved": ["d3"]}\n')
JSONL_QRELS = ('{"query_id": "q1\\r\\u0085x\\u0000\\b", "relevant": {"d1": 1}}\n'
               '{"query_id": "  ::add-mask::secret", "relevant": {"d3": 1}}\n'
               '{"query_id": "q ##[error]boom", "relevant": {"d3": 1}}\n')
BOUND = r"cutoff must be between 1 and 2\*\*53"
WHOLE = r"cutoff must be a whole number between 1 and 2\*\*53"

CONTROL_RUN = RUN.replace(" tag\n", " t\x1b[31mred\x07\n")

CASES = [
    # --- control characters in a tag or an id: never raw in a page, a plot or on stderr -------
    Case("control-tag-html-and-plots", ["report", "qrels.txt", "r.txt", "--html", "out.html",
                                        "--no-stats"],
         {"qrels.txt": QRELS, "r.txt": CONTROL_RUN}, exit=0,
         check=html_inert("t\\x1b[31mred\\x07")),
    Case("control-tag-html-with-stats", ["check", "qrels.txt", "r.txt", "r2.txt", "--html",
                                         "out.html", "--jobs", "1"],
         {"qrels.txt": QRELS, "r.txt": CONTROL_RUN, "r2.txt": RUN}, exit=1,
         check=html_inert("t\\x1b[31mred\\x07")),
    Case("control-ids-html", ["report", "q.txt", "r.txt", "--html", "out.html", "--no-stats"],
         {"q.txt": BIDI_QRELS, "r.txt": BIDI_RUN}, exit=0,
         check=html_inert("q\\u202eevil", "q\\x1b[31mred")),
    Case("control-ids-jsonl-html", ["report", "q.jsonl", "r.jsonl", "--html", "out.html",
                                    "--no-stats"],
         {"q.jsonl": JSONL_QRELS, "r.jsonl": JSONL_RUN}, exit=0,
         check=html_inert("\\x85x\\x00\\x08")),
    # --- cutoffs: 1 <= K <= 2**53, ASCII digits, nothing else --------------------------------
    Case("P@0", [*EVAL, "-m", "P@0"], FILES, stderr=rf"{BOUND}, got 0 in 'P@0'"),
    Case("P@-1", [*EVAL, "-m", "P@-1"], FILES, stderr=rf"{BOUND}, got -1 in 'P@-1'"),
    Case("P@10^23", [*EVAL, "-m", "P@10^23"], FILES, stderr=rf"{WHOLE}, got '10\^23'"),
    Case("P@1e3", [*EVAL, "-m", "P@1e3"], FILES, stderr=rf"{WHOLE}, got '1e3' in 'P@1e3'"),
    Case("P@space5", [*EVAL, "-m", "P@ 5"], FILES, stderr=rf"{WHOLE}, got ' 5' in 'P@ 5'"),
    Case("P@2**53+1", [*EVAL, "-m", "P@9007199254740993"], FILES,
         stderr=rf"{BOUND}, got 9007199254740993 in"),
    Case("P@5000-digits", [*EVAL, "-m", "P@" + "9" * 5000], FILES,
         stderr=rf"^ragreport: error: {BOUND}, got 9{{39}}… in 'P@9{{77}}…'\n$"),
    Case("ndcg_cut.0", [*EVAL, "-m", "ndcg_cut.10,0"], FILES,
         stderr=rf"{BOUND}, got 0 in 'ndcg_cut\.10,0'"),
    Case("rel=x", [*EVAL, "-m", "P(rel=x)@5"], FILES,
         stderr=r"rel must be a whole number between 0 and 2\*\*53, got 'x'"),
    # --- names the peers read differently: refused, naming both readings ---------------------
    Case("recall-bare", [*EVAL, "-m", "recall"], FILES,
         stderr=r"'recall' is ambiguous without a cutoff: trec_eval and ir_measures' "
                r"parse_trec_measure read 'recall' as recall_5, .*; ranx and LlamaIndex read "
                r"it as the recall of the whole ranking \(write SetR"),
    Case("hit_rate-bare", [*EVAL, "-m", "hit_rate"], FILES,
         stderr=r"'hit_rate' is ambiguous without a cutoff: ranx .* trec_eval's success"),
    Case("Success-bare", [*EVAL, "-m", "Success"], FILES,
         stderr=r"HitRate needs a cutoff, e\.g\. HitRate@5, or 'success' for trec_eval's"),
    # issue 13: every peer's spelling with that peer's meaning, or refused naming the readings
    Case("infAP-not-computed", [*EVAL, "-m", "infAP"], FILES,
         stderr=r"'infAP' is inferred AP \(trec_eval's and ir_measures' infAP\), which "
                r"ragreport does not compute; valid measures: "),
    Case("ranx-rbp.95", [*EVAL, "-m", "rbp.95"], FILES,
         stderr=r"'rbp\.95' is read differently by the peers: ranx reads the number after rbp "
                r"as the persistence .* ir_measures' RBP@K is a cutoff"),
    Case("accuracy@10", [*EVAL, "-m", "accuracy@10"], FILES,
         stderr=r"'accuracy@10' is read differently by the peers: MTEB's 'accuracy' is "
                r"recall@1 .*BEIR's Accuracy@k .*ir_measures' Accuracy"),
    Case("ranx-ndcg-level", [*EVAL, "-m", "ndcg@10-l2"], FILES,
         stderr=r"ranx's -l2 leaves grades below 2 out of nDCG's gains"),
    Case("ranx-level-5000-digits", [*EVAL, "-m", "P@5-l" + "9" * 5000], FILES,
         stderr=r"^ragreport: error: rel must be between 0 and 2\*\*53, got 9{39}… in "
                r"'P@5-l9{74}…'\n$"),
    Case("dcg=foo", [*EVAL, "-m", "nDCG(dcg=foo)@10"], FILES,
         stderr=r"dcg must be 'log2' \(gain = grade\) or 'exp-log2' \(gain = 2\^grade - 1\), "
                r"got 'foo'"),
    Case("judged_only=True", [*EVAL, "-m", "P(judged_only=True)@5"], FILES,
         stderr=r"judged_only=True \(ir_measures: unjudged documents are dropped before "
                r"scoring\) is not implemented"),
    Case("gains-dict", [*EVAL, "-m", "nDCG(gains={0:0,1:1})@10"], FILES,
         stderr=r"custom gains \(ir_measures' gains=\{\.\.\.\}\) are not implemented"),
    Case("set_F.0.5", [*EVAL, "-m", "set_F.0.5"], FILES,
         stderr=r"trec_eval's 'set_F\.0\.5' is set_F with beta = 0\.5; only beta = 1"),
    Case("target-infAP", [*CHECK, "--targets", "t.toml"], {**FILES, "t.toml": '"infAP" = 0.5\n'},
         stderr=r"t\.toml: target 'infAP': 'infAP' is inferred AP"),
    Case("ranx-precision-is-set_P", [*EVAL, "-m", "precision", "--format", "trec"], FILES,
         exit=0, check=same_as_pytrec("set_P", ["set_P"])),
    Case("ranx-f1-is-set_F", [*EVAL, "-m", "f1", "--format", "trec"], FILES, exit=0,
         check=same_as_pytrec("set_F", ["set_F"])),
    Case("mteb-ndcg_at_10", [*EVAL, "-m", "ndcg_at_10", "--format", "trec"], FILES, exit=0,
         check=same_as_pytrec("ndcg_cut.10", ["ndcg_cut_10"])),
    Case("trec-bpref", [*EVAL, "-m", "bpref", "--format", "trec"], FILES, exit=0,
         check=same_as_pytrec("bpref", ["bpref"])),
    Case("ir_measures-NumRet(rel=N)", [*EVAL, "-m", "NumRet(rel=1)", "-m", "NumRet(rel=2)",
                                       "--format", "trec"], FILES, exit=0,
         check=num_rel_ret_by_hand),
    # --- legal names, the peers' numbers --------------------------------------------------------
    Case("hits@k-by-hand", [*EVAL, "-m", "hits@1", "-m", "hits@3", "-m", "hits", "-m",
                            "HitRate@1", "-q"], FILES, exit=0, check=hits_by_hand),
    Case("hits@3-trec", [*EVAL, "-m", "hits@3", "-q", "--format", "trec"], FILES, exit=0,
         check=hits_trec),
    Case("bare-P", [*EVAL, "-m", "P", "--format", "trec"], FILES, exit=0,
         check=same_as_pytrec("P", [f"P_{k}" for k in TREC_CUTS])),
    Case("recall-list", [*EVAL, "-m", "recall.5,10,15,20,30,100,200,500,1000", "--format",
                         "trec"], FILES, exit=0,
         check=same_as_pytrec("recall", [f"recall_{k}" for k in TREC_CUTS])),
    Case("bare-ndcg_cut", [*EVAL, "-m", "ndcg_cut", "--format", "trec"], FILES, exit=0,
         check=same_as_pytrec("ndcg_cut", [f"ndcg_cut_{k}" for k in TREC_CUTS])),
    Case("bare-map_cut", [*EVAL, "-m", "map_cut", "--format", "trec"], FILES, exit=0,
         check=same_as_pytrec("map_cut", [f"map_cut_{k}" for k in TREC_CUTS])),
    Case("bare-success", [*EVAL, "-m", "success", "--format", "trec"], FILES, exit=0,
         check=same_as_pytrec("success", ["success_1", "success_5", "success_10"])),
    # --- any measure the command accepts can be a target -------------------------------------
    Case("targets-any-measure", [*CHECK, "--targets", "t.toml"], {**FILES, "t.toml": TARGET_TOML},
         exit=0, check=targets_computed),
    Case("pyproject-targets-any-measure", CHECK,
         {**FILES, "pyproject.toml": "[tool.ragreport.targets]\n" + TARGET_TOML.replace(
             '"hits@3" = 1', '"hits@3" = "> 1.7"')},
         exit=1, stdout=r"FAILED Hits@3: 1\.6667 is not > 1\.7 \(run 'tag'\)"),
    Case("target-bare-P", [*CHECK, "--targets", "t.toml"], {**FILES, "t.toml": '"P" = 0.5\n'},
         stderr=r"t\.toml: target 'P': expected one measure, 'P' names 9 \(P@5, P@10, P@15"),
    # --- target thresholds: finite numbers only ----------------------------------------------
    Case("threshold-nan", [*CHECK, "--targets", "t.toml"], {**FILES, "t.toml": '"P@5" = nan\n'},
         stderr=r"t\.toml: target 'P@5': threshold must be a finite number, got nan"),
    Case("threshold-inf", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": '"hits@3" = inf\n'},
         stderr=r"t\.toml: target 'hits@3': threshold must be a finite number, got inf"),
    Case("threshold-1e400", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": '"hits@3" = "> 1e400"\n'},
         stderr=r"target 'hits@3': threshold must be a finite number, got 1e400"),
    Case("parameter-given-twice", ["evaluate", "qrels.txt", "run.txt", "-m", "P(rel=2,rel=3)@5"],
         FILES, stderr=r"parameter 'rel' is given twice in 'P\(rel=2,rel=3\)@5'"),
    Case("threshold-arabic-indic-digits", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": '"P@5" = "> \u0660.\u0664"\n'},
         stderr=r"t\.toml: target 'P@5': expected a number or a string such as"),
    Case("threshold-str-nan", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": '"P@5" = "> nan"\n'},
         stderr=r"t\.toml: target 'P@5': expected a number or a string such as '> 0\.85'"),
    Case("threshold-bool", [*CHECK, "--targets", "t.toml"], {**FILES, "t.toml": '"P@5" = true\n'},
         stderr=r"t\.toml: target 'P@5': expected a number .*got True"),
    Case("threshold-table-nan", [*CHECK, "--targets", "t.toml"],
         {**FILES, "t.toml": '"P@5" = { min = nan }\n'},
         stderr=r"target 'P@5': threshold must be a finite number, got nan"),
    Case("ci_lower-on-a-count", ["check", "qrels.txt", "run.txt", "--targets", "t.toml"],
         {**FILES, "t.toml": '"hits@3" = { min = 1, on = "ci_lower" }\n'},
         stderr=r"target 'hits@3': on = \"ci_lower\" needs a confidence interval"),
    Case("pyproject-target-P@0", CHECK,
         {**FILES, "pyproject.toml": '[tool.ragreport.targets]\n"P@0" = 0.5\n'},
         stderr=r"pyproject\.toml \[tool\.ragreport\.targets\]: target 'P@0': " + BOUND),
    Case("pyproject-tool-not-a-table", CHECK,
         {**FILES, "pyproject.toml": 'tool = "x"\n'}, exit=1, stdout=r"FAILED P@3"),
    # --- text that reaches other programs --------------------------------------------------------
    Case("ids-escaped-evaluate-q", [*EVAL[:1], "q.txt", "r.txt", "-m", "P@1", "-q"],
         {"q.txt": BIDI_QRELS, "r.txt": BIDI_RUN}, exit=0,
         check=escaped_ids("q\\u202eevil", "q\\x1b[31mred", "\\x3a:error::boom")),
    Case("ids-escaped-trec-q", [*EVAL[:1], "q.txt", "r.txt", "-m", "P@1", "-q", "--format",
                                "trec"],
         {"q.txt": BIDI_QRELS, "r.txt": BIDI_RUN.replace(" tag", " ##[error]tag")}, exit=0,
         check=escaped_ids("\tq\\u202eevil\t1.0000", "\tq\\x1b[31mred\t", "#\\x23[error]tag")),
    Case("ids-json-exact-and-inert", [*EVAL[:1], "q.txt", "r.txt", "-m", "P@1", "-q",
                                      "--format", "json"],
         {"q.txt": BIDI_QRELS, "r.txt": BIDI_RUN.replace(" tag", " ##[error]tag")}, exit=0,
         check=json_exact),
    Case("ids-escaped-jsonl", [*EVAL[:1], "q.jsonl", "r.jsonl", "-m", "P@1", "-q"],
         {"q.jsonl": JSONL_QRELS, "r.jsonl": JSONL_RUN}, exit=0,
         check=escaped_ids("q1\\r\\x85x\\x00\\x08", "  \\x3a:add-mask::secret",
                           "q #\\x23[error]boom")),
    Case("run-name-in-failure-line", [*CHECK, "--name", "::warning::x\x1b[2J"], FILES, exit=1,
         check=escaped_ids("(run '::warning::x\\x1b[2J')", "FAILED P@3",
                           "target  \\x3a:warning::x\\x1b[2J  result")),
    Case("title-escaped", [*CHECK, "--title", "::error::t\r\x07"], FILES, exit=1,
         check=escaped_ids("\\x3a:error::t\\r\\x07: 1 run, ")),
    Case("plot-legend-names", ["report", "qrels.txt", "run.txt", "run.txt", "--name", "_private",
                               "--name", "$\\undefined$", "--no-stats", "--jobs", "1",
                               "--html", "out.html"], FILES, exit=0,
         check=html_legend("_private", "$\\undefined$")),
    Case("markdown-mentions", ["report", "q.txt", "r.txt", "--name", "@octocat", "--no-stats",
                               "--markdown", "out.md"],
         {"q.txt": QRELS.replace("q1 ", "x#12 "), "r.txt": RUN.replace("q1 ", "x#12 ")},
         exit=0,
         check=markdown_inert),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: object) -> None:
    run_case(case, tmp_path)  # type: ignore[arg-type]


# --- the helpers themselves ---------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("q1", "q1"),
        ("doc-7/a.b", "doc-7/a.b"),
        ("back\\slash", "back\\slash"),
        ("é漢字", "é漢字"),
        ("a\x1b[31mb", "a\\x1b[31mb"),
        ("cr\rlf\ntab\t", "cr\\rlf\\ntab\\t"),
        ("bs\b nul\x00 del\x7f", "bs\\x08 nul\\x00 del\\x7f"),
        ("c1\x85\x9b", "c1\\x85\\x9b"),
        ("bidi\u202e\u2066\u200f", "bidi\\u202e\\u2066\\u200f"),
        ("sep\u2028\u2029bom\ufeff", "sep\\u2028\\u2029bom\\ufeff"),
        ("surrogate\udcff", "surrogate\\udcff"),
        ("::error::x", "\\x3a:error::x"),
        (" \u00a0::set-output name=a::b", " \u00a0\\x3a:set-output name=a::b"),
        ("a::b", "a::b"),
        ("x ##[error]y", "x #\\x23[error]y"),
        ("###[x", "##\\x23[x"),
    ],
)
def test_terminal_safe(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown
    assert terminal_safe(shown) == shown or "\\" in text  # escaping is stable
    shown.encode("utf-8")  # printable on any UTF-8 terminal (no lone surrogate)


@pytest.mark.parametrize("name", ["_private", "$\\undefined$", "$x$", "a$b", "__", "$"])
def test_plot_text_is_literal(name: str) -> None:
    curve = Curve("P", "P@K", [1, 2], {name: [0.5, 0.25], "b": [0.1, 0.2]},
                  [(1, 0.4, "> 0.4")], {})
    svg = curve_svg(curve, [name, "b"], prefix="p")
    escaped = name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert f">{escaped}<" in svg  # in the legend, exactly as written
    dist = Distribution(f"P@1 {name}", {name: [0.0, 1.0]})
    assert f"per-query P@1 {escaped}" in distribution_svg(dist, [name], prefix="d")
