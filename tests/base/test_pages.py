"""NumPy's huge-page advice is a setting of the ``rankflavor`` command's process, made through
NumPy's public environment variable before NumPy is imported; the library never changes it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import rankflavor
from rankflavor.base.pages import ARROW_VARIABLE, VARIABLE, prefer_small_pages, prefer_system_allocator

SRC = Path(rankflavor.__file__).resolve().parents[1]

#: Runs argv[2:] as the ``rankflavor`` command (as its console script or ``python -m``) and prints
#: the variable as it was when NumPy was imported, and at exit. The audit hook sees the import.
_COMMAND = r"""
import json, os, runpy, sys
seen = {}
def hook(event, args):
    if event == "import" and args[0] == "numpy" and "numpy" not in seen:
        seen["numpy"] = os.environ.get("NUMPY_MADVISE_HUGEPAGE", "unset")
sys.addaudithook(hook)
how, sys.argv = sys.argv[1], ["rankflavor", *sys.argv[2:]]
try:
    if how == "script":  # what the console script's wrapper does
        from rankflavor.cli.main import main
        main()
    else:
        runpy.run_module("rankflavor", run_name="__main__", alter_sys=True)
except SystemExit as done:
    assert not done.code, done.code
print("\n@@" + json.dumps({"at_numpy_import": seen.get("numpy", "numpy not imported"),
                           "at_exit": os.environ.get("NUMPY_MADVISE_HUGEPAGE", "unset")}))
"""

#: The library in a program of its own: evaluate (and chunked evaluation), then the variable.
_LIBRARY = r"""
import json, os, sys
import rankflavor
before = dict(os.environ)
rankflavor.evaluate(sys.argv[1], sys.argv[2], ["ndcg@10", "AP"])
rankflavor.evaluate(sys.argv[1], sys.argv[2], "ndcg@10", chunk_rows=2)
print("\n@@" + json.dumps({"numpy": "numpy" in sys.modules, "same": dict(os.environ) == before,
                           "variable": os.environ.get("NUMPY_MADVISE_HUGEPAGE", "unset")}))
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 2\nq1 0 b 0\nq2 0 c 1\n")
    run.write_text("q1 Q0 a 1 2.5 t\nq1 Q0 b 2 1.5 t\nq2 Q0 d 1 1.0 t\nq2 Q0 c 2 0.5 t\n")
    return str(qrels), str(run)


def _python(code: str, *args: str, variable: str | None = None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    env["PYTHONPATH"] = str(SRC)  # the rankflavor under test, whatever the working directory
    if variable is not None:
        env[VARIABLE] = variable
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=SRC.parent)
    assert proc.returncode == 0, proc.stderr
    report: dict[str, object] = json.loads(proc.stdout.rsplit("\n@@", 1)[1])
    return report


@pytest.mark.parametrize("how", ["script", "python -m"])
def test_the_command_turns_the_advice_off_before_numpy_is_imported(files: tuple[str, str], how: str) -> None:
    report = _python(_COMMAND, how, "eval", *files, "-m", "ndcg@10")
    assert report == {"at_numpy_import": "0", "at_exit": "0"}


@pytest.mark.parametrize("theirs", ["1", "0"])
def test_a_value_the_user_set_is_kept(files: tuple[str, str], theirs: str) -> None:
    report = _python(_COMMAND, "script", "eval", *files, "-m", "ndcg@10", variable=theirs)
    assert report == {"at_numpy_import": theirs, "at_exit": theirs}


def test_the_library_leaves_the_process_as_it_found_it(files: tuple[str, str]) -> None:
    assert _python(_LIBRARY, *files) == {"numpy": True, "same": True, "variable": "unset"}


def test_the_library_changes_no_environment_in_process(files: tuple[str, str]) -> None:
    before = dict(os.environ)
    rankflavor.evaluate(*files, ["ndcg@10", "P@5"], preset="trec_eval")
    rankflavor.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, "ndcg@10")
    rankflavor.spread(files[0], [files[1]], "ndcg@10", presets=False, grid={"gain": ["linear", "exp2"]})
    assert dict(os.environ) == before


@pytest.mark.parametrize(("prefer", "variable", "value", "library", "users"), [
    (prefer_small_pages, VARIABLE, "0", "numpy", "1"),
    (prefer_system_allocator, ARROW_VARIABLE, "system", "pyarrow", "mimalloc"),
])  # fmt: skip
def test_each_process_setting_is_made_once_unless_the_user_or_the_library_was_first(
        monkeypatch: pytest.MonkeyPatch, prefer: Callable[[dict[str, str]], bool], variable: str, value: str,
        library: str, users: str) -> None:
    env: dict[str, str] = {}
    monkeypatch.delitem(sys.modules, library)  # as in the command's process before its imports
    assert prefer(env) is True and env == {variable: value}
    assert prefer(env) is False and env == {variable: value}
    theirs = {variable: users}
    assert prefer(theirs) is False and theirs == {variable: users}
    monkeypatch.undo()
    # the library already imported: it read the variable then (NumPy's advice, pyarrow's pool may
    # be made), so setting it now would only mislead
    late: dict[str, str] = {}
    assert library in sys.modules and prefer(late) is False and late == {}


def test_no_module_of_the_library_sets_process_wide_state() -> None:
    """No private NumPy switch, and the environment is written only by pages.prefer_small_pages
    and pages.prefer_system_allocator (which the command calls); no pyarrow thread-pool or NumPy error-state setters."""
    forbidden = re.compile(
        r"_set_madvise_hugepage|numpy\._core|np\._core|core\.multiarray|os\.environ\[|os\.putenv|environ\.setdefault"
        r"|set_cpu_count|set_io_thread_count|np\.seterr|numpy\.seterr|setrecursionlimit|sys\.setswitchinterval"
    )
    found = [
        f"{path.relative_to(SRC)}:{n}"
        for path in sorted((SRC / "rankflavor").rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if forbidden.search(line)
    ]
    assert found == []


#: Runs argv[2:] as the command and prints the backend of pyarrow's default pool at exit.
_POOL = r"""
import json, runpy, sys
how, sys.argv = sys.argv[1], ["rankflavor", *sys.argv[2:]]
try:
    if how == "script":
        from rankflavor.cli.main import main
        main()
    else:
        runpy.run_module("rankflavor", run_name="__main__", alter_sys=True)
except SystemExit as done:
    assert not done.code, done.code
import pyarrow
print("\n@@" + json.dumps({"pool": pyarrow.default_memory_pool().backend_name}))
"""


def _pool(how: str, files: tuple[str, str], theirs: str | None = None) -> object:
    env = {k: v for k, v in os.environ.items() if k != ARROW_VARIABLE}
    env["PYTHONPATH"] = str(SRC)
    if theirs is not None:
        env[ARROW_VARIABLE] = theirs
    proc = subprocess.run([sys.executable, "-c", _POOL, how, "eval", *files, "-m", "ndcg@10"], capture_output=True,
                          text=True, env=env, timeout=120, cwd=SRC.parent)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.rsplit("\n@@", 1)[1])["pool"]


@pytest.mark.parametrize("how", ["script", "python -m"])
def test_the_command_reads_with_the_system_allocator_unless_told_otherwise(files: tuple[str, str], how: str) -> None:
    assert _pool(how, files) == "system"
    assert _pool(how, files, theirs="jemalloc") == "jemalloc"  # the user's choice is kept
