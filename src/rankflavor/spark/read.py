"""Spark's part of reading: TREC files or Spark DataFrames as ``q, d, v, row, line`` tables.

``row`` orders the rows as the input does (``ties=input_order`` and ``duplicates=first`` read
it); ``line`` is the 1-based line of a file's row (null for a DataFrame), so that an error the
engine raises on a worker names it. TREC files are read by Spark's text reader and split on the
blanks of the local reader; a malformed file is handed to the local reader only to name the bad
line (Spark knows which lines are bad, the local reader words the error). Everything the local
reader counts (comment and blank lines, lines with extra fields, the last line's run tag) is
counted in the same job that checks the values.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any

from rankflavor.errors import InputError, UsageError
from rankflavor.io.inputs import DOC_COLUMNS, GRADE_COLUMNS, QUERY_COLUMNS, SCORE_COLUMNS
from rankflavor.io.tables import Qrels
from rankflavor.io.trec import BLANKS, QRELS_FIELDS, RUN_FIELDS

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from rankflavor.presets.scales import Scale

#: What trec_eval's and the local reader's split() treat as blanks, as a Java regex.
_WHITESPACE = "[" + "".join(f"\\x{ord(c):02x}" for c in BLANKS) + "]+"
#: The blanks trimmed from a line's ends (every blank but the line end), and those but space.
_TRIMMED = "".join(c for c in BLANKS if c != "\n")
_ODD_BLANKS = tuple(c for c in _TRIMMED if c != " ")
#: A number as the local reader (pyarrow's parse) takes one. Spark's cast to double goes through
#: Java's parseDouble, which also reads "1d", "1F", hex ("0x1p3") and trailing control bytes.
_DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$|^[+-]?(?i:inf|infinity|nan)$"
#: ``monotonically_increasing_id`` puts the partition index above these bits.
_PARTITION_SHIFT = 33


@dataclass
class SparkTable:
    """One input as a Spark table ``q, d, v, row, line`` plus what reading saw of it."""

    frame: DataFrame
    source: str
    from_file: bool
    rows: int
    tag: str | None = None
    comments: int = 0
    blanks: int = 0
    extra_fields: int = 0
    cached: DataFrame | None = None  # what to unpersist when done
    raters: str | None = None  # the rule that aggregated ratings into these judgments (Qrels.raters)


@dataclass
class _Pending:
    """An input before its check (``stats``) has run: both inputs are checked in one job."""

    kind: str
    source: str
    from_file: bool
    cached: DataFrame
    #: The rows given where each (partition, file) lies in the input (a frame's rows need none).
    frame: Callable[[list[Place]], DataFrame]
    #: Rows ``kind, p, file, first_row, n, bad, extra, blank, comment, lines, tag_row``: one per
    #: partition and file.
    stats: DataFrame
    #: Raises InputError for a bad line or value, given the totals and the places.
    on_error: Callable[[dict[str, Any], list[Place]], None]
    #: A TREC file's malformed lines among ``cached``'s (``check`` lists them; None for a frame).
    bad: Column | None = None
    #: The run tag of a row (``tag_row``): the sixth field of a TREC run's line, None where it is
    #: not UTF-8 text. None: the input has no tags (judgments, a frame).
    tag_at: Callable[[int], str | None] | None = None

    def last_tag(self, rows: list[dict[str, Any]], places: list[Place]) -> tuple[bool, str | None]:
        """Whether the input has a tagged row, and the tag of its last (files in name order),
        looked up by one small job over the kept table (:func:`_stats` leaves it out: a string
        picked by ``max_by`` made Spark sort every row to aggregate them)."""
        tagged = [r for r in rows if r["tag_row"] is not None]
        if not tagged or self.tag_at is None:
            return bool(tagged), None
        file_index = {place[1]: place[3] for place in places}
        last = max(tagged, key=lambda r: (file_index.get(r["file"], 0), r["tag_row"]))
        return True, self.tag_at(int(last["tag_row"]))


#: How a read input is kept for the passes after its check (``persist``: Spark's columnar cache,
#: recomputed from the file if an executor is lost; ``checkpoint``: ``localCheckpoint``, the rows
#: as they are, with no columnar encoding, lost with their executor; ``none``: the file is read
#: again by the next pass). By default ``checkpoint`` on a ``local`` master, where no executor is
#: lost, and ``persist`` on a cluster. The 6.9M-line run on local[2]: the check and one more pass
#: took 19.5 + 0.5 s persisted, 12.8 + 1.7 s checkpointed, 9.5 + 7.4 s not kept.
INPUT_KEEP_CONF = "spark.rankflavor.inputKeep"
_KEEPS = ("persist", "checkpoint", "none")


def _kept(frame: DataFrame) -> DataFrame:
    """``frame`` kept as the session's :data:`INPUT_KEEP_CONF` says (nothing is computed yet)."""
    spark = frame.sparkSession
    choice = spark.conf.get(INPUT_KEEP_CONF, None) or (
        "checkpoint" if str(spark.sparkContext.master).startswith("local") else "persist")
    if choice not in _KEEPS:
        raise UsageError(f"{INPUT_KEEP_CONF}: expected one of {', '.join(_KEEPS)}, received {choice!r}")
    if choice == "persist":
        return frame.persist()
    if choice == "checkpoint":
        return frame.localCheckpoint(eager=False)
    return frame


def _nul(column: str) -> Column:
    """Does the id in ``column`` hold a NUL byte (:mod:`rankflavor.io.nul`)? (False for null.)"""
    from pyspark.sql import functions as F

    return F.coalesce(F.instr(F.col(column), "\x00") > 0, F.lit(False))


def _count(cond: Column) -> Column:
    from pyspark.sql import functions as F

    return F.sum(F.when(cond, F.lit(1)).otherwise(F.lit(0)))


def _stats(kind: str, frame: DataFrame, n: Column, bad: Column, extra: Column, blank: Column, comment: Column,
           tagged: Column) -> DataFrame:
    """Per partition of ``frame`` (rows ``row``) and file (``file``): the counts of one input,
    its last tagged row, and the partition's first row of the file. Every aggregate keeps a
    fixed-width buffer, so Spark aggregates by hash, not by sorting the rows."""
    from pyspark.sql import functions as F

    return frame.groupBy(F.shiftright("row", _PARTITION_SHIFT).alias("p"), "file").agg(
        F.lit(kind).alias("kind"),
        F.min("row").alias("first_row"),
        n.cast("long").alias("n"),
        bad.cast("long").alias("bad"),
        extra.cast("long").alias("extra"),
        blank.cast("long").alias("blank"),
        comment.cast("long").alias("comment"),
        F.count(F.lit(1)).alias("lines"),
        F.max(F.when(tagged, F.col("row"))).alias("tag_row"),
    )


def _pick(columns: list[str], wanted: tuple[str, ...], source: str) -> str:
    for name in wanted:
        if name in columns:
            return name
    raise InputError(source, None, f"needs one of the columns {', '.join(wanted)}; has {', '.join(columns)}")


def _from_frame(frame: DataFrame, source: str, kind: str, order: Column | None = None) -> _Pending:
    """``order``: the rows' input order (a long), where the frame's partitions do not give it."""
    from pyspark.sql import functions as F

    columns = list(frame.columns)
    qc = _pick(columns, QUERY_COLUMNS, source)
    dc = _pick(columns, DOC_COLUMNS, source)
    vc = _pick(columns, GRADE_COLUMNS if kind == "qrels" else SCORE_COLUMNS, source)
    table = frame.select(
        F.col(qc).cast("string").alias("q"),
        F.col(dc).cast("string").alias("d"),
        F.col(vc).try_cast("double").alias("v"),
        (F.monotonically_increasing_id() if order is None else order).alias("row"),
        F.lit(None).cast("long").alias("line"),
        F.lit("").alias("file"),
    )
    table = _kept(table)
    bad = (F.col("v").isNull() | F.isnan("v") | (F.abs("v") == math.inf) | F.col("q").isNull() | F.col("d").isNull()
           | _nul("q") | _nul("d"))
    zero = F.lit(0)
    stats = _stats(kind, table, F.count(F.lit(1)), _count(bad), zero, zero, zero, F.lit(False))

    def on_error(row: dict[str, Any], places: list[Place]) -> None:
        if not row["n"]:
            raise InputError(source, None, "has no rows")
        example = table.filter(bad).limit(1).collect()[0]
        raise InputError(
            source,
            None,
            f"{row['bad']} row(s) have a null {qc!r} or {dc!r}, an id holding a NUL byte (U+0000: C tools such "
            f"as trec_eval end an id there), or a {vc!r} that is not a finite number; "
            f"e.g. query {example['q']!r}, doc {example['d']!r}, {vc} {example['v']!r}",
        )

    return _Pending(kind, source, False, table, lambda _: table.drop("file"), stats, on_error)


def _text_lines(spark: SparkSession, path: str) -> DataFrame:
    """The lines of ``path`` as Spark resolves it (a file, a directory of part files, a glob; on
    any filesystem Hadoop knows), each with its file and a row id (partition index above
    :data:`_PARTITION_SHIFT`)."""
    from pyspark.sql import functions as F

    # Lines end at LF alone: by default Spark also ends one at a lone CR, a blank to trec_eval.
    frame = _spark_read(path, lambda: spark.read.option("lineSep", "\n").text(path), "")
    return frame.select(F.col("value").alias("line"), F.col("_metadata.file_path").alias("file"),
                        F.monotonically_increasing_id().alias("row"))


def _parquet(spark: SparkSession, path: str) -> DataFrame:
    """A Parquet file, or a directory of Parquet parts, as Spark reads it (its own schema)."""
    return _spark_read(path, lambda: spark.read.parquet(path), " as Parquet")


def _parquet_order(frame: DataFrame) -> Column:
    """The input order of a Parquet read, as its text's: files in name order (a directory's parts
    as their concatenation), rows in file order. Spark's own partitions do not keep it: a scan
    packs the files largest first.

    Files are matched by their path, decoded, without scheme and authority: Spark lists them as
    ``file:///a b`` and names a row's file ``file:/a%20b`` (a ``+`` is kept: a URI's path does
    not encode a space so); a row of a file not matched stops the job, naming it."""
    from urllib.parse import unquote, urlparse

    from pyspark.sql import functions as F

    files = sorted(unquote(urlparse(uri).path) for uri in frame.inputFiles())
    index = F.create_map(*[F.lit(x) for i, name in enumerate(files) for x in (name, i)])
    path = F.regexp_replace(F.col("_metadata.file_path"), r"^[a-zA-Z][a-zA-Z0-9+.-]*:(//[^/]*)?", "")
    at = index[F.url_decode(F.regexp_replace(path, r"\+", "%2B"))].cast("long")
    return F.when(at.isNull(), F.raise_error(F.concat(F.lit("rankflavor: a Parquet row of an unlisted file: "),
                                                       F.col("_metadata.file_path")))).otherwise(
        F.shiftleft(at, _FILE_SHIFT) + F.col("_metadata.row_index"))


def _spark_read(path: str, read: Callable[[], DataFrame], what: str) -> DataFrame:
    """``read()``, with Spark's refusal of ``path`` (``AnalysisException``) as an :class:`InputError`
    naming it: "file not found", or Spark's first line of why it "cannot be read by Spark{what}"."""
    from pyspark.errors import AnalysisException

    try:
        return read()
    except AnalysisException as exc:
        if "PATH_NOT_FOUND" in str(exc) or "Path does not exist" in str(exc):
            raise InputError(path, None, "file not found") from None
        raise InputError(path, None, f"cannot be read by Spark{what}: {str(exc).splitlines()[0]}") from None


def _read_trec(spark: SparkSession, path: str, kind: str, ranks: bool = False) -> _Pending:
    """A TREC qrels or run file (or a directory of part files, read as their concatenation in
    name order) read by Spark; a malformed one is named by its first bad line. ``ranks``: keep
    a run's rank field as written (``check`` reads it; trec_eval and the engine do not).

    The table kept for the second pass (evaluation) holds what that pass and the error path
    read, nothing more: a line's raw bytes only where it is bad, its flags as booleans. Building
    the cache is most of the read's cost (6.9M lines on local[2]: 27 s of the 31 s read with
    every field and the raw line kept)."""
    from pyspark.sql import functions as F

    n_fields = QRELS_FIELDS if kind == "qrels" else RUN_FIELDS
    lines = _text_lines(spark, path)
    value_at = 3 if kind == "qrels" else 4
    # A line of single spaces (nearly every line) is split on " ", which Java splits without a
    # regex; one holding another blank or a run of them by the blank class.
    odd = reduce(lambda a, b: a | b, [F.col("text").contains(c) for c in ("  ", *_ODD_BLANKS)])
    fields = (
        # Spark keeps bytes that are not UTF-8 in the line (string functions turn them into U+FFFD).
        lines.select("row", "file", "line", F.btrim("line", F.lit(_TRIMMED)).alias("text"))
        .select(
            "row",
            "file",
            "line",
            (F.col("text") == "").alias("blank"),
            F.col("text").startswith("#").alias("comment"),
            F.when(odd, F.split("text", _WHITESPACE)).otherwise(F.split("text", " ")).alias("f"),
        )
        .select(
            "row",
            "file",
            "line",
            "blank",
            "comment",
            (~F.col("blank") & ~F.col("comment")).alias("body"),
            F.size("f").alias("n"),
            # get() gives null past the end of a short line (plain indexing fails under ANSI mode).
            F.get("f", 0).alias("q"),
            F.get("f", 2).alias("d"),
            F.when(F.get("f", value_at).rlike(_DECIMAL), F.get("f", value_at).try_cast("double")).alias("v"),
            # a tag that is not UTF-8 is null here: refused below if it is the last line's, the one reported
            (F.when(~F.get("f", 5).contains("\ufffd") | F.is_valid_utf8("line"), F.get("f", 5)) if kind == "run"
             else F.lit(None).cast("string")).alias("tag"),
            *([(F.get("f", 3) if kind == "run" else F.lit(None).cast("string")).alias("rank")] if ranks else []),
        )
    )
    ok_fields = (F.col("n") == n_fields) if kind == "qrels" else (F.col("n") >= n_fields)
    valid = ok_fields & F.col("v").isNotNull() & ~F.isnan("v") & (F.abs("v") != math.inf)
    body = F.col("body")
    # Bytes that are not UTF-8 make a line bad only in a field the reader keeps (query, doc; the
    # value is no decimal then), as in the local reader: they read as U+FFFD there.
    # (The UTF-8 check, a pass over the line's bytes, only where a U+FFFD says it may fail.)
    undecodable = (F.col("q").contains("\ufffd") | F.col("d").contains("\ufffd")) & ~F.is_valid_utf8("line")
    # An id holding a NUL is refused as the local reader refuses it (rankflavor.io.nul).
    undecodable = undecodable | _nul("q") | _nul("d")
    is_bad = body & (~valid | undecodable)
    fields = fields.select(
        "row", "file", "q", "d", "v", "tag", *(["rank"] if ranks else []), "blank", "comment", "body",
        is_bad.alias("bad"), (body & (F.col("n") > n_fields)).alias("extra"),
        # a bad line's raw bytes and field count (``check`` words it from them); null elsewhere
        F.when(is_bad, F.col("line").cast("binary")).alias("raw"), F.when(is_bad, F.col("n")).alias("n"),
    )
    fields = _kept(fields)
    bad = F.col("bad")
    stats = _stats(kind, fields, _count(body), _count(bad), _count(F.col("extra")),
                   _count(F.col("blank")), _count(F.col("comment")), body)

    def numbered(places: list[Place]) -> DataFrame:
        """The body rows with their lines and input order, from each (partition, file)'s place."""
        return placed(spark, fields.filter(body), places).select("q", "d", "v", "row", "line")

    from rankflavor.io import trec

    def on_error(row: dict[str, Any], places: list[Place]) -> None:
        if os.path.isfile(path):  # a file the driver sees: the local reader words the error as locally
            (trec.read_qrels if kind == "qrels" else trec.read_run)(path)
        else:
            _first_bad_line(spark, fields.filter(bad), places, path, kind, not row["n"])
        raise InputError(path, None, f"{row['bad'] or 0} malformed {kind} line(s)")

    def tag_at(row: int) -> str | None:
        found = fields.filter(F.col("row") == row).select("tag").collect()
        return None if not found else found[0]["tag"]

    return _Pending(kind, path, True, fields, numbered, stats, on_error, bad, tag_at if kind == "run" else None)


#: A row's order across files: the file's index (name order) above these bits, its line below.
_FILE_SHIFT = 40

#: Per (partition, file) of a file input: ``(p, file, base, file index, lines before the file)``;
#: a row's line in its own file is ``row + base`` (see :func:`places_of`).
Place = tuple[int, str, int, int, int]


def places_of(stats: list[dict[str, Any]]) -> list[Place]:
    """Where each (partition, file) of a file input's stats lies in the input. Files are taken in
    name order (a directory's part files as their concatenation, the order ``cat`` gives), a
    file's partitions in partition order (Spark splits a file in order, and a partition's rows
    of one file are its consecutive lines)."""
    files = sorted({str(r["file"]) for r in stats})
    out = []
    before = 0
    for index, name in enumerate(files):
        start, seen = before, 0
        for r in sorted((r for r in stats if r["file"] == name), key=lambda r: r["p"]):
            out.append((int(r["p"]), name, seen - int(r["first_row"]) + 1, index, start))
            seen += int(r["lines"])
        before += seen
    return out


def placed(spark: SparkSession, frame: DataFrame, places: list[Place]) -> DataFrame:
    """``frame`` (rows ``row``, ``file``) with ``file_line`` (the line in its file), ``line``
    (through the input: the files' lines counted in name order) and ``row`` made the input's
    order across files."""
    from pyspark.sql import functions as F

    table = spark.createDataFrame(places, "p long, file string, base long, fi long, start long")
    joined = frame.withColumn("p", F.shiftright("row", _PARTITION_SHIFT)).join(F.broadcast(table), ["p", "file"])
    in_file = F.col("row") + F.col("base")
    return (joined.withColumn("file_line", in_file).withColumn("line", in_file + F.col("start"))
            .withColumn("row", F.shiftleft("fi", _FILE_SHIFT) + in_file))


def _first_bad_line(spark: SparkSession, bad: DataFrame, places: list[Place], path: str, kind: str,
                    empty: bool) -> None:
    """Raise the error of the input's first bad line (files in name order), worded by the local
    line reader from that line alone and naming its own file and line; or the local reader's
    error for an input with no judgment or result line. Only that line reaches the driver."""
    from rankflavor.io.lines import parse_qrels_lines, parse_run_lines

    def parse(source: str, data: bytes, first_line: int) -> None:
        if kind == "qrels":
            parse_qrels_lines(source, data, first_line=first_line)
        else:
            parse_run_lines(source, data, first_line=first_line, whole_file=empty)

    if empty:
        parse(path, b"", 1)
        return
    first = placed(spark, bad, places).orderBy("row").select("file", "raw", "file_line").limit(1).collect()[0]
    parse(_local_name(str(first["file"])), bytes(first["raw"]) + b"\n", int(first["file_line"]))


def _local_name(uri: str) -> str:
    """A file Spark names by URI, as a user names it: a local file's path, else the URI."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def pending_input(spark: SparkSession, obj: Any, kind: str, ranks: bool = False) -> _Pending:
    if isinstance(obj, (str, os.PathLike)):
        path = os.fspath(obj)
        if path.rstrip("/").endswith(".parquet") or path.endswith("*.parquet"):
            frame = _parquet(spark, path)
            return _from_frame(frame, path, kind, _parquet_order(frame))
        return _read_trec(spark, path, kind, ranks)
    if hasattr(obj, "sparkSession") and hasattr(obj, "columns"):
        return _from_frame(obj, f"{kind} DataFrame", kind)
    if isinstance(obj, Qrels) and kind == "qrels":  # judgments made on the driver (aggregated ratings)
        import pyarrow as pa

        if obj.listed_empty:  # a Spark table has a row per judgment: such a query would be lost
            raise UsageError(f"{obj.source} lists {len(obj.listed_empty)} query(ies) with no judgment (e.g. "
                             f"{obj.listed_empty[0]!r}), which the Spark engine's tables of one row per judgment "
                             "cannot hold; evaluate these judgments with the local engine")

        table = pa.table({"query_id": obj.query, "doc_id": obj.doc, "relevance": obj.grade})
        return _from_frame(spark.createDataFrame(table), obj.source, kind)
    raise UsageError(f"{kind} must be a Spark DataFrame or a TREC file path for the Spark engine; received {type(obj).__name__}")


def check_scale(table: SparkTable, scale: Scale) -> None:
    """The scale's grade check (:meth:`~rankflavor.analysis.judgments.Scale.check`) as one Spark job over
    the judgments: the first grade off the scale, in input order, names its line."""
    from pyspark.sql import functions as F

    ok = F.col("v").isin(list(scale.grades))
    if scale.negatives != "error":
        ok = ok | (F.col("v") < 0)
    stats = table.frame.filter(~ok).agg(F.count(F.lit(1)).alias("bad"), F.min_by(F.struct("v", "line"), "row").alias("at"))
    row = stats.collect()[0]
    if row["bad"]:
        raise scale.off_scale(table.source, row["at"]["line"], float(row["at"]["v"]), int(row["bad"]))


def read_inputs(spark: SparkSession, qrels: Any, run: Any) -> tuple[SparkTable, SparkTable]:
    """Both inputs as :class:`SparkTable`, checked by one Spark job (qrels first, as the local
    engine reports them).

    Raises
    ------
    InputError
        A malformed line (naming its file and line, as the local reader does), a bad value, or
        an input with no rows.
    """
    q_table, (r_table,) = read_systems(spark, qrels, [run])
    return q_table, r_table


def read_systems(spark: SparkSession, qrels: Any, runs: list[Any]) -> tuple[SparkTable, list[SparkTable]]:
    """The judgments and every run as :class:`SparkTable`, all checked by one Spark job; the
    errors of :func:`read_inputs`, the judgments' first, then the runs' in their order.
    ``qrels`` None: no judgments (an empty table, ``rows`` 0)."""
    from pyspark.sql import functions as F

    judged = [] if qrels is None else [pending_input(spark, qrels, "qrels")]
    pending = judged + [pending_input(spark, run, "run") for run in runs]
    labels = ["qrels"] * len(judged) + [f"run{i}" for i in range(len(runs))]
    stats = [p.stats.withColumn("kind", F.lit(label)) for p, label in zip(pending, labels, strict=True)]
    parts: dict[str, list[dict[str, Any]]] = {label: [] for label in labels}
    for stat in reduce(lambda a, b: a.unionByName(b), stats).collect():
        parts[stat["kind"]].append(stat.asDict())
    tables = []
    for p, label in zip(pending, labels, strict=True):
        rows = sorted(parts[label], key=lambda r: (r["p"], r["file"]))
        total = {name: sum(int(r[name] or 0) for r in rows) for name in ("n", "bad", "extra", "blank", "comment")}
        places = places_of(rows) if p.from_file else []
        if not total["n"] or total["bad"]:
            for other in pending:
                other.cached.unpersist()
            p.on_error(total, places)
        tagged, tag = p.last_tag(rows, places)
        if tagged and tag is None and p.tag_at is not None:
            for other in pending:
                other.cached.unpersist()
            raise InputError(p.source, None, "the run tag on the last line is not valid UTF-8 text")
        tables.append(SparkTable(p.frame(places), p.source, p.from_file, rows=total["n"], tag=tag,
                                 comments=total["comment"], blanks=total["blank"], extra_fields=total["extra"],
                                 cached=p.cached, raters=qrels.raters if isinstance(qrels, Qrels) else None))
    if qrels is None:
        empty = spark.createDataFrame([], "q string, d string, v double, row long, line long")
        tables.insert(0, SparkTable(empty, "no judgments", False, rows=0))
    return tables[0], tables[1:]
