"""``--qrels-format``, ``--run-format``, ``--columns``, ``--labels`` and ``--label-source``: one
decorator for every command that reads judgments and runs.

:func:`input_formats` adds the options to a command whose arguments are ``qrels`` and
``run`` or ``runs``, and hands the command those paths as :class:`rankflavor.io.formats.spec.Input`
values (path-like, so the library reads them as paths) when an option is given. Like
:mod:`rankflavor.cli.main`, this module imports only click at module level.

``--labels`` and ``--label-source`` travel with the judgments' :class:`Input`, so every command
reading them through :func:`rankflavor.io.qrels.read_qrels` selects and names the labels alike
(:mod:`rankflavor.io.labels`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from rankflavor.io.formats.spec import FORMATS

#: ``--qrels-format`` / ``--run-format`` choices: ``auto`` and every format of the table
#: (:data:`rankflavor.io.formats.spec.TABLE`; the module imports no NumPy).
FORMAT_NAMES = ("auto", *FORMATS)
FORMAT_HELP = ("auto (by the file's name: .parquet .jsonl .json .csv .tsv, anything else TREC), trec, msmarco, "
                "beir, json, csv, tsv, jsonl, parquet, quepid, es (Elasticsearch/OpenSearch), srw (OpenSearch Search "
                "Relevance Workbench judgments), umbrela (UMBRELA's LLM judgments); compressed files "
                "(gzip, bz2, xz, zstd) are read as they are.")


def auto_is_none(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Callback of a format option whose command takes None for "choose by the file's name"."""
    return None if value is None or value.lower() == "auto" else value


def input_formats(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--qrels-format``, ``--run-format``, ``--columns``, ``--labels`` and ``--label-source``
    to a command whose judgments argument is ``qrels``."""
    return judgment_formats(("qrels",))(command)


def judgment_formats(names: tuple[str, ...], labels: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options of :func:`input_formats` for a command whose judgments arguments are ``names``
    (``estimate``'s and ``agreement``'s two files: ``--qrels-format`` and ``--columns`` apply to
    both); without ``labels``, no ``--labels`` and ``--label-source`` (a command whose arguments
    name the sources, human and judge, chooses and renames none within a file)."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def wrapper(*args: Any, qrels_format: str, run_format: str, columns: str | None, label_source: str | None = None,
                    labels: str = "any", **kwargs: Any) -> Any:
            chosen = None if labels.strip().lower() == "any" else labels
            if qrels_format != "auto" or run_format != "auto" or columns or chosen or label_source:
                _wrap(kwargs, qrels_format, run_format, columns, chosen, label_source, names)
            return command(*args, **kwargs)

        which = "QRELS" if names == ("qrels",) else "QRELS (here both " + " and ".join(n.upper() for n in names) + ")"
        options = [
            click.option("--qrels-format", type=click.Choice(FORMAT_NAMES, case_sensitive=False), default="auto",
                         show_default=True, help=f"Format of {which}: " + FORMAT_HELP),
            click.option("--run-format", type=click.Choice(FORMAT_NAMES, case_sensitive=False), default="auto",
                         show_default=True, help="Format of the run(s), as --qrels-format."),
            click.option("--columns", default=None, metavar="ROLE=NAME,...",
                         help="Column names of csv, tsv, jsonl and parquet inputs: query=qid,doc=docid,grade=label "
                         "(judgments; source=NAME: their label source column), score=... or rank=... (runs). Default: "
                         "query_id, doc_id, relevance, source, score."),
            *([click.option("--labels", default="any", show_default=True, metavar="any|human|llm|clicks|prefer=KIND",
                            help="Which judgments to evaluate, by the kind of their label source: any; only human, llm "
                            "or clicks (or another kind present); prefer=KIND: that kind's judgment where a (query, "
                            "doc) pair has one, the others elsewhere. What is left out is counted and reported.")]
              if labels else []),
            *([click.option("--label-source", default=None, metavar="SOURCE|NAME=SOURCE,...",
                            help="The label source of judgments that name none (human:nist, llm:MODEL), or "
                            "NAME=SOURCE renaming sources QRELS names (a Quepid judge: 'OSC AI Judge=llm:gpt-4o').")]
              if labels else []),
        ]
        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper

    return decorate


def _wrap(kwargs: dict[str, Any], qrels_format: str, run_format: str, columns: str | None, labels: str | None = None,
          label_source: str | None = None, names: tuple[str, ...] = ("qrels",)) -> None:
    """Replace the command's paths by Inputs carrying their format and the columns of their kind
    (the judgments' also the ``--labels`` choice and the ``--label-source`` rule)."""
    from rankflavor.errors import UsageError
    from rankflavor.io.formats.spec import NAMED_COLUMNS, Input, format_by_name, format_named, parse_columns, roles_of

    if kwargs.get("engine") == "spark":
        raise UsageError("--qrels-format, --run-format, --columns, --labels and --label-source are for the local engine "
                         "(Spark reads TREC files)")
    if labels is not None or label_source is not None:
        from rankflavor.io.labels import canonical_choice, parse_rule

        labels = None if labels is None else canonical_choice(labels)  # a usage error before any file is read
        if label_source is not None:
            parse_rule(label_source)
    roles = parse_columns(columns)
    used = False

    def one(path: Any, fmt: str, kind: str) -> Any:
        nonlocal used
        if path is None:
            return None
        chosen = format_named(fmt)
        mine = roles_of(roles, kind)
        if mine and (chosen or format_by_name(path)) in NAMED_COLUMNS:
            used = True
        else:
            mine = {}
        if kind == "qrels":
            return Input(str(path), chosen, mine, label_source, labels)
        return Input(str(path), chosen, mine)

    for name in names:
        if name in kwargs:
            kwargs[name] = one(kwargs[name], qrels_format, "qrels")
    if "run" in kwargs:
        kwargs["run"] = one(kwargs["run"], run_format, "run")
    if "runs" in kwargs:
        kwargs["runs"] = tuple(one(r, run_format, "run") for r in kwargs["runs"])
    if roles and not used:
        raise UsageError(f"--columns names the columns of {', '.join(NAMED_COLUMNS)} inputs; none of the inputs is "
                         "one (give --qrels-format/--run-format)")


class SparkChoice:
    """``--spark-master`` and ``--spark-conf`` as given; :meth:`session` starts the session only
    when the command is about to read (a usage error found first costs no JVM)."""

    def __init__(self, master: str | None, conf: tuple[str, ...]) -> None:
        self.master, self.conf = master, conf

    def session(self) -> Any:
        from rankflavor.spark import local_session, parse_conf

        return local_session(self.master, conf=parse_conf(self.conf))


def spark_engine(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--engine local|spark``, ``--spark-master`` and ``--spark-conf`` to a command, which
    receives ``engine`` and ``spark`` (a :class:`SparkChoice`, None for the local engine)."""

    @functools.wraps(command)
    def wrapper(*args: Any, engine: str, spark_master: str | None, spark_conf: tuple[str, ...], **kwargs: Any) -> Any:
        if engine != "spark" and (spark_master is not None or spark_conf):
            from rankflavor.errors import UsageError

            raise UsageError("--spark-master and --spark-conf are for --engine spark")
        choice = SparkChoice(spark_master, spark_conf) if engine == "spark" else None
        if choice is None:  # a directory is Spark's to read (its part files); locally, the wrong argument
            import os

            from rankflavor.errors import UsageError

            for name in ("qrels", "run", "runs"):
                for path in kwargs.get(name) or () if name == "runs" else (kwargs.get(name),):
                    if path is not None and os.path.isdir(os.fspath(path)):
                        raise UsageError(f"{os.fspath(path)}: is a directory, expected a file (a directory of part "
                                         "files is read with --engine spark)")
        return command(*args, engine=engine, spark=choice, **kwargs)

    options = [
        click.option("--engine", type=click.Choice(("local", "spark")), default="local", show_default=True,
                     help="local: this process (NumPy). spark: Spark reads the inputs (files, directories of part "
                     "files, globs, Parquet; any filesystem Hadoop knows), partitions them by query and runs this "
                     "same engine on each partition (needs pyspark and Java 17+); every number and output as local."),
        click.option("--spark-master", "spark_master", default=None, metavar="URL",
                     help="With --engine spark: the Spark master (local[4], spark://host:7077, yarn, k8s://...). "
                     "Default: spark.master of spark-defaults.conf (SPARK_CONF_DIR, SPARK_HOME/conf), else local[2]."),
        click.option("--spark-conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
                     help="With --engine spark: a Spark setting for the session (spark.executor.memory=8g). "
                     "Repeatable; applied after rankflavor's own, so it wins."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper
