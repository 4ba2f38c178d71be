"""The offline evaluation (seed 004 "Evaluation", issues 18 and 26): grounding and answer quality.

``crowdsift eval`` re-runs labelled questions (``data/eval/cases.json`` by default, any file in
the same format with ``--cases``; schema in ``cases``) over the configured source and reports
per case and in total, by what the reader is shown: the grounding checks (``grounding``:
sources and citations are evidence, budget held, highlights supported), whether the shown
answer and its lead hold the community's key advice, the answering thread's rank among the
answer's sources (hit@5, MRR), whether it abstained when it should (and only then), its length
in terminal rows and the seconds it took (``metrics``, pure). ``baseline`` answers the same
questions with plain BM25 over the archive, measured the same way; ``report`` checks the totals
against targets, ``table`` prints them, ``run`` runs the cases.
"""

from crowdsift.pipeline.evaluation.baseline import BaselineAnswer, Bm25Baseline
from crowdsift.pipeline.evaluation.cases import EvalCase, EvalCasesError, load_cases
from crowdsift.pipeline.evaluation.grounding import EvalReport, check
from crowdsift.pipeline.evaluation.report import (
    CaseReport,
    EvalSummary,
    EvalTargets,
    EvalTotals,
    Measures,
    SideTotals,
    measure,
    measure_answer,
    summarise,
)
from crowdsift.pipeline.evaluation.run import preview_text, run_cases, run_eval
from crowdsift.pipeline.evaluation.table import summary_lines

__all__ = [
    "BaselineAnswer",
    "Bm25Baseline",
    "CaseReport",
    "EvalCase",
    "EvalCasesError",
    "EvalReport",
    "EvalSummary",
    "EvalTargets",
    "EvalTotals",
    "Measures",
    "SideTotals",
    "check",
    "load_cases",
    "measure",
    "measure_answer",
    "preview_text",
    "run_cases",
    "run_eval",
    "summarise",
    "summary_lines",
]
