"""The judge's answers in SQLite: one row per (model, prompt hash, query id, doc id).

Every answer is committed as it arrives, so a run that is killed (``kill -9`` included) loses at
most the requests in flight, and the next run asks only what has no row. A row keeps the SHA-256
of the query text and of the passage text it was asked with: when a text has changed since, the
row is *stale* and the pair is asked again (the new answer replaces it). The row holds the
model's answer as it came (``raw``), what was read from it (``grade``, or ``NULL`` and
``reason`` for a malformed answer) and the tokens the request used. Failed requests (no answer
after the retries) get no row: the next run asks them again.

Nothing else is stored: not the API key, not the base URL, not a request's headers.
SQLite's WAL journal lets a reader look while a run writes; with ``synchronous=NORMAL`` a
committed answer survives the process being killed (what resuming needs), and a power cut can
lose the last few, which the next run then asks again.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from rankflavor.errors import InputError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    model TEXT NOT NULL,
    prompt_sha TEXT NOT NULL,
    query TEXT NOT NULL,
    doc TEXT NOT NULL,
    query_sha TEXT NOT NULL,
    passage_sha TEXT NOT NULL,
    grade INTEGER,
    reason TEXT NOT NULL,
    raw TEXT NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    PRIMARY KEY (model, prompt_sha, query, doc)
)
"""
_COLUMNS = ("grade", "reason", "raw", "tokens_in", "tokens_out", "query_sha", "passage_sha")


def text_sha(text: str) -> str:
    """SHA-256 (hex) of a text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Answer:
    """One cached answer. ``grade`` is None for a malformed one (``reason`` says why)."""

    grade: int | None
    reason: str
    raw: str
    tokens_in: int = 0
    tokens_out: int = 0
    query_sha: str = ""
    passage_sha: str = ""


class Cache:
    """The answers of one model and prompt hash in a SQLite file (created when missing).

    ``readonly`` opens an existing file without writing (a missing file reads as empty): what a
    dry run uses.
    """

    def __init__(self, path: str | os.PathLike[str], model: str, prompt_sha: str, readonly: bool = False) -> None:
        self.path = os.fspath(path)
        self.model, self.prompt_sha = model, prompt_sha
        self._db: sqlite3.Connection | None = None
        try:
            if readonly:
                if os.path.exists(self.path):
                    self._db = sqlite3.connect(Path(self.path).absolute().as_uri() + "?mode=ro", uri=True)
                    self._db.execute("SELECT 1 FROM answers LIMIT 1")
                return
            self._db = sqlite3.connect(self.path, isolation_level=None)  # autocommit: each write commits
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # a commit survives a killed process; see above
            self._db.execute(_SCHEMA)
        except sqlite3.Error as exc:
            self.close()
            raise InputError(self.path, None, f"is not a judge cache (SQLite said: {exc})") from None

    def get_all(self) -> dict[tuple[str, str], Answer]:
        """Every answer of this model and prompt hash, by (query, doc)."""
        if self._db is None:
            return {}
        rows = self._db.execute(
            "SELECT query, doc, " + ", ".join(_COLUMNS) + " FROM answers WHERE model = ? AND prompt_sha = ?",
            (self.model, self.prompt_sha))
        return {(q, d): Answer(*rest) for q, d, *rest in rows}

    def put(self, query: str, doc: str, answer: Answer) -> None:
        """Store (or replace) one answer; committed when this returns."""
        assert self._db is not None, "a read-only cache takes no answers"
        self._db.execute(
            "INSERT OR REPLACE INTO answers (model, prompt_sha, query, doc, " + ", ".join(_COLUMNS) + ") "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.model, self.prompt_sha, query, doc, answer.grade, answer.reason, answer.raw, answer.tokens_in,
             answer.tokens_out, answer.query_sha, answer.passage_sha))

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Answer", "Cache", "text_sha"]
