"""PromQL text: safe label matchers, template filling, and the staleness wrapper.

Everything that puts a value from a spec, a pod or the cluster into PromQL goes through this module.
Label values are escaped for PromQL double-quoted strings (backslash, quote, newline, tab, carriage
return); what cannot be expressed safely (other control characters, lone surrogates, label names that are
not Prometheus identifiers) raises `UnsafeLabelValueError`, never an injection. This module builds strings
only: no network, no settings.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from autoscaler.core.types import LabelSelector
from autoscaler.metrics.errors import PermanentError, UnsafeLabelValueError
from autoscaler.spec.prometheus import LABEL_NAME
from autoscaler.spec.prometheus import PLACEHOLDER as _PLACEHOLDER

METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
# The marker label that separates sample-timestamp series from value series in one answer.
TIMESTAMP_MARKER = "autoscaler_sample"
TIMESTAMP_MARKER_VALUE = "timestamp"

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_RE2_SPECIAL = re.compile(r"([\\.+*?()|\[\]{}^$])")
# A plain instant-vector selector: metric{matchers} or {matchers}, nothing else (strings may hold anything
# but an unescaped quote).
_STRING = r'"(?:[^"\\]|\\.)*"'
_MATCHER = rf"\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(?:=~|!~|!=|=)\s*{_STRING}\s*"
_SELECTOR = (
    rf"(?:[a-zA-Z_:][a-zA-Z0-9_:]*\s*(?:\{{(?:{_MATCHER}(?:,{_MATCHER})*,?\s*)?\}})?"
    rf"|\{{{_MATCHER}(?:,{_MATCHER})*,?\s*\}})"
)
_PLAIN_SELECTOR = re.compile(rf"^\s*{_SELECTOR}\s*$", re.DOTALL)
# One aggregation of one selector, or of rate()/irate()/increase() over it: `sum(queue_depth{queue="jobs"})`,
# `max by (queue) (x{...})`, `sum(rate(x{...}[2m]))`. Its series' sample times are the selector's.
_LABEL_LIST = r"\s*(?:[a-zA-Z_][a-zA-Z0-9_]*\s*(?:,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*)*,?)?"
_RANGE = r"\[\s*(?:[0-9]+(?:ms|[smhdwy]))+\s*\]"
_AGGREGATED_SELECTOR = re.compile(
    rf"^\s*(?:sum|min|max|avg|count|group)(?:\s*(?P<mode>by|without)\s*\((?P<labels>{_LABEL_LIST})\))?\s*\(\s*"
    rf"(?:(?P<selector>{_SELECTOR})|(?:rate|irate|increase)\s*\(\s*(?P<ranged>{_SELECTOR})\s*{_RANGE}\s*\))"
    rf"\s*\)(?:\s*(?P<mode_after>by|without)\s*\((?P<labels_after>{_LABEL_LIST})\))?\s*$",
    re.DOTALL,
)


def check_label_name(name: str) -> str:
    """Return `name` if it is a Prometheus label name, else refuse it."""
    if not LABEL_NAME.match(name):
        raise UnsafeLabelValueError(f"{name!r} is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)")
    return name


def check_metric_name(name: str) -> str:
    """Return `name` if it is a Prometheus metric name, else refuse it."""
    if not METRIC_NAME.match(name):
        raise UnsafeLabelValueError(f"{name!r} is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)")
    return name


def escape(value: str) -> str:
    """The content of a PromQL double-quoted string holding `value` (without the quotes)."""
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F or 0xD800 <= ord(char) <= 0xDFFF:
            raise UnsafeLabelValueError(f"label value {value!r} holds a character PromQL cannot quote safely")
        else:
            out.append(char)
    return "".join(out)


def quote(value: str) -> str:
    """`value` as a PromQL double-quoted string."""
    return f'"{escape(value)}"'


def regex_alternatives(values: Iterable[str]) -> str:
    """An RE2 regex matching exactly one of `values` (each literal), as a quoted PromQL string."""
    parts = [_RE2_SPECIAL.sub(r"\\\1", value) for value in values]
    return quote("|".join(parts))


def matcher(name: str, op: str, value: str) -> str:
    """One label matcher, `name op "value"`, checked and escaped."""
    return f"{check_label_name(name)}{op}{quote(value)}"


def selector_matchers(selector: LabelSelector | None) -> list[str]:
    """The label matchers that select what a metav1.LabelSelector selects, in a stable order."""
    if selector is None:
        return []
    result = [matcher(key, "=", value) for key, value in sorted(selector.match_labels)]
    for req in sorted(selector.match_expressions, key=lambda r: (r.key, r.operator, r.values)):
        if req.operator == "In":
            if not req.values:
                raise UnsafeLabelValueError(f"selector on {req.key!r}: operator In needs values")
            result.append(f"{check_label_name(req.key)}=~{regex_alternatives(sorted(req.values))}")
        elif req.operator == "NotIn":
            if not req.values:
                raise UnsafeLabelValueError(f"selector on {req.key!r}: operator NotIn needs values")
            result.append(f"{check_label_name(req.key)}!~{regex_alternatives(sorted(req.values))}")
        elif req.operator == "Exists":
            result.append(f'{check_label_name(req.key)}!=""')
        elif req.operator == "DoesNotExist":
            result.append(f'{check_label_name(req.key)}=""')
        else:
            raise UnsafeLabelValueError(f"selector on {req.key!r}: unknown operator {req.operator!r}")
    return result


def render(template: str, values: Mapping[str, Callable[[], str]]) -> str:
    """Fill `${name}` placeholders with safe text, computed only when used (a value that cannot be made
    safe raises then); a bare `$` is left alone (regexes use it)."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise PermanentError(f"placeholder ${{{name}}} has no value here", error_type="config")
        return values[name]()

    return _PLACEHOLDER.sub(fill, template)


def is_plain_selector(query: str) -> bool:
    """True when `query` is a plain instant-vector selector, whose `timestamp()` is the sample's own."""
    return bool(_PLAIN_SELECTOR.match(query))


def aggregated_selector(query: str, keeps: Sequence[str] = ()) -> str | None:
    """The selector under `query` when it is one aggregation of one plain selector, or of rate(), irate() or
    increase() over one (`sum(queue_depth{queue="jobs"})`, `sum by (q) (rate(x{...}[2m]))`), and its result
    keeps every label of `keeps` (the grouping its sample times are matched by: `by` naming them all, `without`
    naming none); else None. That selector's series are the ones whose sample times the answer's are, so the
    query can have a staleness check without a `freshness` of its own."""
    found = _AGGREGATED_SELECTOR.match(query)
    if found is None or (found.group("mode") and found.group("mode_after")):
        return None
    mode = found.group("mode") or found.group("mode_after")
    labels = {name.strip() for name in (found.group("labels") or found.group("labels_after") or "").split(",")}
    labels.discard("")
    if mode == "by" and not set(keeps) <= labels:
        return None
    if mode == "without" and labels & set(keeps):
        return None
    if mode is None and keeps:
        return None
    return (found.group("selector") or found.group("ranged")).strip()


def with_sample_timestamps(
    value_query: str, freshness_selector: str, by: Sequence[str], *, marked_before: float | None = None
) -> str:
    """One query answering both the values and, per group, the oldest sample time behind them.

    `timestamp()` of a plain selector is the time of each sample (of anything else it is the evaluation
    time), so the freshness side must be a plain selector. Its series carry a marker label, so `or` keeps
    both sides and the caller splits them.

    With `marked_before` (seconds since the epoch), only the samples older than that are marked (the lean
    form, `timestamp(...) < T`): a group without a marker has every sample at or after it, and its values read
    as sampled at the time asked. Prometheus then neither encodes nor sends a marker for the fresh groups,
    about half of a per-pod answer (docs/metrics.md, "Staleness"). The bound is a number, not `time() - N`:
    VictoriaMetrics evaluates a query asked near the present at the present minus `-search.latencyOffset`
    (30 s by default), so its `time()` is not the time asked.
    """
    grouping = ", ".join(by)
    times = f"timestamp({freshness_selector})"
    if marked_before is not None:
        times = f"{times} < {marked_before:.3f}"
    return (
        f"({value_query}) or label_replace(min by ({grouping}) ({times}), "
        f'"{TIMESTAMP_MARKER}", "{TIMESTAMP_MARKER_VALUE}", "", "")'
    )
