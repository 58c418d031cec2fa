"""Pushes samples into a test Prometheus through its remote-write receiver.

The WriteRequest protobuf is small enough to encode by hand (field numbers from Prometheus's
prompb/remote.proto and types.proto): WriteRequest.timeseries = 1; TimeSeries.labels = 1, .samples = 2;
Label.name = 1, .value = 2; Sample.value = 1 (double), .timestamp = 2 (int64 milliseconds).
"""

from __future__ import annotations

import struct
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import snappy


@dataclass(frozen=True)
class TimeSeries:
    """One series: its labels (including __name__) and its samples as (seconds, value)."""

    labels: Mapping[str, str]
    samples: Sequence[tuple[float, float]]


def _varint(number: int) -> bytes:
    out = bytearray()
    number &= (1 << 64) - 1  # int64 two's complement, as protobuf does
    while True:
        byte = number & 0x7F
        number >>= 7
        if number:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, wire_type: int) -> bytes:
    return _varint((number << 3) | wire_type)


def _bytes(number: int, payload: bytes) -> bytes:
    return _field(number, 2) + _varint(len(payload)) + payload


def encode(series: Iterable[TimeSeries]) -> bytes:
    """A serialized WriteRequest."""
    request = b""
    for one in series:
        body = b""
        for name, value in sorted(one.labels.items()):  # Prometheus expects sorted labels
            body += _bytes(1, _bytes(1, name.encode()) + _bytes(2, value.encode()))
        for seconds, number in one.samples:
            sample = _field(1, 1) + struct.pack("<d", number) + _field(2, 0) + _varint(round(seconds * 1000))
            body += _bytes(2, sample)
        request += _bytes(1, body)
    return request


def push(base_url: str, series: Iterable[TimeSeries]) -> None:
    """POST the series to `<base_url>/api/v1/write`; raises on any answer but 204/200."""
    payload = snappy.compress(encode(series))
    request = urllib.request.Request(
        f"{base_url}/api/v1/write",
        data=payload,
        method="POST",
        headers={
            "Content-Encoding": "snappy",
            "Content-Type": "application/x-protobuf",
            "X-Prometheus-Remote-Write-Version": "0.1.0",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        if response.status not in (200, 204):
            raise RuntimeError(f"remote write answered {response.status}")
