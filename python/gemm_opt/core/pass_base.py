"""Base class of gemm-opt's Python passes.

A pass is a frozen dataclass: its fields are its options (snake_case in
Python, kebab-case on the command line), ``name`` is its CLI name, and its
docstring's first line is the summary ``--list-passes`` shows. An option typed
``bool``, ``int`` or an :class:`enum.Enum` of strings is converted, and checked,
when the pipeline is parsed (:meth:`TilePass.from_options`), so a bad value is a
usage error before any input is read. The pass
manager calls the instance; failures become diagnostics at the offending op,
never Python tracebacks.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, NoReturn

from gemm_opt.core.diagnostics import positioned_location
from gemm_opt.core.ext_compat import ir
from gemm_opt.core.warp_hint import WarpHintError


class PassFailure(Exception):
    """Raised by :meth:`TilePass.fail` after the diagnostic has been emitted."""


@dataclass(frozen=True)
class TilePass:
    """Base of all gemm-opt passes."""

    name: ClassVar[str] = ""

    def run(self, module: ir.Operation) -> None:
        """Transform ``module`` (a ``builtin.module``) in place."""
        raise NotImplementedError

    def fail(self, op: Any, message: str) -> NoReturn:
        """Emit ``message`` as an error at ``op`` and stop the pass."""
        # Equivalent mutant: not hasattr; an op view and its operation have one location.
        positioned_location(op if hasattr(op, "location") else op.operation).emit_error(message)
        raise PassFailure(message)

    def __call__(self, op: ir.Operation, pass_: Any) -> None:
        try:
            self.run(op)
        except PassFailure:
            pass_.signal_pass_failure()
        except WarpHintError as e:
            positioned_location(op).emit_error(str(e))
            pass_.signal_pass_failure()
        except Exception as e:  # a pass bug: report it, never crash the tool
            positioned_location(op).emit_error(
                f"internal error in pass '{self.name}': {type(e).__name__}: {e}"
            )
            pass_.signal_pass_failure()

    @classmethod
    def summary(cls) -> str:
        """The first line of the docstring."""
        # Equivalent mutant: split at most 2; only the first part is kept.
        return (cls.__doc__ or "").strip().split("\n", 1)[0]

    @classmethod
    def options(cls) -> dict[str, dataclasses.Field[Any]]:
        """CLI option name (kebab-case) -> dataclass field."""
        return {f.name.replace("_", "-"): f for f in dataclasses.fields(cls)}

    @classmethod
    def option_types(cls) -> dict[str, Any]:
        """CLI option name -> the field's type (annotations resolved to classes)."""
        hints = typing.get_type_hints(cls)
        return {key: hints.get(f.name, f.type) for key, f in cls.options().items()}

    @classmethod
    def from_options(cls, options: dict[str, str]) -> TilePass:
        """Build the pass from ``{kebab-name: text}`` options; ValueError if bad."""
        fields = cls.options()
        types = cls.option_types()
        kwargs: dict[str, Any] = {}
        for key, text in options.items():
            if key not in fields:
                known = ", ".join(fields) or "none"
                raise ValueError(f"pass '{cls.name}' has no option '{key}' (options: {known})")
            kwargs[fields[key].name] = convert_option(cls.name, key, text, types[key])
        return cls(**kwargs)


def option_choices(type_: Any) -> tuple[str, ...] | None:
    """The values an enum-typed option takes (None: not an enum)."""
    if isinstance(type_, type) and issubclass(type_, enum.Enum):
        return tuple(str(m.value) for m in type_)
    return None


def convert_option(pass_name: str, key: str, text: str, type_: Any) -> Any:
    """``text`` as a value of the option's type; ValueError naming the pass, the option
    and what it takes."""
    choices = option_choices(type_)
    if choices is not None:
        if text not in choices:
            raise ValueError(
                f"pass '{pass_name}' option '{key}' expects one of {', '.join(choices)}, "
                f"got '{text}'"
            )
        return type_(text)
    t = getattr(type_, "__name__", str(type_))
    try:
        if t == "bool":
            if text.lower() in ("1", "true"):
                return True
            if text.lower() in ("0", "false"):
                return False
            raise ValueError(text)
        if t == "int":
            return int(text, 0)
    except ValueError:
        raise ValueError(f"pass '{pass_name}' option '{key}' expects {t}, got '{text}'") from None
    return text


__all__ = ["PassFailure", "TilePass", "convert_option", "option_choices"]
