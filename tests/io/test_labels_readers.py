"""Every judgments layout that names label sources reads them, and a bad source names its file and
line (or row, or JSON path). Fixtures: tests/io/labels_data.py (each from its format's source)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rankflavor as rf
from rankflavor.errors import InputError, UsageError
from rankflavor.io.columns import to_strings
from rankflavor.io.qrels import read_qrels

from .labels_data import QUEPID_BOOK, SRW_IMPORT, SRW_LLM_GET, SRW_UBI_SEARCH, UMBRELA_NAME, UMBRELA_TEXT, srw_text

ROWS = [("q1", "d1", 2, "human:nist"), ("q1", "d2", 0, "llm:gpt-4o@3f2a9c1b7d4e"), ("q2", "d1", 1, "clicks:coec")]


def _triples(q: rf.Qrels) -> list[tuple[str, str, float, str]]:
    assert q.label_source is not None
    return list(zip(to_strings(q.query), to_strings(q.doc), q.grade.tolist(), to_strings(q.label_source), strict=True))


def _expected() -> list[tuple[str, str, float, str]]:
    return [(a, b, float(c), d) for a, b, c, d in ROWS]


def test_trec_fifth_field_columnar_and_line_by_line(tmp_path: Path) -> None:
    plain = tmp_path / "q.txt"
    plain.write_text("".join(f"{a} 0 {b} {c} {d}\n" for a, b, c, d in ROWS))
    messy = tmp_path / "messy.txt"  # tabs, a comment: the line-by-line reader
    messy.write_text("# judged\n" + "".join(f"{a}\t0\t{b}  {c}\t{d}\n" for a, b, c, d in ROWS))
    packed = tmp_path / "q.txt.gz"  # compressed: the four-field columnar path's second try
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    one, two, three = read_qrels(plain), read_qrels(messy), read_qrels(packed)
    assert one.lines is None and two.lines is not None  # (the two paths were taken)
    assert _triples(one) == _triples(two) == _triples(three) == _expected()
    assert two.lines.tolist() == [2, 3, 4]


def test_four_field_qrels_name_no_source(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("q1 0 d1 2\nq1 0 d2 0\n")
    assert read_qrels(path).label_source is None


@pytest.mark.parametrize(("text", "line", "says"), [
    ("q1 0 d1 2 human:a\nq1 0 d2 0\n", 2, "line 1 has a fifth SOURCE field"),
    ("q1 0 d1 2\nq1 0 d2 0 llm:m\n", 2, "line 1 has no fifth SOURCE field"),
    ("q1 0 d1 2 human:a\nq1 0 d2 0 Human:b\n", 2, "its kind 'Human' must be lower-case"),
    ("q1 0 d1 2 human:a\nq1 0 d2 0 :b\n", 2, "its kind '' must be"),
    ("q1 0 d1 2 human:a\nq1 0 d2 x llm\n", 2, "grade 'x' is not a number"),
    ("q1 0 d1 2 human:a\nq1 0 d2 0 llm x\n", 2, "found 6"),
])
def test_malformed_source_fields_name_the_line(tmp_path: Path, text: str, line: int, says: str) -> None:
    path = tmp_path / "q.txt"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_qrels(path)
    assert info.value.line == line and str(path) in str(info.value) and says in str(info.value), str(info.value)


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "jsonl-lines", "parquet"])
def test_a_source_column_in_every_named_layout(tmp_path: Path, fmt: str) -> None:
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        path = tmp_path / f"q.{fmt}"
        path.write_text(sep.join(("query_id", "doc_id", "relevance", "source")) + "\n"
                        + "".join(sep.join(map(str, r)) + "\n" for r in ROWS))
    elif fmt.startswith("jsonl"):
        path = tmp_path / "q.jsonl"
        lines = [json.dumps({"query_id": a, "doc_id": b, "relevance": c, "source": d}) for a, b, c, d in ROWS]
        path.write_text(("\n\n" if fmt == "jsonl-lines" else "\n").join(lines) + "\n")  # a blank line: line by line
    else:
        path = tmp_path / "q.parquet"
        pq.write_table(pa.table({"qid": [r[0] for r in ROWS], "docno": [r[1] for r in ROWS],
                                 "label": [r[2] for r in ROWS], "label_source": [r[3] for r in ROWS]}), path)
    assert _triples(read_qrels(path)) == _expected()


def test_columns_names_the_source_column(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("qid,docid,label,judge\n" + "".join(",".join(map(str, r)) + "\n" for r in ROWS))
    got = read_qrels(path, columns="query=qid,doc=docid,grade=label,source=judge")
    assert _triples(got) == _expected()
    assert read_qrels(path, columns="query=qid,doc=docid,grade=label").label_source is None  # judge: not a default name


@pytest.mark.parametrize(("fmt", "where"), [("csv", (4, "")), ("jsonl", (3, "")), ("parquet", (None, "row 1: "))])
def test_a_bad_source_cell_names_its_line_or_row(tmp_path: Path, fmt: str, where: tuple[int | None, str]) -> None:
    rows = [("q1", "d1", 2, "human:a"), ("q1", "d2", 0, "LLM:b")]
    if fmt == "csv":
        path = tmp_path / "q.csv"
        path.write_text("query_id,doc_id,relevance,source\n\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    elif fmt == "jsonl":
        path = tmp_path / "q.jsonl"
        path.write_text(json.dumps({"query_id": "q0", "doc_id": "d", "relevance": 1, "source": "human:a"}) + "\n"
                        + json.dumps({"query_id": "q1", "doc_id": "d1", "relevance": 2, "source": "human:a"}) + "\n"
                        + json.dumps({"query_id": "q1", "doc_id": "d2", "relevance": 0, "source": "LLM:b"}) + "\n")
    else:
        path = tmp_path / "q.parquet"
        pq.write_table(pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "relevance": [2, 0],
                                 "source": ["human:a", "LLM:b"]}), path)
    with pytest.raises(InputError) as info:
        read_qrels(path)
    line, label = where
    assert info.value.line == line and (label + "label source 'LLM:b'") in str(info.value), str(info.value)


def test_a_jsonl_source_that_is_no_text_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"query_id": "q1", "doc_id": "d1", "relevance": 2, "source": "human:a"}) + "\n"
                    + json.dumps({"query_id": "q1", "doc_id": "d2", "relevance": 0, "source": 7}) + "\n")
    with pytest.raises(InputError) as info:
        read_qrels(path)
    assert info.value.line == 2 and "source 7 is not a label source" in str(info.value)


def test_a_rule_per_file(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("q1 0 d1 2\nq1 0 d2 0\n")
    got = read_qrels(path, label_source="human:nist")
    assert to_strings(got.label_source) == ["human:nist", "human:nist"]
    sourced = tmp_path / "s.txt"
    sourced.write_text("q1 0 d1 2 human:alice\nq1 0 d2 0 human:bob\n")
    with pytest.raises(UsageError, match="names the source of each judgment already"):
        read_qrels(sourced, label_source="human:nist")
    assert to_strings(read_qrels(sourced, label_source="bob=llm:m").label_source) == ["human:alice", "llm:m"]
    with pytest.raises(UsageError, match=r"no judgment of .* has the source 'carol'"):
        read_qrels(sourced, label_source="carol=llm:m")
    with pytest.raises(UsageError, match="names no label source to rename"):
        read_qrels(path, label_source="bob=llm:m")
    with pytest.raises(UsageError, match="its kind 'LLM'"):
        read_qrels(path, label_source="LLM:x")


def test_srw_judgment_lists_of_each_type(tmp_path: Path) -> None:
    got = {}
    for name, value in (("import", SRW_IMPORT), ("llm", SRW_LLM_GET), ("ubi", SRW_UBI_SEARCH)):
        path = tmp_path / f"{name}.json"
        path.write_text(srw_text(value))
        got[name] = _triples(read_qrels(path))  # found by its contents: a .json of judgmentRatings
    assert got["import"] == [("metal frame", "B071XJXHPN", 1.0, "human:import"),
                             ("metal frame", "B078GJZ7G4", 0.4, "human:import"),
                             ("steel bed", "B097Q69V1B", 0.9, "human:import")]
    assert got["llm"] == [("metal frame", "B071XJXHPN", 0.8, "llm:N8AE1osB"),
                          ("metal frame", "B087BLP58S", 0.6, "llm:N8AE1osB")]
    assert got["ubi"] == [("steel bed", "B097Q69V1B", 1.25, "clicks:coec")]


def test_srw_errors_name_the_json_path(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(SRW_IMPORT))
    bad["judgmentRatings"][1]["ratings"][0]["rating"] = "high"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError, match=r"\$\.judgmentRatings\[1\]\.ratings\[0\]\.rating: rating \"high\" is not a number"):
        read_qrels(path)
    bad = {**SRW_IMPORT, "type": "MANUAL"}
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError, match=r"\$\.type: judgment list type 'MANUAL'"):
        read_qrels(path, format="srw")


def test_umbrela_judgments_take_the_model_from_the_file_name(tmp_path: Path) -> None:
    (tmp_path / "modified_qrels").mkdir()
    path = tmp_path / "modified_qrels" / UMBRELA_NAME
    path.write_text(UMBRELA_TEXT)
    got = _triples(read_qrels(path, format="umbrela"))
    assert got == [("1037798", "7065735", 3.0, "llm:gpt-4o"), ("1037798", "1206337", 0.0, "llm:gpt-4o"),
                   ("104861", "1000000", 1.0, "llm:gpt-4o")]
    partial = tmp_path / "qrels.dl19-passage_gpt-4o_01_0_1.txt"
    partial.write_text(UMBRELA_TEXT)
    with pytest.raises(InputError, match="graded again only the pairs of original grade"):
        read_qrels(partial, format="umbrela")
    other = tmp_path / "judged.txt"
    other.write_text(UMBRELA_TEXT)
    with pytest.raises(InputError, match="--label-source llm:MODEL"):
        read_qrels(other, format="umbrela")
    assert to_strings(read_qrels(other, label_source="llm:gpt-4o").label_source) == ["llm:gpt-4o"] * 3


def test_quepid_book_judgements_one_judgment_per_rated_cell(tmp_path: Path) -> None:
    path = tmp_path / "book_7_judgements.csv"
    path.write_text(QUEPID_BOOK)
    got = read_qrels(path)
    assert _triples(got) == [("star wars", "d1", 3.0, "human:Jane Doe"), ("star wars", "d1", 2.0, "human:OSC AI Judge"),
                             ("star wars", "d2", 1.0, "human:OSC AI Judge"), ("-sith", "d3", 0.0, "human:Jane Doe")]
    assert got.lines.tolist() == [2, 2, 3, 4] and got.skipped_rows == 1  # d9: rated by nobody, counted
    renamed = read_qrels(path, label_source="OSC AI Judge=llm:gpt-4o")
    assert [s for *_, s in _triples(renamed)] == ["human:Jane Doe", "llm:gpt-4o", "llm:gpt-4o", "human:Jane Doe"]
    ratings = tmp_path / "ratings.csv"  # Quepid's ratings export: no judge, no source
    ratings.write_text("query,docid,rating\nstar wars,d1,3\n")
    assert read_qrels(ratings).label_source is None


def test_quepid_book_bad_rating_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "book.csv"
    path.write_text("query,docid,Jane Doe\nstar wars,d1,3\nstar wars,d2,great\n")
    with pytest.raises(InputError) as info:
        read_qrels(path)
    assert info.value.line == 3 and "'great' is not a number" in str(info.value)


def test_line_order_does_not_change_a_result(tmp_path: Path) -> None:
    lines = [f"q{q} 0 d{d} {(q * d) % 3} {'human:nist' if (q + d) % 3 else 'llm:m'}" for q in range(1, 5) for d in range(8)]
    run = {f"q{q}": {f"d{d}": float((d * 7 + q) % 10) for d in range(10)} for q in range(1, 6)}
    results = []
    for seed in range(3):
        random.Random(seed).shuffle(lines)
        path = tmp_path / f"q{seed}.txt"
        path.write_text("\n".join(lines) + "\n")
        for choice in ("any", "human", "prefer=llm"):
            r = rf.evaluate(str(path), run, ["ndcg@5", "P@3"], labels=choice)
            results.append((choice, [(str(m.measure), m.per_query(), m.labels) for m in r],
                            r.provenance["qrels"]["labels"]))
    by_choice: dict[str, list[object]] = {}
    for choice, measures, labels in results:
        by_choice.setdefault(choice, []).append((measures, labels))
    for choice, seen in by_choice.items():
        assert all(s == seen[0] for s in seen), choice


def test_convert_carries_label_sources_or_refuses_to_drop_them(tmp_path: Path) -> None:
    # trec (a fifth field), csv, tsv, jsonl and parquet (a source column) hold each label's source
    # and read back with it; the formats that cannot hold one refuse, or (lossy) write without
    from rankflavor.errors import FormatLossError
    from rankflavor.io.columns import to_strings
    from rankflavor.io.convert import convert

    path = tmp_path / "q.txt"
    path.write_text("".join(f"{a} 0 {b} {c} {d}\n" for a, b, c, d in ROWS))

    def rows(q):  # type: ignore[no-untyped-def]
        assert q.label_source is not None
        return sorted(zip(to_strings(q.query), to_strings(q.doc), q.grade.tolist(), to_strings(q.label_source), strict=True))

    want = rows(read_qrels(path))
    for name in ("back.txt", "q.csv", "q.tsv", "q.jsonl", "q.parquet", "q.jsonl.gz"):
        convert(path, tmp_path / name)
        assert rows(read_qrels(tmp_path / name)) == want, name
    for name, fmt in (("q.json", None), ("q.msmarco", "msmarco"), ("q.beir", "beir")):
        with pytest.raises(FormatLossError, match="label sources"):
            convert(path, tmp_path / name, to_format=fmt)
        convert(path, tmp_path / name, to_format=fmt, lossy=True)
        assert read_qrels(tmp_path / name, format=fmt).label_source is None


def test_a_source_with_a_blank_is_not_written_as_a_trec_field(tmp_path: Path) -> None:
    from rankflavor.errors import FormatLossError
    from rankflavor.io.convert import convert

    path = tmp_path / "q.csv"
    path.write_text("query_id,doc_id,relevance,source\nq1,d1,1,human:OSC AI Judge\n")
    with pytest.raises(FormatLossError, match="label source 'human:OSC AI Judge' holds a blank"):
        convert(path, tmp_path / "q.txt")
    convert(path, tmp_path / "q.jsonl")
    assert read_qrels(tmp_path / "q.jsonl").label_source is not None
