"""Entry point of the memory plugin: hooks only, everything heavy loads when they are called."""

from clawbot import hookimpl  # noqa: F401
