"""Smoke tests of the document-001 experiments (quick mode), with and without GCIDE."""

from __future__ import annotations

import numpy as np
import pytest

import bloomkit.experiments.lookup as E
import bloomkit.lookup.data as D
from bloomkit.experiments.registry import all_experiments, get_experiment

IDS = ["001-fig3.1", "001-fig3.2", "001-fig3.3", "001-fig3.4", "001-fig4.1", "001-fig4.2",
       "001-fig4.3", "001-fig4.4", "001-table4.1", "001-table4.2", "001-table4.3"]


def test_all_ids_registered() -> None:
    ids = {e.id for e in all_experiments()}
    assert set(IDS) <= ids


@pytest.mark.parametrize("exp_id", ["001-fig3.2", "001-fig3.3", "001-fig3.4"])
def test_quick_experiments_on_the_zipf_fallback(monkeypatch, exp_id: str) -> None:
    monkeypatch.setattr(D, "GCIDE_PATH", D.Path("/nonexistent/gcide.dict.dz"))
    E._table.cache_clear()
    try:
        res = get_experiment(exp_id).run(quick=True)
    finally:
        E._table.cache_clear()
    assert res.rows and res.comparisons
    text = res.notes + " ".join(str(c.note) for c in res.comparisons)
    if exp_id != "001-fig3.4":  # fig 3.4 always uses the Zipf generator
        assert "FALLBACK" in text
    for c in res.comparisons:
        if isinstance(c.measured, float):
            assert np.isfinite(c.measured)


def test_thesis_numbers_in_fig32() -> None:
    res = get_experiment("001-fig3.2").run(quick=True)
    got = {c.quantity: c for c in res.comparisons}
    assert round(got["p_hat (Lemma 3.5.1)"].model, 4) == 0.9606
    assert got["E"].model == 21 and got["E"].measured == 21
    assert got["bits per key at the optimum"].measured <= 1.2 * 32
