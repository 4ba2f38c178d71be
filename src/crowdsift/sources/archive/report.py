"""What an import did, per file and in total: the report the CLI prints and ``--json`` gives.

Kept apart from the importer so that readers of reports (the CLI, the API) need not load it,
and so that how a failure is worded lives in one place: a file that gives no record is a
failure with its first reason, never an import that found nothing.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

MAX_BAD_LINES_KEPT = 20
"""Bad lines whose line number and reason a report keeps per file (all are counted)."""


class BadLine(BaseModel):
    """One line (or, in saved API JSON, the n-th thing) that could not be imported."""

    line_no: int
    reason: str


class FileReport(BaseModel):
    """What one input file contributed.

    ``lines`` = posts + comments + skipped + bad_lines when each line (or thing of a JSON
    document, or CSV row) is one record; a line holding a whole API answer counts once and
    contributes all of its records. A file that gives no record at all has an ``error``.
    """

    path: str
    format: str | None = Field(
        None, description="'ndjson', 'api-json', 'csv-posts' or 'csv-comments'"
    )
    lines: int = 0
    posts: int = 0
    comments: int = 0
    skipped: int = Field(0, description="records that are neither posts nor comments (_meta …)")
    bad_lines: int = 0
    first_bad_lines: list[BadLine] = Field(default_factory=list)
    error: str | None = Field(None, description="why the file could not be (fully) read")


class ImportReport(BaseModel):
    """The result of one ``import_files`` call: per file, totals and wall time."""

    archive: str
    files: list[FileReport] = Field(default_factory=list)
    lines: int = 0
    posts: int = 0
    comments: int = 0
    skipped: int = 0
    bad_lines: int = 0
    failed_files: int = 0
    rehashed: int = Field(
        0, description="rows already in the archive whose usernames were replaced by hashes now"
    )
    elapsed_seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when every file could be read (bad lines do not count as failure)."""
        return self.failed_files == 0


def nothing_imported(report: FileReport) -> str:
    """Why a file that could be read gave no record: a failure, never "nothing found"."""
    path = report.path
    if report.bad_lines and report.first_bad_lines:
        first = report.first_bad_lines[0]
        formats = (
            ". crowdsift imports Pushshift/Arctic Shift NDJSON dumps, saved Reddit or "
            "Pushshift API JSON and CSV files with a header"
        )
        return (
            f"{path}: nothing imported: all {report.bad_lines:,} of its {report.lines:,} lines "
            f"were bad, the first (line {first.line_no}) because: {first.reason}"
            + (formats if report.format == "ndjson" else "")
        )
    if report.skipped:
        return (
            f"{path}: nothing imported: its {report.skipped:,} records are neither posts nor "
            "comments (`more` stubs, subreddits, users…)"
        )
    return f"{path}: nothing imported: the file holds no records"
