"""The explorer's front end: ES modules by concern in ``static/src/``, bundled into the one
file anywidget loads by ``scripts/bundle_explorer.py`` (issue 24). The shipped file is the
bundle of its sources, each module stays small, and the bundler refuses what it cannot
bundle faithfully."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from paths import ROOT

SCRIPT = ROOT / "scripts" / "bundle_explorer.py"
SRC = ROOT / "ragreport" / "explorer" / "static" / "src"
#: Lines a front-end module may have (the issue's "none over ~400 lines").
MODULE_LINES = 400


def _bundler() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bundle_explorer", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_shipped_file_is_the_bundle_of_its_sources() -> None:
    b = _bundler()
    assert b.BUNDLE.read_text(encoding="utf-8") == b.bundle(), \
        "run python scripts/bundle_explorer.py after editing static/src/"
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_bundle_is_reproducible_and_one_module() -> None:
    b = _bundler()
    text = b.bundle()
    assert text == b.bundle()
    assert not re.search(r"^import\b", text, re.M)  # anywidget loads one module
    assert re.findall(r"^export\b.*", text, re.M) == ["export default { render };"]
    # every module is in it, dependencies first, the entry last
    names = re.findall(r"^// ---- src/(\S+) ", text, re.M)
    assert sorted(names) == sorted(p.name for p in SRC.glob("*.js"))
    assert names[-1] == "explorer.js" and names.index("dom.js") < names.index("list.js")


def test_every_front_end_module_is_small() -> None:
    sizes = {p.name: p.read_text(encoding="utf-8").count("\n") for p in SRC.glob("*.js")}
    assert len(sizes) >= 8
    assert {n: s for n, s in sizes.items() if s > MODULE_LINES} == {}


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("files", "message"), [
    ({"explorer.js": 'import { a } from "./x.js";\n'}, "imports ./x.js, which does not exist"),
    ({"explorer.js": 'import { a } from "./x.js";\n', "x.js": "export const b = 1;\n"},
     "./x.js does not export a"),
    ({"explorer.js": 'import { a } from "./x.js";\nconst c = 1;\n',
      "x.js": "export const a = 1;\nconst c = 2;\n"}, "c is also declared in x.js"),
    ({"explorer.js": 'import x from "./x.js";\n', "x.js": "export default 1;\n"},
     "only `import { a, b }"),
    ({"explorer.js": 'import { a } from "./x.js";\n',
      "x.js": 'import { b } from "./explorer.js";\nexport const a = 1;\n'}, "import cycle"),
    ({"explorer.js": "const a = 1;\n", "y.js": "export const b = 1;\n"},
     "not imported by the entry (explorer.js): y.js"),
    ({"x.js": "export const a = 1;\n"}, "no explorer.js"),
])
def test_the_bundler_refuses_what_it_cannot_bundle(tmp_path: Path, files: dict[str, str],
                                                  message: str) -> None:
    b = _bundler()
    with pytest.raises(b.BundleError, match=re.escape(message)):
        b.bundle(_tree(tmp_path, files))


def test_the_bundle_of_a_small_tree(tmp_path: Path) -> None:
    b = _bundler()
    got = b.bundle(_tree(tmp_path, {
        "explorer.js": '/**\n * Entry.\n */\n\nimport { two } from "./x.js";\n\n'
                       "function render() { return two(); }\n\nexport default { render };\n",
        "x.js": "export const ONE = 1;\nexport function two() { return 2 * ONE; }\n",
    }))
    assert got.startswith("/**\n * Entry.\n */\n")
    body = re.sub(r"^// ---- .*\n", "", got[got.index("*/") + 3:], flags=re.M)
    assert [line for line in body.splitlines() if line.strip()] == [
        "const ONE = 1;", "function two() { return 2 * ONE; }",
        "function render() { return two(); }", "export default { render };"]
