"""How op families give the model their implementations: one table, built once.

The interpreter core (:mod:`gemm_opt.model.core`) knows how to compile a block
into closures and how a program runs them; it knows no op. Each op family
(arith, control flow, memory, TDM copies, MMA, barriers, sync, warp
specialization) is a module with one :class:`OpImpls` whose :meth:`OpImpls.impl`
decorator names the ops a builder implements. A builder takes the compiler
and the op and returns the closure that executes the op on a program (see
:data:`gemm_opt.model.core.Exec`): the op is read once, when the function is
compiled, so an op the model cannot execute is reported before anything runs.

:class:`Registry` joins families into the table the compiler reads. Each op has
exactly one implementation: a second one, in the same family or another,
raises :class:`ValueError` when the family or the table is built, so no module
can replace another's implementation, and the table cannot be changed once
built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any

#: Compiles one op: ``builder(compiler, op)`` returns the op's closure, an
#: :data:`gemm_opt.model.core.Exec` (typed loosely here so that the registry
#: depends on no other module of the model).
Builder = Callable[[Any, Any], Callable[[Any, Any], None]]


class OpImpls:
    """The implementations of one op family, by op name."""

    def __init__(self, family: str) -> None:
        self.family = family
        self._builders: dict[str, Builder] = {}

    def register(self, name: str, builder: Builder) -> None:
        """Make ``builder`` the implementation of the op ``name``."""
        if not isinstance(name, str) or "." not in name:
            raise ValueError(f"op name must be 'dialect.op', got {name!r}")
        if name in self._builders:
            raise ValueError(f"the {self.family} family implements '{name}' twice")
        self._builders[name] = builder

    def impl(self, *names: str) -> Callable[[Builder], Builder]:
        """Decorator: the builder implements the ops ``names``."""
        if not names:
            raise ValueError("impl needs at least one op name")

        def register(builder: Builder) -> Builder:
            for name in names:
                self.register(name, builder)
            return builder

        return register

    def names(self) -> tuple[str, ...]:
        """The ops of this family, in registration order."""
        return tuple(self._builders)

    def builders(self) -> Mapping[str, Builder]:
        """A read-only view of this family's implementations."""
        return MappingProxyType(self._builders)


class Registry(Mapping[str, Builder]):
    """The implementations of several families: one per op, fixed once built."""

    def __init__(self, *families: OpImpls) -> None:
        self._builders: dict[str, Builder] = {}
        self._family: dict[str, str] = {}
        for fam in families:
            for name, builder in fam.builders().items():
                if name in self._family:
                    raise ValueError(
                        f"'{name}' is implemented by both the {self._family[name]} and the "
                        f"{fam.family} family"
                    )
                self._builders[name] = builder
                self._family[name] = fam.family

    def __getitem__(self, name: str) -> Builder:
        return self._builders[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._builders)

    def __len__(self) -> int:
        return len(self._builders)

    def family_of(self, name: str) -> str:
        """The family that implements ``name`` (``KeyError`` if none does)."""
        return self._family[name]


__all__ = ["Builder", "OpImpls", "Registry"]
