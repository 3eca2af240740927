"""Shared fixtures. Real data lives in ../shared/data (read in place, never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest

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
