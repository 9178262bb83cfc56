"""Write the generated pages of the documentation: ``docs/reference/cli.md``, every command's
``--help`` as the parser prints it (80 columns).

    python scripts/gen_docs.py          # write the pages
    python scripts/gen_docs.py --check  # exit 1 when a page is not up to date

A test runs ``--check``: the reference never drifts from the parser.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI_PAGE = ROOT / "docs" / "reference" / "cli.md"
COLUMNS = "80"


def cli_page() -> str:
    """The command-line reference: the commands, then each one's help."""
    os.environ["COLUMNS"] = COLUMNS  # argparse wraps to the terminal's width
    sys.path.insert(0, str(ROOT))
    from ragreport.cli.args import build_parser, commands

    parser = build_parser()
    parser.prog = "ragreport"
    parts = ["# Command line\n",
             "Every command and option, as `ragreport COMMAND --help` prints them (this page is "
             "generated from the parser). The [command-line guide](../guides/command-line.md) "
             "shows them at work.\n",
             "```text\n" + parser.format_help() + "```\n"]
    for name, sub in commands(parser).items():
        sub.prog = f"ragreport {name}"
        parts.append(f"## ragreport {name}\n")
        parts.append("```text\n" + sub.format_help() + "```\n")
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    text = cli_page()
    if "--check" in argv:
        if not CLI_PAGE.is_file() or CLI_PAGE.read_text(encoding="utf-8") != text:
            print(f"gen_docs: {CLI_PAGE.relative_to(ROOT)} is out of date; run "
                  "python scripts/gen_docs.py", file=sys.stderr)
            return 1
        return 0
    CLI_PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {CLI_PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
