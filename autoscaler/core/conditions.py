"""setCondition for the autoscaler's status conditions, as horizontal.go's setConditionInList does it.

A condition keeps its place in the list; its lastTransitionTime changes only when its status changes.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import datetime

from autoscaler.core.types import Condition


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
                message=sys.intern(message),  # the same few messages in thousands of targets' conditions: one each
                last_transition_time=now if changed else existing.last_transition_time,
            )
            return result
    result.append(Condition(type_, status, reason, sys.intern(message), now))
    return result
