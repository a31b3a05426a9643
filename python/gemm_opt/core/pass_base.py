"""Base class of gemm-opt's Python passes.

A pass is a frozen dataclass: its fields are its options (snake_case in
Python, kebab-case on the command line), ``name`` is its CLI name, and its
docstring's first line is the summary ``--list-passes`` shows. The pass
manager calls the instance; failures become diagnostics at the offending op,
never Python tracebacks.
"""

from __future__ import annotations

import dataclasses
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
        return (cls.__doc__ or "").strip().split("\n", 1)[0]

    @classmethod
    def options(cls) -> dict[str, dataclasses.Field[Any]]:
        """CLI option name (kebab-case) -> dataclass field."""
        return {f.name.replace("_", "-"): f for f in dataclasses.fields(cls)}

    @classmethod
    def from_options(cls, options: dict[str, str]) -> TilePass:
        """Build the pass from ``{kebab-name: text}`` options; ValueError if bad."""
        fields = cls.options()
        kwargs: dict[str, Any] = {}
        for key, text in options.items():
            if key not in fields:
                known = ", ".join(fields) or "none"
                raise ValueError(f"pass '{cls.name}' has no option '{key}' (options: {known})")
            f = fields[key]
            kwargs[f.name] = _convert_option(cls.name, key, text, f.type)
        return cls(**kwargs)


def _convert_option(pass_name: str, key: str, text: str, type_: Any) -> Any:
    t = str(type_)
    try:
        if t in ("bool", "<class 'bool'>"):
            if text.lower() in ("1", "true"):
                return True
            if text.lower() in ("0", "false"):
                return False
            raise ValueError(text)
        if t in ("int", "<class 'int'>"):
            return int(text, 0)
    except ValueError:
        raise ValueError(
            f"pass '{pass_name}' option '{key}' expects {t.strip('<>')}, got '{text}'"
        ) from None
    return text


__all__ = ["PassFailure", "TilePass"]
