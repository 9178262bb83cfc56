"""The public API is the package facade: every name the README's Python examples use is
``ragreport.X`` (imported lazily), and no example imports an internal module."""

from __future__ import annotations

import re
import subprocess
import sys

from paths import user_docs

import ragreport

#: Modules that are themselves public entry points (``ragreport.spark.evaluate``...).
PUBLIC_MODULES = {"spark", "dask", "ray", "perquery"}


def _python_blocks() -> list[str]:
    text = user_docs()
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_every_facade_name_resolves() -> None:
    for name in ragreport.__all__:
        assert getattr(ragreport, name) is not None, name
    assert {"build_report", "Report", "load_targets", "load_baseline_report", "drift_checks",
            "StoredBaseline", "example_files", "evaluate_stream"} <= set(ragreport.__all__)


def test_readme_examples_import_only_the_facade() -> None:
    blocks = _python_blocks()
    assert len(blocks) >= 6
    internal = []
    for block in blocks:
        for m in re.finditer(r"^\s*(?:from|import) ragreport\.(\w+)", block, re.M):
            if m.group(1) not in PUBLIC_MODULES:
                internal.append(m.group(0).strip())
    assert internal == [], internal


def test_importing_the_facade_stays_cheap() -> None:
    """The facade's names load their modules on first use: importing ragreport imports
    neither numpy nor pyarrow nor matplotlib."""
    code = ("import sys, ragreport; heavy = {'numpy', 'pyarrow', 'matplotlib', 'jinja2'} & "
            "set(sys.modules); print(sorted(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out


def test_the_cli_help_stays_cheap() -> None:
    """``ragreport --help`` (and argv parsing) imports neither numpy nor pyarrow: the parser and
    the typed options name the inputs without loading a reader (it once imported io.common for
    a type annotation and took 2x as long)."""
    code = ("import sys, contextlib, io\nfrom ragreport.cli.app import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
            "    main(['--help'])\n"
            "print(sorted({'numpy', 'pyarrow', 'matplotlib', 'jinja2'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out
