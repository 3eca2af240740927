"""Small judgments files in the layouts that name label sources, written from each format's
documentation and source (read through the project's search tools; nothing copied):

* SRW: opensearch-project/search-relevance ``src/main/java/org/opensearch/searchrelevance/model/Judgment.java``
  (``toXContent``: id, timestamp, name, status, type, metadata, judgmentRatings of
  ``{query, ratings: [{docId, rating}]}``), ``model/JudgmentType.java`` (LLM_JUDGMENT,
  UBI_JUDGMENT, IMPORT_JUDGMENT), ``judgments/LlmJudgmentsProcessor.java`` (metadata ``modelId``),
  ``judgments/UbiJudgmentsProcessor.java`` (metadata ``clickModel``: coec), and
  ``src/test/resources/judgment/ImportJudgments.json`` (ratings as strings, ASINs as docIds);
  a GET answer wraps the list in ``_source`` (``action/judgment/JudgmentsIT.java``).
* UMBRELA: castorini/umbrela ``src/umbrela/utils/common_utils.py`` (``write_modified_qrel``:
  ``qid Q0 docid grade``) and ``src/umbrela/evaluation.py`` (the file name
  ``<qrels>_<model>_<categories>_<few-shot>_<samples>.txt`` under ``modified_qrels/``).
* Quepid: o19s/quepid ``app/controllers/api/v1/judgements_controller.rb`` (``index`` as CSV:
  ``query,docid,<judge full name>...``, ``Anonymous`` for no user, empty cells, a space before
  a query text starting with ``= + - @``); AI judges are users (``app/models/user.rb``,
  ``ai_judge?``) named freely (``lib/tasks/sample_data.thor``: "OSC AI Judge").
"""

from __future__ import annotations

import json

SRW_IMPORT = {
    "name": "ESCI Judgments",
    "description": "Judgments generated outside SRW",
    "type": "IMPORT_JUDGMENT",
    "judgmentRatings": [
        {"query": "metal frame", "ratings": [{"rating": "1.0", "docId": "B071XJXHPN"},
                                             {"rating": "0.4", "docId": "B078GJZ7G4"}]},
        {"query": "steel bed", "ratings": [{"rating": "0.9", "docId": "B097Q69V1B"}]},
    ],
}

SRW_LLM_GET = {
    "_index": "search-relevance-judgment",
    "_id": "b54f791a-3b02-49cb-a06c-46ab650b2ade",
    "found": True,
    "_source": {
        "id": "b54f791a-3b02-49cb-a06c-46ab650b2ade",
        "timestamp": "2025-06-11T06:07:23.766Z",
        "name": "llm judgments",
        "status": "COMPLETED",
        "type": "LLM_JUDGMENT",
        "metadata": {"querySetId": "q-1", "searchConfigurationList": ["c-1"], "size": 5, "modelId": "N8AE1osB",
                     "tokenLimit": 4000, "contextFields": ["title"], "ignoreFailure": False},
        "judgmentRatings": [
            {"query": "metal frame", "ratings": [{"docId": "B071XJXHPN", "rating": "0.8"},
                                                 {"docId": "B087BLP58S", "rating": "0.6"}]},
        ],
    },
}

SRW_UBI_SEARCH = {
    "hits": {"total": {"value": 1}, "hits": [{
        "_index": "search-relevance-judgment", "_id": "u-1",
        "_source": {
            "id": "u-1", "timestamp": "2025-06-11T06:07:23.766Z", "name": "clicks", "status": "COMPLETED",
            "type": "UBI_JUDGMENT", "metadata": {"clickModel": "coec", "maxRank": 20},
            "judgmentRatings": [{"query": "steel bed", "ratings": [{"docId": "B097Q69V1B", "rating": "1.25"}]}],
        }}]},
}


def srw_text(value: dict) -> str:  # type: ignore[type-arg]
    return json.dumps(value, indent=2)


#: UMBRELA's judgments of two DL19-like queries: four fields, the iteration ``Q0``.
UMBRELA_NAME = "qrels.dl19-passage_gpt-4o_0123_0_1.txt"
UMBRELA_TEXT = "1037798 Q0 7065735 3\n1037798 Q0 1206337 0\n104861 Q0 1000000 1\n"

#: Quepid's book judgements: two people and an AI judge; one pair rated by nobody.
QUEPID_BOOK = (
    "query,docid,Jane Doe,OSC AI Judge,Anonymous\n"
    "star wars,d1,3,2,\n"
    "star wars,d2,,1,\n"
    " -sith,d3,0,,\n"
    "star wars,d9,,,\n"
)
