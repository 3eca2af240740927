"""``rankflavor judge`` as a user runs it, in a subprocess, against a chat-completions server in
this process (tests/judge/judge_server.py): it survives kill -9 and resumes without repeating a
request, the API key is in no byte it writes, and its formats agree."""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .judge_server import FakeChat, grade_of

ROOT = Path(__file__).resolve().parents[2]
QUERIES = {f"q{i}": f"what is thing {i}? [q:q{i}]" for i in range(5)}
DOCS = {f"d{j}": f"Thing {j} is a thing. [d:d{j}]" for j in range(6)}
PAIRS = [(q, d) for q in QUERIES for d in DOCS]


@pytest.fixture
def server() -> Iterator[FakeChat]:
    fake = FakeChat()
    yield fake
    fake.close()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    pairs = tmp_path / "pool.txt"  # pool's trec stub: QUERY 0 DOC, the grade left empty
    pairs.write_text("".join(f"{q} 0 {d}\n" for q, d in reversed(PAIRS)))
    queries = tmp_path / "queries.tsv"  # MS MARCO
    queries.write_text("".join(f"{k}\t{v}\n" for k, v in QUERIES.items()))
    corpus = tmp_path / "corpus.jsonl"  # BEIR
    corpus.write_text("".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n" for k, v in DOCS.items()))
    return {"pairs": pairs, "queries": queries, "docs": corpus, "cache": tmp_path / "cache.sqlite"}


def _command(server: FakeChat, files: dict[str, Path], *extra: str) -> list[str]:
    return [sys.executable, "-m", "rankflavor", "judge", str(files["pairs"]), "--query-texts", str(files["queries"]),
            "--passages", str(files["docs"]), "--model", "fake-7b", "--base-url", server.base_url,
            "--cache", str(files["cache"]), "--backoff", "0.01", "--timeout", "10", *extra]


def _env(key: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["PYTHONPATH"] = str(ROOT / "src")
    if key is not None:
        env["OPENAI_API_KEY"] = key
    return env


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(cmd, env=env, capture_output=True, timeout=300)


def _qrels(text: str) -> dict[tuple[str, str], int]:
    """The judge's output read back line by line (QUERY 0 DOC GRADE SOURCE)."""
    out: dict[tuple[str, str], int] = {}
    for line in text.splitlines():
        q, it, d, g, source = line.split()
        assert it == "0" and source == "llm:fake-7b@c92537a4f972"
        out[(q, d)] = int(g)
    return out


def _stored(cache: Path) -> set[tuple[str, str]]:
    """The pairs the cache holds, read while (or after) a run writes it."""
    if not cache.exists():
        return set()
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True) as db:
            return set(db.execute("SELECT query, doc FROM answers").fetchall())
    except sqlite3.OperationalError:  # the table is not there yet
        return set()


def test_kill_9_mid_run_then_the_rerun_asks_only_what_was_not_answered(server: FakeChat,
                                                                       files: dict[str, Path]) -> None:
    # Each run sends its own key, so the server tells their requests apart whatever arrives late.
    first, second = "Bearer run-1", "Bearer run-2"
    server.hang_after = 7  # the 8th request and later wait: the run is mid-way, 7 answers stored
    out = files["cache"].parent / "labels.qrels"
    proc = subprocess.Popen(_command(server, files, "--concurrency", "3", "-o", str(out)), env=_env("run-1"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240  # a guard against a hung test, not a timing assertion
        while len(_stored(files["cache"])) < 7:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run never stored 7 answers"
            time.sleep(0.05)
        assert proc.poll() is None  # mid-run: the requests after the 7th wait
        proc.kill()  # SIGKILL
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert not out.exists()
    answered_1 = {p for (auth, p), n in server.answered_by.items() if auth == first}
    assert len(answered_1) == 7 and _stored(files["cache"]) == answered_1  # every answer given was stored
    # A request run 1 sent before the kill may reach the handler only now: it must not be
    # answered once the hang is lifted (the pair would then count two answers).
    server.dropped.add(first)
    server.hang_after = None
    server.release()  # the waiting requests are dropped unanswered

    done = _run(_command(server, files, "--concurrency", "3", "-o", str(out)), _env("run-2"))
    assert done.returncode == 0, done.stderr.decode()
    assert _qrels(out.read_text()) == {p: grade_of(*p) for p in PAIRS}
    asked_2 = {p: n for (auth, p), n in server.received_by.items() if auth == second}
    assert asked_2 == {p: 1 for p in PAIRS if p not in answered_1}  # nothing answered is asked again
    assert all(server.answered[p] == 1 for p in PAIRS)  # no pair answered twice
    assert f"cached 7, asked {len(PAIRS) - 7}" in done.stderr.decode()


def test_the_api_key_is_in_no_byte_written(server: FakeChat, files: dict[str, Path]) -> None:
    key = "sk-rftest-" + secrets.token_hex(16)
    server.key = key  # requests without it are refused: the key was really sent
    server.plan = {
        ("q0", "d0"): ["500", "ok"],          # error bodies echo the Authorization header
        ("q0", "d1"): ["429", "ok"],
        ("q0", "d2"): ["400", "400"],         # failed (both runs): its reason is printed
        ("q0", "d3"): ["answer:I saw {key}"],  # malformed: its raw answer is stored and listed
    }
    out = files["cache"].parent / "out.json"
    runs = [_run(_command(server, files, "--format", "json", "-o", str(out)), _env(key)),
            _run(_command(server, files), _env(key)),
            _run(_command(server, files, "--dry-run"), _env(key)),
            _run(_command(server, files, "--format", "json", "--dry-run"), _env(key))]
    assert runs[0].returncode == 1 and runs[1].returncode == 1  # (q0, d2) failed both times
    assert all(r.returncode == 0 for r in runs[2:])
    assert {a for a in server.authorization} == {f"Bearer {key}"}
    written = [b for r in runs for b in (r.stdout, r.stderr)]
    written += [p.read_bytes() for p in files["cache"].parent.iterdir() if p.is_file()]  # output, cache, WAL
    assert len(written) >= 10
    for data in written:
        assert key.encode() not in data
        assert key[-12:].encode() not in data
    doc = json.loads(out.read_text())
    assert {"query": "q0", "doc": "d3", "reason": doc["malformed"][0]["reason"], "answer": "I saw Bearer [redacted]"} \
        in doc["malformed"]
    assert "[redacted]" in doc["failed"][0]["reason"]


def test_the_formats_agree_and_output_does_not_depend_on_line_order(server: FakeChat, files: dict[str, Path]) -> None:
    server.plan = {("q1", "d1"): ["answer:no idea"], ("q2", "d2"): ["400"] * 3}  # failures are asked again
    trec = _run(_command(server, files), _env())
    as_json = _run(_command(server, files, "--format", "json"), _env())
    assert trec.returncode == as_json.returncode == 1
    doc = json.loads(as_json.stdout)
    labels = _qrels(trec.stdout.decode())
    assert labels == {(r["query"], r["doc"]): r["grade"] for r in doc["labels"]}
    assert labels == {p: grade_of(*p) for p in PAIRS if p not in {("q1", "d1"), ("q2", "d2")}}
    s = doc["summary"]
    assert (s["pairs"], s["labels"], s["malformed"], s["failed"]) == (30, 28, 1, 1)
    for stderr in (trec.stderr.decode(), as_json.stderr.decode()):
        assert f"labels {s['labels']}, malformed {s['malformed']}, failed {s['failed']}, flagged {s['flagged']}" in stderr
    # the same pairs in another order give the same bytes
    files["pairs"].write_text("".join(f"{q} 0 {d}\n" for q, d in PAIRS))
    again = _run(_command(server, files), _env())
    assert again.stdout == trec.stdout
    assert trec.stdout.decode().splitlines() == sorted(trec.stdout.decode().splitlines(), key=lambda x: x.split()[:3:2])
    # the project's qrels reader takes the output back, each label with the judge as its source
    from rankflavor import read_qrels
    from rankflavor.io.columns import to_strings

    out = files["pairs"].parent / "judged.qrels"
    out.write_bytes(trec.stdout)
    back = read_qrels(out)
    assert back.label_source is not None
    assert set(to_strings(back.label_source)) == {doc["source"]} and doc["source"].startswith("llm:")
    assert {(q, d): g for q, d, g in zip(to_strings(back.query), to_strings(back.doc), back.grade.tolist(),
                                         strict=True)} == labels


def test_the_dry_run_prints_the_first_prompt_and_asks_nothing(server: FakeChat, files: dict[str, Path]) -> None:
    r = _run(_command(server, files, "--dry-run"), _env())
    assert r.returncode == 0, r.stderr.decode()
    text = r.stdout.decode()
    assert "would ask 30 of 30 pairs" in text and "Passage: Thing 0 is a thing. [d:d0]" in text
    assert "Query: what is thing 0? [q:q0]" in text and "--- system ---" in text
    assert sum(server.received.values()) == 0 and not files["cache"].exists()


def test_a_prompt_file_and_a_bad_input_from_the_command_line(server: FakeChat, files: dict[str, Path]) -> None:
    prompt = files["cache"].parent / "prompt.txt"
    prompt.write_text("Rate 0-2.\nQuery: {query}\nPassage: {passage}\nAnswer '##final score: G'.")
    server.plan = {("q0", "d0"): ["answer:##final score: 3"]}  # off a 0-2 scale
    r = _run(_command(server, files, "--prompt", str(prompt), "--max-grade", "2"), _env())
    assert r.returncode == 0, r.stderr.decode()
    # the server's 3s are off this template's scale too: malformed, never a grade
    off = {p for p in PAIRS if grade_of(*p) == 3} | {("q0", "d0")}
    labels = {(q, d): int(g) for q, _, d, g, _ in (line.split() for line in r.stdout.decode().splitlines())}
    assert labels == {p: grade_of(*p) for p in PAIRS if p not in off}
    assert f"malformed {len(off)}" in r.stderr.decode() and "not on the scale 0-2" in r.stderr.decode()
    assert "llm:fake-7b@c92537a4f972" not in r.stdout.decode()
    files["queries"].write_text("q0 without a tab\n")
    bad = _run(_command(server, files), _env())
    assert bad.returncode == 3 and b"queries.tsv:1" in bad.stderr and b"Traceback" not in bad.stderr


def test_the_readme_dry_run_is_what_the_command_prints(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """README's judge example (a dry run: nothing is sent, no cache is made), from the repository's root."""
    from click.testing import CliRunner

    from rankflavor.cli.main import cli

    root = Path(__file__).resolve().parents[2]
    text = (root / "README.md").read_text()
    start = text.index("$ rankflavor judge examples/judge_pairs.txt")
    block = text[start:text.index("```", start)].splitlines()
    args = " ".join(line.rstrip("\\").strip() for line in block[:2]).split("|")[0].split()[2:]
    monkeypatch.chdir(root)
    before = set(os.listdir(root))
    got = CliRunner().invoke(cli, args)
    assert got.exit_code == 0, got.output
    assert got.stdout.splitlines()[0] == block[2]
    assert set(os.listdir(root)) == before  # a dry run writes no cache
