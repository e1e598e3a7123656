"""Statistics over plain data: judge variance, paired tests, pass@k, Pareto, judge agreement.

Pure functions (no I/O): inputs are dataclasses, tuples and mappings; results are frozen
dataclasses.
"""

from proctor.engine.stats.agreement import (
    Agreement,
    Correlation,
    PanelVote,
    agreement_with_labels,
    kendall_tau_b,
    majority_vote,
    spearman_rho,
)
from proctor.engine.stats.anchors_gate import GateResult, spearman_gate
from proctor.engine.stats.paired import (
    BootstrapCI,
    McNemarResult,
    binomial_two_sided_half,
    intervals_ahead,
    mcnemar_counts,
    mcnemar_exact,
    pair_by_key,
    paired_bootstrap_ci,
)
from proctor.engine.stats.pareto import CostScorePoint, ParetoFrontier, dominates, pareto_frontier
from proctor.engine.stats.passk import PassKSummary, pass_at_k, pass_hat_k, pass_k_over_tasks
from proctor.engine.stats.sums import sum_known
from proctor.engine.stats.variance import (
    ArmModelVariance,
    CellSpread,
    CriterionCells,
    JudgeScoreRow,
    LayerVariance,
    RankedEntry,
    Ranking,
    ScenarioMean,
    TieGroup,
    cell_spread,
    fmean,
    judge_variance,
    layer_variance,
    means_by_pass,
    population_sd,
    rank_arms,
    scenario_means,
    variance_of_cells,
)

__all__ = [
    "Agreement",
    "ArmModelVariance",
    "BootstrapCI",
    "CellSpread",
    "Correlation",
    "CostScorePoint",
    "CriterionCells",
    "GateResult",
    "JudgeScoreRow",
    "LayerVariance",
    "McNemarResult",
    "PanelVote",
    "ParetoFrontier",
    "PassKSummary",
    "RankedEntry",
    "Ranking",
    "ScenarioMean",
    "TieGroup",
    "agreement_with_labels",
    "binomial_two_sided_half",
    "cell_spread",
    "dominates",
    "fmean",
    "intervals_ahead",
    "judge_variance",
    "kendall_tau_b",
    "layer_variance",
    "majority_vote",
    "mcnemar_counts",
    "mcnemar_exact",
    "means_by_pass",
    "pair_by_key",
    "paired_bootstrap_ci",
    "pareto_frontier",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_over_tasks",
    "population_sd",
    "rank_arms",
    "scenario_means",
    "spearman_gate",
    "spearman_rho",
    "sum_known",
    "variance_of_cells",
]
