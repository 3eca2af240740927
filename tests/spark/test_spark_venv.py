"""``--engine spark`` from a virtual environment whose ``python3`` on PATH is another interpreter
(issue #32).

PySpark starts its Python workers with ``PYSPARK_PYTHON``, else the first ``python3`` on PATH;
from a venv that one need not import rankflavor, and every task died with
``ModuleNotFoundError: No module named 'rankflavor'``. rankflavor's own local session now runs
its workers on the driver's interpreter (:func:`rankflavor.spark.local_session`). Here a fresh
venv gets rankflavor (the tree under test, by a ``.pth``) and the packages of this interpreter,
and PATH starts with a ``python3`` that imports PySpark but not rankflavor; the venv's
``rankflavor eval --engine spark`` must print what the local engine prints.

Skipped, saying why, without PySpark or Java. One small Spark run (its start-up is most of it).
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="the Spark engine tests need PySpark (python3 -m pip install pyspark)")
if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    pytest.skip("the Spark engine tests need Java 17+ on PATH or JAVA_HOME", allow_module_level=True)

import rankflavor

#: The tree whose rankflavor is under test (the folder holding the package).
SOURCE = Path(rankflavor.__file__).resolve().parents[1]


def _venv(root: Path) -> Path:
    """A fresh venv (no pip) whose site-packages hold a .pth naming the tree under test first,
    then this interpreter's site-packages (NumPy, pyarrow, PySpark: nothing is downloaded)."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    dirs = [str(SOURCE), *site.getsitepackages()]
    Path(purelib, "rankflavor-under-test.pth").write_text("\n".join(dirs) + "\n")
    # The console script pip would write.
    script = venv / "bin" / "rankflavor"
    script.write_text(f"#!{python}\nimport sys\nfrom rankflavor.cli.main import main\nsys.exit(main())\n")
    script.chmod(0o755)
    return venv


def _other_python3(root: Path) -> Path:
    """A folder holding a ``python3`` that is this interpreter without its site (``-S``): it
    imports PySpark, NumPy and pyarrow from the site-packages named on PYTHONPATH, but not an
    editable rankflavor (whose .pth it never reads), as the issue's CI interpreter did."""
    folder = root / "other-bin"
    folder.mkdir()
    packages = os.pathsep.join(site.getsitepackages())
    wrapper = folder / "python3"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{packages}${{PYTHONPATH:+:$PYTHONPATH}}" '
                       f'exec "{os.path.realpath(sys.executable)}" -S "$@"\n')
    wrapper.chmod(0o755)
    return folder


def _rows(stdout: str) -> dict[tuple[str, str], tuple[float, str]]:
    return {(r["metric"], r["query"]): (float(r["value"]), r["flavor"]) for r in csv.DictReader(io.StringIO(stdout))}


def test_engine_spark_runs_from_a_venv_with_another_python3_on_path(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"q{q} 0 d{d} {(q * d) % 4}\n" for q in range(1, 6) for d in range(1, 15, 2)))
    run.write_text("".join(f"q{q} Q0 d{d} {d} {20 - d + (q % 3) * 0.5} tag\n" for q in range(1, 7) for d in range(1, 13)))
    venv = _venv(tmp_path)
    other = _other_python3(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"{other}{os.pathsep}{env.get('PATH', '')}"
    # The setup reproduces the issue's: python3 on PATH is another interpreter, which has PySpark
    # and not rankflavor (PySpark's default worker would fail), while the venv's has both.
    probe = "import pyspark, numpy, pyarrow\ntry:\n    import rankflavor\nexcept ModuleNotFoundError:\n    print('no rankflavor')"
    assert shutil.which("python3", path=env["PATH"]) == str(other / "python3")
    seen = subprocess.run(["python3", "-c", probe], env=env, capture_output=True, text=True)
    assert seen.returncode == 0 and seen.stdout.strip() == "no rankflavor", seen.stderr
    seen = subprocess.run([str(venv / "bin" / "python"), "-c", "import rankflavor, pyspark; print(rankflavor.__file__)"],
                          env=env, capture_output=True, text=True, check=True)
    assert Path(seen.stdout.strip()).resolve() == Path(rankflavor.__file__).resolve()

    args = [str(venv / "bin" / "rankflavor"), "eval", str(qrels), str(run), "-m", "ndcg@10", "-m", "AP", "-m", "P@5",
            "-q", "--format", "csv"]
    local = subprocess.run(args, env=env, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert local.returncode == 0, local.stderr
    spark = subprocess.run([*args, "--engine", "spark"], env=env, capture_output=True, text=True, cwd=tmp_path,
                           timeout=600)
    assert spark.returncode == 0, spark.stderr[-3000:]
    assert "ModuleNotFoundError" not in spark.stderr
    want, got = _rows(local.stdout), _rows(spark.stdout)
    assert len(want) == 3 * 6 and set(got) == set(want)  # the 5 judged queries and the mean, of each measure
    for key, (value, flavor) in want.items():
        assert got[key][1] == flavor
        assert abs(got[key][0] - value) <= 1e-12, key


def test_workers_that_cannot_import_rankflavor_are_a_clear_error() -> None:
    """A session of the caller's whose workers run an interpreter without rankflavor (PySpark's
    error for it, as a task raises it): a UsageError naming that interpreter and the remedy,
    not PySpark's worker traceback. Other errors pass through unchanged."""
    from pyspark.errors import PySparkException

    from rankflavor.errors import UsageError
    from rankflavor.spark import workers_import_rankflavor

    class WorkerFailed(PySparkException):  # PySpark's PythonException needs a JVM to be made
        pass

    class Context:
        pythonExec = "/opt/other/python3"

    class Session:
        sparkContext = Context()

    worker = "An exception was thrown from the Python worker:\n...\nModuleNotFoundError: No module named 'rankflavor'"
    with pytest.raises(UsageError) as info, workers_import_rankflavor(Session()):
        raise WorkerFailed(message=worker)
    assert "'/opt/other/python3', which cannot import rankflavor" in str(info.value)
    assert "PYSPARK_PYTHON" in str(info.value) and sys.executable in str(info.value)
    with pytest.raises(WorkerFailed), workers_import_rankflavor(Session()):
        raise WorkerFailed(message="No module named 'numpy'")


def _parquet_inputs(root: Path) -> dict[str, list[str]]:
    """Judgments and two runs (tied scores, unjudged documents) as single Parquet files under
    ``local/`` and as directories of two parts each under ``spark/``, of the same names."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(35)
    judged: dict[str, list] = {"query_id": [], "doc_id": [], "relevance": []}
    runs: list[dict[str, list]] = [{"query_id": [], "doc_id": [], "score": []} for _ in range(2)]
    for q in range(16):
        for i in rng.choice(20, size=8, replace=False):
            judged["query_id"].append(f"q{q}")
            judged["doc_id"].append(f"d{i}")
            judged["relevance"].append(int(rng.integers(0, 4)))
        for run in runs:
            for i in rng.choice(20, size=12, replace=False):
                run["query_id"].append(f"q{q}")
                run["doc_id"].append(f"d{i}")
                run["score"].append(float(rng.integers(0, 6)) / 5)
    out: dict[str, list[str]] = {"local": [], "spark": []}
    for name, data in [("qrels.parquet", judged), ("a.parquet", runs[0]), ("b.parquet", runs[1])]:
        table = pa.table(data)
        for side in out:
            (root / side).mkdir(exist_ok=True)
        pq.write_table(table, root / "local" / name)
        (root / "spark" / name).mkdir()
        pq.write_table(table.slice(0, 9), root / "spark" / name / "part-00000.parquet")
        pq.write_table(table.slice(9), root / "spark" / name / "part-00001.parquet")
        for side in out:
            out[side].append(str(root / side / name))
    return out


def test_every_command_on_spark_from_a_venv_prints_the_local_output(tmp_path: Path) -> None:
    """Issue 35: ``spread``, ``compare``, ``judgments``, ``pool`` and ``check`` with
    ``--engine spark`` from a fresh venv (another ``python3`` first on PATH), the inputs given as
    directories of Parquet parts, print what the local engine prints from single files (paths
    aside: the Spark side's folder is renamed to the local one before comparing)."""
    import json

    paths = _parquet_inputs(tmp_path)
    venv = _venv(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"{_other_python3(tmp_path)}{os.pathsep}{env.get('PATH', '')}"
    commands = {
        "spread": lambda p: ["spread", *p, "--format", "json"],
        "compare": lambda p: ["compare", *p, "-m", "ndcg@10", "-m", "P@5", "--resamples", "200", "--format", "json"],
        "judgments": lambda p: ["judgments", *p, "--scale", "trec_dl", "--format", "json"],
        "pool": lambda p: ["pool", *p[1:], "--qrels", p[0], "--scale", "trec_dl", "-k", "5", "--budget", "20",
                           "--format", "csv"],
        "check": lambda p: ["check", *p, "--scale", "trec_dl", "--format", "json"],
    }
    for name, args in commands.items():
        printed = {}
        for side, extra in (("local", []), ("spark", ["--engine", "spark"])):
            done = subprocess.run([str(venv / "bin" / "rankflavor"), *args(paths[side]), *extra], env=env,
                                  capture_output=True, text=True, cwd=tmp_path, timeout=600)
            assert done.returncode in (0, 1), (name, side, done.stderr[-3000:])  # (check: 1 is warnings)
            printed[side] = (done.returncode, done.stdout.replace(str(tmp_path / "spark"), str(tmp_path / "local")))
        assert printed["local"][0] == printed["spark"][0], name
        if name == "pool":
            assert printed["local"][1] == printed["spark"][1] and printed["local"][1].count("\n") == 21
            continue
        local, spark = (json.loads(printed[side][1]) for side in ("local", "spark"))
        for data in (local, spark):
            data.pop("provenance", None)  # (the command lines differ by --engine spark)
        assert local == spark, name
