"""A faster `__init__` for the frozen values the core makes on every decision.

A frozen dataclass's generated `__init__` stores each field through `object.__setattr__` (frozen forbids plain
assignment), about twice the cost of a plain slot store, and a decision sets ~150 such fields (its Decision, the
metrics' results, calculations and statuses, the stabilization and limits, conditions). `quick_init` gives a frozen,
slotted dataclass an `__init__` with the same parameters and defaults that stores each field through its slot's
descriptor instead: the same object, as frozen as before (assigning after `__init__` still raises), made ~40 %
faster (0.96 -> 0.55 us for nine fields). It refuses a class whose `__init__` it would not reproduce exactly
(default factories, keyword-only or init=False fields, InitVar or ClassVar pseudo-fields, `__post_init__`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

_T = TypeVar("_T", bound=type)


def quick_init(cls: _T) -> _T:
    """Decorate a class made by `@dataclass(frozen=True, slots=True)` (apply it above that decorator)."""
    name = cls.__qualname__
    if not dataclasses.is_dataclass(cls) or "__slots__" not in vars(cls):
        raise TypeError(f"{name}: quick_init needs a dataclass made with slots=True")
    if not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        raise TypeError(f"{name}: quick_init is for frozen dataclasses (a plain one stores its fields directly)")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{name}: quick_init does not call __post_init__")
    fields = dataclasses.fields(cls)
    if len(fields) != len(cls.__dataclass_fields__):
        raise TypeError(f"{name}: quick_init does not take InitVar or ClassVar pseudo-fields")
    scope: dict[str, Any] = {}
    parameters: list[str] = []
    lines: list[str] = []
    for f in fields:
        if not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{name}.{f.name}: quick_init takes only plain fields, with or without a plain default")
        scope[f"_set_{f.name}"] = vars(cls)[f.name].__set__  # the slot's member descriptor
        if f.default is dataclasses.MISSING:
            parameters.append(f.name)
        else:
            scope[f"_default_{f.name}"] = f.default
            parameters.append(f"{f.name}=_default_{f.name}")
        lines.append(f"    _set_{f.name}(self, {f.name})\n")
    source = f"def __init__(self, {', '.join(parameters)}):\n" + ("".join(lines) or "    pass\n")
    made: dict[str, Any] = {}
    # Named for tracebacks and profiles ("<quick_init Decision>"); built above from the class's own field names.
    exec(compile(source, f"<quick_init {name}>", "exec"), scope, made)
    init = made["__init__"]
    init.__qualname__ = f"{name}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
