"""The history file: one SQLite database (stdlib :mod:`sqlite3`), its schema and its connection rules.

Why these settings:

* **WAL journal** (``PRAGMA journal_mode=WAL``): readers never block the writer and the writer
  never blocks readers; a crash leaves the last committed state readable (the log is replayed or
  ignored on the next open). See https://sqlite.org/wal.html.
* **One transaction per record, opened with** ``BEGIN IMMEDIATE``: the write lock is taken
  before anything is read, so two writers queue instead of one failing half-way with
  ``SQLITE_BUSY`` on lock upgrade (https://sqlite.org/lang_transaction.html). A record is
  either all there or not there at all.
* **busy_timeout**: a writer waits for the other one's transaction to end instead of failing
  at once (https://sqlite.org/c3ref/busy_timeout.html).
* **Parameterized SQL only**: ids, run names and flavor strings are untrusted text.

The schema carries a version (table ``schema_version``); a file written by a newer schema is
refused, never silently misread.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import InputError

#: The schema this module writes and reads.
SCHEMA_VERSION = 1
#: How long a writer waits for another writer's transaction, in milliseconds.
BUSY_TIMEOUT_MS = 60_000
#: The default history file of the command line (in the working directory).
DEFAULT_PATH = "rankflavor-history.sqlite"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS records (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        recorded_at TEXT NOT NULL,          -- ISO 8601, UTC
        dataset TEXT,
        run TEXT,
        command TEXT,
        rankflavor_version TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS inputs (
        record_id INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
        role TEXT NOT NULL,                 -- qrels, run, ...
        source TEXT,
        sha256 TEXT,                        -- NULL when it could not be known
        how TEXT NOT NULL,                  -- where the hash came from (or why there is none)
        PRIMARY KEY (record_id, role)
    )""",
    """CREATE TABLE IF NOT EXISTS measures (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        record_id INTEGER NOT NULL REFERENCES records(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        flavor TEXT NOT NULL,               -- the canonical flavor string
        name TEXT NOT NULL,                 -- metric@k
        display TEXT NOT NULL,              -- the name the measure was asked for
        summary_rule TEXT,
        value REAL,                         -- the summary; NULL for NaN
        n_queries INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS per_query (
        measure_id INTEGER NOT NULL REFERENCES measures(id) ON DELETE CASCADE,
        query TEXT NOT NULL,
        value REAL,                         -- NULL for NaN or a text value
        text_value TEXT,                    -- text-valued metrics (relstring)
        status TEXT NOT NULL,
        PRIMARY KEY (measure_id, query)
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS measures_by_name ON measures (name, record_id)",
    "CREATE INDEX IF NOT EXISTS measures_by_record ON measures (record_id)",
)


class HistoryError(InputError):
    """The history file cannot be used: not a SQLite database, not a rankflavor history, or
    written by a newer schema (exit status 3, naming the file)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(path, None, message)


def connect(path: str | os.PathLike[str], *, create: bool) -> sqlite3.Connection:
    """An open connection to the history at ``path`` in autocommit mode (transactions are
    explicit), WAL, foreign keys on; the schema created (``create``) or checked.

    Raises
    ------
    HistoryError
        The file is missing (and not ``create``), not SQLite, not a history, or newer.
    """
    name = os.fspath(path)
    if not create and not os.path.isfile(name):
        raise HistoryError(name, f"no history file here; record one with `rankflavor eval ... --record --history-db {name}`")
    if create and os.path.dirname(name):  # a config's [history] path may name a folder not made yet
        os.makedirs(os.path.dirname(name), exist_ok=True)
    try:
        conn = sqlite3.connect(name, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    except sqlite3.Error as exc:
        raise HistoryError(name, f"cannot open the history database: {exc}") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")  # an int constant, not user text
        conn.execute("PRAGMA foreign_keys = ON")
        if create:
            _wal(conn)
            with transaction(conn):
                for stmt in _SCHEMA:
                    conn.execute(stmt)
                if conn.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 0:
                    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        _check_version(conn, name)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise HistoryError(name, f"not a usable history database ({exc}); expected a SQLite file written by "
                           "rankflavor") from None
    except HistoryError:
        conn.close()
        raise
    return conn


def _wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL. The switch needs a moment with no other connection mid-write; a fresh file
    that several writers open at once can see "database is locked" here, so retry briefly."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    if str(mode).lower() != "wal":  # e.g. a filesystem without shared memory
        raise sqlite3.DatabaseError(f"cannot switch the journal to WAL (it stays {mode})")


def _check_version(conn: sqlite3.Connection, name: str) -> None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "schema_version" not in tables or "records" not in tables:
        raise HistoryError(name, "a SQLite file, but not a rankflavor history (no schema_version/records table)")
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    version = row[0] if row else None
    if version is None:
        raise HistoryError(name, "the history has an empty schema_version table")
    if version > SCHEMA_VERSION:
        raise HistoryError(name, f"written with history schema {version}; this rankflavor reads schema "
                           f"{SCHEMA_VERSION} and older (upgrade rankflavor)")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; ``ROLLBACK`` on any error, which is re-raised."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


__all__ = ["BUSY_TIMEOUT_MS", "DEFAULT_PATH", "SCHEMA_VERSION", "HistoryError", "connect", "transaction"]
