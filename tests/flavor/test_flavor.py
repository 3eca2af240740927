"""Flavors and measures: canonical strings parse back to equal values, and bad text is refused
with the valid choices and the closest one.

Round trip coverage. Knob values come from each knob's own ``values`` text in ``KNOBS`` (so a
new knob or value is covered without editing this file; a placeholder such as ``jk(b)`` is
replaced by concrete examples, and an unknown placeholder fails the test). For every metric the
knobs that interact in the canonical string (the metric's own knobs: gain, discount, ideal,
ideal_cut, max_grade, rel, param, total, and the cutoff k, which decides how ideal_cut and rel
print) run through their full ``itertools.product``; the input-policy knobs, whose text never
depends on another knob, are cycled alongside so every value of each appears; and for ndcg@10
the multi-valued input-policy knobs also run through their own full product.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
import json
import math
import pickle
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankflavor.errors import FlavorError, UsageError
from rankflavor.flavor import flavor as flavor_module
from rankflavor.flavor.flavor import (
    KNOBS,
    KNOBS_ORDER,
    Discount,
    Flavor,
    Gain,
    Ideal,
    Knob,
    Ties,
    TypedKnobs,
    parse_gain_table,
    parse_knob_assignments,
)
from rankflavor.metrics import REGISTRY
from rankflavor.metrics.measure import Measure, parse_measure
from rankflavor.metrics.registry import INPUT_KNOBS

#: Concrete examples for the placeholders used in ``Knob.values``.
PLACEHOLDER_EXAMPLES: dict[str, tuple[str, ...]] = {
    "{grade:gain,...}": ("{0:0,1:1,2:3}", "{-1:0,0.5:2.5,3:7}"),
    "jk(b)": ("jk(2)", "jk(3.5)"),
    "log(b)": ("log(10)", "log(2.5)"),
    "recall@K": ("recall@20",),
    "number": ("3",),
    "N": ("5",),
    "(number,...)": ("(1,-1,0,0)",),
    "KIND+KIND...": ("human+llm",),
}


def representative_values(knob: Knob) -> list[str]:
    """The default and every listed value of ``knob`` (placeholders replaced), canonicalised."""
    out = [knob.default]
    for token in (t.strip() for t in knob.values.split("|")):
        for example in PLACEHOLDER_EXAMPLES.get(token, (token,)):
            try:
                value = knob.parse(example)
            except FlavorError as exc:
                raise AssertionError(
                    f"knob {knob.name!r} lists {token!r}, which is neither a value nor a placeholder with "
                    f"an example in PLACEHOLDER_EXAMPLES: {exc}"
                ) from None
            if value not in out:
                out.append(value)
    return out


VALUES = {name: representative_values(knob) for name, knob in KNOBS.items()}


def _knobs_read(metric: str) -> list[str]:
    spec = REGISTRY[metric]
    return [*spec.knobs, *(["empty"] if spec.uses_empty else [])]


def _independent(name: str) -> bool:
    """Knobs whose canonical text never depends on another knob: input policies, quiet knobs, empty."""
    return name in INPUT_KNOBS or name == "empty" or KNOBS[name].quiet


def _cutoffs(metric: str) -> tuple[int | None, ...]:
    return {"optional": (None, 10), "required": (10,), "none": (None,)}[REGISTRY[metric].cutoff]


def _cycled(names: list[str], i: int) -> dict[str, str]:
    return {n: VALUES[n][i % len(VALUES[n])] for n in names}


def combinations(metric: str) -> Iterator[tuple[int | None, dict[str, str]]]:
    """Full product of the interacting knobs and k, with the independent knobs cycled."""
    read = _knobs_read(metric)
    shape = [n for n in read if not _independent(n)]
    independent = [n for n in read if _independent(n)]
    rows = list(itertools.product(_cutoffs(metric), *(VALUES[n] for n in shape)))
    longest = max((len(VALUES[n]) for n in independent), default=1)
    for i in range(max(len(rows), longest)):
        k, *values = rows[i % len(rows)]
        yield k, {**dict(zip(shape, values, strict=True)), **_cycled(independent, i)}


def assert_round_trip(measure: Measure) -> None:
    text = str(measure)
    back = parse_measure(text)
    assert back == measure, (text, back)
    assert str(back) == text
    assert hash(back) == hash(measure)
    # Every knob the string leaves out is at its default: nothing that matters is hidden.
    printed = measure.knobs
    for name, value in measure.flavor.knobs().items():
        if name not in printed:
            assert value == KNOBS[name].default, (text, name, value)


@pytest.mark.parametrize("metric", sorted(REGISTRY))
def test_canonical_string_round_trips_for_every_knob_combination(metric: str) -> None:
    n = 0
    for k, knobs in combinations(metric):
        assert_round_trip(Measure(metric, k, Flavor(**knobs)))
        n += 1
    assert n >= max(len(VALUES[name]) for name in _knobs_read(metric))  # every value of every knob seen


def test_ndcg_combinations_cover_the_brief() -> None:
    """The product includes the cases the issue names (so they cannot silently drop out)."""
    seen = {str(Measure("ndcg", k, Flavor(**knobs))) for k, knobs in combinations("ndcg")}
    assert len(seen) > 1000
    for fragment in ("gain={0:0,1:1,2:3}", "discount=jk(2)", "discount=jk(3.5)", "ideal=recall@20",
                     "ideal=max,ideal_cut=k,max_grade=3", "ties=averaged", "empty=nan"):
        assert any(fragment in s for s in seen), fragment


def test_input_policy_knobs_full_product_round_trips() -> None:
    """Full product of the multi-valued input policies for ndcg@10 (precision and depth, two
    values each, are cycled in the per-metric test; the product with them takes seconds)."""
    names = [n for n in _knobs_read("ndcg") if _independent(n) and not KNOBS[n].quiet and n not in ("precision", "depth")]
    assert {"unjudged", "negatives", "ties", "duplicates", "missing", "empty"} <= set(names)
    n = 0
    for values in itertools.product(*(VALUES[name] for name in names)):
        assert_round_trip(Measure("ndcg", 10, Flavor(**dict(zip(names, values, strict=True)))))
        n += 1
    assert n == math.prod(len(VALUES[name]) for name in names)


# ---------------------------------------------------------------------------------------------
# Canonical forms of loosely written input


@pytest.mark.parametrize(
    "text,canonical_fragment",
    [
        ("ndcg@10[gain=EXP2]", "gain=exp2"),
        ("ndcg@10[gain={2:3, 0:0 ,1:1}]", "gain={0:0,1:1,2:3}"),
        ("ndcg@10[gain={1=1,2=3}]", "gain={1:1,2:3}"),
        ("ndcg@10[discount=jk( 2 )]", "discount=jk(2)"),
        ("ndcg@10[discount=JK(3.50)]", "discount=jk(3.5)"),
        ("ndcg@10[ideal=Recall@020]", "ideal=recall@20"),
        ("ndcg@10[ideal=max,max_grade=3.0]", "max_grade=3"),
        ("AP[rel=2.0]", "rel=2"),
        ("P@5[depth=100.0]", "depth=100"),
        ("ndcg[ideal_cut=k]", "ideal_cut=none"),  # no cutoff: the ideal is not cut
        (" nDCG@3 ", "ndcg@3["),
        ("map@5", "AP@5["),
    ],
)
def test_loose_spellings_parse_to_the_canonical_form(text: str, canonical_fragment: str) -> None:
    measure = parse_measure(text)
    assert canonical_fragment in str(measure)
    assert_round_trip(measure)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.floats(-100, 100, allow_nan=False).map(lambda x: round(x, 3)),
        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
        min_size=1,
        max_size=6,
    ),
    st.floats(1.01, 50, allow_nan=False),
    st.integers(1, 10_000),
)
def test_numbers_in_knobs_round_trip_exactly(table: dict[float, float], base: float, depth: int) -> None:
    """Gain tables, jk bases and depths keep their exact float value through str -> parse."""
    flavor = Flavor(gain=table, discount=f"jk({base!r})", ideal=f"recall@{depth}")
    measure = Measure("ndcg", 5, flavor)
    assert_round_trip(measure)
    assert dict(measure.flavor.gain_table or ()) == {float(g): float(v) for g, v in table.items()}
    assert measure.flavor.jk_base == base


# ---------------------------------------------------------------------------------------------
# Errors


def _error(text: str) -> str:
    with pytest.raises(FlavorError) as info:
        parse_measure(text)
    return str(info.value)


def test_misspelled_knob_lists_every_knob_and_suggests_the_closest() -> None:
    message = _error("ndcg@10[gian=exp2]")
    assert "'gian'" in message and "Did you mean 'gain'?" in message
    assert all(name in message for name in KNOBS)


def test_misspelled_value_lists_the_valid_values_and_suggests_the_closest() -> None:
    message = _error("ndcg@10[ties=docno_dsc]")
    assert "Did you mean 'docno_desc'?" in message
    assert all(value in message for value in VALUES["ties"])
    assert "Did you mean 'exp2'?" in _error("ndcg@10[gain=exp3]")
    assert "Did you mean 'condensed'?" in _error("AP[unjudged=condenced]")


def test_misspelled_metric_suggests_the_closest() -> None:
    message = _error("ndgc@10")
    assert "Did you mean 'ndcg'?" in message and "valid metrics:" in message


def test_the_same_checks_apply_to_flavor_options() -> None:
    """``--flavor KNOB=VALUE`` (and ``evaluate(**knobs)``) use the same knob table."""
    with pytest.raises(FlavorError, match="Did you mean 'gain'"):
        parse_knob_assignments(["gian=exp2"])
    with pytest.raises(FlavorError, match="Did you mean 'docno_desc'"):
        parse_knob_assignments(["ties=docno_dsc"])
    with pytest.raises(FlavorError, match="knob=value"):
        parse_knob_assignments(["exp2"])


@pytest.mark.parametrize(
    "text,knob",
    [
        ("P@10[gain=exp2]", "gain"),
        ("AP[discount=jk(2)]", "discount"),
        ("ndcg@10[rel=2]", "rel"),  # graded NDCG never reads rel (trec_eval -l leaves ndcg alone)
        ("num_rel[ties=input_order]", "ties"),
        ("judged@10[unjudged=condensed]", "unjudged"),
    ],
)
def test_a_knob_the_metric_does_not_read_is_an_error_inside_brackets(text: str, knob: str) -> None:
    message = _error(text)
    assert f"knob '{knob}' does not change" in message and "it reads:" in message


def test_a_knob_the_metric_reads_only_in_some_flavors_is_accepted_there() -> None:
    assert "rel=2" in str(parse_measure("ndcg@10[gain=binary,rel=2]"))
    assert "max_grade=3" in str(parse_measure("ndcg@10[ideal=max,max_grade=3]"))


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("ndcg@0", "from 1 to 2**53"),
        ("ndcg@x", "whole number"),
        ("Rprec@10", "takes no cutoff"),
        ("ndcg@10[gain]", "knob=value"),
        ("ndcg@10[discount=jk(1)]", "b > 1"),
        ("ndcg@10[discount=log(1)]", "b > 1"),
        ("ndcg@10[discount=log(0.5)]", "b > 1"),
        ("ndcg@10[depth=0]", ">= 1"),
        ("ndcg@10[depth=2.5]", "whole number"),
        ("ndcg@10[gain={1:1,1:2}]", "twice"),
        ("ndcg@10[gain={}]", "at least one"),
        ("ndcg@10[gain={1:x}]", "number"),
        ("ndcg@10[rel=inf]", "finite"),
        ("ndcg@10[ideal=recall]", "recall@100"),
        ("ndcg@10[[", "cannot parse"),
    ],
)
def test_malformed_measures_say_what_was_expected(text: str, fragment: str) -> None:
    assert fragment in _error(text)


def test_flavor_errors_are_usage_errors_with_exit_status_2() -> None:
    assert issubclass(FlavorError, UsageError) and issubclass(FlavorError, ValueError)
    assert FlavorError.exit_code == 2


# ---------------------------------------------------------------------------------------------
# Equality and hashing


def test_flavor_equality_and_hash_follow_the_canonical_text() -> None:
    assert Flavor(rel=2) == Flavor(rel="2.0") == Flavor(rel=2.0)
    assert hash(Flavor(rel=2)) == hash(Flavor(rel="2.0"))
    assert Flavor(gain={2: 3, 1: 1}) == Flavor(gain="{1:1,2:3}")
    assert Flavor(discount="jk") == Flavor(discount="jk(2)")
    assert Flavor(gain="exp2") != Flavor()
    assert len({Flavor(), Flavor(gain="linear"), Flavor(ties="docno_desc")}) == 1


def test_flavor_is_immutable() -> None:
    flavor = Flavor()
    with pytest.raises(dataclasses.FrozenInstanceError):
        flavor.gain = "exp2"  # type: ignore[misc]


def test_measures_compare_on_what_changes_the_number() -> None:
    # Knobs the metric does not read are normalised away: same number, equal and equally hashed.
    assert Measure("P", 10, Flavor(gain="exp2", ideal="local")) == Measure("P", 10)
    assert hash(Measure("P", 10, Flavor(gain="exp2"))) == hash(Measure("P", 10))
    assert Measure("ndcg", 10, Flavor(gain="exp2")) != Measure("ndcg", 10)
    assert Measure("ndcg", 10) != Measure("ndcg", 5) != Measure("ndcg")
    # The label (the user's own name) is not part of equality.
    assert Measure("ndcg", 10, label="ndcg_cut_10") == Measure("ndcg", 10)
    # Aliases resolve to the canonical metric.
    assert parse_measure("map") == parse_measure("AP") and parse_measure("mrr") == parse_measure("RR")
    # Uncut NDCG: ideal_cut k and none mean the same, so they are the same measure.
    assert Measure("ndcg", None, Flavor(ideal_cut="k")) == Measure("ndcg", None, Flavor(ideal_cut="none"))
    assert len({parse_measure("ndcg@10"), parse_measure("nDCG@10[gain=linear]"), parse_measure("ndcg_cut@10")}) == 1


def test_unknown_flavor_field_is_refused() -> None:
    with pytest.raises(FlavorError, match="Did you mean 'gain'"):
        Flavor().with_knobs(gian="exp2")
    with pytest.raises(FlavorError):
        Flavor(gain=object())  # type: ignore[arg-type]
    with pytest.raises(FlavorError, match="Did you mean 'gain'"):
        Flavor(gian="exp2")  # a FlavorError naming the closest knob, not a TypeError
    with pytest.raises(FlavorError, match="mapping of numbers"):
        Flavor(gain={"high": 3})  # a FlavorError, not a TypeError from inside the formatting
    # dataclasses.replace goes through the same parsing as with_knobs.
    assert dataclasses.replace(Flavor(), ties="AVERAGED", depth=3) == Flavor().with_knobs(ties="averaged", depth="3")
    assert dataclasses.replace(Flavor(), depth=3).depth_limit == 3


# ---------------------------------------------------------------------------------------------
# Typed values, parsed once

#: The enum of each choice knob, from the annotations of Flavor's fields.
CHOICE_ENUMS: dict[str, type[enum.StrEnum]] = {
    name: kind
    for name, kind in typing.get_type_hints(Flavor).items()
    if name in KNOBS and isinstance(kind, type) and issubclass(kind, enum.StrEnum)
}
TYPED = tuple(typing.get_type_hints(TypedKnobs))


def reference_typed(f: Flavor) -> dict[str, Any]:
    """The typed values as the properties of the text-only Flavor computed them (re-parsing the
    canonical text on every access): the stored values must equal these."""
    jk = flavor_module.KNOBS["discount"].parse(f.discount)
    return {
        "rel_threshold": float(f.rel),
        "depth_limit": None if f.depth == "none" else int(float(f.depth)),
        "top_grade": None if f.max_grade == "none" else float(f.max_grade),
        "gain_table": parse_gain_table(f.gain) if f.gain.startswith("{") else None,
        "jk_base": float(jk[3:-1]) if jk.startswith("jk(") else None,
        "log_base": float(jk[4:-1]) if jk.startswith("log(") else None,
        "recall_depth": int(f.ideal.split("@")[1]) if f.ideal.startswith("recall@") else None,
        "grade_floor": None if f.min_grade == "none" else float(f.min_grade),
        "assumed_grade": None if f.unjudged_grade == "none" else float(f.unjudged_grade),
        "distractor_value": None if f.distractor_grade == "none" else float(f.distractor_grade),
        "penalty_value": None if f.penalty == "none" else float(f.penalty),
        "param_values": None if f.param == "none" else tuple(float(v) for v in f.param.strip("()").split(",")),
        "gain_kind": "table" if f.gain.startswith("{") else f.gain,
        "discount_kind": "jk" if f.discount.startswith("jk(") else "log" if f.discount.startswith("log(") else f.discount,
        "ideal_kind": "recall" if f.ideal.startswith("recall@") else f.ideal,
    }


def test_choice_knobs_hold_enum_members_equal_to_their_text() -> None:
    assert Ties.AVERAGED == "averaged" and hash(Ties.AVERAGED) == hash("averaged")
    assert {"averaged": 1}[Ties.AVERAGED] == 1 and f"{Ties.AVERAGED}" == str(Ties.AVERAGED) == "averaged"
    assert json.dumps({"ties": Ties.AVERAGED}) == '{"ties": "averaged"}'
    # Every knob whose values are a fixed list has its enum, listing exactly those values.
    fixed = {n for n, k in KNOBS.items() if not any(t.strip() in PLACEHOLDER_EXAMPLES for t in k.values.split("|"))}
    # raters: the 14th, utility (UDCG), order, singletons; ap_divisor, relevant_set, nonpositive (peer tools)
    assert set(CHOICE_ENUMS) == fixed and len(fixed) == 20
    for name, kind in CHOICE_ENUMS.items():
        assert " | ".join(kind) == KNOBS[name].values, name
        assert isinstance(getattr(Flavor(), name), kind) and getattr(Flavor(), name) == KNOBS[name].default
        for member in kind:
            value = getattr(Flavor(**{name: member.value.upper()}), name)
            assert value is member and value == member.value and type(str(value)) is str


def test_flavor_fields_are_the_knobs_and_typed_values_are_not_fields() -> None:
    """``dataclasses.fields`` (measure.py rebuilds flavors from it) lists exactly the knobs, in
    canonical order; the typed values are stored attributes beside them, not properties."""
    assert KNOBS_ORDER == tuple(f.name for f in dataclasses.fields(Flavor))
    assert set(KNOBS_ORDER) == set(KNOBS)
    assert set(TYPED) == {"gain_kind", "gain_table", "discount_kind", "jk_base", "log_base", "ideal_kind", "recall_depth",
                          "rel_threshold", "top_grade", "grade_floor", "assumed_grade", "depth_limit", "param_values",
                          "distractor_value", "penalty_value"}
    for f in (Flavor(), Flavor(gain="{1:2}", discount="jk(3)", ideal="recall@7", depth=4).with_knobs(rel=2)):
        assert set(vars(f)) == set(KNOBS) | set(TYPED)
    assert not any(isinstance(getattr(Flavor, name, None), property) for name in (*KNOBS, *TYPED))


def test_typed_values_and_their_types() -> None:
    f = Flavor(gain={2: 5, 0: 0}, discount="JK( 3.50 )", ideal="Recall@020", max_grade="3.0", min_grade=-1,
               unjudged_grade="0.5", rel="2.0", depth="100.0", param="(1,-1,0,0)")
    assert (f.gain, f.gain_kind, f.gain_table) == ("{0:0,2:5}", Gain.TABLE, ((0.0, 0.0), (2.0, 5.0)))
    assert (f.discount, f.discount_kind, f.jk_base) == ("jk(3.5)", Discount.JK, 3.5)
    assert (f.ideal, f.ideal_kind, f.recall_depth) == ("recall@20", Ideal.RECALL, 20)
    assert (f.top_grade, f.grade_floor, f.assumed_grade, f.rel_threshold) == (3.0, -1.0, 0.5, 2.0)
    assert type(f.depth_limit) is int and f.depth_limit == 100
    assert f.param_values == (1.0, -1.0, 0.0, 0.0) and all(type(v) is float for v in f.param_values)
    d = Flavor()
    assert (d.gain_kind, d.gain_table, d.discount_kind, d.jk_base, d.ideal_kind, d.recall_depth) == (
        Gain.LINEAR, None, Discount.LOG2, None, Ideal.GLOBAL, None)
    assert (d.top_grade, d.grade_floor, d.assumed_grade, d.depth_limit, d.param_values) == (None,) * 5
    assert Flavor(discount="jk").jk_base == 2.0 and Flavor(discount="jk").discount == "jk(2)"
    f10 = Flavor(discount="LOG( 10.0 )")
    assert (f10.discount, f10.discount_kind, f10.log_base, f10.jk_base) == ("log(10)", Discount.LOG, 10.0, None)
    assert Flavor(discount="log(2)") == Flavor() and f10.with_knobs(discount="log2").log_base is None
    assert Flavor(rel="-0.0").rel_threshold == 0.0 and Flavor(param="0.25").param_values == (0.25,)
    assert Flavor(ideal="as_supplied").ideal_kind is Ideal.AS_SUPPLIED and Flavor(gain="burges").gain_kind is Gain.EXP2


def test_each_knob_text_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A knob's reader runs once per distinct text in a process, when a flavor is made; reading
    the typed values, copying with with_knobs, building and printing measures parse nothing."""
    calls: list[tuple[str, str]] = []
    knobs = dict(KNOBS)
    for name in ("depth", "gain", "ties"):
        read = KNOBS[name].read

        def counted(text: str, read: Any = read, name: str = name) -> Any:
            calls.append((name, str(text)))
            return read(text)

        knobs[name] = dataclasses.replace(KNOBS[name], read=counted)
    monkeypatch.setattr(flavor_module, "KNOBS", knobs)
    flavor_module._read.cache_clear()
    try:
        flavors = [Flavor(depth="7", gain="{0:0,1:3}", ties="AVERAGED") for _ in range(50)]
        assert sorted(calls) == [("depth", "7"), ("gain", "{0:0,1:3}"), ("ties", "AVERAGED")]
        for f in flavors:
            for _ in range(20):
                assert (f.depth_limit, f.gain_table, f.ties) == (7, ((0.0, 0.0), (1.0, 3.0)), "averaged")
            assert f.with_knobs(rel=3).depth_limit == 7
        assert len(calls) == 3
        for f in flavors:
            assert parse_measure(str(Measure("ndcg", 10, f))) == Measure("ndcg", 10, f)
        # Measures rebuild flavors from canonical (and default) values: each new text read once.
        assert len(calls) == len(set(calls)) <= 6
    finally:
        flavor_module._read.cache_clear()


def _random_knob(name: str) -> st.SearchStrategy[Any]:
    numbers = st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 4))
    listed = st.sampled_from(VALUES[name])
    extra: dict[str, st.SearchStrategy[Any]] = {
        "gain": st.dictionaries(numbers, numbers, min_size=1, max_size=4),
        "discount": st.floats(1.001, 1e6, allow_nan=False).flatmap(
            lambda b: st.sampled_from((f"jk({b!r})", f"log({b!r})"))),
        "ideal": st.integers(1, 10**6).map(lambda k: f"Recall@{k}"),
        "max_grade": st.floats(0, 1e6, allow_nan=False),
        "min_grade": numbers,
        "unjudged_grade": numbers,
        "distractor_grade": numbers,
        "penalty": numbers,
        "rel": numbers,
        "depth": st.integers(1, 10**12),
        "param": st.lists(numbers, min_size=1, max_size=4).map(lambda v: "(" + ",".join(map(repr, v)) + ")"),
    }
    if name in CHOICE_ENUMS:  # any spelling case
        return listed.flatmap(lambda v: st.sampled_from([v, str(v).upper(), f" {v} "]))
    return st.one_of(listed, extra[name]) if name in extra else listed


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({}, optional={name: _random_knob(name) for name in KNOBS}))
def test_random_knob_combinations_round_trip(knobs: dict[str, Any]) -> None:
    """Any combination of knob values: the canonical values build the same flavor, the stored
    typed values equal a fresh parse of the canonical text, and measure strings round-trip."""
    f = Flavor(**knobs)
    assert Flavor(**f.knobs()) == f and hash(Flavor(**f.knobs())) == hash(f)
    assert Flavor(**{n: str(v) for n, v in f.knobs().items()}) == f
    assert Flavor().with_knobs(**knobs) == f
    typed = {name: getattr(f, name) for name in TYPED}
    assert typed == reference_typed(f)
    assert {name: getattr(Flavor(**f.knobs()), name) for name in TYPED} == typed
    base = {"gain": "{9:9}", "ideal": "recall@3", "depth": "4"}
    changed, made = Flavor(**base).with_knobs(**knobs), Flavor(**{**base, **knobs})
    assert changed == made and {n: getattr(changed, n) for n in TYPED} == {n: getattr(made, n) for n in TYPED}
    for metric, k in (("ndcg", 10), ("ndcg", None), ("AP", None), ("P", 5)):
        measure = Measure(metric, k, f)
        assert_round_trip(measure)
    assert pickle.loads(pickle.dumps(f)) == f and repr(f).startswith("Flavor(gain='")


def test_typed_values_fix_text_that_parsed_but_could_not_be_used() -> None:
    """The text-only Flavor accepted ``ideal=recall@K`` (the placeholder itself) and then failed
    with a bare ValueError reading recall_depth; a depth of 1e15 or more printed as a float and
    failed reading depth_limit. Both are now settled when the flavor is made."""
    with pytest.raises(FlavorError, match="recall@100"):
        Flavor(ideal="recall@K")
    assert Flavor(depth="1e15").depth_limit == 10**15
    assert parse_measure(str(Measure("P", 5, Flavor(depth="1e15")))).flavor.depth_limit == 10**15


def test_preset_table_names_every_preset_of_every_module() -> None:
    """The registry's name -> module table (presets load lazily) lists exactly the presets each
    preset module defines, under the module that defines them."""
    import importlib
    import pkgutil

    import rankflavor.presets as presets_package
    from rankflavor.presets import _WHERE, PRESETS

    defined = {}
    for info in pkgutil.iter_modules(presets_package.__path__):
        module = importlib.import_module(f"rankflavor.presets.{info.name}")
        for preset in getattr(module, "PRESETS", []):
            defined[preset.name] = info.name
    assert defined == _WHERE
    assert list(PRESETS) == ["rankflavor", *_WHERE]
    assert all(PRESETS[name].name == name for name in PRESETS)


def test_one_preset_imports_only_its_module() -> None:
    """Resolving trec_eval names imports no other tool's dialect module (start-up of small runs)."""
    import subprocess
    import sys

    code = (
        "import sys; from rankflavor.presets import resolve_measures; "
        "resolve_measures(['ndcg_cut.10'], 'trec_eval', {}); "
        "print(sorted(m for m in sys.modules if m.startswith('rankflavor.presets.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['rankflavor.presets.base', 'rankflavor.presets.trec_eval']"
