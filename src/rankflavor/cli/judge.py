"""The ``judge`` command: grade (query, document) pairs with an LLM (:mod:`rankflavor.judge`).

Defined here and added to the group by :mod:`rankflavor.cli.main`; like it, this module imports only
click at module level. Exit status: 0, or 1 when some pair got no answer after the retries (the
grades that came are written, and the next run asks only the rest); 2 for a usage error or a
server that refuses the key, model or URL; 3 for a bad input file.
"""

from __future__ import annotations

import sys

import click

from rankflavor.cli.output import emit, quiet_option, shown_progress


@click.command("judge")
@click.argument("pairs", type=click.Path(dir_okay=False))
@click.option("--query-texts", "queries", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="Query texts: TSV 'id<TAB>text' (MS MARCO queries.tsv), JSONL with _id and text (BEIR "
              "queries.jsonl) or Parquet.")
@click.option("--passages", "docs", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="Passage texts: TSV 'id<TAB>text' (MS MARCO collection.tsv), JSONL with _id, title, text (BEIR "
              "corpus.jsonl) or Parquet. Only the ids PAIRS names are kept.")
@click.option("--model", required=True, help="The model's name as the server knows it (gpt-4o, llama3.1:8b ...).")
@click.option("--base-url", default="https://api.openai.com/v1", show_default=True,
              help="The OpenAI-compatible API: vLLM http://localhost:8000/v1, Ollama http://localhost:11434/v1, "
              "LM Studio http://localhost:1234/v1. Requests go to BASE_URL/chat/completions.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, metavar="NAME",
              help="The environment variable holding the API key; unset or empty sends none (local servers). "
              "The key is never written anywhere.")
@click.option("--prompt", "prompt_file", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="A user-message template with {query} and {passage} (each replaced once), asking for the answer "
              "'##final score: G'. Default: UMBRELA's prompt (grades 0-3).")
@click.option("--max-grade", type=click.IntRange(min=1), default=3, show_default=True,
              help="The grades of a --prompt template: 0..N. An answer off the scale is malformed.")
@click.option("--cache", default="rankflavor-judge.sqlite", show_default=True, type=click.Path(dir_okay=False),
              help="SQLite file of the answers, by model, prompt hash, query and doc: a rerun asks only what it lacks.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="Requests in flight.")
@click.option("--retries", type=click.IntRange(min=0), default=5, show_default=True,
              help="Retries of a request after HTTP 429, 5xx, a timeout or a response that is no chat completion.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              metavar="SECONDS", help="How long the server may stay silent in one attempt.")
@click.option("--backoff", type=click.FloatRange(min=0), default=1.0, show_default=True, metavar="SECONDS",
              help="The wait before the first retry; doubled at each retry (with jitter), never less than "
              "the server's Retry-After.")
@click.option("--max-wait", type=click.FloatRange(min=0), default=120.0, show_default=True, metavar="SECONDS",
              help="A Retry-After longer than this fails the request instead of waiting.")
@click.option("--price-in", type=click.FloatRange(min=0), default=None, metavar="PRICE",
              help="Price per million input tokens (for the cost in the summary).")
@click.option("--price-out", type=click.FloatRange(min=0), default=None, metavar="PRICE",
              help="Price per million output tokens.")
@click.option("--dry-run", is_flag=True,
              help="Ask nothing: print the counts (pairs, cached, to ask) and the first prompt that would be sent.")
@click.option("--format", "fmt", type=click.Choice(("trec", "json")), default="trec", show_default=True,
              help="trec: qrels 'QUERY 0 DOC GRADE llm:MODEL@SHA12', sorted; json: the summary, the labels and "
              "every malformed, failed, flagged and missing pair.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None, metavar="FILE",
              help="Write the labels here (default: standard output). The summary goes to standard error.")
@quiet_option
def judge_cmd(pairs: str, queries: str, docs: str, model: str, base_url: str, api_key_env: str,
              prompt_file: str | None, max_grade: int, cache: str, concurrency: int, retries: int, timeout: float,
              backoff: float, max_wait: float, price_in: float | None, price_out: float | None, dry_run: bool,
              fmt: str, output: str | None) -> None:
    """Grade the (query, doc) PAIRS with an LLM: `pool` output, qrels to judge again, or a CSV/TSV of pairs.

    Malformed answers and failed requests give no grade: they are counted on standard error and
    listed by --format json. Exit status 1 when a request failed (run again to ask those only).
    """
    from rankflavor.judge import judge

    with shown_progress() as bar:
        result = judge(pairs, queries, docs, model=model, base_url=base_url, api_key_env=api_key_env or None,
                       prompt=prompt_file, max_grade=max_grade, cache=cache, concurrency=concurrency, retries=retries,
                       timeout=timeout, backoff=backoff, max_wait=max_wait, price_in=price_in, price_out=price_out,
                       dry_run=dry_run, progress=bar)
    if dry_run:
        click.echo(result.to_json() if fmt == "json" else result.dry_run_text(), nl=False)
        return
    text = result.to_json() if fmt == "json" else result.to_qrels()
    emit(text, output)
    click.echo(result.summary(), err=True, nl=False)
    if result.counts["failed"]:
        sys.exit(1)


COMMANDS = (judge_cmd,)
