"""Implicit judgments from clicks: OpenSearch User Behavior Insights (UBI) logs -> graded
judgments by clicks over expected clicks (COEC), as the Search Relevance Workbench computes them.

* :mod:`~rankflavor.clicks.ubi` - :func:`read_ubi_queries`, :func:`read_ubi_events` (JSON lines,
  search hits, ``_bulk`` files, Parquet) and :func:`read_query_map`;
* :mod:`~rankflavor.clicks.coec` - :func:`coec`: the position-bias table, the (query, document)
  pairs, their ratings and every count, as a :class:`ClickJudgments`;
* :mod:`~rankflavor.clicks.result` - the :class:`ClickJudgments` and their text: TREC qrels with the source column
  (``QUERY 0 DOC RATING clicks:coec``), JSON or CSV, and the summary.

Examples
--------
>>> from rankflavor.clicks import coec  # doctest: +SKIP
>>> result = coec("ubi_queries.jsonl", "ubi_events.jsonl", max_rank=20)  # doctest: +SKIP
>>> result.ratings()["ps4"]  # doctest: +SKIP
{'B08GPZW3FB': 1.316}
"""

from __future__ import annotations

from rankflavor.clicks.coec import coec, query_id_of, text_of_query_id
from rankflavor.clicks.result import DEFAULT_MAX_RANK, SOURCE, ClickJudgment, ClickJudgments, CoecSettings, PositionCtr
from rankflavor.clicks.ubi import Event, UbiEvents, UbiQueries, read_query_map, read_ubi_events, read_ubi_queries

__all__ = ["DEFAULT_MAX_RANK", "SOURCE", "ClickJudgment", "ClickJudgments", "CoecSettings", "Event", "PositionCtr",
           "UbiEvents", "UbiQueries", "coec", "query_id_of", "read_query_map", "read_ubi_events", "read_ubi_queries",
           "text_of_query_id"]
