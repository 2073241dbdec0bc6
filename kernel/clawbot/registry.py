"""Named things plugins contribute (tools, channels, providers ...), with their origin."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

import attrs

T = TypeVar("T")


@attrs.define
class Registry(Generic[T]):
    """Objects by name; a name offered twice is recorded as a conflict naming both plugins."""

    kind: str
    _items: dict[str, tuple[str, T]] = attrs.field(factory=dict, alias="items")
    conflicts: list[str] = attrs.field(factory=list)

    def add(self, plugin: str, name: str, item: T) -> None:
        if name in self._items:
            first = self._items[name][0]
            self.conflicts.append(f"{self.kind} {name!r} is offered by both plugin {first!r} and plugin {plugin!r}")
            return
        self._items[name] = (plugin, item)

    def __getitem__(self, name: str) -> T:
        return self._items[name][1]

    def get(self, name: str) -> T | None:
        found = self._items.get(name)
        return found[1] if found else None

    def plugin_of(self, name: str) -> str:
        return self._items[name][0]

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[T]:
        return (item for _, item in self._items.values())

    def __len__(self) -> int:
        return len(self._items)
