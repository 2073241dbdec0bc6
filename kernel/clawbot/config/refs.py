"""Model references (``provider/model``) that name a provider nobody installed.

Which providers exist is known only once the plugins have registered theirs, so this check
runs where a kernel is booted anyway (``clawbot config validate``, ``clawbot doctor``), on the
raw tables: a file with other problems still gets its misspelt providers reported.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from clawbot.config.problems import ConfigProblem, join


def model_refs(core: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """``(key path, ref)`` of every model reference in the raw core tables."""
    agents = core.get("agents")
    if not isinstance(agents, Mapping):
        return
    tables: list[tuple[str, Any]] = []
    defaults = agents.get("defaults")
    if isinstance(defaults, Mapping):
        tables.append(("agents.defaults", defaults))
        aliases = defaults.get("model_aliases")
        if isinstance(aliases, Mapping):
            for name, ref in aliases.items():
                if isinstance(ref, str):
                    yield join("agents.defaults.model_aliases", name), ref
    listed = agents.get("list")
    if isinstance(listed, list):
        tables += [(f"agents.list[{index}]", agent) for index, agent in enumerate(listed) if isinstance(agent, Mapping)]
    for path, table in tables:
        model = table.get("model")
        if isinstance(model, str):
            yield f"{path}.model", model
        elif isinstance(model, Mapping):
            if isinstance(model.get("primary"), str):
                yield f"{path}.model.primary", model["primary"]
            fallbacks = model.get("fallbacks")
            if isinstance(fallbacks, list):
                for index, ref in enumerate(fallbacks):
                    if isinstance(ref, str):
                        yield f"{path}.model.fallbacks[{index}]", ref


def unknown_provider(provider: str, installed: Collection[str]) -> str:
    """``no installed provider is named 'opnai' (did you mean openai?)``."""
    close = difflib.get_close_matches(provider, sorted(installed), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else f"installed: {', '.join(sorted(installed)) or 'none'}"
    return f"no installed provider is named {provider!r} ({hint})"


def provider_problems(core: Mapping[str, Any], installed: Collection[str]) -> list[ConfigProblem]:
    """A problem for each well-formed reference whose provider is not installed."""
    problems = []
    for path, ref in model_refs(core):
        provider, sep, model = ref.partition("/")
        if sep and provider and model and provider not in installed:
            problems.append(ConfigProblem(path, unknown_provider(provider, installed)))
    return problems
