"""README's speed and memory figures are ``bench/readme.py``'s output (issue 33).

The command itself takes minutes on an idle machine, so it is not run here; what is checked is
that README holds its block and nothing else claims a figure it does not print, and that the
table it writes says what its samples say (medians and ranges of the pairs' ratios).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def readme_bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_readme", ROOT / "bench" / "readme.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_readme"] = module
    spec.loader.exec_module(module)
    return module


def scale_section() -> str:
    text = (ROOT / "README.md").read_text()
    return text[text.index("## Scale\n") : text.index("\n## ", text.index("## Scale\n") + 5)]


def test_readme_scale_figures_come_from_the_block(readme_bench) -> None:  # type: ignore[no-untyped-def]
    section = scale_section()
    begin, end = section.index(readme_bench.BEGIN), section.index(readme_bench.END)
    prose = section[:begin] + section[end:]
    # outside the block, no ratio or time a rerun could contradict
    assert not re.search(r"\d(\.\d+)?\s*(x\b|×|s\b|ms\b|MiB|GB|MB)", prose), re.findall(r".{30}\d\s*(?:x|s|MiB).{10}", prose)
    keys = {f.key for f in readme_bench.figures()}
    for key in keys:  # every row is explained, by its name or its family's (`eval-*`)
        assert f"`{key}`" in prose or f"`{key.split('-')[0]}-*`" in prose, key
    block = section[begin:end]
    for row in re.findall(r"^\| `([^`]+)` \|", block, flags=re.M):
        assert row in keys, row


def test_the_table_gives_the_median_and_range_of_the_pairs(readme_bench) -> None:  # type: ignore[no-untyped-def]
    figure = readme_bench.Figure("demo", "A against B", ["a"], ["b"], memory=True)
    figure.samples = [({"wall": a, "peak_mib": ma}, {"wall": b, "peak_mib": mb})
                      for a, b, ma, mb in ((2.0, 1.0, 300.0, 200.0), (3.0, 1.0, 200.0, 200.0), (1.0, 1.0, 100.0, 200.0))]
    rows = readme_bench.rows(figure)
    assert rows == ["| `demo` | A against B | 2.00 (1.00-3.00) | 2.00x (1.00-3.00) | 1.00x (0.50-1.50); A 200 MiB |  |"]


def test_each_target_is_judged_on_the_median_of_the_pairs(readme_bench) -> None:  # type: ignore[no-untyped-def]
    # time ratios 2, 3, 1 (median 2); memory ratios 1.5, 1.0, 0.5 (median 1.0)
    samples = [({"wall": a, "peak_mib": ma}, {"wall": 1.0, "peak_mib": 200.0})
               for a, ma in ((2.0, 300.0), (3.0, 200.0), (1.0, 100.0))]
    cases = [
        ({"time": 2.0, "memory": 1.0}, "time at most 2x: met (not in every pair); memory at most 1x: met (not in every pair)"),
        ({"time": 1.99}, "time at most 1.99x: **not met**"),
        ({"time": 3.0, "memory": 0.99}, "time at most 3x: met; memory at most 0.99x: **not met**"),
    ]
    for targets, said in cases:
        figure = readme_bench.Figure("demo", "A against B", ["a"], ["b"], memory=True, targets=targets)
        figure.samples = samples
        assert readme_bench.rows(figure)[0].endswith(f"A 200 MiB | {said} |"), targets
    # a metric the child reports is judged by its own bound, the other metric by none
    figure = readme_bench.Figure("d", "dicts", ["a"], ["b"], metrics=("inner", "first"), targets={"first": 2.0})
    figure.samples = [({"inner": 1.0, "first": 3.0}, {"inner": 1.0, "first": 1.0})] * 3
    inner, first = readme_bench.rows(figure)
    assert inner.endswith("|  |  |") and first.endswith("|  | time at most 2x: **not met** |")
    # every target of issue 33 is on a figure of the table
    bound = {f.key: f.targets for f in readme_bench.figures() if f.targets}
    assert bound["eval-text"] == {"time": 1.5, "memory": 1.3} and bound["parquet-int"]["time"] == 0.5
    assert bound["cli-small"] == {"time": 1.0} and bound["dicts"] == {"first_call_seconds": 2.0}
    assert bound["parquet-text"]["time"] == 0.5 and bound["eval-20m"] == {"memory": 1.3}


def test_the_block_is_replaced_whole(readme_bench, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "page.md"
    page.write_text(f"before\n{readme_bench.BEGIN}\nold\n{readme_bench.END}\nafter\n")
    readme_bench.replace_block(page, "new table\n")
    assert page.read_text() == f"before\n{readme_bench.BEGIN}\nnew table\n{readme_bench.END}\nafter\n"
    other = tmp_path / "results.md"
    other.write_text("# results\n")
    readme_bench.replace_block(other, "t\n", "## figures")
    assert other.read_text() == f"# results\n\n## figures\n\n{readme_bench.BEGIN}\nt\n{readme_bench.END}\n"
    bare = tmp_path / "bare.md"
    bare.write_text("nothing\n")
    with pytest.raises(SystemExit, match=r"no .* block"):
        readme_bench.replace_block(bare, "t\n")
