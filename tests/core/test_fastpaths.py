"""The shortcuts taken for speed give exactly what the general code gives.

Covered: string fingerprints (equal in, equal out), the duplicate check (fingerprints first,
exact strings when two meet), grouped and ungrouped runs, presorted runs whose ties are ordered
by byte keys, whole-ranking measures computed from the relevant ranks only, lazily computed
curves, and the TREC reader that lets pyarrow read the file.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragreport
from ragreport import metrics
from ragreport.core.align import _grouped_order, _maybe_duplicates, _query_codes
from ragreport.core.keys import string_fingerprints
from ragreport.data import Qrels, RowLines, Run
from ragreport.errors import InputError
from ragreport.io import load_qrels, load_run

texts = st.text(alphabet=st.sampled_from("ab#_é1\t"), max_size=40)


@settings(max_examples=200, deadline=None)
@given(st.lists(texts, min_size=1, max_size=60), st.integers(0, 5))
def test_fingerprints_equal_exactly_for_equal_strings(strings: list[str], cut: int) -> None:
    fp = string_fingerprints(pa.array(strings, pa.string())).tolist()
    for i, a in enumerate(strings):
        for j, b in enumerate(strings):
            assert (fp[i] == fp[j]) == (a == b), (a, b)
    # a sliced array (non-zero offset into the buffers) gives the same fingerprints
    sliced = pa.array(strings, pa.string()).slice(min(cut, len(strings) - 1))
    assert string_fingerprints(sliced).tolist() == fp[min(cut, len(strings) - 1):]


def test_fingerprints_of_short_strings_at_the_start_of_the_buffer() -> None:
    # the first strings begin before byte 8 and are shorter than a word
    strings = ["", "a", "ab", "a", "", "abcdefgh", "abcdefghi", "b" * 17, "b" * 16 + "c"]
    fp = string_fingerprints(pa.array(strings)).tolist()
    assert fp[1] == fp[3] and fp[0] == fp[4]
    assert len(set(fp)) == 7


def _run(rows: list[tuple[str, str, float]]) -> Run:
    q, d, s = zip(*rows, strict=True)
    return Run(pa.array(q, pa.string()), pa.array(d, pa.string()), "run (test)", None,
               np.array(s, dtype=np.float64))


def _qrels() -> Qrels:
    return load_qrels({"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 2}})


@pytest.mark.parametrize("layout", ["uniform", "uneven", "interleaved"])
def test_duplicate_check_finds_what_is_there_and_nothing_else(layout: str) -> None:
    sizes = {"uniform": [4, 4, 4], "uneven": [4, 2, 5], "interleaved": [4, 4, 4]}[layout]
    rows = [(f"q{i + 1}", f"d{j}", float(-j)) for i, n in enumerate(sizes) for j in range(n)]
    if layout == "interleaved":
        rows = rows[::2] + rows[1::2]
    run = _run(rows)
    rq, _, _, groups = _query_codes(run, _qrels())
    assert (groups is None) == (layout == "interleaved")
    assert not _maybe_duplicates(rq, string_fingerprints(run.doc_ids), groups)
    # the same document id in two different queries is not a duplicate
    assert ragreport.evaluate(_qrels(), run).counts.duplicates_dropped == 0

    dup = [*rows, ("q2", "d1", -9.0)]  # d1 twice for q2
    if layout == "uniform":
        dup = [*(r for r in rows if r != ("q2", "d3", -3.0)), ("q2", "d1", -9.0)]
    run2 = _run(dup)
    rq2, _, _, groups2 = _query_codes(run2, _qrels())
    assert _maybe_duplicates(rq2, string_fingerprints(run2.doc_ids), groups2)
    with pytest.raises(InputError, match="'d1' appears twice for query 'q2'"):
        ragreport.evaluate(_qrels(), run2)
    res = ragreport.evaluate(_qrels(), run2, duplicates="first")
    assert res.counts.duplicates_dropped == 1


@pytest.mark.parametrize("presorted", [False, True])
def test_ungrouped_run_gives_the_numbers_of_the_grouped_run(presorted: bool) -> None:
    rng = random.Random(7)
    rows = [(f"q{q}", f"d{rng.randrange(40)}", round(rng.random(), 1)) for q in range(1, 30)
            for _ in range(12)]
    rows = list({(q, d): (q, d, s) for q, d, s in rows}.values())
    if presorted:  # as a retriever writes it: by query, score descending, ties in any order
        rows.sort(key=lambda r: (r[0], -r[2]))
        run = _run(rows)
        rq, _, _, groups = _query_codes(run, load_qrels({"q1": {"d1": 1}}))
        order = _grouped_order(run, groups, rq, np.arange(len(groups[1])), "score")
        assert groups is not None and order is not None  # the shortcut is taken
    qrels = {f"q{q}": {f"d{d}": rng.choice([0, 1, 2]) for d in rng.sample(range(40), 6)}
             for q in range(1, 30)}
    grouped = ragreport.evaluate(qrels, _run(rows), ["nDCG@10", "P@5", "AP", "RR"])
    shuffled = rows[:]
    rng.shuffle(shuffled)
    ungrouped = ragreport.evaluate(qrels, _run(shuffled), ["nDCG@10", "P@5", "AP", "RR"])
    assert ungrouped.means() == grouped.means()
    for key, curve in grouped.curves.items():
        np.testing.assert_array_equal(ungrouped.curves[key], curve)


@pytest.mark.parametrize("k_max", [3, 5, 12])
def test_whole_ranking_scalars_equal_the_full_depth_functions(k_max: int) -> None:
    qrels = {"q1": {"d1": 2, "d4": 1, "d9": 1}, "q2": {"d2": 1}, "q3": {"d7": 0}}
    run = {"q1": ["d3", "d1", "d5", "d4", "d8"], "q2": ["d6", "d7", "d2"], "q3": ["d7"]}
    res = ragreport.evaluate(qrels, run, ["RR", "AP", "nDCG"], k_max)
    rk = res.ranking
    rel = rk.relevance(1)
    expect = {"RR": metrics.reciprocal_rank(rel),
              "AP": metrics.average_precision(rel, rk.n_relevant(1)),
              "nDCG": metrics.ndcg(rk.gains("linear"), rk.ideal("linear"))}
    for name, values in expect.items():
        np.testing.assert_array_equal(res.values(name), values, err_msg=name)


RUN = "q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.5 t\nq2 Q0 d3 1 0.5 t\n"


def _file(tmp_path: Path, text: str, name: str = "r.run") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_plain_file_is_read_by_pyarrow_with_row_line_numbers(tmp_path: Path) -> None:
    run = load_run(_file(tmp_path, RUN))
    assert isinstance(run.lines, RowLines)
    assert run.lines.tolist() == [1, 2, 3] and run.name == "t"
    assert run.where(2) == (str(tmp_path / "r.run"), 3)


@pytest.mark.parametrize("text, lines", [
    (RUN.replace("\nq2", "\n\nq2"), [1, 2, 4]),                       # blank line
    ("# c d e f g h\n" + RUN, [2, 3, 4]),                            # six-field comment
    (RUN.replace("\nq2", "\n# a b c d e\nq2"), [1, 2, 4]),           # comment inside
    (RUN.replace("\nq2", "\n   \nq2"), [1, 2, 4]),                   # white space only
])
def test_irregular_files_go_to_the_exact_reader(tmp_path: Path, text: str,
                                                lines: list[int]) -> None:
    run = load_run(_file(tmp_path, text))
    assert run.doc_ids.to_pylist() == ["d1", "d2", "d3"]
    assert np.asarray(run.lines).tolist() == lines


def test_error_in_a_fast_read_file_names_the_line(tmp_path: Path) -> None:
    run_path = _file(tmp_path, RUN + "q2 Q0 d4 2 0.4 t\nq2 Q0 d3 3 0.3 t\n")
    with pytest.raises(InputError, match=r"r\.run:5.*'d3' appears twice.*first at line 3"):
        ragreport.evaluate({"q1": {"d1": 1}, "q2": {"d3": 1}}, run_path)


def test_bad_value_in_a_plain_file_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"r\.run:2: score 'x' is not a number"):
        load_run(_file(tmp_path, RUN.replace("1.5", "x")))


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30), st.integers(0, 40), st.integers(0, 2**32 - 1))
def test_sparse_whole_ranking_measures_equal_the_dense_forms(n: int, depth: int,
                                                             seed: int) -> None:
    rng = np.random.default_rng(seed)
    grades = rng.choice([np.nan, 0.0, 1.0, 2.0, 3.0], size=(n, depth))
    rel = grades >= 1
    gains = np.where(grades > 0, grades, 0.0)
    n_rel = rel.sum(axis=1) + rng.integers(0, 3, n) * (rng.random(n) < 0.7)
    ideal = -np.sort(-rng.choice([0.0, 1.0, 2.0, 3.0], size=(n, 1 + depth // 3)), axis=1)
    width = max(depth, ideal.shape[1], 1)
    np.testing.assert_array_equal(metrics.average_precision(rel, n_rel),
                                  metrics.average_precision_at_k(rel, n_rel, width)[:, -1])
    np.testing.assert_array_equal(metrics.ndcg(gains, ideal),
                                  metrics.ndcg_at_k(gains, ideal, width)[:, -1])
    dense_hits = np.concatenate([np.zeros((n, 1)), np.cumsum(rel, axis=1, dtype=np.float64)],
                                axis=1)[np.arange(n), np.minimum(n_rel, depth)]
    np.testing.assert_array_equal(metrics.r_precision(rel, n_rel),
                                  np.divide(dense_hits, np.maximum(n_rel, 1)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab\x01é"), max_size=14), min_size=1,
                max_size=30), st.integers(0, 3))
def test_order_keys_never_contradict_byte_order(strings: list[str], skip_wanted: int) -> None:
    from ragreport.core.keys import common_prefix, order_keys

    prefix = common_prefix(pa.array(strings))
    assert all(x.startswith(prefix) for x in strings)
    skip = min(skip_wanted, len(prefix.encode()))
    keys = order_keys(pa.array(strings), np.arange(len(strings)), skip).tolist()
    for a, ka in zip(strings, keys, strict=True):
        for b, kb in zip(strings, keys, strict=True):
            if ka < kb:
                assert a.encode() < b.encode()
            if a == b:
                assert ka == kb


@pytest.mark.parametrize("ids", [
    ["x9", "x10", "x11", "y7", "x12"],                                   # keys decide
    ["a000000000001", "a000000000002", "a000000000003", "b", "a0000000000"],  # 2nd word
    ["p" + "0" * 40 + "1", "p" + "0" * 40 + "2", "q", "p" + "0" * 40, "p1"],   # strings
    ["p" + "0" * 40 + "1", "p" + "0" * 40 + "2"],                              # a pair
])
def test_tied_documents_are_ordered_by_id_descending_on_both_paths(ids: list[str]) -> None:
    # every document of q1 has the same score: the ranking is the ids, descending
    rows = [("q1", d, 1.0) for d in ids] + [("q2", "z1", 2.0), ("q2", "z2", 1.0)]
    res = ragreport.evaluate({"q1": {ids[0]: 1}, "q2": {"z2": 1}}, _run(rows))
    rk = res.ranking
    lo, hi = int(rk.ret_offsets[0]), int(rk.ret_offsets[1])
    got = [res.ranking.run.doc_ids[int(i)].as_py() for i in rk.run_rows[lo:hi]]
    assert got == sorted(ids, key=str.encode, reverse=True)


def test_curves_are_computed_when_first_used_and_then_kept() -> None:
    from ragreport.core.engine import LazyCurves
    from ragreport.measures import Measure

    calls: list[str] = []

    def compute(m: Measure) -> np.ndarray:
        calls.append(m.name)
        return np.full((2, 3), float(len(calls)))

    curves = LazyCurves([Measure("P"), Measure("R"), Measure("P")], compute)
    assert list(curves) == [Measure("P"), Measure("R")] and len(curves) == 2
    assert Measure("P") in curves and Measure("AP") not in curves
    assert calls == []  # listing and membership compute nothing
    first = curves[Measure("R")]
    assert curves[Measure("R")] is first and calls == ["R"]
    with pytest.raises(KeyError):
        curves[Measure("AP")]
    assert dict(curves)[Measure("P")][0, 0] == 2.0 and calls == ["R", "P"]


def test_result_curves_equal_the_metric_functions() -> None:
    qrels = {"q1": {"d1": 2, "d4": 1, "d9": 1}, "q2": {"d2": 1}, "q3": {"d7": 0}}
    run = {"q1": ["d3", "d1", "d5", "d4", "d8"], "q2": ["d6", "d7", "d2"], "q3": ["d7"]}
    res = ragreport.evaluate(qrels, run, ["nDCG@3"], 6)
    rk = res.ranking
    rel, n_rel = rk.relevance(1), rk.n_relevant(1)
    want = {"P": metrics.precision_at_k(rel, 6), "R": metrics.recall_at_k(rel, n_rel, 6),
            "F1": metrics.f1_at_k(rel, n_rel, 6), "HitRate": metrics.hit_rate_at_k(rel, 6),
            "RR": metrics.reciprocal_rank_at_k(rel, 6),
            "nDCG": metrics.ndcg_at_k(rk.gains("linear"), rk.ideal("linear", 6), 6),
            "AP": metrics.average_precision_at_k(rel, n_rel, 6)}
    for name, values in want.items():
        np.testing.assert_array_equal(res.curve(name), values, err_msg=name)


def test_results_with_lazy_curves_pickle_and_copy() -> None:
    import copy
    import pickle

    res = ragreport.evaluate({"q1": {"d1": 1}}, {"q1": ["d2", "d1"]}, ["P@2", "nDCG@2"], 3)
    again = pickle.loads(pickle.dumps(res))
    clone = copy.deepcopy(res)
    for other in (again, clone):
        assert other.means() == res.means()
        for key in res.curves:
            np.testing.assert_array_equal(other.curves[key], res.curves[key])


# ---- numbers and the byte order mark on the pyarrow paths (issue 12) ------------------------

def _no_exact_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragreport.io import trec

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("fell back to the line-by-line reader")

    monkeypatch.setattr(trec, "_parse_slow", refuse)


@pytest.mark.parametrize("sep", [" ", "\t"])
def test_odd_but_plain_scores_stay_on_the_fast_path(tmp_path: Path, sep: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(f"q1{sep}Q0{sep}d{i}{sep}{i + 1}{sep}{s}{sep}t\n"
                   for i, s in enumerate(["+1", ".5", "1E5", "-2.", "1e-400", "007"]))
    _no_exact_reader(monkeypatch)
    run = load_run(_file(tmp_path, text))
    assert isinstance(run.lines, RowLines)
    assert run.scores.tolist() == [1.0, 0.5, 1e5, -2.0, 0.0, 7.0]


def test_grades_are_truncated_on_the_fast_path(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(1)
    grades = [rng.choice(["1.7", "-2.5", "2.0", "-0.5", "3", "+1.99", ".9", "4."])
              for _ in range(2000)]
    text = "".join(f"q{i % 7} 0 d{i} {g}\n" for i, g in enumerate(grades))
    p = _file(tmp_path, text, "q.txt")
    _no_exact_reader(monkeypatch)
    got = load_qrels(p)
    assert isinstance(got.lines, RowLines)
    assert got.grades.tolist() == [float(int(float(g))) for g in grades]
    assert not np.signbit(got.grades[got.grades == 0]).any()  # -0.5 is 0, not -0
    frac = load_qrels(p, fractional_grades=True)
    assert frac.grades.tolist() == [float(g) for g in grades]


@pytest.mark.parametrize(("grade", "fractional", "message"), [
    ("1e2", False, "grade '1e2' is in exponent notation"),
    ("nan", True, "grade 'nan' is not a finite number"),
    ("9007199254740993", False, "grade '9007199254740993' is too large for a grade"),
    ("1e16", True, "grade '1e16' is too large for a grade"),
])
def test_a_refused_grade_deep_in_a_plain_file_names_its_line(tmp_path: Path, grade: str,
                                                            fractional: bool,
                                                            message: str) -> None:
    lines = [f"q{i % 9} 0 d{i} {i % 3}\n" for i in range(3000)]
    lines[2499] = f"q1 0 dx {grade}\n"
    p = _file(tmp_path, "".join(lines), "q.txt")
    with pytest.raises(InputError) as info:
        load_qrels(p, fractional_grades=fractional)
    assert str(info.value).startswith(f"{p}:2500: {message}")


def test_bom_file_is_read_by_pyarrow_without_the_bom(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "r.run"
    p.write_bytes(b"\xef\xbb\xbf" + RUN.encode())
    _no_exact_reader(monkeypatch)
    run = load_run(p)
    assert run.query_ids.to_pylist()[0] == "q1" and run.lines.tolist() == [1, 2, 3]


@pytest.mark.parametrize("skip", [0, 3])
def test_long_strings_are_fingerprinted_alone_with_the_same_formula(
        skip: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragreport.core import keys as _keys

    rng = random.Random(4)
    lengths = [0, 1, 7, 8, 9, 16, 17, 2047, 2048, 2049, 2056, 4097, 70_001]
    strings = ["".join(rng.choice("ab#é") for _ in range(n)) for n in lengths]
    strings += [s[:-1] + "z" for s in strings if s]  # differ in the last byte only
    arr = pa.array(["pre" + s for s in strings])
    alone = string_fingerprints(arr, skip)
    monkeypatch.setattr(_keys, "_LONG", 1 << 40)  # every string through the block loop
    np.testing.assert_array_equal(alone, string_fingerprints(arr, skip))
    assert len(set(alone.tolist())) == len(strings)


def test_one_10_mb_id_among_short_ones_is_fingerprinted_quickly() -> None:
    import time

    arr = pa.array(["d1", "x" * (10 << 20), "d2", "d1"])
    start = time.perf_counter()
    f = string_fingerprints(arr)
    assert time.perf_counter() - start < 2  # 1.3 million steps for every row before
    assert f[0] == f[3] and len(set(f.tolist())) == 3


def _outcome(fn: Any) -> tuple[str, Any]:
    try:
        got = fn()
    except InputError as exc:
        return "error", str(exc)
    return "ok", got[2].tolist()


number_texts = st.one_of(
    st.text(alphabet=st.sampled_from("0123456789+-.eE_xXnaNifINF"), min_size=1, max_size=12),
    st.from_regex(r"[+-]?([0-9]{1,3}\.?[0-9]{0,3}|\.[0-9]{1,3})([eE][+-]?[0-9]{1,3})?",
                  fullmatch=True),
    st.floats().map(repr),
    st.integers(-(2**60), 2**60).map(str),
)


@settings(max_examples=300, deadline=None)
@given(number_texts, st.sampled_from(["run", "qrels", "qrels-fractional"]))
def test_pyarrow_and_the_exact_reader_read_every_number_alike(text: str, kind: str) -> None:
    from ragreport.io import trec

    fractional = kind.endswith("fractional")
    kind = kind.split("-")[0]
    line = f"q1 Q0 d1 1 {text} t\n" if kind == "run" else f"q1 0 d1 {text}\n"
    data = ("q0 Q0 d0 1 1 t\n" if kind == "run" else "q0 0 d0 1\n").encode() + line.encode()
    fast = _outcome(lambda: trec.parse_trec(data, "x", kind, fractional=fractional))
    slow = _outcome(lambda: trec._parse_slow(data, "x", kind, fractional))
    assert fast == slow


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list(b" \t\r\n\x0b\x0cab")), max_size=60).map(bytes))
def test_white_space_normalisation_equals_splitting_each_line(data: bytes) -> None:
    from ragreport.io.trec import _normalize_ws

    assert _normalize_ws(data) == b"\n".join(b" ".join(line.split())
                                             for line in data.split(b"\n"))


# ---- a late line whose white space is not the delimiter guessed from the first lines --------

#: (kind, plain line format, odd line): the odd line splits on white space into other fields
#: than the guessed delimiter gives (``a<TAB>1`` one id for the delimiter, two fields for
#: trec_eval), so only a reader that splits on white space reads it right.
LATE_ODD_LINES = [
    ("run", "f Q0 z{} 1 1 t", b"q Q0 a\t1 2 0.5 t"),         # tab in a space file
    ("run", "f Q0 z{} 1 1 t", b"q Q0\ta 1 2 0.5 t"),         # ... inside Q0
    ("run", "f Q0 z{} 1 1 t", b"q Q0 a 1\x0b2 0.5 t"),       # vertical tab
    ("run", "f\tQ0\tz{}\t1\t1\tt", b"q\tQ0 a\t1\t2\t0.5\tt"),  # space in a tab file
    ("run", "f\tQ0\tz{}\t1\t1\tt", b"q\tQ0\ta \t1\t2\tt"),     # trailing space in an id
    ("qrels", "f 0 z{} 1", b"q 0 a\t 1"),                    # tab in a space file
    ("qrels", "f 0 z{} 1", b"q\x0c 0 a 1"),                  # form feed
    ("qrels", "f\t0\tz{}\t1", b"q \t0\ta\t1"),               # space in a tab file
]


def _late_odd_file(fmt: str, odd: bytes, first: bool = False) -> bytes:
    plain = b"".join(fmt.format(i).encode() + b"\n" for i in range(60))
    return odd + b"\n" + plain if first else plain + odd + b"\n"


@pytest.mark.parametrize("kind, fmt, odd", LATE_ODD_LINES)
def test_a_late_line_with_other_white_space_is_split_on_white_space(
        tmp_path: Path, kind: str, fmt: str, odd: bytes) -> None:
    from ragreport.io import trec

    data = _late_odd_file(fmt, odd)
    slow = trec._parse_slow(data, "x", kind)
    assert slow[1].to_pylist()[-1] == "a"
    fast = trec.parse_trec(data, "x", kind)  # the bytes path (streaming blocks, stdin)
    for got, want in zip(fast[:4], slow[:4], strict=True):
        assert np.asarray(got).tolist() == np.asarray(want).tolist()
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    assert trec.parse_trec_file(str(path), kind, data[:65536]) is None  # not the file path
    loaded = load_run(path) if kind == "run" else load_qrels(path)
    early = tmp_path / "e.txt"  # the same line first: the same rows, whatever its place
    early.write_bytes(_late_odd_file(fmt, odd, first=True))
    loaded_early = load_run(early) if kind == "run" else load_qrels(early)
    values = (lambda o: o.scores) if kind == "run" else (lambda o: o.grades)
    rows = sorted(zip(loaded.query_ids.to_pylist(), loaded.doc_ids.to_pylist(),
                      values(loaded).tolist(), strict=True))
    assert rows == sorted(zip(slow[0].to_pylist(), slow[1].to_pylist(), slow[2].tolist(),
                              strict=True))
    assert rows == sorted(zip(loaded_early.query_ids.to_pylist(),
                              loaded_early.doc_ids.to_pylist(), values(loaded_early).tolist(),
                              strict=True))


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_plain_files_still_take_the_fast_path(tmp_path: Path, kind: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from ragreport.io import trec

    fmt = "f Q0 z{} 1 1 t" if kind == "run" else "f 0 z{} 1"
    for sep in (" ", "\t"):
        data = _late_odd_file(fmt.replace(" ", sep), fmt.format(60).replace(" ", sep).encode())
        path = tmp_path / "f.txt"
        path.write_bytes(data)
        assert trec.parse_trec_file(str(path), kind, data[:65536]) is not None
        monkeypatch.setattr(trec, "_normalize_ws", None)  # calling it would fail
        assert len(trec.parse_trec(data, "x", kind)[2]) == 61
        monkeypatch.undo()
