"""Reading inputs: TREC files, pytrec_eval-style dicts and DataFrames, into tables.

* :mod:`~rankflavor.io.inputs` - ``as_qrels`` / ``as_run``: whatever the caller has, as tables;
* :mod:`~rankflavor.io.qrels`, :mod:`~rankflavor.io.run` - ``read_qrels`` / ``read_run``, in any
  format: TREC here, every other format by :mod:`~rankflavor.io.formats`, ``irds:<id>`` by
  :mod:`~rankflavor.io.irds` (an ir_datasets dataset's judgments, from its cache);
* :mod:`~rankflavor.io.compression` - gzip, bz2, xz and zstd by magic number;
* :mod:`~rankflavor.io.columnar` - the columnar read of a file, whole or in pieces on every core;
* :mod:`~rankflavor.io.parse` - pyarrow's parse of a whole file or of one piece;
* :mod:`~rankflavor.io.lines` - the line-by-line reader, trec_eval's rules, errors naming lines;
* :mod:`~rankflavor.io.source` - bytes, line-aligned pieces, the blank scan, ``BLANKS``;
* :mod:`~rankflavor.io.trec` - the readers' public names gathered in one place.

Each module imports only those listed after it (and ``trec`` gathers them), so there is no cycle.
"""
