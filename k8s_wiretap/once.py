"""`once`: a property worked out on first use and kept, as `functools.cached_property`
does, without its lock.

Python 3.11's cached_property takes a lock on every first use (3.12 dropped it); on what
every exchange is asked once — its request info, user agent, component, a body's JSON — the
lock and its Python-level `__get__` were 1-2% of `explain`. The value goes into the
instance's `__dict__`, which later lookups find before the descriptor (it defines no
`__set__`), so they cost an attribute read. Two threads asking at once may both work it out:
it must be a pure function of the instance, as every use here is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

__all__ = ["once"]

T = TypeVar("T")


class once[T]:  # a decorator, named as property is
    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> once[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> T | once[T]:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value
