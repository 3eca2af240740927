"""Mutation testing of the modules that compute numbers (issue #32; docs/mutation.md).

Two engines, one module group at a time, each mutant run against the test files mapped to its
group (and of those, only the tests that execute the mutated code):

* ``mutmut`` (3.x): every mutation mutmut makes, inside functions and methods. The group's
  configuration is written to a scratch directory ``mutants-run/GROUP/`` (``pyproject.toml`` with
  ``[tool.mutmut]``, links to ``src/`` and ``tests/``), so groups run with their own tests and
  never share state; mutmut copies the tree to ``mutants-run/GROUP/mutants/``.
* ``ast`` (``bench/mutation_ast.py``): the kinds the issue lists that mutmut does not make
  (min/max swapped, -1 on numbers, negated conditions everywhere; every kind at module level, in
  default arguments and in decorated functions), or ``--kinds all`` for every listed kind.

Survivors are then matched against ``bench/mutation_equivalent.toml``: a survivor listed there
(by module, function and the changed text, so renumbering does not unlist it) is equivalent,
with the reason given there; any other survivor is a missing test, and the exit status is 1.

Usage (from the repository root; mutmut installed: ``pip install mutmut``)::

    python3 bench/mutation.py run stats order aggregate         # both engines, then the report
    python3 bench/mutation.py run metrics --engine mutmut       # one engine
    python3 bench/mutation.py run stats --survivors             # only last run's survivors, after new tests
    python3 bench/mutation.py report stats order aggregate      # the report of the last runs
    python3 bench/mutation.py list                               # the groups and their tests
    python3 bench/mutation.py stubs stats                        # entries to explain for the list
    python3 bench/mutation.py recheck judgments                  # each survivor alone, full profile, wider tests

``--max-children`` (default 1) is mutmut's parallelism. Results go to ``bench/out/mutation/``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out" / "mutation"
EQUIVALENT = REPO / "bench" / "mutation_equivalent.toml"

#: group -> (source files under src/, as globs, "!glob" leaving some out; the test files that pin
#: them, as globs). A new test file named like the group's joins it.
GROUPS: dict[str, tuple[list[str], list[str]]] = {
    "stats": (["rankflavor/stats/*.py"], ["tests/stats/test_stats*.py"]),
    # (the ranker's block sort is reached from training-time scoring, its duplicate check from the plan)
    "order": (["rankflavor/order/*.py"], ["tests/order/test_order*.py", "tests/align/test_align_groups.py", "tests/training/test_ltr_callbacks.py",
                                          "tests/engine/test_plan.py"]),
    "aggregate": (["rankflavor/engine/aggregate.py"], ["tests/engine/test_aggregate*.py"]),
    "raters": (["rankflavor/raters/reliability.py"], ["tests/raters/test_raters*.py"]),
    # issue 36: the tables handed to DataFrames, the trackers' keys, an ir_datasets dataset's scale
    "where": (["rankflavor/base/frames.py", "rankflavor/trackers/keys.py", "rankflavor/presets/irds.py"],
              ["tests/base/test_frames.py", "tests/render/test_notebook_repr.py", "tests/trackers/test_trackers_mlflow.py", "tests/trackers/test_trackers_wandb.py",
               "tests/io/test_irds.py"]),
    # issue 37: the numbers of label sources, the judge's agreement, PPI and COEC
    "judges": (["rankflavor/analysis/estimate/ppi.py", "rankflavor/analysis/estimate/agreement.py", "rankflavor/clicks/coec.py",
                "rankflavor/io/labels/select.py", "rankflavor/engine/labels.py"],
               ["tests/analysis/estimate/test_estimate*.py", "tests/analysis/estimate/test_agreement*.py", "tests/clicks/test_clicks*.py", "tests/**/test_labels*.py"]),
    # issue 37: the bounds on one label source's labels beside the filled ones, pinned by the labels tests
    "filled": (["rankflavor/analysis/judgments/filled.py"], ["tests/engine/test_labels_eval.py", "tests/base/test_frames.py"]),
    # issue 37: the LLM judge (grades parsed from answers, the cache, retries, token counts); its CLI
    # tests start another process, where mutmut's trampolines cannot find the mutated tree
    "judge": (["rankflavor/judge/*.py"], ["tests/judge/test_judge_api.py", "tests/judge/test_judge_prompt.py", "tests/judge/test_judge_texts.py"]),
    # (irdsscale.py, an ir_datasets dataset's scale, is pinned by tests/io/test_irds.py, as in `where`)
    "judgments": (["rankflavor/analysis/judgments/*.py", "!rankflavor/analysis/judgments/filled.py"], ["tests/analysis/judgments/test_judgments*.py", "tests/analysis/judgments/test_pool.py", "tests/analysis/judgments/test_bounds*.py",
                                                  "tests/io/test_irds.py"]),
    # issue 32: torch maps the engine's rule tables onto tensors (its differential tests against
    # evaluate), spread's one summary rule and compare's robustness across flavors, explain's lists
    "training": (["rankflavor/training/torch.py"], ["tests/training/test_torch*.py", "tests/presets/test_presets_torchmetrics.py"]),
    "spread": (["rankflavor/analysis/spread/result.py", "rankflavor/analysis/compare/robust.py", "rankflavor/analysis/compare/flavors.py"],
               ["tests/analysis/spread/test_spread*.py", "tests/analysis/compare/test_compare*.py", "tests/render/test_formats_agree.py", "tests/base/test_frames.py"]),
    # (the other files' tests whose names say explain: DESELECT)
    "explain": (["rankflavor/analysis/explain/api.py"], ["tests/analysis/explain/test_explain*.py", "tests/order/test_fractional_grades.py", "tests/engine/test_empty_queries.py",
                                            "tests/io/test_formats.py", "tests/render/test_formats_agree.py", "tests/metrics/test_ideal_lists.py",
                                            "tests/base/test_nonfinite.py", "tests/metrics/test_metrics_core_edges.py", "tests/metrics/test_registry.py",
                                            "tests/render/test_render_terminal.py"]),
    # issue 33: the columns of Parquet, Arrow and DataFrame inputs (ids, numbers, row groups)
    "formats": (["rankflavor/io/formats/table.py"], ["tests/io/test_parquet_row_groups.py", "tests/io/test_formats.py",
                                                     "tests/render/test_formats_agree.py", "tests/io/test_formats_fuzz.py",
                                                     "tests/io/test_columnar_fastpath.py"]),
    # issue 33: a run read whole from a columnar format, noted in pieces (its row groups, when kept)
    "noted": (["rankflavor/io/run.py"], ["tests/io/test_columnar_fastpath.py", "tests/io/test_io_pieces.py",
                                         "tests/io/test_fastpath.py"]),
    # issue 35: check's table checks split into mergeable facts and their wording (both engines word them)
    "check": (["rankflavor/analysis/check/*.py"], ["tests/analysis/check/test_check.py"]),
    "metrics": (["rankflavor/metrics/*.py"], [
        "tests/**/test_metrics*.py", "tests/**/test_ndcg*.py", "tests/metrics/test_registry.py", "tests/metrics/test_rbp.py",
        "tests/metrics/test_udcg.py", "tests/metrics/test_err.py", "tests/order/test_fractional_grades.py", "tests/metrics/test_ideal_lists.py",
        "tests/metrics/test_binary_knobs.py"]),
}
#: metrics/ in three parts with the same tests, so the modules that compute the headline numbers
#: (and the helpers they share) run first: ``run metrics_core``, ``metrics_next``, ``metrics_rest``.
_METRICS_PARTS = {"metrics_core": ["ndcg", "err", "bounded", "binary", "common"],
                  "metrics_next": ["rbp", "udcg", "registry", "summary"]}
for _part, _modules in _METRICS_PARTS.items():
    GROUPS[_part] = ([f"rankflavor/metrics/{m}.py" for m in _modules], list(GROUPS["metrics"][1]))
#: trec_eval's own measures (trec_extra, trec_gain, counts) are pinned against trec_eval 9.0.8 and
#: pytrec_eval by the first three (about 20 s together), C/W/L and Compat against ir_measures'
#: cwl_eval and compat providers by the last (about 20 s).
_TREC_TESTS = ["tests/presets/test_trec_all.py", "tests/presets/test_trec_parity.py", "tests/presets/test_pytrec_eval_diff.py",
               "tests/presets/test_dialect_irmeasures.py"]
GROUPS["metrics_rest"] = (sorted(f"rankflavor/metrics/{p.name}" for p in (REPO / "src/rankflavor/metrics").glob("*.py")
                                 if p.stem != "__init__" and all(p.stem not in v for v in _METRICS_PARTS.values())),
                          GROUPS["metrics"][1] + _TREC_TESTS)
GROUPS["metrics"][1].extend(_TREC_TESTS)


#: Tests of a group left out of its mutation runs (pytest -k), with the reason: hypothesis tests
#: that compare one path of the code with another over hundreds of random collections take
#: minutes per surviving mutant, and a brute-force test in the group checks what they check.
DESELECT: dict[str, str] = {
    # tests/order/test_order_reference.py checks every field of every path against the definitions
    # (and the LightGBM example, a process of its own: mutmut's trampolines there cannot find the tree)
    "order": "not judged_rows_view_gives_the_values and not inexact_rows_give_every_value"
             " and not ranking_the_judged_rows_alone_equals_the_view and not example_trains_and_logs",
    # (test_irds.py: its tests in this process only, as in `where`; they pin irdsscale.py)
    "judgments": "not dinkelbach_agrees_with_every_chain_on_long_lists and not prefix_path_equals_full_ranking"
                 " and (not irds or dataset_scale or no_definitions or yields_is_checked)",
    # (tests that start another process: mutmut's trampolines there cannot find the mutated tree)
    "judges": "not readme and not read_back_with_their_source",  # (README and examples/ are not in the scratch tree)
    "filled": "not missing_extra_is_named",
    "check": "not readme_output_is_real",
    # (the whole of test_explain*.py, whose module names match, and the explain tests of the other
    # files: the spark and ranx tests of test_empty_queries.py take 25 s and never reach explain.py)
    "explain": "explain",
    "where": "not missing_extra_is_named and not readme and not eval_wandb and not eval_mlflow and (not irds or dataset_scale or no_definitions or yields_is_checked)",
}


#: Extra pytest arguments of a group's mutation runs: the ``mutation`` hypothesis profile
#: (tests/conftest.py) skips shrinking, which only costs time when a mutant is already caught.
PYTEST_ARGS: dict[str, list[str]] = {
    "order": ["--hypothesis-profile=mutation"],
    "aggregate": ["--hypothesis-profile=mutation"],
    "judgments": ["--hypothesis-profile=mutation"],
    "check": ["--hypothesis-profile=mutation"],
}


#: Tests a ``recheck`` adds to the group's own: tests that reach the group's code but sit in other
#: groups' files. (mutmut resets every result when a group's tests or pytest arguments change, so
#: widening them mid-way would throw a run away; a recheck of the survivors costs seconds each.)
RECHECK_TESTS: dict[str, list[str]] = {
    # (the triage's tests of 2026-12-07 first: a mutant they kill is settled in seconds)
    "judgments": ["tests/analysis/judgments/test_judgments_bounds_mut.py", "tests/analysis/judgments/test_judgments_families_mut.py",
                  "tests/analysis/judgments/test_judgments_ratio_mut.py", "tests/analysis/judgments/test_judgments_scope_mut.py", "tests/analysis/judgments/test_judgments_edges.py",
                  "tests/analysis/judgments/test_bounds_exact.py", "tests/base/test_frames.py", "tests/engine/test_labels_eval.py", "tests/io/test_irds.py"],
    # metrics/common.py's hits(cut=...) is called by trec_extra's Rprec_mult alone (metrics_rest),
    # which trec_eval's own suite and the pytrec_eval comparisons pin
    "metrics_core": ["tests/presets/test_trec_all.py"],
    "metrics_rest": ["tests/metrics/test_metrics_compat_mut.py", "tests/metrics/test_metrics_trec_mut.py", "tests/metrics/test_metrics_cwl_mut.py",
                     "tests/metrics/test_metrics_trec_extra_mut.py"],
    "training": ["tests/training/test_torch_mut.py"],
    # (the facts' merges are the Spark engine's; this pins them without a JVM)
    "check": ["tests/analysis/check/test_check_facts.py", "tests/analysis/check/test_check_wording.py"],
    "spread": ["tests/analysis/compare/test_compare_mut.py", "tests/analysis/spread/test_spread_mut.py"],
    "explain": ["tests/analysis/explain/test_explain_tables_mut.py", "tests/analysis/explain/test_explain_rest_mut.py"],
}


#: Extra ``[tool.mutmut]`` settings of a group's runs. order: a mutant that loops for ever (a
#: bisection's bounds) stops after 2 x its tests' time + 5 s, not 15 x + 1 s (the time of those
#: tests was measured with tracing on, several times their time in a mutant's run).
MUTMUT_CONFIG: dict[str, dict[str, object]] = {
    "order": {"timeout_multiplier": 2.0, "timeout_constant": 5.0},
}


def in_group(path: str, group: str) -> bool:
    """Whether ``path`` (relative to ``src/``) matches one of the group's globs and no ``!glob``."""
    globs = GROUPS[group][0]
    return (any(fnmatch.fnmatch(path, g) for g in globs if not g.startswith("!"))
            and not any(fnmatch.fnmatch(path, g[1:]) for g in globs if g.startswith("!")))


def files_of(group: str) -> list[str]:
    """The group's source files, relative to ``src/``, without ``__init__.py`` files that only re-export."""
    globs = [g for g in GROUPS[group][0] if not g.startswith("!")]
    found = sorted(str(p.relative_to(REPO / "src")) for g in globs for p in (REPO / "src").glob(g))
    found = [f for f in found if in_group(f, group)]
    return [f for f in found if not f.endswith("__init__.py") or _computes((REPO / "src" / f).read_text())]


def _computes(text: str) -> bool:
    return "def " in text


def tests_of(group: str) -> list[str]:
    return sorted({str(p.relative_to(REPO)) for g in GROUPS[group][1] for p in REPO.glob(g)})


# -- mutmut -------------------------------------------------------------------------------------


def _mutmut(*args: str, cwd: Path, capture: bool = True) -> str:
    cmd = [sys.executable, "-m", "mutmut", *args]
    # mutmut forks each mutant's run from a process that ran the tests once. OpenMP's thread team
    # (libgomp: XGBoost's DMatrix in tests/training/test_ltr_callbacks.py) does not survive a fork: the
    # child waited on the parent's threads for ever, and the mutant was counted as a timeout, a
    # kill no test made (21 of the first 117 order mutants on 2026-12-07). One OpenMP thread has
    # no team to wait on.
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run(cmd, cwd=cwd, capture_output=capture, text=True, check=False, env=env)
    return out.stdout if capture else ""


def run_mutmut(group: str, max_children: int, survivors: bool = False, patterns: list[str] | None = None) -> Path:
    """mutmut over the group in ``mutants-run/GROUP``; returns the scratch directory. With
    ``survivors``, only the mutants the last run left alive and the equivalence list does not
    name (say, after new tests); with ``patterns``, the mutants whose names match one of these
    globs (``rankflavor.training.torch.x__rank__mutmut_*``: a function changed since the last run)."""
    scratch = REPO / "mutants-run" / group
    scratch.mkdir(parents=True, exist_ok=True)
    for name in ("src", "tests"):
        link = scratch / name
        if not link.exists():
            link.symlink_to(REPO / name)
    shared = REPO.parent / "shared"
    if shared.exists() and not (scratch / "shared").exists():
        (scratch / "shared").symlink_to(shared)  # conftest reads ROOT.parent / "shared"
    only = [f"src/{g}" for g in GROUPS[group][0] if not g.startswith("!")]  # (a "!glob" is left out of the report)
    config = {
        "source_paths": ["src/"], "only_mutate": only, "pytest_add_cli_args_test_selection": tests_of(group),
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-o", "addopts=", "-q", "--hypothesis-seed=0",
                                *(["-k", DESELECT[group]] if group in DESELECT else []), *PYTEST_ARGS.get(group, [])],
        "use_git_change_detection": False, **MUTMUT_CONFIG.get(group, {}),
    }
    lines = ["[tool.mutmut]"] + [f"{k} = {json.dumps(v)}" for k, v in config.items()]
    project = (REPO / "pyproject.toml").read_text()
    pytest_section = project[project.index("[tool.pytest.ini_options]"):].split("\n[", 1)[0]
    (scratch / "pyproject.toml").write_text(pytest_section + "\n\n" + "\n".join(lines) + "\n")
    names: list[str] = []
    if survivors:
        records = mutmut_records(group)
        classify(records, load_equivalent())  # a listed equivalent needs no second look
        names = [str(r["id"]) for r in records if r["status"] not in ("killed", "timeout") and "equivalent" not in r]
        if not names:
            return scratch
    names += patterns or []
    t0 = time.time()
    _mutmut("run", "--max-children", str(max_children), *names, cwd=scratch, capture=False)
    if not survivors and not patterns:
        (scratch / "took.txt").write_text(f"{time.time() - t0:.0f}\n")
    return scratch


_RESULT = re.compile(r"^\s+(\S+): (.+)$")


def mutmut_records(group: str) -> list[dict[str, object]]:
    """One record per mutmut mutant of the last run of ``group`` (survivors with their diff)."""
    scratch = REPO / "mutants-run" / group
    records = []
    for line in _mutmut("results", "--all", "true", cwd=scratch).splitlines():
        m = _RESULT.match(line)
        if not m:
            continue
        name, status = m.group(1), m.group(2)
        module, func = name.split("__mutmut_")[0].rsplit(".", 1)[0], name.split("__mutmut_")[0].rsplit(".", 1)[1]
        rec: dict[str, object] = {"engine": "mutmut", "id": name, "status": status,
                                  "path": module.replace(".", "/") + ".py", "function": _demangle(func)}
        records.append(rec)
    records = [r for r in records if in_group(str(r["path"]), group)]
    alive = [r for r in records if r["status"] not in ("killed", "timeout", "not checked")]
    for r, diff in zip(alive, _diffs([str(r["id"]) for r in alive], scratch), strict=True):
        r["change"] = _diff_change(diff)
    return records


#: Prints each named mutant's diff (as ``mutmut show`` does), one JSON list, in one process.
_SHOW = """
import json, sys
from mutmut.mutation.diff_apply import find_mutant, get_diff_for_mutant
print(json.dumps([get_diff_for_mutant(n, path=find_mutant(n).path) for n in sys.argv[1:]]))
"""


def _diffs(names: list[str], scratch: Path) -> list[str]:
    """The diffs of mutmut mutants ``names``, read in one process (``mutmut show`` costs one each)."""
    if not names:
        return []
    for _ in range(3):  # (a run in progress may be rewriting a file of results at that moment)
        out = subprocess.run([sys.executable, "-c", _SHOW, *names], cwd=scratch, capture_output=True, text=True,
                             check=False)
        if out.returncode == 0:
            return list(json.loads(out.stdout.strip().splitlines()[-1]))
        time.sleep(2)
    return [_mutmut("show", name, cwd=scratch) for name in names]


def _demangle(name: str) -> str:
    """mutmut's ``x_func`` / ``xǁClassǁmethod`` as ``func`` / ``Class.method``."""
    if name.startswith("xǁ"):
        return ".".join(name[2:].split("ǁ"))
    return name[2:] if name.startswith("x_") else name


def _diff_change(diff: str) -> str:
    """The changed lines of a mutant's diff, as ``old -> new`` (whitespace collapsed)."""
    old = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    new = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return " ".join(" | ".join(old).split()) + " -> " + " ".join(" | ".join(new).split())


# -- ast ------------------------------------------------------------------------------------------


def run_ast(group: str, every_kind: bool, only: str | None) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import mutation_ast

    OUT.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with open(OUT / f"ast-{group}.log", "w") as log:
        records = mutation_ast.run(REPO, files_of(group), tests_of(group), every_kind=every_kind, only=only,
                                   deselect=DESELECT.get(group), extra=PYTEST_ARGS.get(group, []),
                                   workdir=REPO / "mutants-ast" / group, log=log)
    for r in records:
        r["engine"] = "ast"
        r["path"] = str(r["path"])
        r["change"] = f"{' '.join(str(r['old']).split())} -> {' '.join(str(r['new']).split())}"
    took = round(time.time() - t0)
    previous = OUT / f"ast-{group}.json"
    if only and previous.exists():  # a partial run: its records replace those of the ids it ran again
        parts = only.split(" || ")
        old = json.loads(previous.read_text())
        kept = [r for r in old["records"] if not any(part in str(r["id"]) for part in parts)]
        records, took = kept + records, old["took"]
    (OUT / f"ast-{group}.json").write_text(json.dumps({"took": took, "records": records}, indent=1))


# -- recheck --------------------------------------------------------------------------------------


def recheck(group: str) -> None:
    """Run each mutmut survivor of ``group`` that no equivalence entry names once more, by itself,
    against the group's tests plus :data:`RECHECK_TESTS`, under the suite's own hypothesis profile
    (not the ``mutation`` one) and without the group's deselection of slow tests: a mutant killed
    there is a survivor of the run's narrower setting, not a missing test. The verdicts go to
    ``bench/out/mutation/recheck-GROUP.json``, which ``report`` reads (as ``killed on recheck``).

    Each mutant is applied to a copy of ``src/`` and ``tests/`` under ``mutants-recheck/GROUP/``
    (never to the repository), by replacing its function's text with the mutated text."""
    import shutil

    records = mutmut_records(group)
    classify(records, load_equivalent())
    alive = [r for r in records if r["status"] in ("survived", "no tests", "suspicious") and "equivalent" not in r]
    work = REPO / "mutants-recheck" / group
    tree = work / "tree"
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    for name in ("src", "tests"):
        shutil.copytree(REPO / name, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
    shared = REPO.parent / "shared"
    if shared.exists() and not (work / "shared").exists():
        (work / "shared").symlink_to(shared)  # conftest reads the tree's parent's "shared"
    extra = RECHECK_TESTS.get(group, [])
    tests = extra + [t for t in tests_of(group) if t not in extra]  # (the added tests first: they are why)
    verdicts: dict[str, dict[str, str]] = {}
    out_file = OUT / f"recheck-{group}.json"
    if out_file.exists():
        verdicts = json.loads(out_file.read_text())
    alive = [r for r in alive if verdicts.get(str(r["id"]), {}).get("change") != r["change"]]  # (not yet rechecked)
    diffs = _diffs([str(r["id"]) for r in alive], REPO / "mutants-run" / group)
    for r, diff in zip(alive, diffs, strict=True):
        lines = diff[diff.index("--- "):].splitlines()
        path = tree / lines[0][4:].strip()
        body = lines[3:]
        text = path.read_text()
        for indent in ("", "    ", "        "):  # (mutmut shows a method's body dedented)
            def put(ln: str, indent: str = indent, text: str = text) -> str:
                moved = indent * bool(ln[1:]) + ln[1:]
                # (a docstring's second line is shown as it is, not dedented: keep it if moved is not there)
                return moved if not ln.startswith(" ") or moved in text else ln[1:]

            old = "".join(put(ln) + "\n" for ln in body if not ln.startswith("+"))
            new = "".join(put(ln) + "\n" for ln in body if not ln.startswith("-"))
            if text.count(old) == 1:
                break
        else:
            # The context lines changed since the run (a fix nearby) but not the mutated line: a
            # one-line change placed where that line stands, if it stands once in the file
            minus = [ln[1:] for ln in body if ln.startswith("-")]
            plus = [ln[1:] for ln in body if ln.startswith("+")]
            at = [ln for ln in text.splitlines() if minus and ln.strip() == minus[0].strip()]
            if len(minus) == len(plus) == 1 and len(at) == 1:
                indent = at[0][: len(at[0]) - len(at[0].lstrip())]
                old, new = at[0] + "\n", indent + plus[0].strip() + "\n"
        if text.count(old) != 1:
            # A line the mutant changed that the source no longer holds: the code was changed since
            # the run (a fix), and the mutant is gone; the next run mutates the new code.
            removed = [ln[1:].strip() for ln in body if ln.startswith("-") and ln[1:].strip()]
            gone = any(ln not in text for ln in removed)
            verdicts[str(r["id"])] = {"verdict": "gone" if gone else "not placed", "change": str(r["change"])}
            continue
        path.write_text(text.replace(old, new))
        try:
            env = dict(os.environ, PYTHONPATH=str(tree / "src"))
            done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                                   "--hypothesis-seed=0", *tests], cwd=tree, env=env, capture_output=True, text=True,
                                  check=False)
        finally:
            path.write_text(text)
        # (any failure kills, as in mutmut, a mutant that breaks an import too; 4 and 5 are usage errors)
        verdict = "survived" if done.returncode == 0 else (f"pytest exit {done.returncode}" if done.returncode in (4, 5)
                                                            else "killed")
        verdicts[str(r["id"])] = {"verdict": verdict, "change": str(r["change"])}
        print(f"{verdict:>10}  {r['id']}", flush=True)
        OUT.mkdir(parents=True, exist_ok=True)
        out_file.write_text(json.dumps(verdicts, indent=1))


# -- the report ---------------------------------------------------------------------------------


def load_equivalent() -> list[dict[str, str]]:
    """Every entry of ``bench/mutation_equivalent.toml`` and of ``bench/mutation_equivalent/*.toml``
    (a file per group, so groups triaged side by side never edit one file)."""
    files = [EQUIVALENT] if EQUIVALENT.exists() else []
    files += sorted((REPO / "bench" / "mutation_equivalent").glob("*.toml"))
    return [entry for f in files for entry in tomllib.loads(f.read_text()).get("mutant", [])]


def _names(entry: dict[str, str], record: dict[str, object]) -> bool:
    """Does a list entry name this mutant? ``engine`` (when given), ``path`` and ``function`` (globs,
    ``function`` optional) and either the exact ``change`` or a ``change_regex`` it matches whole."""
    if entry.get("engine", record["engine"]) != record["engine"]:
        return False
    if not fnmatch.fnmatchcase(str(record["path"]), entry["path"]):
        return False
    if not fnmatch.fnmatchcase(str(record["function"]), entry.get("function", "*")):
        return False
    change = str(record.get("change", ""))
    if "change" in entry:
        return " ".join(entry["change"].split()) == change
    return re.fullmatch(entry["change_regex"], change) is not None


def classify(records: list[dict[str, object]], equivalent: list[dict[str, str]]) -> None:
    """Mark each survivor ``equivalent`` (with its reason) when the list names it."""
    for r in records:
        if r["status"] not in ("survived", "no tests", "suspicious"):
            continue
        for e in equivalent:
            if _names(e, r):
                r["equivalent"] = e["reason"]
                break


def report(groups: list[str]) -> int:
    equivalent = load_equivalent()
    OUT.mkdir(parents=True, exist_ok=True)
    rows, missing, gone = [], [], []
    for group in groups:
        recs: list[dict[str, object]] = []
        if (REPO / "mutants-run" / group).exists():
            recs += mutmut_records(group)
        ast_file = OUT / f"ast-{group}.json"
        if ast_file.exists():
            recs += json.loads(ast_file.read_text())["records"]
        rechecked = OUT / f"recheck-{group}.json"
        if rechecked.exists():  # survivors of the run's narrower setting that a recheck killed
            verdicts = json.loads(rechecked.read_text())
            for r in recs:
                seen = verdicts.get(str(r["id"]), {})
                if r["engine"] == "mutmut" and r["status"] in ("survived", "no tests", "suspicious") \
                        and seen.get("verdict") in ("killed", "gone") and seen.get("change") == r.get("change"):
                    r["status"] = "killed" if seen["verdict"] == "killed" else "gone"
                    r["rechecked"] = True
        classify(recs, equivalent)
        (OUT / f"records-{group}.json").write_text(json.dumps(recs, indent=1))
        for path in sorted({str(r["path"]) for r in recs}):
            for engine in ("mutmut", "ast"):
                mine = [r for r in recs if r["path"] == path and r["engine"] == engine]
                if not mine:
                    continue
                killed = sum(r["status"] == "killed" for r in mine)
                timeout = sum(r["status"] == "timeout" for r in mine)
                eq = sum("equivalent" in r for r in mine)
                bad = [r for r in mine if r["status"] in ("survived", "no tests", "suspicious")
                       and "equivalent" not in r]
                missing += bad
                gone += [r for r in mine if r["status"] == "gone"]
                score = (killed + timeout) / max(1, len(mine) - eq)
                rows.append(f"| {path} | {engine} | {len(mine)} | {killed} | {timeout} | {eq} | {len(bad)} | "
                            f"{100 * score:.1f} % |")
    for group in groups:
        took = []
        if (REPO / "mutants-run" / group / "took.txt").exists():
            took.append(f"mutmut {int((REPO / 'mutants-run' / group / 'took.txt').read_text()) / 60:.0f} min")
        if (OUT / f"ast-{group}.json").exists():
            took.append(f"ast {json.loads((OUT / f'ast-{group}.json').read_text())['took'] / 60:.0f} min")
        print(f"{group}: {', '.join(tests_of(group))} ({'; '.join(took) or 'not run'})")
    print()
    print("| module | engine | mutants | killed | timeout | equivalent | surviving, not equivalent | score |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    if gone:
        print(f"\n{len(gone)} survivor(s) of code changed since the run (a recheck found the mutated line gone; "
              "counted as not killed until the next run mutates the new code):")
        for r in gone:
            print(f"  {r['engine']} {r['id']} [{r['function']}] {r.get('change', '')}")
    if missing:
        print(f"\n{len(missing)} survivor(s) neither killed nor listed as equivalent:")
        for r in missing:
            print(f"  {r['engine']} {r['id']} [{r['function']}] {r.get('change', '')}")
    return 1 if missing else 0


def stubs(groups: list[str]) -> None:
    """TOML entries for the survivors not yet listed, reason to be written (after ``report``)."""
    for group in groups:
        path = OUT / f"records-{group}.json"
        for r in json.loads(path.read_text()) if path.exists() else []:
            if r["status"] in ("survived", "no tests", "suspicious") and "equivalent" not in r:
                print("[[mutant]]")
                for key in ("engine", "path", "function", "change"):
                    print(f"{key} = {json.dumps(str(r[key]), ensure_ascii=False)}")
                print(f'reason = "TODO"  # {r["id"]}\n')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["run", "report", "list", "stubs", "recheck"])
    parser.add_argument("groups", nargs="*", default=[])
    parser.add_argument("--engine", choices=["mutmut", "ast", "both"], default="both")
    parser.add_argument("--kinds", choices=["complement", "all"], default="complement",
                        help="ast engine: the kinds mutmut lacks (default) or every kind the issue lists")
    parser.add_argument("--only", help="ast engine: only mutants whose id contains this text (several: joined by"
                        " ' || '); their records replace those of the last run. mutmut: mutant name globs, joined"
                        " by ' || ' (rankflavor.training.torch.x__rank__mutmut_*)")
    parser.add_argument("--max-children", type=int, default=1)
    parser.add_argument("--survivors", action="store_true",
                        help="mutmut: run again only the mutants the last run left alive (after adding tests)")
    args = parser.parse_args(argv)
    groups = args.groups or list(GROUPS)
    if unknown := [g for g in groups if g not in GROUPS]:
        parser.error(f"unknown group(s) {unknown}; known: {', '.join(GROUPS)}")
    if args.command == "list":
        for g in groups:
            print(f"{g}: {', '.join(files_of(g))}\n  tests: {', '.join(tests_of(g))}")
        return 0
    if args.command == "stubs":
        stubs(groups)
        return 0
    if args.command == "recheck":
        for g in groups:
            recheck(g)
    if args.command == "run":
        for g in groups:
            if args.engine in ("mutmut", "both"):
                run_mutmut(g, args.max_children, args.survivors,
                           args.only.split(" || ") if args.only else None)
            if args.engine in ("ast", "both"):
                # a child process: the engine forks, and must not inherit this one's imports
                subprocess.run([sys.executable, __file__, "_ast", g, "--kinds", args.kinds,
                                *(["--only", args.only] if args.only else [])], check=True)
    return report(groups)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "_ast":
        ns = argparse.ArgumentParser()
        ns.add_argument("group")
        ns.add_argument("--kinds", default="complement")
        ns.add_argument("--only")
        a = ns.parse_args(sys.argv[2:])
        run_ast(a.group, a.kinds == "all", a.only)
        sys.exit(0)
    os.chdir(REPO)
    sys.exit(main())
