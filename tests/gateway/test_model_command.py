"""``/model``: who may choose which model, and the aliases of ``agents.defaults.model_aliases``.

Every request is paid with the owner's key, so a sender who is not the owner (in a direct
chat with a session of their own) chooses only among the models the configuration names;
the owner may choose any model of an installed provider. Real kernel, gateway and providers
talking to the fake LLM; only the chat network is the fake channel.
"""

from __future__ import annotations

import pytest

from ..e2e.e2etools import make_provider, providers_plugin
from .chatkit import open_chat

CONFIG = (
    '[agents.defaults]\nowner_ids = ["fake:alice"]\nmodel_aliases = { fast = "openai/gpt-fast" }\n\n'
    '[agents.defaults.model]\nprimary = "anthropic/claude-test"\nfallbacks = ["openai/gpt-backup"]\n\n'
    '[session]\ndm_scope = "per-peer"\n'
)


async def _chat(make_kernel, fake_channel, fake_llm):
    anthropic, openai = make_provider("anthropic", fake_llm), make_provider("openai-chat", fake_llm)
    return await open_chat(make_kernel, fake_channel, anthropic, config=CONFIG, plugins={"llm": providers_plugin(anthropic, openai)}, model="claude-test")


# who: (peer, /model argument, the model the next request uses, the start of the reply)
CHOICES = {
    "a stranger, an unconfigured model": ("mallory", "openai/o1-pro-expensive", "claude-test", "Only the owner can choose openai/o1-pro-expensive"),
    "a stranger, an unconfigured model by bare name": ("mallory", "o1-pro-expensive", "claude-test", "model 'o1-pro-expensive' must be written"),
    "a stranger, a configured fallback": ("mallory", "openai/gpt-backup", "gpt-backup", "This session now uses openai/gpt-backup"),
    "a stranger, an alias": ("mallory", "fast", "gpt-fast", "This session now uses openai/gpt-fast"),
    "the owner, an unconfigured model": ("alice", "openai/o1-pro-expensive", "o1-pro-expensive", "This session now uses openai/o1-pro-expensive"),
    "the owner, an alias in capitals": ("alice", "FAST", "gpt-fast", "This session now uses openai/gpt-fast"),
}


@pytest.mark.parametrize("case", CHOICES)
async def test_only_the_owner_chooses_a_model_the_configuration_does_not_name(make_kernel, fake_channel, fake_llm, case) -> None:
    peer, choice, used, reply = CHOICES[case]
    chat = await _chat(make_kernel, fake_channel, fake_llm)
    await fake_channel.inject(f"/model {choice}", peer_id=peer)
    fake_llm.reply("answered")
    await fake_channel.inject("write me a novel", peer_id=peer)
    await chat.close()
    assert fake_channel.texts()[0].startswith(reply), fake_channel.texts()[0]
    assert [r.model for r in fake_llm.requests] == [used]


async def test_model_lists_the_aliases_and_what_a_stranger_may_choose(make_kernel, fake_channel, fake_llm) -> None:
    chat = await _chat(make_kernel, fake_channel, fake_llm)
    await fake_channel.inject("/model", peer_id="mallory")
    await fake_channel.inject("/model", peer_id="alice")
    await chat.close()
    stranger, owner = (text.splitlines() for text in fake_channel.texts())
    assert stranger == [
        "This session uses anthropic/claude-test (configured).",
        "Configured models: anthropic/claude-test, openai/gpt-backup, openai/gpt-fast",
        "Aliases: fast = openai/gpt-fast",
        "/model <alias> or one of these uses it in this session only; /model default goes back.",
    ]
    assert owner[-1] == "/model <alias> or <provider>/<model> uses another one in this session only; /model default goes back."
