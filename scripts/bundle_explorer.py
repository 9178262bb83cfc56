"""Bundle the explorer's ES modules (``ragreport/explorer/static/src/``) into the one file
anywidget loads (``ragreport/explorer/static/explorer.js``).

No tool to install: the modules import named bindings from each other (``import { a, b }
from "./x.js";``) and export declarations (``export function``/``export const``), so the
bundle is their concatenation in dependency order with those statements removed; its output
depends only on the sources (reproducible). It refuses what that would break: an import of a
name the module does not export, any other form of import, two modules declaring the same
top-level name, a module the entry does not reach.

    python scripts/bundle_explorer.py          # write the bundle
    python scripts/bundle_explorer.py --check  # exit 1 when the bundle is not up to date
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "ragreport" / "explorer" / "static" / "src"
BUNDLE = ROOT / "ragreport" / "explorer" / "static" / "explorer.js"
ENTRY = "explorer.js"

_IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([\w.-]+\.js)";[ \t]*\n?', re.M)
_ANY_IMPORT = re.compile(r"^import\b", re.M)
_EXPORT = re.compile(r"^export (?=(?:async function|function|const|let|class)\b)", re.M)
_DECLARED = re.compile(r"^(?:export )?(?:async function|function|const|let|class)\s+(\w+)",
                       re.M)
_LEADING_COMMENT = re.compile(r"\A\s*/\*\*.*?\*/\n", re.S)


class BundleError(Exception):
    """The sources cannot be bundled (the message says which module and why)."""


def _imports(name: str, text: str) -> list[tuple[str, list[str]]]:
    found = [(m.group(2), re.findall(r"\w+", m.group(1))) for m in _IMPORT.finditer(text)]
    if len(_ANY_IMPORT.findall(text)) != len(found):
        raise BundleError(f"{name}: only `import {{ a, b }} from \"./x.js\";` can be bundled")
    return found


def _exports(text: str) -> set[str]:
    return {m.group(1) for m in _DECLARED.finditer(text) if m.group(0).startswith("export ")}


def _order(sources: dict[str, str]) -> list[str]:
    """The modules in dependency order (each after those it imports), from the entry."""
    done: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        if name in visiting:
            raise BundleError(f"import cycle: {' -> '.join([*visiting, name])}")
        if name not in sources:
            raise BundleError(f"{visiting[-1]}: imports ./{name}, which does not exist")
        visiting.append(name)
        for dep, names in _imports(name, sources[name]):
            visit(dep)
            missing = sorted(set(names) - _exports(sources[dep]))
            if missing:
                raise BundleError(f"{name}: ./{dep} does not export {', '.join(missing)}")
        visiting.pop()
        done.append(name)

    visit(ENTRY)
    unused = sorted(set(sources) - set(done))
    if unused:
        raise BundleError(f"not imported by the entry ({ENTRY}): {', '.join(unused)}")
    return done


def bundle(folder: Path = SOURCES) -> str:
    """The bundle of the modules in ``folder`` (``explorer.js`` is the entry)."""
    sources = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.js"))}
    if ENTRY not in sources:
        raise BundleError(f"{folder}: no {ENTRY} (the entry)")
    order = _order(sources)
    owner: dict[str, str] = {}
    for name in order:
        for decl in _DECLARED.findall(sources[name]):
            if decl in owner:
                raise BundleError(f"{name}: {decl} is also declared in {owner[decl]} (the "
                                  "bundle shares one scope)")
            owner[decl] = name
    entry = sources[ENTRY]
    head = _LEADING_COMMENT.match(entry)
    parts = [head.group(0) if head else ""]
    for name in order:
        text = entry[head.end():] if name == ENTRY and head else sources[name]
        text = _EXPORT.sub("", _IMPORT.sub("", text)).strip("\n")
        parts.append(f"\n// ---- src/{name} " + "-" * max(4, 80 - len(name)) + "\n\n" + text + "\n")
    return "".join(parts)


def main(argv: list[str]) -> int:
    try:
        text = bundle()
    except BundleError as exc:
        print(f"bundle_explorer: {exc}", file=sys.stderr)
        return 2
    if "--check" in argv:
        if BUNDLE.read_text(encoding="utf-8") != text:
            print(f"bundle_explorer: {BUNDLE.relative_to(ROOT)} is not the bundle of "
                  f"{SOURCES.relative_to(ROOT)}/; run python scripts/bundle_explorer.py",
                  file=sys.stderr)
            return 1
        return 0
    BUNDLE.write_text(text, encoding="utf-8")
    print(f"wrote {BUNDLE.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
