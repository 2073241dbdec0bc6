"""The one cattrs converter clawbot uses for configuration: strict and key-forbidding.

cattrs on its own coerces (``str(5)``, ``int("7")``, ``list("abc")``); a configuration file
must instead say exactly what is wrong, so every primitive, sequence, mapping and attrs
class gets a type check that raises a readable message.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Mapping
from typing import Any, Literal, get_args, get_origin

import attrs
import cattrs
from cattrs.cols import list_structure_factory, mapping_structure_factory
from cattrs.gen import make_dict_structure_fn

from clawbot.config.problems import walk

_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def show(value: Any) -> str:
    """A short TOML-ish rendering of a bad value for error messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _primitive(expected: type) -> Any:
    def hook(value: Any, _: Any) -> Any:
        ok = isinstance(value, expected) and not (expected is not bool and isinstance(value, bool))
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not ok:
            raise ValueError(f"expected {_TYPE_NAMES[expected]}, got {show(value)}")
        return value

    return hook


def _is_literal(t: Any) -> bool:
    return get_origin(t) is Literal


def _literal_hook(t: Any) -> Any:
    choices = get_args(t)

    def hook(value: Any, _: Any) -> Any:
        if value not in choices or isinstance(value, bool) != any(isinstance(c, bool) for c in choices):
            raise ValueError(f"expected one of {', '.join(show(c) for c in choices)}, got {show(value)}")
        return value

    return hook


def _enum_hook(t: type[enum.Enum]) -> Any:
    def hook(value: Any, _: Any) -> Any:
        try:
            return t(value)
        except ValueError:
            raise ValueError(f"expected one of {', '.join(show(m.value) for m in t)}, got {show(value)}") from None

    return hook


def _is_list(t: Any) -> bool:
    return get_origin(t) in (list, tuple, frozenset, set) or t in (list, tuple)


def _is_mapping(t: Any) -> bool:
    return get_origin(t) in (dict, Mapping) or t is dict


def _checked(kind: type, label: str, inner: Any) -> Any:
    @functools.wraps(inner)
    def hook(value: Any, t: Any) -> Any:
        if not isinstance(value, kind):
            raise ValueError(f"expected {label}, got {show(value)}")
        return inner(value, t)

    return hook


def _list_factory(t: Any, conv: cattrs.Converter) -> Any:
    origin = get_origin(t) or t
    args = get_args(t)
    item = args[0] if args else Any
    inner = list_structure_factory(list[item], conv)  # type: ignore[valid-type]  # the item type is known only at run time
    if origin in (tuple, frozenset, set):
        base = inner

        def inner(value: Any, t: Any) -> Any:
            return origin(base(value, t))

    return _checked(list, "a list", inner)


def _mapping_factory(t: Any, conv: cattrs.Converter) -> Any:
    return _checked(dict, "a table", mapping_structure_factory(t, conv))


def _validator_errors(cl: type, value: dict, reported: set[str]) -> list[Exception]:
    """What every raw-safe validator (``checks_raw_value``, e.g. :class:`InRange`) says about
    ``value``: attrs stops at the first failing validator, the user should hear of all. A key
    in ``reported`` already has its problem (a wrong type): one problem per key."""
    errors: list[Exception] = []
    for field in attrs.fields(cl):
        key = field.alias or field.name
        if key in reported or field.name in reported:
            continue
        if key in value and getattr(field.validator, "checks_raw_value", False):
            try:
                field.validator(None, field, value[key])
            except ValueError as exc:
                errors.append(exc)
    return errors


def _attrs_factory(cl: type[Any], conv: cattrs.Converter) -> Any:
    inner = make_dict_structure_fn(cl, conv)
    shorthand = getattr(cl, "__config_shorthand__", None)

    def hook(value: Any, t: Any) -> Any:
        if shorthand and isinstance(value, str):  # model = "openai/gpt-4o" is { primary = ... }
            try:
                return hook({shorthand: value}, t)
            except Exception as exc:  # reported at the key the user wrote, not at its expansion
                raise ValueError(next(iter(walk(exc))).message) from None
        if not isinstance(value, dict):
            also = " or a string" if shorthand else ""
            raise ValueError(f"expected a table{also}, got {show(value)}")
        try:
            return inner(value, t)
        except Exception as exc:
            reported = {re.split(r"[.\[]", problem.path, maxsplit=1)[0].strip('"') for problem in walk(exc)}
            errors = _validator_errors(cl, value, reported)
            if errors:
                raise ExceptionGroup(f"invalid {cl.__name__}", [exc, *errors]) from None
            raise

    return hook


def make_converter(*, forbid_extra_keys: bool = True) -> cattrs.Converter:
    """A fresh strict converter; callers own it (no module-level singleton). State files pass
    ``forbid_extra_keys=False``: a newer clawbot's extra field must not make an entry unreadable."""
    conv = cattrs.Converter(forbid_extra_keys=forbid_extra_keys, detailed_validation=True)
    for t in (str, int, float, bool):
        conv.register_structure_hook(t, _primitive(t))
    conv.register_structure_hook_factory(_is_literal, _literal_hook)
    conv.register_structure_hook_factory(lambda t: isinstance(t, type) and issubclass(t, enum.Enum), _enum_hook)
    conv.register_structure_hook_factory(_is_list, _list_factory)
    conv.register_structure_hook_factory(_is_mapping, _mapping_factory)
    conv.register_structure_hook_factory(attrs.has, _attrs_factory)
    return conv
