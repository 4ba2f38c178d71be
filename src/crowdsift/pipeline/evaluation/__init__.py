"""The offline evaluation (seed 004 "Evaluation", issue 18): grounding and answer quality.

``crowdsift eval`` re-runs labelled questions over the bundled demo archive
(``data/eval/cases.json``, schema in ``cases``) and reports per case and in total: the grounding
checks (``grounding``: sources and citations are evidence, budget held, highlights supported),
whether the answer holds the community's key advice, nDCG@5 of the ranked threads, whether it
abstained when it should (and only then), and its length in terminal rows (``metrics``, pure);
``report`` checks the totals against targets, ``table`` prints them, ``run`` runs the cases.
"""

from crowdsift.pipeline.evaluation.cases import EvalCase, EvalCasesError, load_cases
from crowdsift.pipeline.evaluation.grounding import EvalReport, check
from crowdsift.pipeline.evaluation.report import (
    CaseReport,
    EvalSummary,
    EvalTargets,
    EvalTotals,
    measure,
    summarise,
)
from crowdsift.pipeline.evaluation.run import preview_text, run_cases, run_eval
from crowdsift.pipeline.evaluation.table import summary_lines

__all__ = [
    "CaseReport",
    "EvalCase",
    "EvalCasesError",
    "EvalReport",
    "EvalSummary",
    "EvalTargets",
    "EvalTotals",
    "check",
    "load_cases",
    "measure",
    "preview_text",
    "run_cases",
    "run_eval",
    "summarise",
    "summary_lines",
]
