"""Read-only records filled in at the cost of plain attributes (a turn makes several).

A frozen slots dataclass (`Decision`, ...) sets each field in `__init__` through
`object.__setattr__`, around its own refusing `__setattr__`: in CPython that call costs
about four times a plain attribute store, and a turn's records have some sixty fields
(docs/lab/benchmarks.md, "A cheaper turn, again"). A *draft* is an object of a twin class
with the same slots in the same order and no `__setattr__` of its own: its fields are set
plainly, then `seal` turns it into the record class itself (CPython allows `__class__` to
change between classes of the same slot layout). The result is an ordinary instance of the
record class: the same type, equality, hash, repr and pickling, read-only from then on.
Only hot paths use a draft; everything else calls the record's constructor.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_TWINS: dict[type, type] = {}


def draft_class(cls: type) -> type:
    """The twin of the slots class `cls`: its slots, in its order, set by plain assignment."""
    twin = _TWINS.get(cls)
    if twin is None:
        slots = tuple(cls.__dict__["__slots__"])
        twin = type(f"{cls.__name__}Draft", (), {"__slots__": slots, "__module__": __name__})
        _TWINS[cls] = twin
    return twin


def seal(draft: Any, cls: type[T]) -> T:
    """The draft as an instance of `cls` (every slot must be set: a slot left unset would
    read as missing). The draft object itself becomes the record; keep no other reference."""
    draft.__class__ = cls
    sealed: T = draft
    return sealed


def builder(cls: type[T]) -> Callable[..., T]:
    """`cls(*values)` for a slots record whose constructor sets its slots, in slot order, to
    its positional arguments as given (a frozen dataclass whose fields all have slots, with
    no `__post_init__`): a draft filled in and sealed. Generated once per class, as
    `dataclasses` generates the constructor itself."""
    twin = draft_class(cls)
    slots: tuple[str, ...] = twin.__slots__  # type: ignore[attr-defined]
    if not all(name.isidentifier() for name in slots):
        raise ValueError(f"{cls.__name__}: slots that are not names")
    if dataclasses.is_dataclass(cls) and (
        tuple(f.name for f in dataclasses.fields(cls)) != slots or hasattr(cls, "__post_init__")
    ):
        raise ValueError(f"{cls.__name__}: its constructor does more than set its slots")
    lines = [f"def build({', '.join(slots)}):", "    draft = _twin()"]
    lines += [f"    draft.{name} = {name}" for name in slots]
    lines += ["    draft.__class__ = _cls", "    return draft"]
    namespace: dict[str, Any] = {"_twin": twin, "_cls": cls}
    exec("\n".join(lines), namespace)  # noqa: S102 - names checked above, as dataclasses does
    build: Callable[..., T] = namespace["build"]
    build.__qualname__ = f"{cls.__name__} builder"
    return build
