"""Reproductions of the source documents' experiments.

One module per source document; each experiment is a seeded function
``(quick, rng) -> ExperimentResult`` registered by id (``"000-fig8"``, ``"001-table4.1"``)
with :func:`bloomkit.experiments.registry.experiment`. ``bloomkit reproduce`` runs them.
"""

from .registry import Comparison, ExperimentResult, all_experiments, experiment, get_experiment

__all__ = ["Comparison", "ExperimentResult", "all_experiments", "experiment", "get_experiment"]
