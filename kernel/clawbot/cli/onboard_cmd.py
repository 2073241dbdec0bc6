"""``clawbot onboard``: pick a model provider, store its key, choose the default model, check it.

Asks for what the options leave out (``--provider`` given: only what is still required).
The key goes to the credentials store (``<state>/credentials/<provider>.json``, mode 0600),
never into ``clawbot.toml``. The default model is written to a new ``<state>/clawbot.toml``
when no configuration file exists; a file in use is never rewritten, the line to add is
printed instead. Then one tiny real request checks the setup.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from clawbot.cli.output import echo
from clawbot.cli.state import EXIT_CONFIG, CliState, config_option, run_async, user_errors

CHECK_PROMPT = "Reply with OK."


@click.command()
@click.option("--provider", default=None, help="Model provider (asked when left out; e.g. anthropic, openai, ollama).")
@click.option("--api-key", default=None, help="API key (asked with hidden input when left out).")
@click.option("--base-url", default=None, help="Base URL of a compatible server or proxy (default: the provider's).")
@click.option("--model", default=None, help="Default model, without the provider prefix (default: its suggestion).")
@click.option("--no-check", is_flag=True, help="Do not send the check request.")
@config_option
@click.pass_obj
def onboard(
    state: CliState, provider: str | None, api_key: str | None, base_url: str | None, model: str | None, no_check: bool
) -> None:
    """Set up a model provider: store its key, choose the default model, check that it answers."""
    with user_errors():
        loaded = state.load()
    from clawbot.cli.logs import configure_logging

    configure_logging(loaded.config.logging.level, state.env)
    sys.exit(run_async(_onboard(state, provider, api_key, base_url, model, no_check)) or 0)


def _ask_secret(text: str, *, required: bool) -> str:
    """A hidden prompt on a terminal; piped input is read as a plain line (it is not echoed)."""
    hide = sys.stdin.isatty()
    if required:
        return str(click.prompt(text, hide_input=hide)).strip()
    return str(click.prompt(text, default="", show_default=False, hide_input=hide)).strip()


def _check_url(value: str) -> str:
    value = value.strip()
    if value and not value.startswith(("http://", "https://")):
        raise click.UsageError(f"base URL {value!r} must start with http:// or https://")
    return value


async def _onboard(
    state: CliState,
    provider_name: str | None,
    api_key: str | None,
    base_url: str | None,
    model: str | None,
    no_check: bool,
) -> int:
    from clawbot.boot import load
    from clawbot.config.loader import locate_config
    from clawbot.credentials import ENV_NAMES, save_credential
    from clawbot.kernel import bootstrap
    from clawbot.paths import StatePaths

    with user_errors():
        kernel = await bootstrap(state.load())
    await kernel.aclose()  # only its registry is needed here
    installed = sorted(kernel.llm_providers, key=lambda p: (getattr(p, "detect_priority", 100), p.name))
    choices = [p.name for p in installed if p.name in ENV_NAMES]
    if not choices:
        echo("No model provider that `clawbot onboard` can set up is installed (pip install clawbot).", err=True)
        return 1

    interactive = provider_name is None
    if provider_name is None:
        provider_name = str(click.prompt("Model provider", type=click.Choice(choices), default=choices[0]))
    elif provider_name not in choices:
        if provider_name in kernel.llm_providers:
            echo(
                f"`clawbot onboard` cannot store credentials for provider {provider_name!r}; "
                f"set them in [providers.{provider_name}] of clawbot.toml",
                err=True,
            )
        else:
            echo(f"no provider named {provider_name!r} (installed: {', '.join(choices)})", err=True)
        return EXIT_CONFIG
    names = ENV_NAMES[provider_name]

    if api_key is None:
        if names.key_required:
            api_key = _ask_secret(f"{provider_name} API key", required=True)
        elif interactive:
            api_key = _ask_secret(f"{provider_name} API key (optional, Enter to skip)", required=False)
    api_key = (api_key or "").strip()
    if names.key_required and not api_key:
        echo(f"{provider_name} needs an API key: pass --api-key or enter it when asked", err=True)
        return EXIT_CONFIG
    if base_url is None and interactive and names.ask_base_url:
        base_url = str(
            click.prompt("Base URL (Enter for the default)", default="", show_default=False, value_proc=_check_url)
        )
    try:
        base_url = _check_url(base_url or "")
    except click.UsageError as exc:
        echo(exc.message, err=True)
        return EXIT_CONFIG

    paths = StatePaths.resolve(state.env)
    try:
        stored = save_credential(paths, provider_name, api_key, base_url)
    except OSError as exc:
        echo(f"cannot store the credentials in {paths.credentials}: {exc.strerror or exc}", err=True)
        return 1
    echo(f"Stored the {provider_name} credentials in {stored}")
    for variable in filter(None, (names.api_key if api_key else None, names.base_url if base_url else None)):
        if state.env.get(variable):
            echo(f"note: {variable} is set in your environment; it is used instead of the stored value")

    # load again: the stored credentials are now part of the providers' environment
    with user_errors():
        kernel = await bootstrap(load(state.config_path, env=state.env))
    provider = kernel.llm_providers[provider_name]
    try:
        if model is None:
            try:
                suggested = await provider.detect_default_model()
            except Exception:
                suggested = None
            if suggested and not interactive:
                model = suggested
            else:
                model = str(click.prompt("Default model", default=suggested or None)).strip()
        model = model.strip().removeprefix(f"{provider_name}/")
        if not model:
            echo("a model name is required (--model)", err=True)
            return EXIT_CONFIG
        ref = f"{provider_name}/{model}"
        in_use = locate_config(state.config_path, state.env, Path.cwd())
        _set_default_model(kernel.config, ref, in_use, paths.config_file)
        if no_check:
            return 0
        return await _check(provider, model, stored)
    finally:
        await kernel.aclose()


def _set_default_model(config: Any, ref: str, in_use: Path | None, target: Path) -> None:
    """A new config file with just the model when none is in use; else the line to add."""
    line = f'primary = "{ref}"'
    if in_use is None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"[agents.defaults.model]\n{line}\n", encoding="utf-8")
        echo(f"Wrote the default model {ref} to {target}")
    elif config.agents.defaults.model.primary == ref:
        echo(f"{in_use} already uses {ref}")
    else:
        echo(f"{in_use} is in use and was not changed; to make {ref} the default, put this line")
        echo(f"under [agents.defaults.model] in it:\n\n    {line}\n")


async def _check(provider: Any, model: str, stored: Path) -> int:
    from clawbot.types import Message, ModelRequest, ProviderError, SystemPrompt

    ref = f"{provider.name}/{model}"
    echo(f"Checking {ref} with one short request ...")
    request = ModelRequest(model, SystemPrompt(CHECK_PROMPT), (Message.user("ping"),), max_output_tokens=16)
    try:
        await provider.complete(request)
    except ProviderError as exc:
        echo(f"check failed: {exc.user_message}", err=True)
        fix = {"auth": "--api-key KEY", "connection": "--base-url URL"}.get(exc.kind, "--model MODEL")
        echo(
            f"The credentials stay stored in {stored}. To fix them, run "
            f"`clawbot onboard --provider {provider.name} {fix}` (add --no-check to skip this check).",
            err=True,
        )
        return 1
    except Exception as exc:  # a short message, never a stack trace
        echo(f"check failed: {exc}", err=True)
        echo(f"The credentials stay stored in {stored}; run `clawbot onboard` again to change them.", err=True)
        return 1
    echo(f"ok: {ref} answered. Try it: clawbot agent -m \"hello\"")
    return 0
