"""Hostile project settings (issue #32): numbers in rankflavor.toml, ``[history] path`` outside
the project, and history databases that cannot be used. Each is a typed error naming the key or
the file and what to do, never a traceback.

* ``[flavor] depth = 99999999999999999999`` overflowed the engine (OverflowError, exit 1): every
  number in the file now meets one rule (finite; a whole number at most 2**53), then its key's
  range (the schema's readers, and each knob's own).
* ``[history] path = "../../x/h.sqlite"`` created folders wherever it led, up to the root.
* A read-only history, a SQLite file of another program's, a locked one: ``sqlite3`` tracebacks.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import rankflavor
from rankflavor import evaluate
from rankflavor.cli.main import cli
from rankflavor.flavor.flavor import KNOBS
from rankflavor.history import HistoryError, load_series, record_results
from rankflavor.project import ConfigError, load_config
from rankflavor.project.schema import SECTIONS

QRELS = "q1 0 a 3\nq1 0 b 1\nq1 0 c 0\nq2 0 a 2\nq2 0 d 0\n"
RUN = "q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 x 3 1.0 r\nq2 Q0 d 1 2.5 r\nq2 Q0 a 2 1.5 r\n"
HUGE = 99999999999999999999


def _cli(*args: object, cwd: Path | None = None) -> Result:
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        out = CliRunner().invoke(cli, [str(a) for a in args])
    finally:
        os.chdir(old)
    if out.exception is not None and not isinstance(out.exception, SystemExit):
        raise AssertionError("a traceback for the user:\n" + "".join(traceback.format_exception(*out.exc_info)))
    assert "Traceback" not in out.output
    return out


def _project(folder: Path, toml: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "q.txt").write_text(QRELS)
    (folder / "r.txt").write_text(RUN)
    (folder / "rankflavor.toml").write_text(toml)
    return folder / "rankflavor.toml"


# --------------------------------------------------------------------------------------------
# Numbers in rankflavor.toml

#: (TOML text, what the error must say): the issue's value and its kin, for every numeric key.
BAD_NUMBERS = [
    (f"[flavor]\ndepth = {HUGE}\n", "[flavor] depth = 99999999999999999999"),
    (f'[flavor]\ndepth = "{HUGE}"\n', "knob 'depth' must be at most 2**53"),
    (f"[flavor]\ndepth = {2**53 + 1}\n", "a whole one at most 2**53"),
    ("[flavor]\ndepth = 0\n", "knob 'depth' must be >= 1"),
    ("[flavor]\ndepth = 2.5\n", "expects a whole number"),
    ("[flavor]\ndepth = inf\n", "[flavor] depth = inf"),
    ("[flavor]\nrel = nan\n", "[flavor] rel = nan"),
    (f"[flavor]\nrel = {10**400}\n", "[flavor] rel = 1000000000"),
    (f"[flavor]\nmax_grade = -{HUGE}\n", "a whole one at most 2**53"),
    (f'[flavor]\nideal = "recall@{HUGE}"\n', "ideal recall@K needs 1 <= K <= 2**53"),
    ("[flavor]\ndiscount = \"jk(1e400)\"\n", "finite number"),
    (f"[metrics]\nmeasures = [\"ndcg\"]\ncutoffs = [{HUGE}]\n", "whole numbers from 1 to 2**53"),
    (f"[metrics]\nmeasures = [\"ndcg@{HUGE}\"]\n", "must be a whole number from 1 to 2**53"),
    ("[metrics]\nmeasures = [\"ndcg\"]\ncutoffs = [true]\n", "whole numbers from 1 to 2**53"),
    (f"[gate]\nseed = {HUGE}\n", "[gate] seed = 99999999999999999999: expected a whole number from 0 to 2**53"),
    ("[gate]\nseed = -1\n", "whole number from 0 to 2**53"),
    (f"[gate]\nalpha = {10**400}\n", "[gate] alpha"),
    ("[gate]\nalpha = 1.0\n", "a number in (0, 1)"),
    ("[gate]\nmax_drop = 1e400\n", "[gate] max_drop = inf"),
    ("[gate]\nfloor = nan\n", "[gate] floor = nan"),
    (f"[gate]\nfloor = {{\"ndcg@10\" = {HUGE}}}\n", "[gate] floor.ndcg@10"),
]


@pytest.mark.parametrize(("toml", "said"), BAD_NUMBERS, ids=[t.replace("\n", " ")[:50] for t, _ in BAD_NUMBERS])
def test_a_bad_number_is_a_config_error_naming_the_key(tmp_path: Path, toml: str, said: str) -> None:
    path = _project(tmp_path, toml)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(str(path)) and said in str(info.value), str(info.value)
    out = _cli("eval", "q.txt", "r.txt", cwd=tmp_path)
    assert out.exit_code == 2 and said in out.output, out.output


def test_the_largest_whole_numbers_are_taken(tmp_path: Path) -> None:
    """2**53 itself: a depth, a cutoff and a seed that large are taken (and mean: no limit)."""
    path = _project(tmp_path, f"[flavor]\ndepth = {2**53}\n[metrics]\nmeasures = [\"P\"]\ncutoffs = [{2**53}]\n"
                              f"[gate]\nseed = {2**53}\n")
    config = load_config(path)
    assert config.knobs["depth"] == str(2**53) and config.metric_texts == (f"P@{2**53}",)
    out = _cli("eval", "q.txt", "r.txt", "--format", "csv", cwd=tmp_path)
    assert out.exit_code == 0, out.output
    # P@k divides the relevant retrieved (q1: a and b; q2: a) by k.
    mean = next(line for line in out.output.splitlines() if line.startswith(f"P@{2**53},all,")).split(",")[2]
    assert float(mean) == pytest.approx((2 + 1) / 2 / 2**53, rel=1e-12)


#: Values no numeric key takes without a check: each is refused or read, never a traceback.
HOSTILE = [HUGE, -HUGE, 10**400, 2**53 + 1, 2**63, -1, 0, 1.5, "inf", "-inf", "nan", 1e308, -0.0, True, "1e400", '"9e99"',
           '"99999999999999999999"', "[]", "{}", '""']


def _numeric_keys() -> list[tuple[str, str]]:
    keys = [(f"[{s.name}]", k.name) for s in SECTIONS if s.layout == "keys" and s.name not in ("flavor",)
            for k in s.keys if k.name in ("floor", "max_drop", "alpha", "seed")]
    keys += [("[metrics]", "cutoffs")]
    keys += [("[flavor]", name) for name in KNOBS]
    return keys


@pytest.mark.parametrize(("section", "key"), _numeric_keys(), ids=lambda x: str(x))
def test_every_key_takes_hostile_numbers_without_a_traceback(tmp_path: Path, section: str, key: str) -> None:
    """Every numeric key of the schema and every flavor knob, given each hostile value: the file
    is read or refused with a ConfigError; when it is read, eval under it ends with a typed
    error or a result (exit 0, 2, 3 or 4), never a traceback."""
    for i, value in enumerate(HOSTILE):
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if key == "cutoffs":
            text = f"[{text}]"
        body = f"{section}\n{key} = {text}\n"
        if section == "[metrics]":
            body = "[metrics]\nmeasures = [\"ndcg\"]\n" + f"{key} = {text}\n"
        folder = tmp_path / str(i)
        path = _project(folder, body)
        try:
            load_config(path)
        except ConfigError:
            continue
        out = _cli("eval", "q.txt", "r.txt", "-m", "ndcg@3", "-m", "P@2", cwd=folder)
        assert out.exit_code in (0, 2, 3, 4), (body, out.output)


# --------------------------------------------------------------------------------------------
# [history] path


def test_a_history_path_leaving_the_project_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    project = tmp_path / "a" / "b" / "project"
    escape = "../" * 12 + "rankflavor-escape-test/deep/h.sqlite"
    path = _project(project, f'[history]\npath = "{escape}"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    text = str(info.value)
    assert f'[history] path = "{escape}": expected a path inside the project folder {project}' in text
    assert "leads to /rankflavor-escape-test/deep/h.sqlite" in text
    out = _cli("eval", "q.txt", "r.txt", "--record", cwd=project)
    assert out.exit_code == 2 and "[history] path" in out.output
    assert not Path("/rankflavor-escape-test").exists()


def test_a_history_path_inside_the_project_makes_its_folder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _project(project, '[history]\npath = "runs/../hist/deeper/h.sqlite"\n')
    out = _cli("eval", "q.txt", "r.txt", "--record", cwd=project)
    assert out.exit_code == 0, out.output
    assert (project / "hist" / "deeper" / "h.sqlite").is_file() and not (project / "runs").exists()


def test_an_absolute_history_path_needs_its_folder(tmp_path: Path) -> None:
    """An absolute path is the user's explicit choice, but rankflavor makes no folder outside the
    project: a missing one is a HistoryError naming it (exit 3), and nothing is created."""
    project = tmp_path / "project"
    target = tmp_path / "elsewhere" / "deep" / "h.sqlite"
    _project(project, f'[history]\npath = "{target}"\n')
    out = _cli("eval", "q.txt", "r.txt", "--record", cwd=project)
    assert out.exit_code == 3 and f"its folder {target.parent} does not exist" in out.output, out.output
    assert not (tmp_path / "elsewhere").exists()
    target.parent.mkdir(parents=True)
    assert _cli("eval", "q.txt", "r.txt", "--record", cwd=project).exit_code == 0
    assert target.is_file()
    out = _cli("eval", str(project / "q.txt"), str(project / "r.txt"), "--record", "--history-db",
               tmp_path / "nowhere" / "h.sqlite")
    assert out.exit_code == 3 and "nowhere does not exist" in out.output and not (tmp_path / "nowhere").exists()


# --------------------------------------------------------------------------------------------
# History databases that cannot be used


def _results():  # type: ignore[no-untyped-def]
    return evaluate({"q1": {"a": 1, "b": 0}}, {"q1": {"a": 2.0, "b": 1.0}}, ["P@1"])


def _foreign(path: Path, *statements: str) -> bytes:
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize(("statements", "said"), [
    (("CREATE TABLE records (a INTEGER, b TEXT)", "INSERT INTO records VALUES (1, 'x')"),
     "not a rankflavor history (no schema_version/records table; its tables: records)"),
    (("CREATE TABLE schema_version (version INTEGER)", "INSERT INTO schema_version VALUES (1)",
      "CREATE TABLE records (id INTEGER PRIMARY KEY, note TEXT)"),
     "whose table 'records' is not rankflavor's (it lacks command, dataset, rankflavor_version, recorded_at, run)"),
    (("CREATE TABLE invoices (n INTEGER)",), "its tables: invoices"),
])
def test_another_programs_sqlite_file_is_refused_untouched(tmp_path: Path, statements: tuple[str, ...],
                                                           said: str) -> None:
    db = tmp_path / "theirs.sqlite"
    before = _foreign(db, *statements)
    with pytest.raises(HistoryError) as info:
        record_results(db, _results())
    assert str(info.value).startswith(f"{db}: ") and said in str(info.value), str(info.value)
    assert "nothing was written to it" in str(info.value)
    assert db.read_bytes() == before and not Path(f"{db}-wal").exists()
    (tmp_path / "q.txt").write_text(QRELS)
    (tmp_path / "r.txt").write_text(RUN)
    out = _cli("eval", tmp_path / "q.txt", tmp_path / "r.txt", "--record", "--history-db", db)
    assert out.exit_code == 3 and said in out.output
    out = _cli("history", "--history-db", db)
    assert out.exit_code == 3 and said in out.output
    assert db.read_bytes() == before


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "notes.sqlite"
    db.write_text("shopping list\n" * 100)
    with pytest.raises(HistoryError, match=r"not a usable history database \(file is not a database\)"):
        record_results(db, _results())
    assert db.read_text() == "shopping list\n" * 100


def test_a_locked_history_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program holds the write lock past the wait: a HistoryError saying so (the wait is
    shortened here from 60 s); readers still read (WAL); once the lock is gone, records go on."""
    import rankflavor.history.store as store

    db = tmp_path / "h.sqlite"
    assert record_results(db, _results()) == 1
    monkeypatch.setattr(store, "BUSY_TIMEOUT_MS", 200)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(HistoryError, match=r"locked by another program \(waited 0.2 s; SQLite: database is locked\)"):
            record_results(db, _results())
        assert len(load_series(db)) == 1
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert record_results(db, _results()) == 2


#: A child that records to, then reads, a history it may not write (the folder read-only).
_READ_ONLY_CHILD = """
import sys
from rankflavor import evaluate
from rankflavor.errors import RankflavorError
from rankflavor.history import load_series, record_results
r = evaluate({"q1": {"a": 1}}, {"q1": {"a": 2.0}}, ["P@1"])
for db in sys.argv[1:]:
    try:
        record_results(db, r)
        print("recorded", db)
    except RankflavorError as exc:
        print(type(exc).__name__, exc.exit_code, exc)
print("read", len(load_series(sys.argv[1])))
"""


def _read_only_runner(folder: Path) -> list[str] | None:
    """How to run a child for which ``folder`` is read-only: a read-only bind mount in a user
    namespace of its own (for root, whom file modes do not stop), else modes; None when neither works."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return []
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    probe = subprocess.run([unshare, "-rm", "sh", "-c", f"mount --bind -o ro '{folder}' '{folder}'"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return None
    return [unshare, "-rm", "sh", "-c", f"mount --bind -o ro '{folder}' '{folder}' && exec \"$0\" \"$@\""]


def test_a_read_only_history_is_read_and_refuses_records_clearly(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "h.sqlite"
    record_results(db, _results())
    (folder / "h.sqlite-wal").unlink(missing_ok=True)
    before = db.read_bytes()
    prefix = _read_only_runner(folder)
    if prefix is None:
        pytest.skip("cannot make a folder read-only here: running as root without user namespaces (unshare)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(rankflavor.__file__).parents[1]),
                                                       os.environ.get("PYTHONPATH", "")]))
    try:
        done = subprocess.run([*prefix, sys.executable, "-c", _READ_ONLY_CHILD, str(db), str(folder / "new.sqlite")],
                              capture_output=True, text=True, env=env, timeout=120)
    finally:
        folder.chmod(0o755)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for line, name in zip(lines[:2], ("h.sqlite", "new.sqlite"), strict=True):
        assert line.startswith(f"HistoryError 3 {folder / name}: cannot write the history database: it is read-only"), line
        assert "record to another file (--history-db PATH)" in line
    assert lines[2] == "read 1"  # a read-only history is still read
    assert db.read_bytes() == before and not (folder / "new.sqlite").exists()
