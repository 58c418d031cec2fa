"""setCondition for the autoscaler's status conditions, as horizontal.go's setConditionInList does it.

A condition keeps its place in the list; its lastTransitionTime changes only when its status changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from autoscaler.core.types import Condition

# Texts made again and again, equal, for thousands of targets (a condition's message, a decision's summary):
# one string each while they are in this table, which is cleared when full. Not sys.intern: its strings outlive
# every reference on Python 3.12.0-3.12.5 (immortal), and a message can carry an error's text.
_TEXTS: dict[str, str] = {}
MAX_SHARED_TEXTS = 4096


def shared_text(text: str) -> str:
    """`text`, or the equal string this table holds (a cache: the result is always equal to `text`)."""
    found = _TEXTS.get(text)
    if found is not None:
        return found
    if len(_TEXTS) >= MAX_SHARED_TEXTS:
        _TEXTS.clear()
    _TEXTS[text] = text
    return text


def set_condition(
    conditions: Sequence[Condition], type_: str, status: str, reason: str, message: str, *, now: datetime
) -> list[Condition]:
    """Return the list with condition `type_` set (appended when absent)."""
    result = list(conditions)
    for i, existing in enumerate(result):
        if existing.type == type_:
            changed = existing.status != status
            if not changed and existing.reason == reason and existing.message == message:
                return result  # the same condition: kept as it is (a steady target makes no new one each tick)
            result[i] = Condition(
                type=type_,
                status=status,
                reason=reason,
                message=shared_text(message),  # the same few messages in thousands of targets' conditions: one each
                last_transition_time=now if changed else existing.last_transition_time,
            )
            return result
    result.append(Condition(type_, status, reason, shared_text(message), now))
    return result
