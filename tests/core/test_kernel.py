"""The measure registry that computes (ragreport.core.kernel): one entry per family, forms
that agree."""

from __future__ import annotations

import numpy as np
import pytest

import ragreport
from ragreport.core.align import align
from ragreport.core.context import Context
from ragreport.core.kernel import (
    KERNELS,
    MONOTONE,
    check_average,
    expected_curve,
    expected_values,
    kernel_of,
    measure_values,
)
from ragreport.errors import MeasureError
from ragreport.io import load_qrels, load_run
from ragreport.measures import FAMILIES, Measure, parse_measure

WIDTH = 12


def _ranking(seed: int = 7, ties: bool = False):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        docs = [f"d{i}" for i in range(int(rng.integers(0, 25)))]
        judged = rng.choice(40, size=int(rng.integers(1, 10)), replace=False)
        qrels[f"q{q}"] = {f"d{i}": int(rng.integers(0, 4)) for i in judged}
        scores = rng.integers(0, 4, len(docs)) if ties else rng.random(len(docs))
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
    return align(load_qrels(qrels), load_run(run), complete=True)


def _sample(name: str) -> Measure:
    fam = FAMILIES[name]
    if fam.at == "recall":
        return Measure(name, recall=0.3)
    return Measure(name, rel=2) if name == "RBP" else Measure(name)


def test_one_kernel_per_family_in_the_same_order() -> None:
    assert list(KERNELS) == list(FAMILIES)
    assert all(k.name == name for name, k in KERNELS.items())


@pytest.mark.parametrize("name", list(FAMILIES))
def test_forms_match_what_the_name_accepts(name: str) -> None:
    """A family with a cutoff has a curve and an at-K form; one usable without a cutoff has
    a whole-ranking form; nothing else."""
    fam, kern = FAMILIES[name], KERNELS[name]
    takes_k = fam.cutoff != "none"
    assert (kern.curve is not None) == takes_k
    assert (kern.at is not None) == takes_k
    assert (kern.scalar is not None) == (fam.cutoff != "required")
    assert kern.expected_curve is None or kern.expected_at is not None
    assert kern.tie_key in ("grade", "judged")


@pytest.mark.parametrize("name", [n for n, k in KERNELS.items() if k.curve is not None])
def test_curve_columns_are_the_values_at_k(name: str) -> None:
    """Column K - 1 of the dense curve is, bit for bit, the sparse value at K."""
    rk = _ranking()
    m = _sample(name)
    kern = KERNELS[name]
    assert kern.curve is not None and kern.at is not None
    curve = kern.curve(Context(rk, 1.0, WIDTH), m, WIDTH)
    assert curve.shape == (rk.n_queries, WIDTH)
    for k in (1, 2, 5, WIDTH):
        at = kern.at(Context(rk, 1.0), m.at(k), k)
        np.testing.assert_array_equal(curve[:, k - 1], at)
    assert curve.any()  # not vacuous


@pytest.mark.parametrize("name", [n for n, k in KERNELS.items() if k.expected_at is not None])
def test_expected_forms_equal_plain_values_without_ties(name: str) -> None:
    """Without a tie every order is trec_eval's: each expected form (called directly, not
    through the order-free shortcut) gives the plain value."""
    rk = _ranking()
    m = _sample(name)
    ctx = Context(rk, 1.0, WIDTH)
    kern = KERNELS[name]
    assert kern.expected_at is not None
    if kern.expected_curve is not None:
        assert kern.curve is not None
        np.testing.assert_allclose(kern.expected_curve(ctx, m, WIDTH),
                                   kern.curve(ctx, m, WIDTH), rtol=1e-12, atol=1e-12)
    ks = [5] if FAMILIES[name].cutoff == "required" else [None] if kern.at is None else [5, None]
    for k in ks:
        plain = measure_values(rk, m if k is None else m.at(k), 1.0)
        np.testing.assert_allclose(kern.expected_at(ctx, m, k), plain, rtol=1e-12, atol=1e-12)
        assert plain.any()  # not vacuous


def test_order_free_families_are_their_plain_value() -> None:
    rk = _ranking(3, ties=True)
    ctx = Context(rk, 1.0, WIDTH)
    for name in ("NumRet", "NumRel", "NumQ", "SetP", "Hits"):
        m = _sample(name)
        np.testing.assert_array_equal(expected_values(ctx, m, None),
                                      measure_values(rk, m, 1.0))


def test_a_family_without_a_cutoff_is_refused_with_or_without_ties() -> None:
    q, r = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}
    for ties in ("trec_eval", "average"):
        with pytest.raises(MeasureError, match="P needs a cutoff"):
            ragreport.evaluate(q, r, [Measure("P")], ties=ties)


@pytest.mark.parametrize("name", [n for n, k in KERNELS.items()
                                  if k.expected_curve is not None])
def test_expected_curve_columns_are_the_expected_values_at_k(name: str) -> None:
    rk = _ranking(3, ties=True)
    m = _sample(name)
    ctx = Context(rk, 1.0, WIDTH)
    curve = expected_curve(ctx, m, WIDTH)
    for k in (1, 3, WIDTH):
        np.testing.assert_allclose(curve[:, k - 1], expected_values(ctx, m.at(k), k),
                                   rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("text", ["ERR@5", "Bpref", "IPrec@0.5"])
def test_no_exact_expectation_is_refused(text: str) -> None:
    with pytest.raises(MeasureError, match="no exact expected value"):
        check_average(parse_measure(text))


def test_flags_drive_the_tie_analysis() -> None:
    assert kernel_of(parse_measure("Judged@5")).tie_key == "judged"
    assert kernel_of(parse_measure("Rprec")).cut_at_r
    free = [n for n, k in KERNELS.items() if k.order_free]
    assert set(free) == {"SetP", "SetR", "SetF", "NumRet", "NumRel", "NumRelRet", "NumQ"}
    assert {n for n, k in KERNELS.items() if k.run_free} == {"NumQ", "NumRel"}
    assert {n for n, k in KERNELS.items() if k.depth_free} == {"NumRet", "NumRel", "NumQ"}
    # the families whose interval over tie orders is exact: every one but the set measures
    assert set(KERNELS) - set(free) == MONOTONE
    assert kernel_of(parse_measure("Hits")).order_free_at(None)
    assert not kernel_of(parse_measure("Hits@3")).order_free_at(3)


def test_a_check_refuses_before_any_value() -> None:
    rk = align(load_qrels({"q": {"a": 5}}), load_run({"q": ["a"]}))
    check = kernel_of(parse_measure("ERR@5")).check
    assert check is not None
    with pytest.raises(MeasureError, match="grades up to 4"):
        check(Context(rk, 1.0))
