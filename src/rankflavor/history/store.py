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
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager

from rankflavor.errors import InputError

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


#: The columns of each table, as the schema above writes them (an older or foreign table with
#: the same name but other columns is refused, not written into).
_COLUMNS = {
    "schema_version": {"version"},
    "records": {"id", "recorded_at", "dataset", "run", "command", "rankflavor_version"},
    "inputs": {"record_id", "role", "source", "sha256", "how"},
    "measures": {"id", "record_id", "position", "flavor", "name", "display", "summary_rule", "value", "n_queries"},
    "per_query": {"measure_id", "query", "value", "text_value", "status"},
}


class HistoryError(InputError):
    """The history file cannot be used: not a SQLite database, not a rankflavor history, written
    by a newer schema, read-only, locked, or in a folder that does not exist (exit status 3,
    naming the file and what to do)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(path, None, message)


def connect(path: str | os.PathLike[str], *, create: bool) -> sqlite3.Connection:
    """An open connection to the history at ``path`` in autocommit mode (transactions are
    explicit), WAL, foreign keys on; the schema created (``create``) or checked.

    Nothing is written to a file that is not a history: an existing SQLite file with tables of
    its own is refused before the schema is created. No folder is created (a missing one is an
    error); a read-only history is read (``create=False``) without writing anything to it.

    Raises
    ------
    HistoryError
        The file is missing (and not ``create``), not SQLite, not a history, newer, read-only
        (and ``create``), locked by another writer past :data:`BUSY_TIMEOUT_MS`, or its folder
        does not exist.
    """
    name = os.fspath(path)
    if os.path.isdir(name):
        raise HistoryError(name, "is a folder; expected the history file (SQLite) itself")
    if not create and not os.path.isfile(name):
        raise HistoryError(name, f"no history file here; record one with `rankflavor eval ... --record --history-db {name}`")
    folder = os.path.dirname(os.path.abspath(name))
    if create and not os.path.isdir(folder):
        raise HistoryError(name, f"its folder {folder} does not exist: create it, or record to another file "
                           "(--history-db PATH); rankflavor creates a folder only for a config's [history] path "
                           "inside the project")
    fresh = not os.path.isfile(name) or os.path.getsize(name) == 0
    with sqlite_errors(name, create):
        conn = _open(name, create)
    try:
        with sqlite_errors(name, create):
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")  # an int constant, not user text
            conn.execute("PRAGMA foreign_keys = ON")
            if create:
                if not fresh and _tables(conn):
                    # before anything is written to it; a database with no table holds nothing to
                    # protect: it is what another writer's first moments leave (WAL set, schema not
                    # yet committed), so it is created here as a fresh file is
                    _check_version(conn, name)
                _wal(conn)
                with transaction(conn):
                    for stmt in _SCHEMA:
                        conn.execute(stmt)
                    if conn.execute("SELECT COUNT(*) FROM schema_version").fetchone()[0] == 0:
                        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
            _check_version(conn, name)
    except BaseException:
        conn.close()
        raise
    return conn


def _open(name: str, create: bool) -> sqlite3.Connection:
    """The connection. A history that this process may not write (its file, its folder or the
    filesystem read-only) is opened read-only when only reading is asked, and read as an
    immutable file when SQLite cannot open it so (a WAL database needs its index file, which
    cannot be made in such a folder; with no index file no writer has it open)."""
    if create or _writable(name):
        return sqlite3.connect(name, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    uri = "file:" + urllib.parse.quote(os.path.abspath(name)) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    return sqlite3.connect(uri + "&immutable=1", uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)


def _writable(name: str) -> bool:
    folder = os.path.dirname(os.path.abspath(name))
    return os.access(name, os.W_OK) and os.access(folder, os.W_OK) and not _read_only_mount(folder)


def _read_only_mount(folder: str) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


@contextmanager
def sqlite_errors(name: str, create: bool) -> Iterator[None]:
    """SQLite's errors inside the block as a :class:`HistoryError` naming the file, what is wrong
    and what to do (``create``: the history is being written)."""
    try:
        yield
    except sqlite3.Error as exc:
        raise HistoryError(name, _advice(name, exc, create)) from None


def _advice(name: str, exc: sqlite3.Error, create: bool) -> str:
    text = str(exc)
    low = text.lower()
    elsewhere = "or record to another file (--history-db PATH)"
    if "locked" in low or "busy" in low:
        return (f"the history database is locked by another program (waited {BUSY_TIMEOUT_MS / 1000:g} s; "
                f"SQLite: {text}): try again once it is done, {elsewhere}")
    if "readonly" in low or "read-only" in low or (create and "unable to open" in low and not _writable(name)):
        return (f"cannot write the history database: it is read-only (the file, its folder or the filesystem; "
                f"SQLite: {text}); make it writable, {elsewhere}")
    if "not a database" in low or "malformed" in low:
        return f"not a usable history database ({text}); expected a SQLite file written by rankflavor"
    if "full" in low:
        return f"cannot write the history database: {text}; free some space, {elsewhere}"
    return f"cannot use the history database: {text}"


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


def _tables(conn: sqlite3.Connection) -> set[str]:
    """The database's tables (SQLite's own ``sqlite_sequence`` left out)."""
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} - {"sqlite_sequence"}


def _check_version(conn: sqlite3.Connection, name: str) -> None:
    tables = _tables(conn)
    if "schema_version" not in tables or "records" not in tables:
        shown = ", ".join(sorted(tables)[:8]) or "none"
        raise HistoryError(name, f"a SQLite file, but not a rankflavor history (no schema_version/records table; its "
                           f"tables: {shown}); nothing was written to it: give rankflavor a file of its own "
                           "(--history-db PATH)")
    for table, wanted in _COLUMNS.items():
        if table in tables:
            have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}  # (names from _COLUMNS, not user text)
            if not wanted <= have:
                raise HistoryError(name, f"a SQLite file whose table {table!r} is not rankflavor's (it lacks "
                                   f"{', '.join(sorted(wanted - have))}): not a rankflavor history; nothing was "
                                   "written to it: give rankflavor a file of its own (--history-db PATH)")
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


__all__ = ["BUSY_TIMEOUT_MS", "DEFAULT_PATH", "SCHEMA_VERSION", "HistoryError", "connect", "sqlite_errors",
           "transaction"]
