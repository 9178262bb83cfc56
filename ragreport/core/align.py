"""Join a run to its qrels and order it: the ranked-grade matrix every metric starts from.

Steps, all vectorised over rows:

1. Encode query ids to integers: for a run grouped by query (as TREC runs are) only the
   first id of each group is hashed.
2. Fingerprint the run's document ids (64 bits, from pyarrow's buffers, after the prefix all
   ids share) and find the judged ones through a small table of the judged ids'
   fingerprints; every match is confirmed on the strings.
3. Check duplicates (a (query, doc) pair twice in the qrels, or twice in the run): equal
   fingerprints are the only candidates, and only then are strings compared.
4. Choose the evaluated queries (in both inputs; ``complete=True`` adds qrels-only queries).
   A query the run lists with an empty result (``Run.empty_queries``) is in the run: when
   judged it is evaluated with no document retrieved, so it scores 0.
5. Order each query's documents: score descending, ties by document id descending
   (trec_eval), or as given; cut at ``max_depth``. A grouped run whose scores already
   descend needs no sort, only its runs of tied scores are ordered; anything else takes one
   Arrow multi-key sort.
6. Look up the grades of the judged retrieved documents into a (queries, depth) matrix (NaN
   when unjudged or beyond what was retrieved).

Every shortcut gives exactly the general path's result (``tests/core/test_fastpaths.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Qrels, Run
from ..errors import InputError
from .evaluated import query_sets
from .keys import common_prefix, order_keys, string_fingerprints
from .ranking import Ranking

__all__ = ["align", "check_qrels", "id_rank"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def id_rank(ids: Any) -> IntArray:
    """Rank of each id of a pyarrow string array in the order queries are listed.

    Numeric order (ties such as ``007``/``7`` by the string) when every id is a number of
    at most 18 digits, else byte order.

    >>> import pyarrow as pa
    >>> id_rank(pa.array(["10", "9", "007", "7"])).tolist()
    [3, 2, 0, 1]
    >>> id_rank(pa.array(["q10", "q9"])).tolist()
    [0, 1]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    keys: dict[str, Any] = {"s": ids}
    if len(ids) and pc.all(pc.match_substring_regex(ids, r"^[0-9]{1,18}$")).as_py():
        keys = {"n": pc.cast(ids, pa.int64()), "s": ids}
    order = pc.sort_indices(pa.table(keys), sort_keys=[(k, "ascending") for k in keys])
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order.to_numpy()] = np.arange(len(ids))
    return rank


def _encode(a: Any, b: Any) -> tuple[IntArray, Any]:
    import pyarrow as pa
    import pyarrow.compute as pc

    both = pa.concat_arrays([a, b]) if len(b) else a
    enc = pc.dictionary_encode(both)
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary


def _query_codes(run: Run, qrels: Qrels) -> tuple[npt.NDArray[np.int32], IntArray, Any,
                                                tuple[IntArray, IntArray] | None]:
    """Integer query codes of the run rows and the qrels rows, over one shared dictionary.

    A run grouped by query (each query's rows together, as TREC runs are) is recognised by
    comparing neighbours; then only the first id of each group is hash-encoded and the codes
    are repeated. Also returns (group starts, group sizes) for a grouped run, else None.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    qids = run.query_ids
    n = len(qids)
    change = np.asarray(pc.not_equal(qids.slice(1), qids.slice(0, max(n - 1, 0)))
                        .to_numpy(zero_copy_only=False), dtype=bool) if n > 1 else \
        np.zeros(0, bool)
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))[:n].astype(np.int64)
    del change
    heads = qids.take(pa.array(starts))
    if pc.count_distinct(heads).as_py() == len(heads):
        codes, q_dict = _encode(heads, qrels.query_ids)
        sizes = np.diff(np.append(starts, n))
        rq = np.repeat(codes[:len(starts)].astype(np.int32), sizes)
        return rq, codes[len(starts):], q_dict, (starts, sizes)
    codes, q_dict = _encode(qids, qrels.query_ids)
    return codes[:n].astype(np.int32), codes[n:], q_dict, None


def _judged_index(doc_ids: Any, fp: npt.NDArray[np.uint64], judged: Any,
                  prefix: str) -> npt.NDArray[np.int32]:
    """Index of each run document among the judged ids, -1 when it is not judged.

    Fingerprints find the candidates (a direct-mapped table of the few judged ones, looked up
    block by block); the strings of every candidate are then compared exactly. When two
    judged ids share a fingerprint the lookup is done by hashing the strings instead.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    # a judged id without the prefix every run document has can match none of them
    jmap = np.flatnonzero(np.asarray(pc.starts_with(judged, prefix)
                                     .to_numpy(zero_copy_only=False), dtype=bool)) \
        if prefix else np.arange(len(judged))
    jfp = string_fingerprints(judged.take(pa.array(jmap)), len(prefix.encode("utf-8")))
    if len(jfp) == 0 or len(np.unique(jfp)) < len(jfp):
        return np.asarray(pc.index_in(doc_ids, value_set=judged).fill_null(-1)
                          .to_numpy(zero_copy_only=False), dtype=np.int32)
    # a direct-mapped table on the top bits of the fingerprints (small: stays in cache);
    # buckets that two judged ids share are marked -2 and searched in the sorted fingerprints
    bits = max(12, int(np.ceil(np.log2(len(jfp) * 4))))
    shift = np.uint64(64 - bits)
    bucket = (jfp >> shift).astype(np.intp)
    count = np.bincount(bucket, minlength=1 << bits)
    table = np.where(count > 1, -2, -1).astype(np.int32)
    alone = count[bucket] == 1
    table[bucket[alone]] = np.flatnonzero(alone)
    parts: tuple[list[IntArray], list[IntArray], list[IntArray]] = ([], [], [])
    step = 1 << 20  # blocks small enough for the probe's temporaries to stay in cache
    for lo in range(0, len(fp), step):
        hit = table[(fp[lo:lo + step] >> shift).astype(np.intp)]
        c = np.flatnonzero(hit >= 0)
        parts[0].append(c + lo)
        parts[1].append(hit[c].astype(np.int64))
        parts[2].append(np.flatnonzero(hit == -2) + lo)
    cand, idx, shared = (np.concatenate(p) if p else np.zeros(0, np.int64) for p in parts)
    if len(shared):
        order = np.argsort(jfp, kind="stable")
        look = np.minimum(np.searchsorted(jfp[order], fp[shared]), len(jfp) - 1)
        cand = np.concatenate([cand, shared])
        idx = np.concatenate([idx, order[look]])
    close = jfp[idx] == fp[cand]
    cand, idx = cand[close], jmap[idx[close]]
    same = np.asarray(pc.equal(doc_ids.take(pa.array(cand)), judged.take(pa.array(idx)))
                      .to_numpy(zero_copy_only=False), dtype=bool)
    rd = np.full(len(fp), -1, dtype=np.int32)
    rd[cand[same]] = idx[same]
    return rd


def _maybe_duplicates(rq: npt.NDArray[np.int32], fp: npt.NDArray[np.uint64],
                      groups: tuple[IntArray, IntArray] | None) -> bool:
    """False when no document can appear twice for one query (fingerprints all differ).

    True means "perhaps": the caller then compares the strings exactly. ``fp`` (the run's
    document fingerprints) is used up: sorted in place.
    """
    if groups is not None and len(groups[1]) and (groups[1] == groups[1][0]).all():
        # every query has as many rows: sort each query's fingerprints in its own row
        mat = fp.reshape(len(groups[1]), int(groups[1][0]))
        mat.sort(axis=1)
        return bool((mat[:, 1:] == mat[:, :-1]).any())
    with np.errstate(over="ignore"):
        fp += rq.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    fp.sort()
    return bool((fp[1:] == fp[:-1]).any())


def _spans(starts: IntArray, lens: IntArray) -> tuple[IntArray, IntArray]:
    """Every position of the spans ``[start, start + len)`` and the index of its span.

    >>> [a.tolist() for a in _spans(np.array([2, 7]), np.array([3, 2]))]
    [[2, 3, 4, 7, 8], [0, 0, 0, 1, 1]]
    """
    idx = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
    return idx, np.repeat(np.arange(len(starts)), lens)


def _tie_order(doc_ids: Any, tied: IntArray, starts_run: BoolArray,
               skip: int) -> IntArray:
    """Order of the tied rows: runs of ties kept in place, each by document id descending.

    Compares 8-byte order keys taken after the prefix all ids share: a pair, the usual case,
    with one comparison; longer runs with one lexsort. The runs whose ids the keys cannot
    tell apart are sorted by one Arrow sort of just their strings.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    first = np.flatnonzero(starts_run)
    lens = np.diff(np.append(first, len(tied)))
    perm = np.arange(len(tied), dtype=np.int64)
    unresolved: list[IntArray] = []

    pair = first[lens == 2]
    ka = order_keys(doc_ids, tied[pair], skip)
    kb = order_keys(doc_ids, tied[pair + 1], skip)
    swap = pair[ka < kb]
    perm[swap] = swap + 1
    perm[swap + 1] = swap
    unresolved.append(pair[ka == kb])

    big, big_len = first[lens > 2], lens[lens > 2]
    if len(big):
        idx, rid = _spans(big, big_len)
        key = order_keys(doc_ids, tied[idx], skip)
        o = np.lexsort((~key, rid))
        perm[idx] = idx[o]
        r_o, k_o = rid[o], key[o]
        same = (r_o[1:] == r_o[:-1]) & (k_o[1:] == k_o[:-1])
        unresolved.append(big[np.unique(r_o[1:][same])])

    amb = np.concatenate(unresolved)
    if len(amb):  # ids equal on their 8 bytes after the prefix: compare the strings
        idx, rid = _spans(amb, lens[np.searchsorted(first, amb)])
        o = pc.sort_indices(pa.table({"r": rid, "d": doc_ids.take(pa.array(tied[idx]))}),
                            sort_keys=[("r", "ascending"), ("d", "descending")]).to_numpy()
        perm[idx] = idx[o]
    return perm


def _grouped_order(run: Run, groups: tuple[IntArray, IntArray] | None,
                   rq: npt.NDArray[np.int32], qpos: IntArray,
                   order: str, skip: int = 0) -> tuple[IntArray, npt.NDArray[Any]] | None:
    """Ranking order without a full sort, for a run grouped by query (None: not applicable).

    The groups of evaluated queries are laid end to end in query order. With
    ``order="score"`` this needs each group's scores to be non-increasing already, as a
    retriever writes them; only the runs of tied scores are then sorted, by document id
    descending (see :func:`_tie_order`).
    """
    if groups is None:
        return None
    starts, sizes = groups
    n = len(rq)
    boundary = np.zeros(max(n - 1, 0), dtype=bool)
    boundary[starts[1:] - 1] = True
    tie = None
    if order == "score":
        s = run.scores
        if not np.all((s[1:] <= s[:-1]) | boundary):
            return None
        tie = (s[1:] == s[:-1]) & ~boundary
    gpos = qpos[rq[starts]]
    chosen = np.flatnonzero(gpos >= 0)
    chosen = chosen[np.argsort(gpos[chosen], kind="stable")]
    c_sizes = sizes[chosen]
    c_offsets = np.cumsum(c_sizes) - c_sizes  # where each chosen group starts in the ranking
    rows, span = _spans(starts[chosen], c_sizes)
    rpos = gpos[chosen].astype(np.int32)[span]
    del span
    if tie is not None and tie.any():
        in_tie = np.zeros(n, dtype=bool)
        in_tie[:-1] = tie
        in_tie[1:] |= tie
        tied = np.flatnonzero(in_tie)
        del in_tie
        # a tied row that is not tied to the row before starts a run of ties
        starts_run = np.ones(len(tied), dtype=bool)
        starts_run[1:] = ~tie[tied[1:] - 1]
        perm = _tie_order(run.doc_ids, tied, starts_run, skip)
        # put each tied row at its place in the ranking (rows of unevaluated groups stay out)
        group = np.searchsorted(starts, tied, side="right") - 1
        where = np.full(len(starts), -1, dtype=np.int64)
        where[chosen] = c_offsets
        at = where[group]
        ok = at >= 0
        rows[(at + tied - starts[group])[ok]] = tied[perm][ok]
    return rows, rpos


def _check_judged_once(qrels: Qrels, keys: IntArray) -> None:
    """Raise naming the line when a (query, document) key appears twice in the qrels."""
    first, later = _duplicate_pairs(keys)
    if len(first):
        i, j = int(first[0]), int(later[0])
        where = "".join(f" (first at {unit} {n})" for unit, n in qrels.place(i).items())
        raise InputError(f"document {qrels.doc_ids[j].as_py()!r} is judged twice for query "
                         f"{qrels.query_ids[j].as_py()!r}{where}", qrels.source,
                         **qrels.place(j))


def check_qrels(qrels: Qrels) -> None:
    """Validate qrels on their own (each document judged once per query), as :func:`align`
    does; for callers that then align subsets of them.

    >>> from ragreport.io import load_qrels
    >>> check_qrels(load_qrels({"q1": {"d1": 1, "d2": 0}}))
    """
    from ..io.columns import pair_keys

    _check_judged_once(qrels, pair_keys(qrels.query_ids, qrels.doc_ids))


def _duplicate_pairs(keys: IntArray) -> tuple[IntArray, IntArray]:
    """(first row, later row) for every key that appears more than once (first = earliest)."""
    order = np.argsort(keys, kind="stable")
    s = keys[order]
    dup = np.flatnonzero(s[1:] == s[:-1])
    if len(dup) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # earliest row of each run of equal keys
    start = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
    run_start = start[np.searchsorted(start, dup + 1, side="right") - 1]
    return order[run_start], order[dup + 1]


def _drop_identical(run: Run, rows: IntArray, rpos: IntArray) -> tuple[IntArray, IntArray, int]:
    """``rows`` (and their query positions) without the rows whose document id equals the
    query id, and how many were dropped; the order of the others is kept.

    One vectorised comparison of the two string columns (about 20 ms for 7 million rows),
    exact, with no Python object per row.

    >>> from ragreport.io import load_run
    >>> r = load_run({"q1": ["q1", "d2"], "d2": ["d2"]})
    >>> [a.tolist() if hasattr(a, "tolist") else a
    ...  for a in _drop_identical(r, np.arange(3), np.array([0, 0, 1]))]
    [[1], [0], 2]
    """
    import pyarrow.compute as pc

    same = np.asarray(pc.equal(run.doc_ids, run.query_ids).to_numpy(zero_copy_only=False),
                      dtype=bool)[rows]
    if not same.any():
        return rows, rpos, 0
    keep = ~same
    return rows[keep], rpos[keep], int(same.sum())


def _listed_ids(ids: list[str], more: list[str]) -> list[str]:
    """``ids`` (already in listing order) with ``more`` merged in, in the same order."""
    if not more:
        return ids
    import pyarrow as pa

    both = ids + more
    rank = id_rank(pa.array(both, pa.string()))
    return [both[i] for i in np.argsort(rank, kind="stable").tolist()]


def align(
    qrels: Qrels,
    run: Run,
    *,
    order: str = "score",
    complete: bool = False,
    max_depth: int | None = None,
    rel_level: float = 1,
    no_relevant: str = "zero",
    duplicates: str = "error",
    ignore_identical_ids: bool = False,
) -> Ranking:
    """Order ``run`` per query and join it to ``qrels`` (see the module docstring).

    ``ignore_identical_ids=True`` drops every retrieved document whose id equals its query's
    id before the depth cut, as BEIR and MTEB do (``results[qid].pop(qid)``); a query left
    with no document is an empty retrieval. The dropped rows are counted in
    ``Counts.identical_ids_dropped``.
    """
    import pyarrow.compute as pc

    rq, qq, q_dict, groups = _query_codes(run, qrels)
    # only judged documents need an integer identity for the join: look each run document up
    # in the (small) set of judged ids instead of hash-encoding every run document
    judged = pc.unique(qrels.doc_ids)
    n_judged = max(len(judged), 1)
    qd = np.asarray(pc.index_in(qrels.doc_ids, value_set=judged)
                    .to_numpy(zero_copy_only=False), dtype=np.int64)
    prefix = common_prefix(run.doc_ids)  # shared by every run document: not hashed
    skip = len(prefix.encode("utf-8"))
    fp = string_fingerprints(run.doc_ids, skip)
    rd = _judged_index(run.doc_ids, fp, judged, prefix)
    qkeys = qq * n_judged + qd
    del qd

    _check_judged_once(qrels, qkeys)
    keep, dropped = _deduplicated(run, rq, fp, groups, duplicates)
    sets = query_sets(run, qrels, rq, qq, q_dict, complete=complete, rel_level=rel_level,
                      no_relevant=no_relevant)
    all_ids = sets.all_ids
    rank = id_rank(q_dict)

    def listed(mask: BoolArray) -> IntArray:
        chosen = np.flatnonzero(mask)
        return chosen[np.argsort(rank[chosen], kind="stable")]

    ev_sorted = listed(sets.evaluated)
    qids = [all_ids[i] for i in ev_sorted.tolist()]
    n_q = len(qids)
    qpos = np.full(len(all_ids), -1, dtype=np.int64)
    qpos[ev_sorted] = np.arange(n_q)

    rows, rpos = _ordered_rows(run, groups, rq, qpos, order, skip, keep, dropped)
    identical = 0
    if ignore_identical_ids and len(rows):
        rows, rpos, identical = _drop_identical(run, rows, rpos)
    rows, rpos, sizes, offsets = _depth_cut(rows, rpos, n_q, max_depth)
    ret_grades = _retrieved_grades(rows, rd, rq, qkeys, n_judged, qrels.grades)
    del rd
    qrows, qsizes = _judgments(qpos, qq, qrels.grades, n_q)
    return Ranking(
        query_ids=qids,
        ret_grades=ret_grades,
        n_ret=sizes.astype(np.int64),
        run_rows=rows.astype(np.int64),
        ret_offsets=offsets.astype(np.int64),
        qrels_rows=qrows.astype(np.int64),
        qrels_offsets=np.concatenate(([0], np.cumsum(qsizes))).astype(np.int64),
        qrels_grades=qrels.grades[qrows],
        counts=sets.counts(n_q, int((sizes == 0).sum()), dropped, identical),
        run=run,
        qrels=qrels,
        run_only_ids=_listed_ids([all_ids[i] for i in
                                  listed(sets.in_run & ~sets.in_qrels).tolist()],
                                 sets.empty_only),
        qrels_only_ids=[all_ids[i] for i in listed(sets.in_qrels & ~sets.in_run).tolist()],
    )


def _deduplicated(run: Run, rq: npt.NDArray[np.int32], fp: npt.NDArray[np.uint64],
                  groups: tuple[IntArray, IntArray] | None, duplicates: str
                  ) -> tuple[BoolArray, int]:
    """The run rows kept (later occurrences of a (query, document) pair dropped with
    ``duplicates='first'``, refused with ``'error'``) and how many were dropped.

    Fingerprints prove that there is none (the usual case) in one numeric sort; only when two
    fingerprints meet are the strings compared, by one Arrow (query, document) sort where
    equal neighbours are duplicates."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n_run = len(run)
    keep = np.ones(n_run, dtype=bool)
    if not (n_run > 1 and _maybe_duplicates(rq, fp, groups)):
        return keep, 0
    by_doc = pc.sort_indices(pa.table({"q": rq, "d": run.doc_ids}),
                             sort_keys=[("q", "ascending"), ("d", "ascending")]).to_numpy()
    d_sorted = run.doc_ids.take(pa.array(by_doc))
    q_sorted_run = rq[by_doc]
    same = (q_sorted_run[1:] == q_sorted_run[:-1]) & np.asarray(
        pc.equal(d_sorted.slice(1), d_sorted.slice(0, n_run - 1))
        .to_numpy(zero_copy_only=False), dtype=bool)
    del d_sorted, q_sorted_run
    if not same.any():
        return keep, 0
    pair_id = np.empty(n_run, dtype=np.int64)  # one id per distinct (query, document)
    pair_id[by_doc] = np.concatenate(([0], np.cumsum(~same)))
    first, later = _duplicate_pairs(pair_id)
    if duplicates == "error":
        i, j = int(first[0]), int(later[0])
        where = "".join(f" (first at {unit} {n})" for unit, n in run.place(i).items())
        raise InputError(
            f"document {run.doc_ids[j].as_py()!r} appears twice for query "
            f"{run.query_ids[j].as_py()!r}{where}; pass duplicates='first' "
            "(--keep-first-duplicate) to keep the first occurrence", run.source,
            **run.place(j))
    keep[later] = False
    return keep, len(later)


def _ordered_rows(run: Run, groups: tuple[IntArray, IntArray] | None,
                  rq: npt.NDArray[np.int32], qpos: IntArray, order: str, skip: int,
                  keep: BoolArray, dropped: int) -> tuple[IntArray, IntArray]:
    """The run rows of the evaluated queries in ranking order, and each row's query position:
    by query, then score descending, then document id descending (``order="given"``: as
    the run lists them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    fast = _grouped_order(run, groups, rq, qpos, order, skip) if not dropped else None
    if fast is not None:
        return fast
    rows = np.flatnonzero(keep & (qpos[rq] >= 0))
    rpos = qpos[rq[rows]]
    if order == "given":
        perm = np.argsort(rpos, kind="stable")
    else:
        # one multi-key sort: query, score descending, document id descending (byte
        # order); Arrow compares the strings only where query and score tie
        docs = run.doc_ids if len(rows) == len(run) else run.doc_ids.take(pa.array(rows))
        perm = pc.sort_indices(
            pa.table({"q": rpos, "s": run.scores[rows], "d": docs}),
            sort_keys=[("q", "ascending"), ("s", "descending"), ("d", "descending")],
        ).to_numpy()
    return rows[perm], rpos[perm]


def _depth_cut(rows: IntArray, rpos: IntArray, n_q: int, max_depth: int | None
               ) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """The rows of each query down to ``max_depth``, with each query's size and offsets."""
    sizes = np.bincount(rpos, minlength=n_q)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    if max_depth is not None and len(rows) and int(sizes.max()) > max_depth:
        cut = np.arange(len(rows)) - offsets[:-1][rpos] < max_depth
        rows, rpos = rows[cut], rpos[cut]
        sizes = np.bincount(rpos, minlength=n_q)
        offsets = np.concatenate(([0], np.cumsum(sizes)))
    return rows, rpos, sizes, offsets


def _retrieved_grades(rows: IntArray, rd: npt.NDArray[np.int32], rq: npt.NDArray[np.int32],
                      qkeys: IntArray, n_judged: int, grades: FloatArray) -> FloatArray:
    """Grades of the retrieved documents, in ranking order: only judged rows are looked up;
    the rest stay NaN (a flat array: memory proportional to the input, whatever the
    depths)."""
    ret_grades = np.full(len(rows), np.nan)
    hit = np.flatnonzero(rd[rows] >= 0)
    if len(hit) and len(qkeys):
        hrows = rows[hit]
        hkeys = rq[hrows].astype(np.int64) * n_judged + rd[hrows]
        q_order = np.argsort(qkeys, kind="stable")
        q_sorted = qkeys[q_order]
        look = np.minimum(np.searchsorted(q_sorted, hkeys), len(q_sorted) - 1)
        found = q_sorted[look] == hkeys
        ret_grades[hit[found]] = grades[q_order[look[found]]]
    return ret_grades


def _judgments(qpos: IntArray, qq: IntArray, grades: FloatArray, n_q: int
               ) -> tuple[IntArray, IntArray]:
    """The qrels rows of the evaluated queries (by query, best grade first) and how many
    each query has."""
    qrows = np.flatnonzero(qpos[qq] >= 0)
    qrpos = qpos[qq[qrows]]
    qperm = np.lexsort((-grades[qrows], qrpos))
    qrows, qrpos = qrows[qperm], qrpos[qperm]
    return qrows, np.bincount(qrpos, minlength=n_q)
