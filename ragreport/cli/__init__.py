"""The command line (``ragreport evaluate | report | check | label-queue | notebook``):
:mod:`.args` parses argv, :mod:`.inputs` reads what the options name, :mod:`.report` builds
the report that ``report`` and ``check`` write, :mod:`.labelqueue` writes the pairs to judge
next, :mod:`.app` runs the commands and owns the exit codes."""

from __future__ import annotations

from .app import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TARGET_FAILED,
    EXIT_TERMINATED,
    main,
    run,
)

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_TARGET_FAILED",
           "EXIT_TERMINATED", "main", "run"]
