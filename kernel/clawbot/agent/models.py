"""Choosing the model of a run: configured, or detected from the environment on first run.

The kernel knows no provider by name: each provider plugin says whether its credentials
are present (``LLMProvider.detect_default_model``) and the kernel asks them in order.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

import attrs

from clawbot.config.refs import unknown_provider
from clawbot.credentials import ENV_NAMES
from clawbot.kernel import Kernel
from clawbot.types import LLMProvider, ModelInfo


def no_model_message(installed: list[str]) -> str:
    """What to do when no model is usable, naming only the providers that are installed."""
    if not installed:
        return "No model provider is installed, so no model can answer.\nInstall one (pip install clawbot-anthropic, or clawbot-openai for OpenAI and Ollama)."
    lines = [
        "No model is configured and none was found in the environment.",
        "Pick one:",
        "  - clawbot onboard                  (asks for a provider, key and model, and checks them)",
    ]
    for name in sorted(installed):
        names = ENV_NAMES.get(name)
        if names is None:
            continue
        if names.key_required:
            lines.append(f"  - export {names.api_key}=...".ljust(37) + f"({name})")
        else:
            where = f"; elsewhere: export {names.base_url}=..." if names.base_url else ""
            lines.append(f"  - start a local {name} server".ljust(37) + f"({name}{where})")
    lines.append(f'  - or set agents.defaults.model = "<provider>/<model>" in clawbot.toml (installed providers: {", ".join(sorted(installed))})')
    return "\n".join(lines)


class ModelError(Exception):
    """No usable model: the message says what to do."""

    @property
    def user_message(self) -> str:  # what a chat shows when a turn cannot pick its model
        return str(self)


@attrs.frozen
class ModelChoice:
    provider: LLMProvider
    model: str
    detected: bool = False
    #: ``agents.defaults.context_tokens``: a smaller window than the provider says (0: its own)
    context_tokens: int = 0

    @property
    def ref(self) -> str:
        return f"{self.provider.name}/{self.model}"

    def info(self) -> ModelInfo:
        """What the provider says of the model, the window capped by ``context_tokens``:
        a local server often runs a model with less context than the model could hold."""
        info = self.provider.model_info(self.model)
        if self.context_tokens and self.context_tokens < info.context_window:
            return attrs.evolve(info, context_window=self.context_tokens)
        return info


def parse_ref(ref: str) -> tuple[str, str]:
    provider, sep, model = ref.partition("/")
    if not sep or not provider or not model:
        raise ModelError(f"model {ref!r} must be written <provider>/<model>, e.g. anthropic/claude-opus-4-5")
    return provider, model


async def choose_model(kernel: Kernel, agent_id: str) -> ModelChoice:
    """The configured primary model of ``agent_id``, else the first detected one."""
    model_cfg = _model_config(kernel, agent_id)
    if model_cfg.primary:
        provider_name, model = parse_ref(model_cfg.primary)
        provider = kernel.llm_providers.get(provider_name)
        if provider is None:
            raise ModelError(f"model {model_cfg.primary!r}: {unknown_provider(provider_name, kernel.llm_providers.names())}")
        return ModelChoice(provider, model, context_tokens=kernel.config.agents.defaults.context_tokens)
    for provider in sorted(kernel.llm_providers, key=lambda p: (p.detect_priority, p.name)):
        try:
            detected = await provider.detect_default_model()
        except Exception:  # a broken detector must not hide the others
            continue
        if detected:
            return ModelChoice(provider, detected, detected=True, context_tokens=kernel.config.agents.defaults.context_tokens)
    raise ModelError(no_model_message(kernel.llm_providers.names()))


async def choose_chain(kernel: Kernel, agent_id: str) -> list[ModelChoice]:
    """The primary model, then the configured fallbacks (each must name an installed provider)."""
    primary = await choose_model(kernel, agent_id)
    model_cfg = _model_config(kernel, agent_id)
    chain = [primary]
    for ref in model_cfg.fallbacks:
        provider_name, model = parse_ref(ref)
        provider = kernel.llm_providers.get(provider_name)
        if provider is None:
            raise ModelError(f"fallback model {ref!r}: {unknown_provider(provider_name, kernel.llm_providers.names())}")
        chain.append(ModelChoice(provider, model, context_tokens=kernel.config.agents.defaults.context_tokens))
    return chain


def _model_config(kernel: Kernel, agent_id: str):  # noqa: ANN202 - ModelConfig
    agent = kernel.config.agent(agent_id)
    return agent.model if agent is not None and agent.model is not None else kernel.config.agents.defaults.model


def configured_refs(kernel: Kernel, agent_id: str) -> list[str]:
    """The models the configuration names for ``agent_id`` (primary, fallbacks), then the
    aliases' and the other agents' ones: what ``/model`` offers, and all a sender who is not
    the owner may choose among (a price table names models nobody chose to use)."""
    config = kernel.config
    own = _model_config(kernel, agent_id)
    refs = [own.primary, *own.fallbacks, *config.agents.defaults.model_aliases.values()]
    for other in [config.agents.defaults.model, *(a.model for a in config.agents.list if a.model is not None)]:
        refs += [other.primary, *other.fallbacks]
    return [ref for ref in dict.fromkeys(refs) if ref and "/" in ref]


def alias_target(kernel: Kernel, name: str) -> str | None:
    """The model an ``agents.defaults.model_aliases`` name stands for (case ignored)."""
    aliases = kernel.config.agents.defaults.model_aliases
    if name in aliases:
        return aliases[name]
    folded = {alias.casefold(): ref for alias, ref in aliases.items()}
    return folded.get(name.casefold())


def resolve_ref(kernel: Kernel, ref: str, agent_id: str | None = None, known: Iterable[str] = ()) -> ModelChoice:
    """The model ``ref`` names: an alias of ``agents.defaults.model_aliases``,
    ``<provider>/<model>`` with an installed provider, or (given ``agent_id``) a bare model
    name that exactly one configured model (or one of ``known``) has."""
    ref = ref.strip()
    ref = alias_target(kernel, ref) or ref
    if "/" not in ref and agent_id is not None:
        candidates = dict.fromkeys([*configured_refs(kernel, agent_id), *known])
        matches = [r for r in candidates if r.partition("/")[2] == ref]
        if len(matches) == 1:
            ref = matches[0]
        elif len(matches) > 1:
            raise ModelError(f"{ref!r} is offered by several providers: {', '.join(matches)}; write one of them")
    provider_name, model = parse_ref(ref)
    provider = kernel.llm_providers.get(provider_name)
    if provider is None:
        installed = kernel.llm_providers.names()
        close = difflib.get_close_matches(provider_name, installed, n=1)
        hint = f" Did you mean {close[0]}/{model}?" if close else ""
        raise ModelError(f"model {ref!r}: no provider named {provider_name!r} is installed (installed: {', '.join(installed) or 'none'}).{hint}")
    return ModelChoice(provider, model, context_tokens=kernel.config.agents.defaults.context_tokens)
