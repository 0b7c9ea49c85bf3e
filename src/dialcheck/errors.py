"""Error types. User mistakes raise :class:`InputError`, which names the file, line and field."""

from __future__ import annotations

__all__ = [
    "DialcheckError",
    "InputError",
    "MissingBaseError",
    "MissingDependencyError",
    "ModelError",
    "TorchReleasedError",
]


class DialcheckError(Exception):
    """Base class of every error dialcheck raises on purpose."""


class InputError(DialcheckError, ValueError):
    """Bad user input: the message names where (file, line, field) and what is wrong.

    >>> str(InputError("turns[1].text: expected a string, got int", source="chat.jsonl", line=3))
    'chat.jsonl, line 3: turns[1].text: expected a string, got int'
    """

    def __init__(self, message: str, source: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.source = source
        self.line = line
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.source:
            where.append(self.source)
        if self.line is not None:
            where.append(f"line {self.line}")
        return (", ".join(where) + ": " if where else "") + self.message

    def at(self, source: str | None = None, line: int | None = None) -> InputError:
        """The same error located in a file and line."""
        return InputError(self.message, source or self.source, line if line is not None else self.line)


class ModelError(DialcheckError):
    """A model folder is missing, incomplete or of an unknown type."""


class TorchReleasedError(ModelError, AttributeError):
    """A torch model was asked of a detector that runs on ONNX Runtime only (its torch weights released). An
    AttributeError too, so ``getattr(model, name, default)`` and ``hasattr`` keep working."""


class MissingBaseError(ModelError):
    """The weight package of a model's base encoder is not installed; the message names the install."""


class MissingDependencyError(DialcheckError, ImportError):
    """An optional extra is not installed; the message names the ``pip install`` to run."""

    def __init__(self, package: str, extra: str | None = None, purpose: str = "", command: str | None = None) -> None:
        """``command`` replaces the ``pip install`` line (e.g. a system package to install)."""
        cmd = command or (f'pip install "dialcheck[{extra}]"' if extra else f"pip install {package}")
        what = f" for {purpose}" if purpose else ""
        super().__init__(f"{package} is needed{what}: run `{cmd}`")
