"""Configuration problems with key paths, and the one error that lists them all."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

import attrs
from cattrs.errors import ClassValidationError, ForbiddenExtraKeysError, IterableValidationError


@attrs.frozen(order=True)
class ConfigProblem:
    """One thing wrong with the configuration: where (dotted key path) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ConfigError(Exception):
    """Every problem of a configuration, reported in one message (exit code 2 in the CLI)."""

    def __init__(self, source: str, problems: list[ConfigProblem]) -> None:
        self.source = source
        self.problems = problems
        super().__init__(self.render())

    def render(self) -> str:
        count = len(self.problems)
        head = f"{self.source}: {count} problem{'s' if count != 1 else ''}"
        return "\n".join([head + ":", *(f"  - {p}" for p in self.problems)])


def join(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    key = str(key)
    if key and not key.replace("_", "").replace("-", "").isalnum():
        key = f'"{key}"'
    return f"{path}.{key}" if path else key


def _unknown_key(path: str, key: str, cl: type) -> ConfigProblem:
    known = [a.alias or a.name for a in attrs.fields(cl)] if attrs.has(cl) else []
    close = difflib.get_close_matches(key, known, n=1)
    hint = f" (did you mean {close[0]}?)" if close else f" (known keys: {', '.join(known)})" if known else ""
    return ConfigProblem(join(path, key), f"unknown key{hint}")


def _note_key(note: object) -> object:
    for attr in ("name", "index"):
        if hasattr(note, attr):
            return getattr(note, attr)
    return None


def walk(exc: BaseException, path: str = "") -> Iterator[ConfigProblem]:
    """Turn a cattrs exception (group) into problems with dotted key paths."""
    if isinstance(exc, ForbiddenExtraKeysError):
        for key in sorted(exc.extra_fields):
            yield _unknown_key(path, key, exc.cl)
    elif isinstance(exc, ClassValidationError | IterableValidationError):
        with_notes, without = exc.group_exceptions()
        for sub, note in with_notes:
            yield from walk(sub, join(path, _note_key(note)))
        for sub in without:
            yield from walk(sub, path)
    elif isinstance(exc, BaseExceptionGroup):
        for member in exc.exceptions:
            yield from walk(member, path)
    elif getattr(exc, "config_key", None) is not None:  # a validator that knows its key (InRange)
        keys = exc.config_key if isinstance(exc.config_key, tuple) else (exc.config_key,)  # type: ignore[attr-defined]  # the getattr above checked it
        for key in keys:
            path = join(path, key)
        yield ConfigProblem(path, str(exc))
    elif isinstance(exc, KeyError):
        yield ConfigProblem(path, "required key is missing")
    else:
        yield ConfigProblem(path, str(exc) or type(exc).__name__)
