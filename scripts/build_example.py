#!/usr/bin/env python3
"""Build the embedded ``pydoc`` evaluation set shipped with ragreport.

The corpus is CPython's own help text (``pydoc_data.topics.topics``: the
language-reference topics shown by ``help("try")`` and friends). The script

1. splits every topic into passages of roughly 60-150 words (paragraphs are
   grouped, passages never cross topics) with ids like ``try#3``;
2. writes ``docs.jsonl``, ``queries.tsv`` and ``qrels.txt`` (queries and graded
   judgments come from the hand-written ``scripts/example_judgments.py``);
3. runs two genuinely different retrievers over the passages, BM25 over word
   tokens and TF-IDF cosine over character 3-5 grams, and writes the top 50
   of each as TREC run files;
4. sanity-checks the output and prints a few quick metrics.

Only the standard library is used. Output is deterministic for a given
CPython version (``pydoc_data`` differs between versions; see the README).

Usage::

    python scripts/build_example.py               # regenerate everything
    python scripts/build_example.py --check       # rebuild in memory, diff against shipped files
    python scripts/build_example.py --pool q05    # print the judging pool for a query
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import platform
import pydoc_data.topics
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = REPO_ROOT / "ragreport" / "examples" / "pydoc"
JUDGMENTS_FILE = Path(__file__).resolve().parent / "example_judgments.py"

# The shipped files were generated with this interpreter version.
REFERENCE_PYTHON = "3.11.7"

# Passage splitting parameters (counted in words, see ``count_words``).
MIN_WORDS = 60
MAX_WORDS = 150
HARD_MAX_WORDS = 190  # a short passage may grow up to this rather than be flushed
SPLIT_TARGET = 120  # chunk size used when a single paragraph is too long
MIN_BEFORE_HEADING = 40  # a section heading starts a new passage if we have this much
TAIL_MERGE_WORDS = 30  # a final fragment shorter than this joins the previous passage
TAIL_MERGE_LIMIT = 190  # ... unless the merged passage would exceed this

RUN_DEPTH = 50
POOL_DEPTH = 20

BM25_K1 = 0.9
BM25_B = 0.4

# Small English stopword list used by the BM25 tokenizer (Python keywords such as "is",
# "in", "for", "with" are ordinary English words here, which is part of what makes some
# queries hard for BM25).
_STOPWORD_TEXT = """
a an and are as at be but by can do does for from how i if in into is it its me my of on
or so than that the their then there these this to was were what when where which while
who why will with you your
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

_RULE_RE = re.compile(r"([*=\-~^])\1{2,}")
_WORD_RE = re.compile(r"[A-Za-z0-9_]+")
_TOKEN_RE = re.compile(r"[a-z0-9_]+")
_SPACE_RE = re.compile(r"\s+")


# ---------------------------------------------------------------------------
# Passage splitting
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Passage:
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class _Block:
    text: str
    words: int
    heading: bool
    glue: str  # separator placed before this block when joined to a previous one


def count_words(text: str) -> int:
    """Number of alphanumeric words (table borders and punctuation do not count)."""
    return len(_WORD_RE.findall(text))


def _paragraphs(text: str) -> list[tuple[list[str], bool]]:
    """Split help text into (lines, is_heading) paragraphs, dropping rule lines."""
    lines = [line.rstrip() for line in text.splitlines()]
    paragraphs: list[tuple[list[str], bool]] = []
    current: list[str] = []
    for i, line in enumerate(lines):
        if _RULE_RE.fullmatch(line):
            # Heading underline (previous line is the heading) or a separator.
            if current and i > 0 and lines[i - 1] and not lines[i - 1].startswith(" "):
                heading = current.pop()
                if current:
                    paragraphs.append((current, False))
                paragraphs.append(([heading], True))
                current = []
            continue
        if not line.strip():
            if current:
                paragraphs.append((current, False))
                current = []
            continue
        current.append(line)
    if current:
        paragraphs.append((current, False))
    return paragraphs


def _split_long(lines: list[str]) -> list[str]:
    """Split an over-long paragraph into chunks of about SPLIT_TARGET words."""
    chunks: list[str] = []
    buf: list[str] = []
    buf_words = 0
    for line in lines:
        n = count_words(line)
        if n > SPLIT_TARGET:  # pathological single line: split on whitespace
            if buf:
                chunks.append("\n".join(buf))
                buf, buf_words = [], 0
            tokens = line.split()
            piece: list[str] = []
            for tok in tokens:
                piece.append(tok)
                if count_words(" ".join(piece)) >= SPLIT_TARGET:
                    chunks.append(" ".join(piece))
                    piece = []
            if piece:
                chunks.append(" ".join(piece))
            continue
        if buf and buf_words + n > SPLIT_TARGET:
            chunks.append("\n".join(buf))
            buf, buf_words = [], 0
        buf.append(line)
        buf_words += n
    if buf:
        chunks.append("\n".join(buf))
    return chunks


def _blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    for lines, heading in _paragraphs(text):
        joined = "\n".join(lines)
        n = count_words(joined)
        if heading or n <= MAX_WORDS:
            blocks.append(_Block(joined, n, heading, "\n\n"))
            continue
        for j, chunk in enumerate(_split_long(lines)):
            blocks.append(_Block(chunk, count_words(chunk), False, "\n\n" if j == 0 else "\n"))
    return blocks


def _join(blocks: Sequence[_Block]) -> str:
    out = blocks[0].text
    for block in blocks[1:]:
        out += block.glue + block.text
    return out


def split_topic(topic: str, text: str) -> list[Passage]:
    """Group the paragraphs of one topic into passages of ~MIN_WORDS..MAX_WORDS words."""
    groups: list[list[_Block]] = []
    current: list[_Block] = []
    current_words = 0
    for block in _blocks(text):
        if current and (
            (block.heading and current_words >= MIN_BEFORE_HEADING)
            or (
                current_words + block.words > MAX_WORDS
                and (current_words >= MIN_WORDS or current_words + block.words > HARD_MAX_WORDS)
            )
        ):
            carried = [current.pop()] if current[-1].heading and len(current) > 1 else []
            groups.append(current)
            current, current_words = carried, sum(b.words for b in carried)
        current.append(block)
        current_words += block.words
    if current:
        if (
            groups
            and current_words < TAIL_MERGE_WORDS
            and sum(b.words for b in groups[-1]) + current_words <= TAIL_MERGE_LIMIT
        ):
            groups[-1].extend(current)
        else:
            groups.append(current)
    return [
        Passage(doc_id=f"{topic}#{i}", title=topic, text=_join(group))
        for i, group in enumerate(groups, start=1)
    ]


def build_corpus(topics: Mapping[str, str]) -> list[Passage]:
    passages: list[Passage] = []
    for topic in sorted(topics):
        passages.extend(split_topic(topic, topics[topic]))
    return passages


# ---------------------------------------------------------------------------
# Retrievers
# ---------------------------------------------------------------------------


def word_tokens(text: str) -> list[str]:
    """Lowercase word tokenizer with a small stopword list (used by BM25)."""
    return [t for t in _TOKEN_RE.findall(text.lower()) if t not in STOPWORDS]


def char_ngrams(text: str, lo: int = 3, hi: int = 5) -> list[str]:
    """Character n-grams inside word boundaries (like scikit-learn's ``char_wb``)."""
    grams: list[str] = []
    for word in _SPACE_RE.sub(" ", text.lower()).split(" "):
        if not word:
            continue
        padded = f" {word} "
        for n in range(lo, hi + 1):
            if len(padded) < n:
                break
            grams.extend(padded[i : i + n] for i in range(len(padded) - n + 1))
    return grams


def _index_text(p: Passage) -> str:
    return f"{p.title.replace('-', ' ')}\n{p.text}"


Ranking = list[tuple[str, float]]


def _top(scores: Mapping[str, float], all_ids: Sequence[str], k: int) -> Ranking:
    """Top k by (rounded score desc, doc id asc); pad with zero-score docs if needed."""
    ranked = sorted(((round(s, 4), d) for d, s in scores.items()), key=lambda x: (-x[0], x[1]))
    out: Ranking = [(d, s) for s, d in ranked[:k]]
    if len(out) < k:
        seen = {d for d, _ in out}
        out.extend((d, 0.0) for d in sorted(all_ids) if d not in seen)
        out = out[:k]
    return out


class BM25:
    def __init__(self, passages: Sequence[Passage], k1: float = BM25_K1, b: float = BM25_B) -> None:
        self.k1 = k1
        self.b = b
        self.ids = [p.doc_id for p in passages]
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self.lengths: list[int] = []
        for idx, p in enumerate(passages):
            tf = Counter(word_tokens(_index_text(p)))
            self.lengths.append(sum(tf.values()))
            for term in sorted(tf):
                self.postings[term].append((idx, tf[term]))
        self.n_docs = len(passages)
        self.avgdl = sum(self.lengths) / self.n_docs

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def search(self, query: str, k: int = RUN_DEPTH) -> Ranking:
        scores: dict[str, float] = {}
        qtf = Counter(word_tokens(query))
        for term in sorted(qtf):
            idf = self.idf(term)
            for idx, tf in self.postings.get(term, ()):
                norm = self.k1 * (1.0 - self.b + self.b * self.lengths[idx] / self.avgdl)
                contrib = qtf[term] * idf * tf * (self.k1 + 1.0) / (tf + norm)
                doc_id = self.ids[idx]
                scores[doc_id] = scores.get(doc_id, 0.0) + contrib
        return _top(scores, self.ids, k)


class CharTfidf:
    """TF-IDF (sublinear tf, smoothed idf, L2 norm) cosine over char 3-5 grams."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        self.ids = [p.doc_id for p in passages]
        counts = [Counter(char_ngrams(_index_text(p))) for p in passages]
        df: Counter[str] = Counter()
        for c in counts:
            df.update(c.keys())
        n = len(passages)
        self.idf = {g: math.log((1.0 + n) / (1.0 + d)) + 1.0 for g, d in df.items()}
        self.postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for idx, c in enumerate(counts):
            vec = self._weigh(c)
            for g in sorted(vec):
                self.postings[g].append((idx, vec[g]))

    def _weigh(self, counts: Mapping[str, int]) -> dict[str, float]:
        vec = {g: (1.0 + math.log(tf)) * self.idf[g] for g, tf in counts.items() if g in self.idf}
        norm = math.sqrt(math.fsum(w * w for w in vec.values()))
        return {g: w / norm for g, w in vec.items()} if norm > 0 else {}

    def search(self, query: str, k: int = RUN_DEPTH) -> Ranking:
        qvec = self._weigh(Counter(char_ngrams(query)))
        scores: dict[str, float] = {}
        for g in sorted(qvec):
            qw = qvec[g]
            for idx, w in self.postings[g]:
                doc_id = self.ids[idx]
                scores[doc_id] = scores.get(doc_id, 0.0) + qw * w
        return _top(scores, self.ids, k)


# ---------------------------------------------------------------------------
# Queries and judgments
# ---------------------------------------------------------------------------


def load_queries() -> dict[str, tuple[str, dict[str, int]]]:
    """Load ``QUERIES`` from scripts/example_judgments.py (query_id -> (text, judgments))."""
    spec = importlib.util.spec_from_file_location("example_judgments", JUDGMENTS_FILE)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {JUDGMENTS_FILE}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    raw: Mapping[str, Mapping[str, object]] = module.QUERIES
    out: dict[str, tuple[str, dict[str, int]]] = {}
    for qid in sorted(raw):
        entry = raw[qid]
        text = entry["text"]
        judgments = entry["judgments"]
        if not isinstance(text, str) or not isinstance(judgments, dict):
            raise SystemExit(f"{qid}: malformed entry")
        out[qid] = (text, {str(d): int(g) for d, g in judgments.items()})
    return out


# ---------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------


def render_docs(passages: Iterable[Passage]) -> str:
    return "".join(
        json.dumps({"doc_id": p.doc_id, "title": p.title, "text": p.text}, ensure_ascii=False)
        + "\n"
        for p in passages
    )


def render_queries(queries: Mapping[str, tuple[str, dict[str, int]]]) -> str:
    return "".join(f"{qid}\t{text}\n" for qid, (text, _) in queries.items())


def render_qrels(queries: Mapping[str, tuple[str, dict[str, int]]]) -> str:
    lines: list[str] = []
    for qid, (_, judgments) in queries.items():
        lines.extend(f"{qid} 0 {doc} {grade}" for doc, grade in sorted(judgments.items()))
    return "".join(line + "\n" for line in lines)


def render_run(runs: Mapping[str, Ranking], tag: str) -> str:
    lines: list[str] = []
    for qid, ranking in runs.items():
        lines.extend(
            f"{qid} Q0 {doc} {rank} {score:.4f} {tag}"
            for rank, (doc, score) in enumerate(ranking, start=1)
        )
    return "".join(line + "\n" for line in lines)


# ---------------------------------------------------------------------------
# Checks and quick metrics
# ---------------------------------------------------------------------------


def sanity_check(
    passages: Sequence[Passage],
    queries: Mapping[str, tuple[str, dict[str, int]]],
    runs: Mapping[str, Mapping[str, Ranking]],
) -> None:
    ids = {p.doc_id for p in passages}
    problems: list[str] = []
    if len(ids) != len(passages):
        problems.append("duplicate doc ids in corpus")
    for qid, (_, judgments) in queries.items():
        if not judgments:
            problems.append(f"{qid}: no judgments")
        for doc, grade in judgments.items():
            if doc not in ids:
                problems.append(f"{qid}: judged doc {doc!r} not in corpus")
            if grade not in (0, 1, 2, 3):
                problems.append(f"{qid}: grade {grade} for {doc} out of range")
    for tag, run in runs.items():
        for qid in queries:
            ranking = run.get(qid, [])
            docs = [d for d, _ in ranking]
            if len(docs) != RUN_DEPTH:
                problems.append(f"{tag}/{qid}: {len(docs)} results")
            if len(set(docs)) != len(docs):
                problems.append(f"{tag}/{qid}: duplicate docs")
            if any(d not in ids for d in docs):
                problems.append(f"{tag}/{qid}: unknown doc id")
    tags = sorted(runs)
    if len(tags) == 2:  # the two retrievers must rank noticeably differently
        a, b = runs[tags[0]], runs[tags[1]]
        overlap = sum(overlap_at(a[q], b[q], 10) for q in queries) / len(queries)
        if overlap > 0.8:
            problems.append(f"{tags[0]} and {tags[1]} share {overlap:.0%} of their top 10")
    if problems:
        raise SystemExit("sanity check failed:\n  " + "\n  ".join(problems))


def overlap_at(a: Ranking, b: Ranking, k: int) -> float:
    return len({d for d, _ in a[:k]} & {d for d, _ in b[:k]}) / k


def quick_stats(
    queries: Mapping[str, tuple[str, dict[str, int]]],
    runs: Mapping[str, Mapping[str, Ranking]],
    min_grade: int = 2,
) -> None:
    """MRR, recall@10 and nDCG@10 (relevant = grade >= min_grade).

    Queries without any relevant passage are left out of the averages.
    """
    judged = [q for q, (_, j) in queries.items() if any(g >= min_grade for g in j.values())]
    print(
        f"quick stats over {len(judged)} queries with a grade>={min_grade} passage "
        f"({len(queries) - len(judged)} queries without one are excluded)"
    )
    for tag, run in runs.items():
        rr = rec = ndcg = 0.0
        for qid in judged:
            judgments = queries[qid][1]
            rel = {d for d, g in judgments.items() if g >= min_grade}
            docs = [d for d, _ in run[qid]]
            first = next((i for i, d in enumerate(docs, 1) if d in rel), None)
            rr += 1.0 / first if first else 0.0
            rec += len(rel & set(docs[:10])) / len(rel)
            dcg = sum(
                (2 ** judgments.get(d, 0) - 1) / math.log2(i + 1)
                for i, d in enumerate(docs[:10], 1)
            )
            ideal = sorted(judgments.values(), reverse=True)[:10]
            idcg = sum((2**g - 1) / math.log2(i + 1) for i, g in enumerate(ideal, 1))
            ndcg += dcg / idcg
        n = len(judged)
        print(f"  {tag:6s} MRR={rr / n:.4f}  recall@10={rec / n:.4f}  nDCG@10={ndcg / n:.4f}")
    tags = list(runs)
    if len(tags) == 2:
        a, b = runs[tags[0]], runs[tags[1]]
        ov10 = sum(overlap_at(a[q], b[q], 10) for q in queries) / len(queries)
        top1 = sum(a[q][0][0] == b[q][0][0] for q in queries)
        print(
            f"  {tags[0]} vs {tags[1]}: mean top-10 overlap={ov10:.2f}, "
            f"same top-1 doc in {top1}/{len(queries)} queries"
        )


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def build() -> tuple[
    list[Passage],
    dict[str, tuple[str, dict[str, int]]],
    dict[str, dict[str, Ranking]],
    dict[str, str],
]:
    passages = build_corpus(pydoc_data.topics.topics)
    queries = load_queries()
    bm25 = BM25(passages)
    tfidf = CharTfidf(passages)
    runs: dict[str, dict[str, Ranking]] = {
        "bm25": {qid: bm25.search(text) for qid, (text, _) in queries.items()},
        "tfidf": {qid: tfidf.search(text) for qid, (text, _) in queries.items()},
    }
    files = {
        "docs.jsonl": render_docs(passages),
        "queries.tsv": render_queries(queries),
        "qrels.txt": render_qrels(queries),
        "run_bm25.txt": render_run(runs["bm25"], "bm25"),
        "run_tfidf.txt": render_run(runs["tfidf"], "tfidf"),
    }
    return passages, queries, runs, files


def print_pool(
    qid: str,
    passages: Sequence[Passage],
    queries: Mapping[str, tuple[str, dict[str, int]]],
    runs: Mapping[str, Mapping[str, Ranking]],
    depth: int,
) -> None:
    """Print the union of the top ``depth`` of both runs, with text, for judging."""
    text, judgments = queries[qid]
    by_id = {p.doc_id: p for p in passages}
    ranks: dict[str, dict[str, int]] = defaultdict(dict)
    for tag, run in runs.items():
        for rank, (doc, _) in enumerate(run[qid][:depth], start=1):
            ranks[doc][tag] = rank
    print(f"=== {qid}: {text}")
    extra = sorted(set(judgments) - set(ranks))
    shown: dict[str, str] = {}  # text -> doc id it was printed under (topics overlap)
    for doc in sorted(ranks) + extra:
        where = ", ".join(f"{t}@{r}" for t, r in sorted(ranks[doc].items())) or "not pooled"
        grade = judgments.get(doc, "?")
        passage_text = by_id[doc].text
        print(f"\n--- {doc}  [{where}]  current grade: {grade}")
        if passage_text in shown:
            print(f"(same text as {shown[passage_text]})")
        else:
            shown[passage_text] = doc
            print(passage_text)
    print()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="output directory")
    parser.add_argument(
        "--check", action="store_true", help="do not write; compare with the files in --out"
    )
    parser.add_argument("--pool", nargs="*", metavar="QID", help="print judging pools and exit")
    parser.add_argument("--depth", type=int, default=POOL_DEPTH, help="pool depth per retriever")
    args = parser.parse_args(argv)

    version = platform.python_version()
    if version != REFERENCE_PYTHON:
        print(
            f"warning: running on Python {version}; the shipped files were built with "
            f"{REFERENCE_PYTHON} and pydoc_data differs between versions",
            file=sys.stderr,
        )

    passages, queries, runs, files = build()

    if args.pool is not None:
        for qid in args.pool or list(queries):
            print_pool(qid, passages, queries, runs, args.depth)
        return 0

    sanity_check(passages, queries, runs)
    out: Path = args.out
    if args.check:
        stale = [
            name
            for name, content in files.items()
            if not (out / name).is_file() or (out / name).read_text(encoding="utf-8") != content
        ]
        if stale:
            print("differs from shipped files: " + ", ".join(stale))
            return 1
        print("shipped files are up to date")
    else:
        out.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            with open(out / name, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(content)
        total = sum(len(c.encode("utf-8")) for c in files.values())
        print(f"wrote {len(files)} files ({total} bytes) to {out}")

    counts = [count_words(p.text) for p in passages]
    grades = Counter(g for _, j in queries.values() for g in j.values())
    print(
        f"{len(passages)} passages from {len(pydoc_data.topics.topics)} topics "
        f"(words: min {min(counts)}, median {sorted(counts)[len(counts) // 2]}, "
        f"max {max(counts)}); "
        f"{len(queries)} queries; judgments by grade: "
        + ", ".join(f"{g}: {grades[g]}" for g in sorted(grades))
    )
    quick_stats(queries, runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
