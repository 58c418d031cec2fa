"""`core.values.quick_init`: a frozen dataclass with the faster __init__ is built exactly as dataclass builds it."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import FrozenInstanceError, dataclass, field, fields

import pytest

from autoscaler.core import behavior, calculator, decision, events, metric, types
from autoscaler.core.values import quick_init


@dataclass(frozen=True, slots=True)
class Plain:
    name: str
    count: int = 3
    note: str | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class Quick:
    name: str
    count: int = 3
    note: str | None = None


def test_the_same_parameters_and_defaults_as_dataclass_makes() -> None:
    assert str(inspect.signature(Quick)) == str(inspect.signature(Plain))


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [(("a",), {}), (("a", 5), {}), (("a", 5, "x"), {}), ((), {"name": "a", "note": "y"}), (("a",), {"count": 0})],
)
def test_built_as_dataclass_builds_it(args: tuple[object, ...], kwargs: dict[str, object]) -> None:
    quick, plain = Quick(*args, **kwargs), Plain(*args, **kwargs)  # type: ignore[arg-type]
    assert [getattr(quick, f.name) for f in fields(Quick)] == [getattr(plain, f.name) for f in fields(Plain)]
    assert repr(quick) == repr(plain).replace("Plain", "Quick")
    assert quick == Quick(*args, **kwargs)  # type: ignore[arg-type]
    assert hash(quick) == hash(Quick(*args, **kwargs))  # type: ignore[arg-type]


def test_still_frozen_and_still_a_dataclass_value() -> None:
    quick = Quick("a")
    with pytest.raises(FrozenInstanceError):
        quick.count = 4  # type: ignore[misc]
    assert dataclasses.replace(quick, count=9) == Quick("a", 9)
    assert pickle.loads(pickle.dumps(quick)) == quick
    with pytest.raises(TypeError):
        Quick()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Quick("a", 1, None, 2)  # type: ignore[call-arg]


def test_refuses_what_it_would_not_reproduce() -> None:
    @dataclass(slots=True)
    class Mutable:
        a: int

    @dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = field(default_factory=list)

    @dataclass(frozen=True, slots=True)
    class KeywordOnly:
        a: int = field(kw_only=True)

    @dataclass(frozen=True, slots=True)
    class NotInInit:
        a: int = field(default=1, init=False)

    @dataclass(frozen=True, slots=True)
    class PostInit:
        a: int

        def __post_init__(self) -> None:
            pass

    for cls in (Mutable, NoSlots, Factory, KeywordOnly, NotInInit, PostInit):
        with pytest.raises(TypeError):
            quick_init(cls)


def _made_by_quick_init(cls: type) -> bool:
    code = getattr(cls.__init__, "__code__", None)
    return code is not None and code.co_filename == f"<quick_init {cls.__qualname__}>"


QUICK = [
    cls
    for module in (types, calculator, metric, behavior, decision, events)
    for cls in vars(module).values()
    if isinstance(cls, type) and cls.__module__ == module.__name__ and _made_by_quick_init(cls)
]


def test_the_core_uses_it_on_its_values_and_each_takes_its_fields_in_order() -> None:
    assert {c.__name__ for c in QUICK} >= {"Decision", "Calculation", "MetricResult", "Condition", "BehaviorState"}
    for cls in QUICK:
        parameters = list(inspect.signature(cls).parameters.values())
        assert [p.name for p in parameters] == [f.name for f in fields(cls)], cls
        assert [p.default for p in parameters] == [
            inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default for f in fields(cls)
        ], cls
