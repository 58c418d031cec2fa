"""Retry-After, read once for every layer (autoscaler.core.formats.parse_retry_after): RFC 9110's two forms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from autoscaler.core.formats import MAX_RETRY_AFTER_SECONDS, parse_retry_after

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def _date(offset_seconds: float) -> str:
    return format_datetime(NOW + timedelta(seconds=offset_seconds), usegmt=True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("7", 7.0, id="delay-seconds"),
        pytest.param(" 7 ", 7.0, id="delay-seconds with spaces around"),
        pytest.param("0", 0.0, id="zero seconds"),
        pytest.param("007", 7.0, id="leading zeros"),
        pytest.param(_date(30), 30.0, id="HTTP-date in the future"),
        pytest.param(_date(-3600), 0.0, id="HTTP-date in the past is no wait"),
        pytest.param(_date(0), 0.0, id="HTTP-date now"),
        pytest.param("Thu, 01 Jan 2026 12:00:30 -0000", 30.0, id="HTTP-date without a zone claim reads as UTC"),
        pytest.param("Thu, 01 Jan 2026 13:00:30 +0100", 30.0, id="HTTP-date in another zone"),
        pytest.param("86400", MAX_RETRY_AFTER_SECONDS, id="a day is the cap"),
        pytest.param("86401", MAX_RETRY_AFTER_SECONDS, id="past the cap"),
        pytest.param("9" * 500, MAX_RETRY_AFTER_SECONDS, id="huge delay-seconds stays finite"),
        pytest.param(_date(10 * 365 * 86400), MAX_RETRY_AFTER_SECONDS, id="HTTP-date years ahead"),
        pytest.param("-5", None, id="negative is not delay-seconds"),
        pytest.param("1.5", None, id="fractional is not delay-seconds"),
        pytest.param("+5", None, id="a sign is not delay-seconds"),
        pytest.param("²", None, id="a non-ASCII digit"),
        pytest.param("soon", None, id="garbage"),
        pytest.param("Thu, 32 Jan 2026 12:00:00 GMT", None, id="an impossible date"),
        pytest.param("Thu, 01 Jan 99999 12:00:00 GMT", None, id="a year past datetime's range"),
        pytest.param("", None, id="empty"),
        pytest.param("   ", None, id="blank"),
        pytest.param(None, None, id="absent"),
    ],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, now=NOW) == expected


def test_now_in_another_zone_is_the_same_instant() -> None:
    local = NOW.astimezone(timezone(timedelta(hours=-5)))
    assert parse_retry_after(_date(30), now=local) == 30.0


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        parse_retry_after("7", now=NOW.replace(tzinfo=None))
