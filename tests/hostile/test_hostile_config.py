"""Hostile-input catalogue: the configuration file (``[tool.ragreport]`` in pyproject.toml,
``ragreport.toml``, ``--config FILE``) and ``ragreport config``.

Every row runs the real command in a fresh folder (``tests/hostile.py``): a bad key or value
is one line on stderr naming the file, the table and the line, and exit 2; the command line
wins over the file; the file wins over the defaults.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hostile import QRELS, RUN, Case, CaseResult, run_case

FILES = {"q.txt": QRELS, "r.txt": RUN}
EVAL = ["evaluate", "q.txt", "r.txt", "--format", "json"]
CHECK = ["check", "q.txt", "r.txt", "--no-stats", "--jobs", "1"]


def _pyproject(body: str) -> dict[str, str]:
    return {**FILES, "pyproject.toml": "[project]\nname = 'x'\n\n[tool.ragreport]\n" + body}


def _measures(expected: list[str]) -> Callable[[CaseResult], None]:
    def check(r: CaseResult) -> None:
        assert list(json.loads(r.stdout)["means"]) == expected, r.stdout
    return check


def _written(name: str, present: bool = True) -> Callable[[CaseResult], None]:
    def check(r: CaseResult) -> None:
        assert (r.tmp / name).is_file() is present, sorted(p.name for p in r.tmp.iterdir())
    return check


def _both_verdicts(page: str) -> None:
    targets = page[page.index('<section id="targets">'):page.index("</section>",
                                                                 page.index('id="targets"'))]
    assert 'class="verdict pass"' in targets and 'class="verdict fail"' in targets


CASES = [
    # keys no command has: refused, with the nearest key suggested and the line named
    Case("unknown-key", EVAL, _pyproject("k_maxx = 20\n"), exit=2,
         stderr=r"^ragreport: error: pyproject\.toml \[tool\.ragreport\], line 5: unknown key "
                r"'k_maxx'; did you mean 'k_max'\?$"),
    Case("unknown-key-far", EVAL, _pyproject("zzz = 'red'\n"), exit=2,
         stderr=r"unknown key 'zzz'; a key is a long option's name \(k_max for --k-max\)"),
    Case("singular-measure", EVAL, _pyproject("measure = 'P@1'\n"), exit=2,
         stderr=r"unknown key 'measure'; did you mean 'measures'\?"),
    Case("unknown-in-ragreport-toml", EVAL,
         {**FILES, "ragreport.toml": "seeed = 1\n[targets]\n'P@1' = 0.1\n"}, exit=2,
         stderr=r"ragreport\.toml, line 1: unknown key 'seeed'; did you mean 'seed'\?"),
    Case("option-of-another-command", EVAL,
         _pyproject("[tool.ragreport.evaluate]\nhtml = 'x.html'\n"), exit=2,
         stderr=r"\[tool\.ragreport\.evaluate\], line 6: unknown key 'html': 'ragreport "
                r"evaluate' has no such option"),
    Case("section-not-a-table", EVAL, _pyproject("report = 3\n"), exit=2,
         stderr=r"\[tool\.ragreport\]: report must be a table"),
    Case("same-key-twice", EVAL, _pyproject("k_max = 5\nk-max = 6\n"), exit=2,
         stderr=r"'k_max' and 'k-max' are the same key; give it once"),
    Case("config-file-missing", [*EVAL, "--config", "no.toml"], FILES, exit=2,
         stderr=r"no\.toml: no such file"),
    Case("config-pyproject-without-table", [*EVAL, "--config", "pyproject.toml"],
         {**FILES, "pyproject.toml": "[project]\nname = 'x'\n"}, exit=2,
         stderr=r"pyproject\.toml: no \[tool\.ragreport\] table"),
    Case("config-invalid-toml", EVAL, {**FILES, "ragreport.toml": "k_max = \n"}, exit=2,
         stderr=r"ragreport\.toml: invalid TOML"),
    # values checked as the option's own are
    Case("zero-k", EVAL, _pyproject("k_max = 0\n"), exit=2,
         stderr=r"line 5: k_max: must be >= 1, got 0$"),
    Case("float-for-int", EVAL, _pyproject("k_max = 2.5\n"), exit=2,
         stderr=r"k_max: expected a whole number, got '2\.5'"),
    Case("bool-for-number", ["report", "q.txt", "r.txt"], _pyproject("alpha = true\n"),
         exit=2, stderr=r"alpha: must be a number, got true"),
    Case("number-out-of-range", ["report", "q.txt", "r.txt"], _pyproject("alpha = 1.5\n"),
         exit=2, stderr=r"alpha: must be > 0 and < 1, got 1\.5"),
    Case("bad-choice", EVAL, _pyproject("order = 'random'\n"), exit=2,
         stderr=r"order: must be one of \"score\", \"given\", got 'random'"),
    Case("string-for-bool", EVAL, _pyproject("complete = 'yes'\n"), exit=2,
         stderr=r"complete: must be true or false, got 'yes'"),
    Case("table-for-string", ["report", "q.txt", "r.txt"], _pyproject("title = {a = 1}\n"),
         exit=2, stderr=r"title: must be a string, got a table"),
    Case("empty-measures", EVAL, _pyproject("measures = []\n"), exit=2,
         stderr=r"measures: must be a string or an array of strings, got \[\]"),
    Case("bad-measure-name", EVAL, _pyproject("measures = ['nDCG@ten']\n"), exit=2,
         stderr=r"nDCG@ten"),
    Case("huge-value-shortened", ["report", "q.txt", "r.txt"],
         _pyproject(f"order = '{'x' * 5000}'\n"), exit=2, stderr=r"got 'x{50,70}…$"),
    # precedence: the command line, then the file, then the defaults
    Case("file-sets-measures", EVAL, _pyproject("measures = ['P@1', 'RR']\n"), exit=0,
         check=_measures(["P@1", "RR"])),
    Case("flag-wins", [*EVAL, "-m", "nDCG@10"], _pyproject("measures = ['P@1', 'RR']\n"),
         exit=0, check=_measures(["nDCG@10"])),
    Case("command-table-wins", EVAL,
         _pyproject("measures = ['P@1']\n[tool.ragreport.evaluate]\nmeasures = 'RR'\n"),
         exit=0, check=_measures(["RR"])),
    Case("other-command-table-ignored", EVAL,
         _pyproject("measures = ['P@1']\n[tool.ragreport.report]\nmeasures = 'RR'\n"),
         exit=0, check=_measures(["P@1"])),
    Case("ragreport-toml", EVAL, {**FILES, "ragreport.toml": "measures = 'RR'\n"}, exit=0,
         check=_measures(["RR"])),
    Case("legacy-top-level-targets", [*CHECK, "--markdown", "-"],
         {**FILES, "ragreport.toml": "'RR' = 0.1\n"}, exit=0, stdout=r"RR"),
    Case("config-option", [*EVAL, "--config", "eval/cfg.toml"],
         {**FILES, "eval/cfg.toml": "measures = 'RR'\n"}, exit=0, check=_measures(["RR"])),
    Case("check-writes-what-the-file-says", CHECK,
         _pyproject("[tool.ragreport.check]\nmarkdown = 'out/comment.md'\n"
                    "[tool.ragreport.targets]\n'RR' = 0.1\n") | {"out/.keep": ""},
         exit=0, check=_written("out/comment.md")),
    # paths of --config FILE are read from its folder
    Case("paths-from-config-folder", [*CHECK, "--config", "eval/cfg.toml"],
         {**FILES, "eval/cfg.toml": "json = 'r.json'\n[targets]\n'RR' = 0.1\n"}, exit=0,
         check=_written("eval/r.json")),
    Case("targets-from-config-option", [*CHECK, "--config", "eval/cfg.toml"],
         {**FILES, "eval/cfg.toml": "[targets]\n'RR' = 0.99\n"}, exit=1, stdout=r"RR"),
    # a file's evaluation option with per-query results: refused, naming the file
    Case("file-option-with-per-query-in", ["report", "--per-query-in", "x.parquet"],
         _pyproject("complete = true\n") | {"x.parquet": ""}, exit=2,
         stderr=r"complete \(set in pyproject\.toml \[tool\.ragreport\], line 5\) does not "
                r"apply to --per-query-in"),
    # the command's own table beats the shared keys, the settings too
    Case("command-table-beats-shared-setting", ["config", "evaluate"],
         _pyproject("compat = 'beir'\n[tool.ragreport.evaluate]\ncompat = 'trec_eval'\n"),
         exit=0, stdout=r'compat = "trec_eval" +# pyproject\.toml \[tool\.ragreport\.evaluate\], '
                        r"line 7"),
    Case("setting-in-targets-table", ["config", "check"],
         _pyproject("[tool.ragreport.targets]\nties = 'average'\n'RR' = 0.1\n"), exit=0,
         stdout=r'ties = "average" +# pyproject\.toml \[tool\.ragreport\]'),
    Case("two-configuration-files", EVAL,
         _pyproject("title = 'x'\n") | {"ragreport.toml": "ties = 'average'\n"}, exit=2,
         stderr=r"both \./pyproject\.toml \[tool\.ragreport\] and \./ragreport\.toml configure "
                r"ragreport: keep one, or name it with --config"),
    Case("options-without-targets", ["report", "q.txt", "r.txt", "--no-stats", "--jobs", "1",
                                     "--json", "r.json"],
         {**FILES, "ragreport.toml": "k_max = 30\n[report]\nseed = 4\n"}, exit=0,
         check=_written("r.json")),
    Case("config-option-without-targets", [*CHECK, "--config", "c.toml", "--json", "r.json"],
         {**FILES, "c.toml": "seed = 3\n"}, exit=1, stdout=r"R@5 +> 0\.85"),
    Case("typo-beside-top-level-targets", EVAL,
         {**FILES, "ragreport.toml": "k_maxx = 50\n'R@5' = 0.5\n"}, exit=2,
         stderr=r"ragreport\.toml, line 1: unknown key 'k_maxx'; did you mean 'k_max'\?"),
    Case("slices-key-is-the-option", ["config", "report"],
         {**FILES, "ragreport.toml": "slices = 's.tsv'\n"}, exit=0,
         stdout=r'slices = "s\.tsv" +# ragreport\.toml, line 1'),
    Case("config-file-with-tool-table", ["config", "check", "--config", "c.toml"],
         {**FILES, "c.toml": "[tool.ragreport]\nseed = 9\n"}, exit=0,
         stdout=r"seed = 9 +# c\.toml \[tool\.ragreport\], line 2"),
    Case("config-without-command", ["config", "--config", "c.toml"],
         {**FILES, "c.toml": "seed = 9\n"}, exit=0,
         stdout=r"# ragreport report: the effective configuration(?s:.*)seed = 9"),
    Case("notebook-html-only-from-its-table", ["config", "notebook"],
         _pyproject("html = 'report.html'\n"), exit=0, stdout=r"# html = +# default"),
    Case("name-key-suggests-names", ["report", "q.txt", "r.txt"],
         _pyproject("[tool.ragreport.report]\nname = 'x'\n"), exit=2,
         stderr=r"unknown key 'name'; did you mean 'names'\?"),
    Case("example-is-no-key", EVAL, _pyproject("example = true\n"), exit=2,
         stderr=r"unknown key 'example'"),
    Case("positive-flag-as-source", ["config", "evaluate", "--no-ignore-identical-ids"],
         FILES, exit=0, stdout=r"ignore_identical_ids = false +# --ignore-identical-ids\n"),
    Case("line-of-the-right-table", CHECK,
         _pyproject("check.seed = -1\n[tool.foo]\nseed = 1\n"), exit=2,
         stderr=r"\[tool\.ragreport\.check\]: seed: must be >= 0, got -1$"),
    Case("string-for-number", EVAL, _pyproject("k_max = '50'\n"), exit=2,
         stderr=r"k_max: must be a number, got '50'"),
    Case("date-time-for-generated-at", ["config", "report"],
         _pyproject("generated_at = 2026-01-02T03:04:05Z\n"), exit=0,
         stdout=r'generated_at = "2026-01-02T03:04:05\+00:00"'),
    Case("config-dash", [*EVAL, "--config", "-"], FILES, exit=2,
         stderr=r"--config must name a TOML file, got '-'"),
    Case("config-folder", [*EVAL, "--config", "d"], {**FILES, "d/x": ""}, exit=2,
         stderr=r"d: is a folder; --config names a TOML file"),
    # the example's own targets, unless targets are configured: the first report shows a
    # target passing, one failing and one split between the runs
    Case("example-targets", ["check", "--example", "--no-stats", "--jobs", "1"], {}, exit=1,
         stdout=r"nDCG@10 +>= 0\.55 +0\.5733 PASS +0\.5464 FAIL(?s:.*)RR +>= 0\.7 +0\.7393 PASS "
                r"+0\.7515 PASS(?s:.*)R@5 +>= 0\.4 +0\.3940 FAIL +0\.3716 FAIL"),
    Case("example-with-configured-targets", ["check", "--example", "--no-stats", "--jobs", "1"],
         {"ragreport.toml": "[targets]\n'RR' = 0.5\n"}, exit=0, stdout=r"all targets passed"),
    Case("example-html-shows-both", ["report", "--example", "--no-stats", "--jobs", "1",
                                     "--html", "r.html"], {}, exit=0,
         check=lambda r: _both_verdicts((r.tmp / "r.html").read_text(encoding="utf-8"))),
    # ragreport config
    Case("show-config", ["config", "check", "--seed", "3"],
         _pyproject("k_max = 20\n[tool.ragreport.check]\nmarkdown = 'c.md'\n"), exit=0,
         stdout=r"(?s)k_max = 20 +# pyproject\.toml \[tool\.ragreport\], line 5\n.*"
                r"seed = 3 +# --seed\n.*markdown = \"c\.md\" +# pyproject\.toml "
                r"\[tool\.ragreport\.check\], line 7"),
    Case("show-config-default", ["config"], FILES, exit=0,
         stdout=r"configuration file: none.*\n(?s:.*)alpha = 0\.05 +# default"),
    Case("show-config-bad-file", ["config"], _pyproject("k_maxx = 1\n"), exit=2,
         stderr=r"unknown key 'k_maxx'"),
    Case("show-config-bad-command", ["config", "explore"], FILES, exit=2,
         stderr=r"invalid choice: 'explore'"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile(case: Case, tmp_path: object) -> None:
    run_case(case, tmp_path)  # type: ignore[arg-type]
