"""The project's exception hierarchy.

Every error a user can cause is a :class:`RagReportError`, itself a :class:`ValueError`, so
``except ValueError`` keeps working for callers that do not know ragreport. The CLI turns any of
them into one line on stderr and exit code 2.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "InputError",
    "MeasureError",
    "RagReportError",
]


class RagReportError(ValueError):
    """Base class of every error ragreport raises on bad input or bad options."""


class InputError(RagReportError):
    """A qrels, run or text input is malformed.

    Parameters
    ----------
    message : str
        What was wrong, in words a user understands.
    source : str or None
        File name (or a description such as ``"run (dict)"``) the problem was found in.
    line : int or None
        1-based line number within ``source``.
    row : int or None
        1-based row number within a table (Parquet, Arrow, a DataFrame, a dataset), shown
        as ``source: row N: message``; for inputs that have rows rather than lines.

    >>> str(InputError("score is null", "run.parquet", row=3))
    'run.parquet: row 3: score is null'
    """

    def __init__(self, message: str, source: str | None = None, line: int | None = None,
                 *, row: int | None = None) -> None:
        self.reason = message
        self.source = source
        self.line = line
        self.row = row
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        if row is not None and line is None:
            where += f"row {row}: "
        super().__init__(where + message)


class MeasureError(RagReportError):
    """A measure name, cutoff or parameter is invalid."""


class ConfigError(RagReportError):
    """A targets file or option is invalid."""
