"""Annotated pydantic field types shared by the spec and snapshot models: integers, quantities, names, times.

Validating them inside the models makes pydantic report every bad value with its full field path. Every
model of the spec layer is strict (no "2" or true where an integer belongs); the bounds here are the API
server's: Kubernetes' replica counts and seconds are int32, a quantity's MilliValue() is an int64, and a
name follows the rule upstream's validation applies to it. The CRD schema (autoscaler/kube/crd.yaml)
carries the same bounds: tests/kube/test_crd.py compares them field by field, and
tests/spec/test_rules_in_step.py refuses one invalid spec per rule through both.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, Field, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from autoscaler.core.formats import QuantityError, duration_seconds, milli_value, parse_time
from autoscaler.spec.errors import describe_value

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
# The longest duration Go's time.Duration holds (int64 nanoseconds), in seconds: kube-controller-manager's
# duration flags cannot be longer.
GO_DURATION_MAX_SECONDS = INT64_MAX / 1e9

Int32 = Annotated[int, Field(ge=-(2**31), le=INT32_MAX)]
NonNegativeInt32 = Annotated[int, Field(ge=0, le=INT32_MAX)]
PositiveInt32 = Annotated[int, Field(ge=1, le=INT32_MAX)]
NonNegativeInt64 = Annotated[int, Field(ge=0, le=INT64_MAX)]
Seconds = Annotated[float, Field(ge=0, le=GO_DURATION_MAX_SECONDS, allow_inf_nan=False)]
WholeSeconds = Annotated[int, Field(ge=0, le=int(GO_DURATION_MAX_SECONDS))]


# --- Quantities ------------------------------------------------------------------------------------------

# The error type of a value that does not read as a quantity at all (the wrong JSON type, or a string that
# does not parse): the API server refuses it while decoding the object, before validation. A quantity that
# reads but is out of bounds (not positive, too large) is a plain value error, a validation failure.
QUANTITY_PARSING = "quantity_parsing"


def _not_a_quantity(message: str) -> PydanticCustomError:
    return PydanticCustomError(QUANTITY_PARSING, "{message}", {"message": message})


def _milli(value: Any) -> int:
    """MilliValue() of a quantity, refusing what Kubernetes cannot hold (raises ValueError)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _not_a_quantity(f"a quantity is a string like '250m' or a number, not {describe_value(value)}")
    try:
        milli = milli_value(value)
    except QuantityError as err:
        raise _not_a_quantity(str(err)) from None
    if not -INT64_MAX - 1 <= milli <= INT64_MAX:
        raise ValueError(f"{value!r} is out of range: its milli-value does not fit in a 64-bit integer")
    return milli


def _quantity(value: Any) -> str | int | float:
    _milli(value)
    return value  # type: ignore[no-any-return]


def _spec_quantity(value: Any) -> str | int:
    """A quantity in the autoscaler spec: a string, or an integer (the CRD's int-or-string)."""
    if isinstance(value, str) and value != value.strip():
        raise _not_a_quantity(f"{value!r} is not a Kubernetes quantity: it has surrounding spaces")
    if isinstance(value, float):
        raise _not_a_quantity(
            f"write the quantity {value!r} as a string ({str(value)!r}): the CRD schema takes a quantity as "
            "a string or an integer (int-or-string)"
        )
    _milli(value)
    return value  # type: ignore[no-any-return]


def _positive(value: str | int) -> str | int:
    """validateMetricTarget: a target value must be positive (Quantity.Sign() == 1)."""
    if _milli(value) <= 0:
        raise ValueError(f"must be positive, not {value!r}")
    return value


def _non_negative(value: str | int) -> str | int:
    """ValidateNonnegativeQuantity: a tolerance may be 0, not less."""
    if _milli(value) < 0:
        raise ValueError(f"must be greater than or equal to 0, not {value!r}")
    return value


_QUANTITY_SCHEMA = WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "integer"}], "format": "quantity"})

Quantity = Annotated[
    str | int | float,
    PlainValidator(_quantity),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "number"}], "format": "quantity"}),
    Field(description="A Kubernetes quantity: '250m', '1.5', '2Gi', '1e3'."),
]
PositiveQuantity = Annotated[
    str | int,
    PlainValidator(_spec_quantity),
    AfterValidator(_positive),
    _QUANTITY_SCHEMA,
    Field(description="A positive Kubernetes quantity, as a string ('250m', '1.5') or an integer."),
]
NonNegativeQuantity = Annotated[
    str | int,
    PlainValidator(_spec_quantity),
    AfterValidator(_non_negative),
    _QUANTITY_SCHEMA,
    Field(description="A Kubernetes quantity of 0 or more, as a string ('0.05') or an integer."),
]


# --- Names -----------------------------------------------------------------------------------------------

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
# IsStandardContainerResourceName (pkg/apis/core/helper): what a ContainerResource metric may name.
_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})


def _path_segment(value: str) -> str:
    """IsValidPathSegmentName: the name must be usable as one segment of a URL path."""
    if value in (".", ".."):
        raise ValueError(f"may not be {value!r}")
    for char in ("/", "%"):
        if char in value:
            raise ValueError(f"may not contain {char!r}: {value!r}")
    return value


def _dns1123_label(value: str) -> str:
    """ValidateDNS1123Label: a container name."""
    if len(value) > 63 or not _DNS1123_LABEL.match(value):
        raise ValueError(
            f"{value!r} is not a DNS-1123 label: at most 63 lower-case alphanumerics or '-', "
            "starting and ending with an alphanumeric"
        )
    return value


def _dns1123_subdomain(value: str) -> str:
    """NameIsDNSSubdomain: an object name."""
    if len(value) > 253 or not _DNS1123_SUBDOMAIN.match(value):
        raise ValueError(
            f"{value!r} is not a DNS-1123 subdomain: at most 253 lower-case alphanumerics, '-' or '.', "
            "starting and ending with an alphanumeric"
        )
    return value


def _container_resource_name(value: str) -> str:
    """ValidateContainerResourceName: a standard container resource, or an extended resource (domain/name)."""
    if "/" not in value:
        if value not in _CONTAINER_RESOURCES and not value.startswith("hugepages-"):
            raise ValueError(
                f"{value!r} must be a standard resource for containers (cpu, memory, ephemeral-storage, "
                "hugepages-<size>) or an extended resource (example.com/name)"
            )
        return value
    prefix, _, name = value.partition("/")
    if (
        "/" in name
        or not _QUALIFIED_NAME.match(name)
        or len(name) > 63
        or not _DNS1123_SUBDOMAIN.match(prefix)
        or prefix == "kubernetes.io"
        or prefix.endswith(".kubernetes.io")
        or value.startswith("requests.")
    ):
        raise ValueError(f"{value!r} doesn't have a valid extended resource name (example.com/name)")
    return value


# A name upstream checks with IsValidPathSegmentName: kinds, object names, metric names.
PathSegmentName = Annotated[str, Field(min_length=1), AfterValidator(_path_segment)]
ContainerName = Annotated[str, Field(min_length=1, max_length=63), AfterValidator(_dns1123_label)]
ObjectName = Annotated[str, Field(min_length=1), AfterValidator(_dns1123_subdomain)]
ContainerResourceName = Annotated[str, Field(min_length=1), AfterValidator(_container_resource_name)]


# --- Times and durations ---------------------------------------------------------------------------------

# The decision subtracts windows (up to the longest Go duration, 292 years) from its clock reading `now`
# and adds them to the other times; within these ranges that arithmetic never leaves the calendar. Other
# times may be Go's zero time, 0001-01-01T00:00:00Z, which Kubernetes objects and upstream's tests hold.
EARLIEST_TIME = datetime(1, 1, 1, tzinfo=UTC)
EARLIEST_NOW = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_TIME = datetime(9000, 1, 1, tzinfo=UTC)


def _in_range(value: Any, earliest: datetime) -> str:
    if not isinstance(value, str):
        raise ValueError(f"a time is an RFC 3339 string (e.g. 2026-01-02T15:04:05Z), not {describe_value(value)}")
    when = parse_time(value)
    try:
        inside = earliest <= when.astimezone(UTC) < LATEST_TIME
    except OverflowError:
        inside = False
    if not inside:
        raise ValueError(
            f"{value!r} is out of range: a time here must lie between {earliest:%Y-%m-%d} and {LATEST_TIME:%Y-%m-%d}"
        )
    return value


def _time(value: Any) -> str:
    return _in_range(value, EARLIEST_TIME)


def _now(value: Any) -> str:
    return _in_range(value, EARLIEST_NOW)


def _duration(value: Any) -> str | int | float:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"a duration is a string like '30s' or a number of seconds, not {describe_value(value)}")
    try:
        seconds = duration_seconds(value)
    except QuantityError as err:
        raise ValueError(str(err)) from None
    if not 0 <= seconds <= GO_DURATION_MAX_SECONDS:
        raise ValueError(f"{value!r} is out of range: a duration lies between 0 and {GO_DURATION_MAX_SECONDS:.0f}s")
    return value


Time = Annotated[
    str,
    PlainValidator(_time),
    WithJsonSchema({"type": "string", "format": "date-time"}),
    Field(description="An RFC 3339 time, e.g. 2026-01-02T15:04:05Z."),
]
Now = Annotated[
    str,
    PlainValidator(_now),
    WithJsonSchema({"type": "string", "format": "date-time"}),
    Field(description="The decision's clock reading: an RFC 3339 time from 1970 on."),
]
Duration = Annotated[
    str | int | float,
    PlainValidator(_duration),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "number"}], "format": "duration"}),
    Field(description="A Go duration ('30s') or seconds."),
]
