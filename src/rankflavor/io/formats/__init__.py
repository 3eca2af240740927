"""Readers of every common form of judgments and runs, one module per family, and their writers.

* :mod:`~rankflavor.io.formats.spec` - the format names, :class:`Input` (a path with its format
  and column names), ``--columns``, the choice of a format by a file's name;
* :mod:`~rankflavor.io.formats.table` - the one path every reader ends in: named Arrow columns to
  the :class:`~rankflavor.io.tables.Qrels` / :class:`~rankflavor.io.tables.Run` the engine reads;
* :mod:`~rankflavor.io.formats.delimited` - CSV/TSV with named columns, BEIR qrels TSV, MS MARCO
  run TSV, Quepid's ratings and snapshot CSV;
* :mod:`~rankflavor.io.formats.jsonl`, :mod:`~rankflavor.io.formats.parquet`;
* :mod:`~rankflavor.io.formats.jsondoc` - nested ``{query: {doc: value}}`` JSON (BEIR results),
  Elasticsearch/OpenSearch ``_rank_eval`` requests and search responses;
* :mod:`~rankflavor.io.formats.read` - a format's reader by name;
* :mod:`~rankflavor.io.formats.write` - the writers ``rankflavor convert`` uses.

The entry points stay :func:`rankflavor.io.qrels.read_qrels` and :func:`rankflavor.io.run.read_run`,
which read TREC themselves and hand every other format to :mod:`~rankflavor.io.formats.read`.
This package's modules never import those two (no cycle).
"""
