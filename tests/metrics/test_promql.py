"""PromQL text: escaping, matchers from label selectors, template filling, plain-selector detection."""

from __future__ import annotations

import pytest

from autoscaler.core.types import LabelSelector, LabelSelectorRequirement
from autoscaler.metrics import PermanentError, UnsafeLabelValueError
from autoscaler.metrics.promql import (
    aggregated_selector,
    escape,
    is_plain_selector,
    quote,
    regex_alternatives,
    render,
    selector_matchers,
    with_sample_timestamps,
)


@pytest.mark.parametrize(
    ("value", "quoted"),
    [
        pytest.param("plain", '"plain"', id="plain text unchanged"),
        pytest.param('say "hi"', '"say \\"hi\\""', id="quotes escaped"),
        pytest.param("C:\\dir", '"C:\\\\dir"', id="backslash escaped"),
        pytest.param("a\nb\tc\rd", '"a\\nb\\tc\\rd"', id="newline tab and return escaped"),
        pytest.param('"} or vector(1) #', '"\\"} or vector(1) #"', id="an injection stays a string"),
        pytest.param("ünïcødé ✓", '"ünïcødé ✓"', id="unicode kept"),
    ],
)
def test_quote(value: str, quoted: str) -> None:
    assert quote(value) == quoted


@pytest.mark.parametrize("value", ["bell\x07", "nul\x00", "del\x7f", "surrogate\ud800"])
def test_unquotable_values_are_refused(value: str) -> None:
    with pytest.raises(UnsafeLabelValueError):
        escape(value)


def test_regex_alternatives_match_literally() -> None:
    assert regex_alternatives(["a.b", "c|d", "e\\f"]) == '"a\\\\.b|c\\\\|d|e\\\\\\\\f"'


def test_selector_matchers_cover_every_operator() -> None:
    selector = LabelSelector(
        match_labels=(("queue", "orders"), ("env", "prod")),
        match_expressions=(
            LabelSelectorRequirement("tier", "In", ("gold", "silver")),
            LabelSelectorRequirement("shard", "NotIn", ("x",)),
            LabelSelectorRequirement("region", "Exists"),
            LabelSelectorRequirement("canary", "DoesNotExist"),
        ),
    )
    assert selector_matchers(selector) == [
        'env="prod"',
        'queue="orders"',
        'canary=""',
        'region!=""',
        'shard!~"x"',
        'tier=~"gold|silver"',
    ]


@pytest.mark.parametrize("key", ["app.kubernetes.io/name", "has-dash", "1starts_with_digit", ""])
def test_label_names_that_prometheus_cannot_have_are_refused(key: str) -> None:
    with pytest.raises(UnsafeLabelValueError):
        selector_matchers(LabelSelector(match_labels=((key, "x"),)))


def test_render_fills_only_known_braced_placeholders() -> None:
    values = {"metric": lambda: "up", "matchers": lambda: 'job="x"'}
    assert render('${metric}{${matchers}} and on() label_replace(vector(1), "a", "$1", "b", "(.*)$")', values) == (
        'up{job="x"} and on() label_replace(vector(1), "a", "$1", "b", "(.*)$")'
    )
    with pytest.raises(PermanentError):
        render("${object_name}", values)


@pytest.mark.parametrize(
    ("query", "plain"),
    [
        ("up", True),
        ('up{job="a", instance=~"x.*"}', True),
        ('{__name__="up", job!=""}', True),
        ('up{job="a,}\\"b"}', True),
        ("sum(up)", False),
        ("rate(up[1m])", False),
        ('up{job="a"} offset 5m', False),
        ("up or down", False),
        ('up{job="a"}[1m]', False),
        ("scalar(up)", False),
    ],
)
def test_plain_selector_detection(query: str, plain: bool) -> None:
    assert is_plain_selector(query) is plain


@pytest.mark.parametrize(
    ("query", "selector"),
    [
        ('sum(queue_depth{namespace="default", queue="jobs"})', 'queue_depth{namespace="default", queue="jobs"}'),
        ('count(members{group="orders"})', 'members{group="orders"}'),
        ('max by (queue) (x{a="b"})', 'x{a="b"}'),
        ("sum(x) by (a, b)", "x"),
        ('sum(rate(orders_total{service="checkout"}[2m]))', 'orders_total{service="checkout"}'),
        ("sum without (pod) (increase(x[1m30s]))", "x"),
        ('sum(x{a=~"a|b"})', 'x{a=~"a|b"}'),
        ("sum(x) / 2", None),
        ('sum(x{a="b"}) + sum(y)', None),
        ("sum(rate(x[5m] offset 1m))", None),
        ("avg_over_time(x[5m])", None),
        ("sum(sum(x))", None),
        ("x", None),  # a plain selector is its own freshness already
        ("quantile(0.9, x)", None),
    ],
)
def test_the_selector_under_an_aggregation(query: str, selector: str | None) -> None:
    assert aggregated_selector(query) == selector


@pytest.mark.parametrize(
    ("query", "keeps", "selector"),
    [
        pytest.param("sum by (namespace, pod) (rate(x[2m]))", ("namespace", "pod"), "x", id="by names them all"),
        pytest.param("sum(rate(x[2m])) by (pod, namespace)", ("namespace", "pod"), "x", id="by after"),
        pytest.param("sum by (pod) (rate(x[2m]))", ("namespace", "pod"), None, id="by drops one"),
        pytest.param("sum without (container) (x)", ("namespace", "pod"), "x", id="without drops none of them"),
        pytest.param("sum without (pod) (x)", ("namespace", "pod"), None, id="without drops one"),
        pytest.param("sum(x)", ("namespace", "pod"), None, id="no clause drops them all"),
        pytest.param("sum(x)", (), "x", id="no clause, nothing to keep"),
        pytest.param("max by (queue) (x)", (), "x", id="by, nothing to keep"),
        pytest.param("sum by (a) (x) by (b)", (), None, id="two clauses: not PromQL"),
    ],
)
def test_the_selector_under_an_aggregation_that_keeps_the_grouping(
    query: str, keeps: tuple[str, ...], selector: str | None
) -> None:
    """Sample times are matched to values by the source's grouping: an aggregation that drops one of its labels
    would leave every value without its marker, so it gets none."""
    assert aggregated_selector(query, keeps) == selector


def test_sample_timestamps_are_marked() -> None:
    assert with_sample_timestamps("sum by (pod) (x)", "x", ["pod"]) == (
        '(sum by (pod) (x)) or label_replace(min by (pod) (timestamp(x)), "autoscaler_sample", "timestamp", "", "")'
    )
