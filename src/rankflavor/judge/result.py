"""What :func:`rankflavor.judge.judge` returns, and its renderings: qrels, a summary, JSON.

One result, every format: the qrels lines, the summary lines and the JSON document are all read
off the same :class:`Judged`; ``tests/judge/test_judge_cli.py`` compares their numbers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

#: The counts every rendering shows, in order.
COUNTS = ("pairs", "duplicates", "missing", "cached", "asked", "stale", "labels", "malformed", "failed", "flagged",
          "requests", "retries", "tokens_in", "tokens_out")


@dataclass(frozen=True)
class Judged:
    """The grades an LLM judge gave, and everything counted on the way.

    Attributes
    ----------
    source : the labels' source, ``llm:<model>@<sha12>`` (the prompt template's SHA-256, first 12 hex).
    model, prompt, prompt_sha256, endpoint : what was asked, of whom (the endpoint has no password).
    labels : ``(query, doc, grade)``, sorted by query id, then doc id (as text).
    malformed : ``(query, doc, reason, raw answer)``: answers that are no grade (cached ones included).
    failed : ``(query, doc, reason)``: no answer after the retries (asked again by the next run).
    flagged : ``(query, doc, field, rules)``: a query or passage text that talks to the judge
        (:func:`rankflavor.judge.prompt.flags`); its answer is read like any other.
    missing : ``(query, doc, what)``: pairs not asked, a text being absent or empty.
    counts : the :data:`COUNTS`: ``pairs`` distinct pairs (``duplicates`` repeats not counted),
        ``cached`` answers taken from the cache, ``asked`` pairs sent this run (``stale`` of them
        because a text changed since the cached answer), ``labels`` grades written,
        ``requests`` HTTP requests made (``retries`` of them repeats), ``tokens_in``/``tokens_out``
        the ``usage`` of this run's answers.
    cost : ``tokens_in * price_in + tokens_out * price_out`` per million tokens, when prices are given.
    dry_run, first_prompt : for a dry run, the messages the first pair to ask would send.
    """

    source: str
    model: str
    prompt: str
    prompt_sha256: str
    endpoint: str
    labels: tuple[tuple[str, str, int], ...] = ()
    malformed: tuple[tuple[str, str, str, str], ...] = ()
    failed: tuple[tuple[str, str, str], ...] = ()
    flagged: tuple[tuple[str, str, str, tuple[str, ...]], ...] = ()
    missing: tuple[tuple[str, str, str], ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    cost: float | None = None
    dry_run: bool = False
    first_prompt: tuple[dict[str, str], ...] | None = None

    def to_qrels(self) -> str:
        """TREC qrels with the source column: ``QUERY 0 DOC GRADE SOURCE`` lines, sorted."""
        return "".join(f"{q} 0 {d} {g} {self.source}\n" for q, d, g in self.labels)

    def summary(self, limit: int = 10) -> str:
        """Lines for a person (standard error): the counts, then the first ``limit`` pairs of each
        list (malformed, failed, flagged, missing)."""
        c = self.counts
        head = "judge (dry run)" if self.dry_run else "judge"
        lines = [f"{head}: {c['pairs']} pairs ({c['duplicates']} repeated lines), {self.source} via {self.endpoint}",
                 f"  cached {c['cached']}, asked {c['asked']} (stale {c['stale']}), missing text {c['missing']}",
                 f"  labels {c['labels']}, malformed {c['malformed']}, failed {c['failed']}, flagged {c['flagged']}",
                 f"  requests {c['requests']} (retries {c['retries']}), tokens in {c['tokens_in']}, "
                 f"out {c['tokens_out']}" + (f", cost {self.cost:.6f}" if self.cost is not None else "")]
        for name, rows in (("malformed", [(q, d, f"{r}; answer {raw[:80]!r}") for q, d, r, raw in self.malformed]),
                           ("failed", self.failed),
                           ("flagged", [(q, d, f"{f}: {', '.join(rules)}") for q, d, f, rules in self.flagged]),
                           ("missing", self.missing)):
            for q, d, why in list(rows)[:limit]:
                lines.append(f"  {name}: query {q!r} doc {d!r}: {why}")
            if len(rows) > limit:
                lines.append(f"  {name}: {len(rows) - limit} more (--format json lists them all)")
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """The whole result as JSON-ready data."""
        doc: dict[str, Any] = {
            "source": self.source, "model": self.model, "prompt": self.prompt, "prompt_sha256": self.prompt_sha256,
            "endpoint": self.endpoint, "dry_run": self.dry_run,
            "summary": {**{k: self.counts[k] for k in COUNTS}, "cost": self.cost},
            "labels": [{"query": q, "doc": d, "grade": g} for q, d, g in self.labels],
            "malformed": [{"query": q, "doc": d, "reason": r, "answer": raw} for q, d, r, raw in self.malformed],
            "failed": [{"query": q, "doc": d, "reason": r} for q, d, r in self.failed],
            "flagged": [{"query": q, "doc": d, "field": f, "rules": list(rules)} for q, d, f, rules in self.flagged],
            "missing": [{"query": q, "doc": d, "what": w} for q, d, w in self.missing],
        }
        if self.first_prompt is not None:
            doc["first_prompt"] = list(self.first_prompt)
        return doc

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def dry_run_text(self) -> str:
        """What a dry run prints: the counts and the first prompt that would be sent."""
        c = self.counts
        to_ask = c["asked"]
        lines = [f"would ask {to_ask} of {c['pairs']} pairs ({to_ask - c['stale']} new, {c['stale']} whose text changed "
                 f"since its cached answer); {c['cached']} cached, {c['missing']} missing a text; "
                 f"{self.endpoint} as {self.source}"]
        if self.first_prompt:
            lines.append("first prompt:")
            for message in self.first_prompt:
                lines.append(f"--- {message['role']} ---")
                lines.append(message["content"])
        return "\n".join(lines) + "\n"


__all__ = ["COUNTS", "Judged"]
