"""The compact answer (a column table read off the wire, a per-answer pod index, integer milli-units) reads
exactly what the plain path reads: one `Series` per series, each target walking its own, `Decimal` for
every number. The plain path is written out here as the reference."""

from __future__ import annotations

import decimal
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from autoscaler.core.types import MetricSourceType, PodsReading, ResourceReading
from autoscaler.metrics import MetricsError, MetricsSettings, Series, SourceRegistry
from autoscaler.metrics.answers import _decimal_milli, to_milli
from autoscaler.metrics.context import Answer
from autoscaler.metrics.errors import StaleDataError
from autoscaler.metrics.promql import TIMESTAMP_MARKER, TIMESTAMP_MARKER_VALUE
from autoscaler.metrics.wire import _SAMPLE_VALUE, _fast_vector, _Reader, read_answer
from tests.metrics.helpers import context, pod, request, spec

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
T = NOW.timestamp()
SETTINGS = MetricsSettings.model_validate({"servers": {"main": {"url": "http://127.0.0.1:9"}}})
PODS = ("p0", "p1", "p2", "p3")  # the target's pods; "x0" and "x1" belong to another target


def _outcome(call: Any) -> Any:
    try:
        return call()
    except MetricsError as err:
        return (type(err).__name__, err.message)


# -- numbers ------------------------------------------------------------------------------------------------

_digits = st.text("0123456789", min_size=0, max_size=25)
_decimal_text = st.builds(
    lambda sign, whole, fraction, point, exponent: f"{sign}{whole}{'.' if point else ''}{fraction}{exponent}",
    st.sampled_from(["", "-", "+"]),
    _digits,
    _digits,
    st.booleans(),
    st.one_of(st.just(""), st.integers(-40, 40).map(lambda e: f"e{e:+d}"), st.integers(0, 30).map(lambda e: f"E{e}")),
)
_float_text = st.floats(allow_nan=True, allow_infinity=True).flatmap(
    lambda x: st.sampled_from([repr(x), f"{x:.17g}", f"{x:e}", f"{x:f}", str(x).replace("inf", "Inf")])
)


@settings(max_examples=3000, deadline=None)
@given(st.one_of(_decimal_text, _float_text, st.sampled_from(["NaN", "+Inf", "-Inf", ".", "e5", " 1", "1_0"])))
def test_integer_milli_units_equal_decimal_ones(text: str) -> None:
    """`to_milli` (integers for plain decimals) gives what `Decimal` gives, value or error, for any text."""
    assert _outcome(lambda: to_milli(text)) == _outcome(lambda: _decimal_milli(text))


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        pytest.param("0.0000000005", 0, id="half a nano-unit rounds to even (zero)"),
        pytest.param("0.0000000015", 1, id="one and a half nano-units round to two, then up"),
        pytest.param("0.000001", 1, id="a micro-unit rounds up to a milli-unit"),
        pytest.param("-0.000001", -1, id="and away from zero when negative"),
        pytest.param("999999999999999.999", 999_999_999_999_999_999, id="the last value read with integers"),
        pytest.param("1e15", 10**18, id="the first value read through Decimal"),
    ],
)
def test_milli_unit_rounding_edges(text: str, milli: int) -> None:
    assert to_milli(text) == milli == _decimal_milli(text)


# -- the wire's table ---------------------------------------------------------------------------------------

_label_value = st.sampled_from(["", "a", "ns", "app", "p0", "é", "x y"])
_series_json = st.fixed_dictionaries(
    {
        "metric": st.dictionaries(st.sampled_from(["namespace", "pod", "container", "le"]), _label_value),
        "value": st.tuples(
            st.one_of(st.just(T), st.just(int(T)), st.floats(0, 2e9)), st.sampled_from(["1", "0.5", "NaN", "-Inf"])
        ).map(list),
    }
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_series_json, max_size=12))
def test_the_table_holds_every_series_as_sent(result: list[dict[str, Any]]) -> None:
    body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()
    assert _fast_vector(body) is not None  # the common case takes the one-pass reading
    answer = read_answer(body)
    expected = tuple(Series(item["metric"], item["value"][1], float(item["value"][0])) for item in result)
    assert answer.series == expected
    assert answer == Answer("vector", expected)
    assert len(answer.table) == len(result)


_odd_value = st.one_of(
    st.sampled_from([True, 10**400, float("inf"), float("nan"), "1\n2", "2\n", "x", "", None, [], {}, 1, 1.5, "1"]),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=6,
    ),
)


@st.composite
def _nearly_valid(draw: st.DrawFn) -> list[Any]:
    """Valid series, one of which has one odd part: the series, its label set, a label, its pair, its time,
    its value, or an extra key (or none: all valid)."""
    result = [dict(item) for item in draw(st.lists(_series_json, min_size=1, max_size=5))]
    at = draw(st.integers(0, len(result) - 1))
    odd = draw(_odd_value)
    item = result[at]
    match draw(st.sampled_from(["series", "metric", "label", "pair", "time", "value", "extra", "none"])):
        case "series":
            result[at] = odd
        case "metric":
            item["metric"] = odd
        case "label":
            item["metric"] = {**item["metric"], "pod": odd}
        case "pair":
            item["value"] = odd
        case "time":
            item["value"] = [odd, item["value"][1]]
        case "value":
            item["value"] = [item["value"][0], odd]
        case "extra":
            item[draw(st.sampled_from(["histogram", "x"]))] = odd
    return result


def _both_readings(body: bytes) -> tuple[Any, Any]:
    """What the one-pass reading gives (a table's columns, or None: declined) and what the piece-by-piece
    reading gives (the answer's columns, or the error's message)."""
    fast = _fast_vector(body)
    reader = _Reader(str)
    try:
        answer = reader.document(reader.load(body))
    except MetricsError as err:
        slow: Any = ("error", str(err))
    else:
        table = answer.table
        slow = None if table is None else (table.labels, table.values, list(table.stamps))
    return (None if fast is None else (fast.labels, fast.values, list(fast.stamps))), slow


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_nearly_valid())
@example([{"metric": {}, "value": [T, "1\n2"]}])  # two numbers in one value
@example([{"metric": {}, "value": [True, "1"]}])  # a boolean is no time
@example([{"metric": {}, "value": [2**53 + 1, "1"]}])  # an integer time a float rounds
@example([{"metric": {}, "value": [10**30, "1"]}])  # past 64 bits, within float64
def test_the_one_pass_reader_reads_what_the_series_reader_reads(result: list[Any]) -> None:
    """The one-pass reading of a vector either declines (the piece-by-piece reading then names what is wrong)
    or gives exactly the table that reading gives: it never accepts what that one refuses."""
    fast, slow = _both_readings(
        json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()
    )
    if fast is not None:
        assert fast == slow


_ENVELOPE = '{"status": "success", "data": {"resultType": "vector", "result": [%s]}}'
_ONE = '{"metric": {"pod": "p0"}, "value": [1767268800.5, "2"]}'


@pytest.mark.parametrize(
    ("body", "fast_reads_it"),
    [
        pytest.param((_ENVELOPE % _ONE).encode(), True, id="the common case"),
        pytest.param((_ENVELOPE % "").encode(), True, id="an empty vector"),
        pytest.param(b"\xef\xbb\xbf" + (_ENVELOPE % _ONE).encode(), False, id="a UTF-8 byte-order mark"),
        pytest.param((_ENVELOPE % _ONE).encode("utf-16"), False, id="UTF-16"),
        pytest.param((_ENVELOPE % _ONE.replace("p0", "\\ud800")).encode(), False, id="a lone surrogate in a label"),
        pytest.param((_ENVELOPE % _ONE.replace("p0", "\xff")).encode("latin-1"), False, id="bytes that are no UTF-8"),
        pytest.param(
            (_ENVELOPE % '{"metric": {"pod": "a", "pod": "b"}, "value": [1, "3"], "value": [2, "4"]}').encode(),
            True,
            id="repeated keys: the last one counts in both",
        ),
        pytest.param(
            b'{"status": "error", "status": "success", "data": {"resultType": "vector", "result": []}}',
            False,
            id="a repeated status",
        ),
        pytest.param((_ENVELOPE % _ONE.replace("1767268800.5", "NaN")).encode(), False, id="a NaN time"),
        pytest.param((_ENVELOPE % _ONE.replace("1767268800.5", "1e400")).encode(), False, id="a time past float64"),
        pytest.param((_ENVELOPE % _ONE.replace('"2"', '"0x1p3"')).encode(), False, id="a value in hexadecimal"),
        pytest.param((_ENVELOPE % _ONE.replace('"2"', '"nan"')).encode(), False, id="a value NaN spelt as Python does"),
        pytest.param((_ENVELOPE % _ONE)[:-3].encode(), False, id="a body cut short"),
        pytest.param(
            b'{"status": "success", "warnings": '
            + b"[" * 5000
            + b"]" * 5000
            + b', "data": {"resultType": "vector", "result": []}}',
            False,
            id="a key the readings skip nested past the parsers' depth",
        ),
        pytest.param(
            b'{"status": "success", "x": "\xff", "data": {"resultType": "vector", "result": []}}',
            False,
            id="bytes that are no UTF-8 in a key the readings skip",
        ),
        pytest.param((_ENVELOPE % _ONE.replace('"2"', '"1\\n"')).encode(), False, id="a value with a final newline"),
        pytest.param(
            b'{"status": "success", "data": {"resultType": "scalar", "result": [1, "2"]}}', False, id="a scalar"
        ),
        pytest.param(
            b'{"status": "success", "data": {"resultType": "vector", "result": {}}}',
            False,
            id="a result that is no list",
        ),
    ],
)
def test_the_one_pass_reader_on_bodies_json_reads_its_own_way(body: bytes, fast_reads_it: bool) -> None:
    """Bodies where the two decoders could part: the one-pass reading takes only what it reads exactly as the
    piece-by-piece reading does, and declines the rest, which that reading then takes or names."""
    fast, slow = _both_readings(body)
    assert (fast is not None) == fast_reads_it
    if fast is not None:
        assert fast == slow
    if slow is not None and slow[0] == "error":
        with pytest.raises(MetricsError) as raised:
            read_answer(body)
        assert str(raised.value) == slow[1]
    else:
        reader = _Reader(str)
        assert read_answer(body) == reader.document(reader.load(body))


# -- per-pod readings ---------------------------------------------------------------------------------------


def _reference(kind: str, pods: tuple[str, ...], series: list[Series], *, staleness: float) -> Any:
    """What the plain path reads: per target pod, its series of the namespace, their stamps and markers."""
    grouping = ("namespace", "pod", "container") if kind == "resource" else ("namespace", "pod")
    markers: dict[tuple[str, ...], Series] = {}
    values = []
    for one in series:
        if one.labels.get(TIMESTAMP_MARKER) == TIMESTAMP_MARKER_VALUE:
            key = tuple(one.labels.get(label, "") for label in grouping)
            if key in markers:
                return ("BadResponseError", f"two sample-time series for the group {key!r}")
            markers[key] = one
        else:
            values.append(one)
    found: dict[str, list[tuple[Series, float]]] = {}
    stale = None
    for name in pods:
        for one in values:
            if one.labels.get("pod") != name or one.labels.get("namespace", "ns") != "ns":
                continue
            if abs(one.timestamp - T) > 0.001:
                return ("stamp", None)
            seconds = one.timestamp
            marker = markers.get(tuple(one.labels.get(label, "") for label in grouping))
            if marker is not None:
                if abs(marker.timestamp - T) > 0.001:
                    return ("stamp", None)
                seconds = float(decimal.Decimal(marker.value))
            if T - seconds > staleness:
                stale = True
                continue
            found.setdefault(name, []).append((one, seconds))
    if not found:
        return ("StaleDataError", None) if stale else ("NoDataError", None)
    out = []
    for name, items in sorted(found.items()):
        if kind == "pods":
            if len(items) > 1:
                return ("PermanentError", None)
            text = items[0][0].value
            milli = _outcome(lambda: _decimal_milli(text))  # noqa: B023
            if isinstance(milli, tuple):
                return milli
            out.append((name, milli, min(s for _, s in items)))
        else:
            containers: dict[str, Any] = {}
            for one, _ in items:
                container = one.labels.get("container", "")
                if container in containers:
                    return ("PermanentError", None)
                milli = _outcome(lambda: _decimal_milli(one.value))  # noqa: B023
                if isinstance(milli, tuple):
                    return milli
                containers[container] = milli
            out.append((name, sorted(containers.items()), min(s for _, s in items)))
    return out


def _read(kind: str, answer: Answer) -> Any:
    """The reading the built-in source makes, in the reference's shape."""
    cpu, pods = spec(MetricSourceType.RESOURCE, resource="cpu"), spec(MetricSourceType.PODS, metric="m")
    metric = cpu if kind == "resource" else pods
    req = request(metric, context("ns", NOW, *(pod(name, "app", "side") for name in PODS)))
    source = SourceRegistry.builtin().for_request(req)
    plan = source.plan(req, settings=SETTINGS)
    try:
        reading = source.parse(req, plan, answer)
    except StaleDataError as err:
        return ("stamp", None) if "stamped" in err.message else ("StaleDataError", None)
    except MetricsError as err:
        if "stamped" in err.message:
            return ("stamp", None)
        return (type(err).__name__, err.message if type(err).__name__ == "BadResponseError" else None)
    if isinstance(reading, PodsReading):
        return [(p.pod, p.value, p.timestamp.timestamp()) for p in reading.items]
    assert isinstance(reading, ResourceReading)
    return [
        (p.pod, sorted((c.name, c.usage["cpu"]) for c in p.containers), p.timestamp.timestamp()) for p in reading.pods
    ]


_pod_series = st.fixed_dictionaries(
    {
        "pod": st.sampled_from([*PODS, "x0", "x1"]),
        "namespace": st.sampled_from(["ns", "ns", "ns", "other", None]),
        "container": st.sampled_from(["app", "side", None]),
        "marker": st.booleans(),
        "age": st.sampled_from([0, 0, 30, 600]),
        "stamp": st.sampled_from([0.0, 0.0, 0.0, 0.0, -0.5]),
        "value": st.one_of(
            _decimal_text.filter(lambda t: _SAMPLE_VALUE.fullmatch(t) is not None), st.sampled_from(["NaN", "+Inf"])
        ),
    }
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["pods", "resource"]), st.lists(_pod_series, max_size=14))
def test_readings_from_the_index_equal_the_plain_path(kind: str, items: list[dict[str, Any]]) -> None:
    result = []
    for item in items:
        labels = {"namespace": item["namespace"], "pod": item["pod"], "container": item["container"]}
        if kind == "pods":
            labels.pop("container")
        labels = {name: value for name, value in labels.items() if value is not None}
        stamp = T + item["stamp"]
        if item["marker"]:
            labels[TIMESTAMP_MARKER] = TIMESTAMP_MARKER_VALUE
            result.append({"metric": labels, "value": [stamp, f"{T - item['age']:.3f}"]})
        else:
            result.append({"metric": labels, "value": [stamp, item["value"]]})
    body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()
    answer = read_answer(body)
    series = [Series(one["metric"], one["value"][1], one["value"][0]) for one in result]
    staleness = SETTINGS.staleness_budget_seconds(15.0)
    expected = _reference(kind, PODS, series, staleness=staleness)
    got = _read(kind, answer)
    if isinstance(expected, tuple):
        assert got[0] == expected[0] and (got[1] is None or got[1] == expected[1])
    else:
        assert got == expected
    # The same answer read again (the index is shared by every target of the namespace) reads the same.
    assert _read(kind, answer) == got
    assert _read(kind, Answer("vector", answer.series)) == got


def test_the_index_is_built_once_per_answer() -> None:
    body = json.dumps(
        {
            "status": "success",
            "data": {
                "resultType": "vector",
                "result": [{"metric": {"namespace": "ns", "pod": "p0"}, "value": [T, "2"]}],
            },
        }
    ).encode()
    answer = read_answer(body)
    _read("pods", answer)
    first = dict(answer._memo)
    _read("pods", answer)
    assert first and answer._memo.keys() == first.keys()
    assert all(answer._memo[key] is value for key, value in first.items())
    assert answer._series is None  # the built-in sources never make `Series` of a wire answer


@pytest.mark.parametrize(
    ("marker", "words"),
    [
        pytest.param(f"{T + 5:.3f}", "a sample time is 5.000 s after the time asked", id="a sample from the future"),
        pytest.param("1e400", "a sample time is inf s after the time asked", id="past float's range"),
        pytest.param("NaN", "a sample time is NaN; timestamp() gives a time", id="no time"),
    ],
)
def test_an_odd_marker_among_plain_ones_reads_as_the_exact_check_says(marker: str, words: str) -> None:
    """Where every other series is the common case, one odd marker still gets the exact check's error."""
    result = [{"metric": {"namespace": "ns", "pod": name}, "value": [T, "1"]} for name in ("p0", "p1")] + [
        {
            "metric": {"namespace": "ns", "pod": "p0", TIMESTAMP_MARKER: TIMESTAMP_MARKER_VALUE},
            "value": [T, f"{T:.3f}"],
        },
        {"metric": {"namespace": "ns", "pod": "p1", TIMESTAMP_MARKER: TIMESTAMP_MARKER_VALUE}, "value": [T, marker]},
    ]
    answer = read_answer(json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode())
    kind, message = _read("pods", answer)
    assert kind == "BadResponseError" and words in message
