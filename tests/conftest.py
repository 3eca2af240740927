"""Shared fixtures. Real data lives in ../shared/data (read in place, never copied)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import Phase, settings

# Mutation runs (bench/mutation.py passes --hypothesis-profile=mutation) need to know only whether a
# test fails: shrinking the failing example only costs time there, and a test that scales its examples
# by the profile (tests/support/order_cases.py: examples) runs a fifth of them; a surviving mutant runs every
# mapped test, so this is most of a run's time. The suite's own runs never load it.
settings.register_profile("mutation", max_examples=20, phases=(Phase.explicit, Phase.reuse, Phase.generate))

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def shared_path(*parts: str) -> Path:
    """Path under ../shared/data, or skip the test with a message when the data is absent."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared test data not found at {p} (present in CI; absent in a plain clone)")
    return p


@pytest.fixture
def write(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write text to a file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p

    return _write


# A local Spark session per test module (tests/spark/test_spark.py keeps its own, which needs no Java check:
# it imports pyspark at module level).
@pytest.fixture(scope="module")
def spark():  # type: ignore[no-untyped-def]
    pytest.importorskip("pyspark")
    if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        pytest.skip("PySpark needs Java 17+ on PATH or JAVA_HOME")
    from rankflavor.spark import local_session

    try:
        return local_session("local[2]", shuffle_partitions=2, driver_memory="1g")
    except Exception as exc:  # pragma: no cover - depends on the machine's Java
        pytest.skip(f"cannot start a local Spark session: {exc}")
