"""One adapter per evaluation tool: load files, evaluate at 7 cutoffs or at every K, means.

Measures are named canonically as ``(family, k)`` with family ``P``, ``R``, ``nDCG`` or ``RR``
(``k`` is None for RR over the whole ranking); each adapter translates them to its tool's names.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

CUTOFFS_7: tuple[int, ...] = (1, 3, 5, 10, 20, 50, 100)
ALL_K: tuple[int, ...] = tuple(range(1, 101))
FAMILIES: tuple[str, ...] = ("P", "R", "nDCG")

Canon = tuple[str, int | None]
FloatMatrix = npt.NDArray[np.float64]


def measure_set(cutoffs: Sequence[int]) -> list[Canon]:
    return [(f, k) for f in FAMILIES for k in cutoffs] + [("RR", None)]


def canon_name(m: Canon) -> str:
    return m[0] if m[1] is None else f"{m[0]}@{m[1]}"


def is_installed(tool: str) -> bool:
    module = {"ragreport": "ragreport", "pytrec_eval": "pytrec_eval", "ranx": "ranx",
              "ir_measures": "ir_measures", "pyarrow": "pyarrow"}[tool]
    return importlib.util.find_spec(module) is not None


class Tool:
    """Interface: ``load`` -> state, ``evaluate`` -> result, ``means`` / ``per_query``."""

    name = ""
    modules: tuple[str, ...] = ()

    def warm_imports(self) -> None:
        """Import the tool's modules, so that no timed phase pays for them."""
        for mod in self.modules:
            importlib.import_module(mod)
        if self.name == "ragreport":  # lazily imported submodules: one tiny evaluation
            import ragreport

            ragreport.evaluate({"q": {"d": 1}}, {"q": ["d", "e"]}, ["P@1", "RR"]).means()

    def load(self, qrels_path: str, run_path: str) -> Any:
        raise NotImplementedError

    def evaluate(self, state: Any, measures: list[Canon]) -> Any:
        raise NotImplementedError

    def means(self, result: Any, measures: list[Canon]) -> dict[str, float]:
        raise NotImplementedError

    def per_query(self, result: Any, measures: list[Canon]) -> tuple[list[str], FloatMatrix]:
        raise NotImplementedError

    def end_to_end(self, qrels_path: str, run_path: str,
                   measures: list[Canon]) -> dict[str, float]:
        state = self.load(qrels_path, run_path)
        return self.means(self.evaluate(state, measures), measures)


class RagReport(Tool):
    name = "ragreport"
    modules = ("ragreport", "ragreport.core.engine", "ragreport.io", "ragreport.io.trec",
               "ragreport.core.align", "ragreport.metrics", "pyarrow", "pyarrow.csv",
               "pyarrow.compute")

    def load(self, qrels_path: str, run_path: str) -> Any:
        import ragreport

        return ragreport.load_qrels(qrels_path), ragreport.load_run(run_path)

    def evaluate(self, state: Any, measures: list[Canon]) -> Any:
        import ragreport

        # every K from 1 to k_max is computed in any case; asking for the 7 named cutoffs only
        # decides which measures are in the summary
        named = [canon_name(m) for m in measure_set(CUTOFFS_7)]
        return ragreport.evaluate(state[0], state[1], named, k_max=100)

    def end_to_end(self, qrels_path: str, run_path: str,
                   measures: list[Canon]) -> dict[str, float]:
        import ragreport

        named = [canon_name(m) for m in measure_set(CUTOFFS_7)]
        res = ragreport.evaluate(qrels_path, run_path, named, k_max=100)
        return self.means(res, measures)

    def means(self, result: Any, measures: list[Canon]) -> dict[str, float]:
        out: dict[str, float] = {}
        for fam in FAMILIES:
            ks = [k for f, k in measures if f == fam and k is not None]
            if ks:
                curve = result.mean_curve(fam)
                out.update({f"{fam}@{k}": float(curve[k - 1]) for k in ks})
        if ("RR", None) in measures:
            out["RR"] = result.mean("RR")
        return out

    def per_query(self, result: Any, measures: list[Canon]) -> tuple[list[str], FloatMatrix]:
        cols = [result.values(canon_name(m)) for m in measures]
        return list(result.query_ids), np.column_stack(cols)


def _trec_name(m: Canon) -> str:
    fam, k = m
    return {"P": f"P_{k}", "R": f"recall_{k}", "nDCG": f"ndcg_cut_{k}", "RR": "recip_rank"}[fam]


class PytrecEval(Tool):
    name = "pytrec_eval"
    modules = ("pytrec_eval",)

    def load(self, qrels_path: str, run_path: str) -> Any:
        import pytrec_eval

        with open(qrels_path) as fq:
            qrels = pytrec_eval.parse_qrel(fq)
        with open(run_path) as fr:
            run = pytrec_eval.parse_run(fr)
        return qrels, run

    def evaluate(self, state: Any, measures: list[Canon]) -> Any:
        import pytrec_eval

        qrels, run = state
        ks = sorted({k for _, k in measures if k is not None})
        cut = ",".join(map(str, ks))
        wanted = {f"P.{cut}", f"recall.{cut}", f"ndcg_cut.{cut}", "recip_rank"}
        return pytrec_eval.RelevanceEvaluator(qrels, wanted).evaluate(run)

    def means(self, result: Any, measures: list[Canon]) -> dict[str, float]:
        rows = list(result.values())
        n = max(len(rows), 1)
        return {canon_name(m): sum(r[_trec_name(m)] for r in rows) / n for m in measures}

    def per_query(self, result: Any, measures: list[Canon]) -> tuple[list[str], FloatMatrix]:
        qids = list(result)
        names = [_trec_name(m) for m in measures]
        mat = np.array([[result[q][n] for n in names] for q in qids], dtype=np.float64)
        return qids, mat


def _ranx_name(m: Canon) -> str:
    fam, k = m
    return {"P": f"precision@{k}", "R": f"recall@{k}", "nDCG": f"ndcg@{k}", "RR": "mrr"}[fam]


class Ranx(Tool):
    name = "ranx"
    modules = ("ranx",)

    def load(self, qrels_path: str, run_path: str) -> Any:
        from ranx import Qrels, Run

        return Qrels.from_file(qrels_path, kind="trec"), Run.from_file(run_path, kind="trec")

    def evaluate(self, state: Any, measures: list[Canon]) -> Any:
        from ranx import evaluate

        qrels, run = state
        means = evaluate(qrels, run, [_ranx_name(m) for m in measures])
        return means, run

    def means(self, result: Any, measures: list[Canon]) -> dict[str, float]:
        means = result[0]
        if not isinstance(means, dict):  # a single metric gives a bare number
            means = {_ranx_name(measures[0]): means}
        return {canon_name(m): float(means[_ranx_name(m)]) for m in measures}

    def per_query(self, result: Any, measures: list[Canon]) -> tuple[list[str], FloatMatrix]:
        run = result[1]
        scores = run.scores
        qids = list(scores[_ranx_name(measures[0])])
        mat = np.array([[scores[_ranx_name(m)][q] for m in measures] for q in qids],
                       dtype=np.float64)
        return qids, mat


def _irm_measure(m: Canon) -> Any:
    import ir_measures

    fam, k = m
    if fam == "RR":
        return ir_measures.RR
    return {"P": ir_measures.P, "R": ir_measures.R, "nDCG": ir_measures.nDCG}[fam] @ k


class IrMeasures(Tool):
    name = "ir_measures"
    modules = ("ir_measures", "pytrec_eval")

    def load(self, qrels_path: str, run_path: str) -> Any:
        import ir_measures

        return (list(ir_measures.read_trec_qrels(qrels_path)),
                list(ir_measures.read_trec_run(run_path)))

    def evaluate(self, state: Any, measures: list[Canon]) -> Any:
        import ir_measures

        qrels, run = state
        return ir_measures.calc_aggregate([_irm_measure(m) for m in measures], qrels, run)

    def means(self, result: Any, measures: list[Canon]) -> dict[str, float]:
        return {canon_name(m): float(result[_irm_measure(m)]) for m in measures}

    def per_query_from(self, state: Any, measures: list[Canon]) -> tuple[list[str], FloatMatrix]:
        import ir_measures

        qrels, run = state
        by_name = {str(_irm_measure(m)): i for i, m in enumerate(measures)}
        table: dict[str, npt.NDArray[np.float64]] = {}
        for rec in ir_measures.iter_calc([_irm_measure(m) for m in measures], qrels, run):
            row = table.setdefault(rec.query_id, np.full(len(measures), np.nan))
            row[by_name[str(rec.measure)]] = rec.value
        qids = list(table)
        return qids, np.array([table[q] for q in qids], dtype=np.float64)


TOOLS: dict[str, type[Tool]] = {
    "ragreport": RagReport,
    "pytrec_eval": PytrecEval,
    "ranx": Ranx,
    "ir_measures": IrMeasures,
}
