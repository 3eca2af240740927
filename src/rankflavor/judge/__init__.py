"""An LLM as a relevance judge: ``rankflavor judge`` and :func:`judge`.

* :mod:`~rankflavor.judge.api` - :func:`judge`: the pairs in, a :class:`Judged` out;
* :mod:`~rankflavor.judge.prompt` - UMBRELA's prompt (the default), templates, the strict reading
  of an answer and the flags of texts that talk to the judge;
* :mod:`~rankflavor.judge.client` - the chat-completions request, its retries and timeout;
* :mod:`~rankflavor.judge.cache` - the SQLite cache of answers (a killed run resumes);
* :mod:`~rankflavor.judge.texts` - the pairs, queries and passages read from files;
* :mod:`~rankflavor.judge.result` - :class:`Judged` and its renderings (qrels, summary, JSON).
"""

from __future__ import annotations

from rankflavor.judge.api import DEFAULT_BASE_URL, DEFAULT_CACHE, judge
from rankflavor.judge.client import Refused
from rankflavor.judge.prompt import UMBRELA_TEMPLATE, Prompt, flags, load_prompt, parse_answer, umbrela
from rankflavor.judge.result import Judged

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_CACHE", "UMBRELA_TEMPLATE", "Judged", "Prompt", "Refused", "flags", "judge",
           "load_prompt", "parse_answer", "umbrela"]
