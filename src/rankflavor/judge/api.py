"""``judge``: grade (query, document) pairs with an LLM, through the chat-completions API.

The steps: read the pairs and the texts they need (:mod:`.texts`); drop, counting them, the
pairs whose query or passage text is missing or empty; take what the SQLite cache already holds
for this model and prompt (:mod:`.cache`; a pair whose text changed since is asked again); ask the
rest, ``concurrency`` at a time (:mod:`.client`), reading each answer strictly (:mod:`.prompt`)
and committing it to the cache as it arrives; return one :class:`~.result.Judged`.

The grades are labels of the source ``llm:<model>@<sha12>``: the model's name and the first 12
hex digits of the SHA-256 of the prompt template (UMBRELA's unless another is given), so labels
from another prompt or model are never mistaken for these.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from rankflavor.base.progress import Progress, task
from rankflavor.errors import UsageError
from rankflavor.judge.cache import Answer, Cache, text_sha
from rankflavor.judge.client import ChatClient, Failed, Refused, Reply
from rankflavor.judge.prompt import Prompt, flags, load_prompt, parse_answer, umbrela
from rankflavor.judge.result import Judged
from rankflavor.judge.texts import as_pairs, read_texts

#: The cache file ``judge`` uses unless told otherwise (in the working directory).
DEFAULT_CACHE = "rankflavor-judge.sqlite"
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def judge(pairs: Any, queries: Any, docs: Any, *, model: str, base_url: str = DEFAULT_BASE_URL,
          api_key_env: str | None = "OPENAI_API_KEY", prompt: Prompt | str | os.PathLike[str] | None = None,
          max_grade: int = 3, cache: str | os.PathLike[str] = DEFAULT_CACHE, concurrency: int = 4,
          retries: int = 5, timeout: float = 60.0, backoff: float = 1.0, max_wait: float = 120.0,
          price_in: float | None = None, price_out: float | None = None, dry_run: bool = False,
          progress: Progress | None = None, sleep: Callable[[float], None] | None = None) -> Judged:
    """Grade each (query, doc) pair of ``pairs`` with the LLM ``model`` (module docstring).

    Parameters
    ----------
    pairs : a file (``pool``'s trec stub or csv, qrels, CSV/TSV/Parquet of query,doc) or ``(query, doc)`` pairs.
    queries, docs : files of the texts (TSV ``id<TAB>text``, BEIR JSONL, Parquet) or ``{id: text}``.
    model : the model's name as the server knows it (no whitespace).
    base_url : the API's base URL; requests go to ``{base_url}/chat/completions``.
    api_key_env : the environment variable holding the key (read, never written or shown); a
        missing or empty variable sends no key (local servers need none).
    prompt : a :class:`~.prompt.Prompt`, a template file, or None for UMBRELA's.
    max_grade : the scale of a template file's grades, ``0..max_grade``.
    cache : the SQLite file of answers (created when missing).
    concurrency : requests in flight at once.
    retries, timeout, backoff, max_wait : see :mod:`rankflavor.judge.client`.
    price_in, price_out : price per million input / output tokens (the cost is None without them).
    dry_run : read everything and the cache, ask nothing; the result holds the first prompt.
    progress : where to report (None: nowhere).
    sleep : what waits between retries (default: a wait the run's stop can cut short); tests pass
        a recorder.

    Returns
    -------
    Judged
    """
    if not model or any(ch.isspace() for ch in model):
        raise UsageError(f"the model name must be non-empty with no whitespace (it goes in the labels' source "
                         f"column), not {model!r}")
    if concurrency < 1:
        raise UsageError(f"concurrency must be at least 1, not {concurrency}")
    if isinstance(prompt, Prompt):
        chosen = prompt
    elif prompt is None:
        chosen = umbrela()
    else:
        chosen = load_prompt(prompt, max_grade)
    key = os.environ.get(api_key_env) if api_key_env else None
    client = ChatClient(base_url, model, key, timeout=timeout, retries=retries, backoff=backoff, max_wait=max_wait,
                        sleep=sleep)  # (checks the URL and the numbers before any file is read)
    found = as_pairs(pairs)
    qtext = _texts(queries, {q for q, _ in found.pairs}, "query")
    dtext = _texts(docs, {d for _, d in found.pairs}, "passage")
    source = f"llm:{model}@{chosen.sha12}"

    missing: list[tuple[str, str, str]] = []
    flagged: list[tuple[str, str, str, tuple[str, ...]]] = []
    work: list[tuple[str, str, str, str]] = []  # (query, doc, query text, passage text)
    for q, d in sorted(found.pairs):
        what = [name for name, text in (("query text", qtext.get(q)), ("passage text", dtext.get(d)))
                if text is None or not text.strip()]
        if what:
            missing.append((q, d, " and ".join(what) + " missing or empty"))
            continue
        work.append((q, d, qtext[q], dtext[d]))
        for name, text in (("query", qtext[q]), ("passage", dtext[d])):
            rules = flags(text)
            if rules:
                flagged.append((q, d, name, tuple(rules)))

    with Cache(cache, model, chosen.sha256, readonly=dry_run) as store:
        held = store.get_all()
        answers: dict[tuple[str, str], Answer] = {}
        to_ask: list[tuple[str, str, str, str]] = []
        stale = 0
        for q, d, qt, pt in work:
            hit = held.get((q, d))
            if hit is not None and hit.query_sha == text_sha(qt) and hit.passage_sha == text_sha(pt):
                answers[(q, d)] = hit
            else:
                stale += hit is not None
                to_ask.append((q, d, qt, pt))
        cached = len(answers)
        counts = {"pairs": len(found.pairs), "duplicates": found.duplicates, "missing": len(missing),
                  "cached": cached, "asked": len(to_ask), "stale": stale, "flagged": len(flagged)}
        common = {"source": source, "model": model, "prompt": chosen.name, "prompt_sha256": chosen.sha256,
                  "endpoint": client.endpoint, "missing": tuple(missing), "flagged": tuple(flagged)}
        if dry_run:
            first = tuple(chosen.messages(to_ask[0][2], to_ask[0][3])) if to_ask else None
            return _result(common, counts, answers, set(), {}, 0, 0, (price_in, price_out), first_prompt=first,
                           dry_run=True)
        fresh: set[tuple[str, str]] = set()
        try:
            failed = _ask_all(client, chosen, to_ask, store, answers, fresh, progress, concurrency)
        except Refused as exc:
            where = (f"the key is read from ${api_key_env} ({'set' if key else 'unset or empty'})" if api_key_env
                     else "no key was sent")
            raise Refused(f"{exc}; {where}; the answers before it are in the cache {store.path}") from None
    return _result(common, counts, answers, fresh, failed, client.requests, client.retried, (price_in, price_out))


def _result(common: dict[str, Any], counts: dict[str, int], answers: Mapping[tuple[str, str], Answer],
            fresh: set[tuple[str, str]], failed: Mapping[tuple[str, str], str], requests: int, retries: int,
            prices: tuple[float | None, float | None], first_prompt: tuple[dict[str, str], ...] | None = None,
            dry_run: bool = False) -> Judged:
    labels = tuple((q, d, a.grade) for (q, d), a in sorted(answers.items()) if a.grade is not None)
    malformed = tuple((q, d, a.reason, a.raw) for (q, d), a in sorted(answers.items()) if a.grade is None)
    tokens_in = sum(answers[k].tokens_in for k in fresh)
    tokens_out = sum(answers[k].tokens_out for k in fresh)
    price_in, price_out = prices
    cost = None
    if price_in is not None or price_out is not None:
        cost = (tokens_in * (price_in or 0.0) + tokens_out * (price_out or 0.0)) / 1e6
    counts = {**counts, "labels": len(labels), "malformed": len(malformed), "failed": len(failed),
              "requests": requests, "retries": retries, "tokens_in": tokens_in, "tokens_out": tokens_out}
    return Judged(**common, labels=labels, malformed=malformed,
                  failed=tuple((q, d, why) for (q, d), why in sorted(failed.items())), counts=counts, cost=cost,
                  dry_run=dry_run, first_prompt=first_prompt)


def _texts(given: Any, wanted: set[str], kind: str) -> dict[str, str]:
    if isinstance(given, (str, os.PathLike)):
        return read_texts(Path(given), wanted, kind)
    if isinstance(given, Mapping):
        return {str(k): v for k, v in given.items() if str(k) in wanted and isinstance(v, str)}
    raise UsageError(f"the {kind} texts must be a file or a mapping of id to text, not {type(given).__name__}")


def _ask_all(client: ChatClient, prompt: Prompt, to_ask: list[tuple[str, str, str, str]], store: Cache,
             answers: dict[tuple[str, str], Answer], fresh: set[tuple[str, str]], progress: Progress | None,
             concurrency: int) -> dict[tuple[str, str], str]:
    """Ask every pair of ``to_ask``, at most ``concurrency`` at once; each answer is stored as it
    arrives. Returns the failures, by pair."""
    failed: dict[tuple[str, str], str] = {}
    pending = iter(to_ask)
    running: dict[Future[Reply], tuple[str, str, str, str]] = {}
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="judge")
    with task(progress, f"judge: {len(to_ask)} pairs to ask", total=len(to_ask)) as bar:
        try:
            while True:
                while len(running) < concurrency:
                    item = next(pending, None)
                    if item is None:
                        break
                    running[pool.submit(client.ask, prompt.messages(item[2], item[3]))] = item
                if not running:
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    q, d, qt, pt = running.pop(future)
                    try:
                        reply = future.result()
                    except Failed as exc:
                        failed[(q, d)] = exc.reason
                    else:
                        grade, reason = parse_answer(reply.content, prompt.max_grade)
                        answer = Answer(grade, reason, reply.content, reply.tokens_in, reply.tokens_out,
                                        text_sha(qt), text_sha(pt))
                        store.put(q, d, answer)
                        answers[(q, d)] = answer
                        fresh.add((q, d))
                    bar.advance()
        except BaseException:
            client.stop.set()  # the workers stop between attempts; what was answered is stored
            # the requests already in flight end (each within the timeout) before the error is
            # raised: no request of this run reaches the server after judge() has returned
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown()
    return failed


__all__ = ["DEFAULT_BASE_URL", "DEFAULT_CACHE", "judge"]
