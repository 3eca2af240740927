"""``rankflavor.toml``: a project's pinned flavor, metric set, datasets, runs, baselines and gate.

The file is TOML read with :mod:`tomllib` (data only: no tags, nothing evaluated) and checked
key by key against :data:`~rankflavor.project.schema.SECTIONS`. Every command finds it from the
working directory upward (:func:`find_config`) unless given ``--config``. Paths in it are
relative to the file.

Examples
--------
>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "rankflavor.toml").write_text('''
... [project]
... scale = "trec_dl"
... [flavor]
... gain = "exp2m1"
... [metrics]
... measures = ["ndcg", "P"]
... cutoffs = [10]
... [history]
... path = "runs.sqlite"
... ''')
>>> c = load_config(d / "rankflavor.toml")
>>> c.metric_texts, c.knobs, c.history_path == d / "runs.sqlite"
(('ndcg@10', 'P@10'), {'gain': 'exp2'}, True)
>>> [m.knobs.get("rel") for m in c.measures()]
[None, '2']
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankflavor.project.locate import CONFIG_NAME, find_config
from rankflavor.project.schema import ConfigError, Section, bad, section, unknown

if TYPE_CHECKING:
    from rankflavor.metrics.measure import Measure


@dataclass(frozen=True)
class RunEntry:
    """A named run: its file and the dataset it answers."""

    name: str
    path: Path
    dataset: str | None


@dataclass(frozen=True)
class GateSettings:
    """``[gate]``: thresholds per measure (a number for all, or by measure name)."""

    floor: float | dict[str, float] | None = None
    max_drop: float | dict[str, float] | None = None
    alpha: float | None = None
    test: str = "t"
    seed: int = 0

    @staticmethod
    def _of(value: float | dict[str, float] | None, measure: str) -> float | None:
        if isinstance(value, dict):
            return value.get(measure)
        return value

    def floor_for(self, measure: str) -> float | None:
        return self._of(self.floor, measure)

    def max_drop_for(self, measure: str) -> float | None:
        return self._of(self.max_drop, measure)


@dataclass(frozen=True)
class Config:
    """A read and checked ``rankflavor.toml``.

    Attributes
    ----------
    path : the file (absolute); ``sha256`` its bytes' digest.
    scale, preset, question, name : ``[project]``.
    knobs : ``[flavor]``, canonical values.
    metric_texts : the measures of ``[metrics]``, cutoffs crossed in (``ndcg@10``).
    datasets, runs, baselines : paths resolved against the file's folder.
    gate : the thresholds.
    history_path : ``[history] path``, resolved; None when not set.
    """

    path: Path
    sha256: str
    name: str | None = None
    scale: str | None = None
    preset: str | None = None
    question: str | None = None
    knobs: dict[str, str] = field(default_factory=dict)
    metric_texts: tuple[str, ...] = ()
    datasets: dict[str, Path] = field(default_factory=dict)
    runs: dict[str, RunEntry] = field(default_factory=dict)
    baselines: dict[str, Path] = field(default_factory=dict)
    gate: GateSettings = field(default_factory=GateSettings)
    history_path: Path | None = None

    def measures(self, texts: list[str] | tuple[str, ...] | None = None) -> list[Measure]:
        """The measures ``texts`` (default: the metric set) under the pinned flavor: the preset's
        knobs, then ``[flavor]``, then the scale, as :func:`rankflavor.evaluate` builds them."""
        import inspect

        from rankflavor.presets import resolve_measures
        from rankflavor.presets.scales import scale_named

        items = list(texts if texts is not None else self.metric_texts)
        sc = scale_named(self.scale)
        # MERGE NOTE: main's resolve_measures takes the scale (preset < scale < typed knobs, commit
        # 1ba190d) and evaluate no longer applies it afterwards; follow whichever this tree has, so the
        # pinned measures are always built as evaluate builds them. Keep only the first branch after merging.
        if "scale" in inspect.signature(resolve_measures).parameters:
            return resolve_measures(items, self.preset, dict(self.knobs), sc)[0]  # type: ignore[call-arg,unused-ignore]
        measures, _ = resolve_measures(items, self.preset, dict(self.knobs))
        return [sc.measure(m) for m in measures] if sc is not None else measures

    def flavor_text(self) -> str:
        """The pinned flavor as the config states it: ``preset=beir, scale=trec_dl, gain=exp2``."""
        parts = [f"preset={self.preset}"] if self.preset else []
        parts += [f"scale={self.scale}"] if self.scale else []
        parts += [f"{k}={v}" for k, v in self.knobs.items()]
        return ", ".join(parts) or "rankflavor defaults"

    def dataset_of(self, run: str) -> str | None:
        """The dataset a named run answers (the only one when it names none; None when there is none)."""
        entry = self.runs[run]
        if entry.dataset is not None:
            return entry.dataset
        return next(iter(self.datasets), None)

    def require_file_or_name(self, value: str, kind: str) -> None:
        """Refuse ``value`` (a QRELS or RUN argument) that is neither a file nor a name the config
        gives (``kind``: ``"run"`` or ``"dataset"``), naming the config's names and the next step;
        without this the reader would say only "tasb: file not found".

        Raises
        ------
        InputError
            Exit status 3, as any missing input.
        """
        from rankflavor.errors import InputError, did_you_mean

        names = list(self.runs if kind == "run" else self.datasets)
        if os.path.exists(value) or value in names or (kind == "dataset" and value.startswith("irds:")):
            return
        table = f"[runs.{value}] path = \"FILE\"" if kind == "run" else f"[datasets.{value}] qrels = \"FILE\""
        raise InputError(value, None, f"no such file, and {self.path} names no {kind} {value!r} (its {kind}s: "
                         f"{', '.join(names) or 'none'}).{did_you_mean(value, names)} Give the file's path, or add "
                         f"{table} to {self.path.name}")

    def describe(self) -> dict[str, Any]:
        """The config as results' provenance records it."""
        return {"source": str(self.path), "sha256": self.sha256, "hash_of": "file bytes", "flavor": self.flavor_text()}


def project_config(option: str | os.PathLike[str] | None = None, start: str | os.PathLike[str] | None = None
                   ) -> Config | None:
    """The config a command uses: ``option`` (``--config``; must exist), else the nearest one, else None."""
    if option is not None:
        if not Path(option).is_file():
            raise ConfigError(f"--config {os.fspath(option)}: no such file")
        return load_config(option)
    found = find_config(start)
    return load_config(found) if found is not None else None


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read and check one config file; :class:`ConfigError` (exit 2) names the key, the value and the valid ones."""
    p = Path(path).resolve()
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{p}: not valid TOML ({exc})") from None
    try:
        return _build(p, hashlib.sha256(raw).hexdigest(), data)
    except ConfigError as exc:
        raise ConfigError(f"{p}: {exc}") from None


def _table(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise bad(where, value, "a table")
    return value


def _keys(s: Section, table: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The checked values of a ``keys``-layout table."""
    out: dict[str, Any] = {}
    valid = [k.name for k in s.keys]
    for name, value in table.items():
        key = s.key(name)
        if key is None:
            raise unknown(where, name, valid, value)
        out[name] = key.read(value, f"{where} {name}")
    for key in s.keys:
        if key.required and key.name not in out:
            raise ConfigError(f"{where} lacks its required key {key.name!r} ({key.kind}: {key.doc})")
    return out


def _read_sections(data: Mapping[str, Any]) -> dict[str, Any]:
    from rankflavor.project.schema import SECTIONS

    names = [s.name for s in SECTIONS]
    out: dict[str, Any] = {}
    for name, value in data.items():
        if name not in names:
            raise unknown("the file (sections)", name, names)
        s = section(name)
        table = _table(value, f"[{name}]")
        if s.layout == "keys":
            out[name] = _keys(s, table, f"[{name}]")
        elif s.layout == "named":
            out[name] = {str(n): _keys(s, _table(t, f"[{name}.{n}]"), f"[{name}.{n}]") for n, t in table.items()}
        else:
            out[name] = {str(n): s.keys[0].read(v, f"[{name}] {n}") for n, v in table.items()}
    return out


def _expand(items: tuple[str, ...], ks: tuple[int, ...]) -> tuple[str, ...]:
    """Metric names without a cutoff crossed with ``ks``; measures written with one kept."""
    from rankflavor.metrics import registry

    out: list[str] = []
    for item in items:
        spec = registry.lookup(item) if item.replace("_", "").isalnum() else None
        if spec is None or spec.cutoff == "none" or not ks:
            if spec is not None and spec.cutoff == "required" and not ks:
                raise ConfigError(f"[metrics] measures: {item} needs a cutoff: write {item}@10 or set [metrics] cutoffs")
            out.append(item)
        else:
            out += [f"{item}@{k}" for k in ks]
    return tuple(dict.fromkeys(out))


def _history_path(base: Path, text: str) -> Path:
    """``[history] path``: relative to the project folder (the config's) and inside it, or
    absolute (the user's explicit choice). A relative path that leaves the folder (``../..``)
    is refused, naming the key and where it leads: it used to create folders wherever it led,
    up to the filesystem's root (issue #32). rankflavor creates a missing folder for the
    history only inside the project (:func:`rankflavor.project.hooks.record`)."""
    given = Path(text).expanduser()
    if given.is_absolute():
        return given
    resolved = Path(os.path.normpath(base / given))
    if not resolved.is_relative_to(base):
        raise bad("[history] path", text, f"a path inside the project folder {base} (this one leads to {resolved}), "
                  "or an absolute path for a history kept elsewhere")
    return resolved


def _build(path: Path, digest: str, data: Mapping[str, Any]) -> Config:
    from rankflavor.errors import FlavorError

    s = _read_sections(data)
    base = path.parent
    project = s.get("project", {})
    metrics = s.get("metrics", {})
    texts = _expand(metrics.get("measures", ()), metrics.get("cutoffs", ())) if metrics else ()
    # (an ir_datasets name, irds:<id>, is no path of the project: rankflavor.io.irds)
    datasets = {n: Path(t["qrels"]) if str(t["qrels"]).startswith("irds:") else base / t["qrels"]
                for n, t in s.get("datasets", {}).items()}
    runs: dict[str, RunEntry] = {}
    for n, t in s.get("runs", {}).items():
        ds = t.get("dataset")
        if ds is not None and ds not in datasets:
            raise bad(f"[runs.{n}] dataset", ds, "a dataset of [datasets]: " + (", ".join(datasets) or "(none defined)"))
        if ds is None and len(datasets) > 1:
            raise ConfigError(f"[runs.{n}] lacks 'dataset', and there are {len(datasets)} datasets: {', '.join(datasets)}")
        runs[n] = RunEntry(n, base / t["path"], ds)
    baselines = {}
    for n, p in s.get("baselines", {}).items():
        if n not in datasets:
            raise bad(f"[baselines] {n}", p, "a key naming a dataset of [datasets]: " + (", ".join(datasets) or "(none)"))
        baselines[n] = base / p
    gate = GateSettings(**s.get("gate", {}))
    history = s.get("history", {}).get("path")
    config = Config(path, digest, project.get("name"), project.get("scale"), project.get("preset"),
                    project.get("question"), dict(s.get("flavor", {})), texts, datasets, runs, baselines, gate,
                    _history_path(base, history) if history is not None else None)
    if texts:
        try:
            measures = config.measures()
        except FlavorError as exc:
            raise ConfigError(f"[metrics] measures = {list(metrics['measures'])!r} under the pinned flavor: {exc}") from None
        names = [m.name for m in measures] + [m.display for m in measures]
        for key in ("floor", "max_drop"):
            table = getattr(gate, key)
            for k in table if isinstance(table, dict) else ():
                if k not in names:
                    raise unknown(f"[gate] {key}", k, list(dict.fromkeys(names)), table[k])
    return config


__all__ = ["CONFIG_NAME", "Config", "ConfigError", "GateSettings", "RunEntry", "find_config", "load_config",
           "project_config"]
