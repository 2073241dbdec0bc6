"""``clawbot onboard``: pick a model provider, check its key, store it, choose the default model.

Asks for what the options leave out (``--provider`` given: only what is still required).
One tiny real request checks the key first: a key the provider rejects, a server that cannot
be reached or a model it does not know is not stored, so a working key stored before is never
replaced by a bad one (``--no-check`` stores without asking); a rate limit or a failing server
did not reject the key, so it is stored with a note. What is stored is exactly what was checked:
a key or base URL not given keeps the stored one (``--base-url ""`` goes back to the default).
The key goes to the credentials store (``<state>/credentials/<provider>.json``, mode 0600),
never into ``clawbot.toml``; onboard says when the environment or ``[providers.X]`` of the
configuration file wins over it. The default model goes into ``<state>/clawbot.toml``, the file
onboard writes (created 0600; a different model already set there is replaced when asked,
or with ``--set-default``), and it is the file the next ``clawbot run`` reads (a
``./clawbot.toml`` in the current directory is never read implicitly). A file named instead
(``--config``, ``$CLAWBOT_CONFIG``) is never rewritten: onboard says so and prints the line to
put in it.
"""

from __future__ import annotations

import shlex
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import attrs
import click
from clawbot.commandkit import (
    EXIT_CONFIG,
    CliState,
    ModelProviders,
    apply_log_level,
    config_in_use,
    config_option,
    echo,
    model_providers,
    run_async,
    set_toml_string,
    unknown_provider,
    write_private_text,
)
from clawbot.paths import StatePaths
from clawbot.probe import probe
from clawbot.types import LLMProvider

from clawbot_setup.default_model import default_model, model_place


@click.command(short_help="Set up a model provider: key, base URL, default model.")
@click.option("--provider", default=None, help="Model provider (asked when left out; e.g. anthropic, openai, ollama).")
@click.option("--api-key", default=None, help="API key (asked with hidden input when left out).")
@click.option("--base-url", default=None, help='Base URL of a compatible server or proxy (default: the one stored, else the provider\'s; "" clears it).')
@click.option("--model", default=None, help="Default model, without the provider prefix (default: its suggestion).")
@click.option("--no-check", is_flag=True, help="Store the key without sending the check request first.")
@click.option("--set-default", is_flag=True, help="Replace a different default model already set in the file onboard writes.")
@config_option
@click.pass_obj
def onboard(
    state: CliState,
    provider: str | None,
    api_key: str | None,
    base_url: str | None,
    model: str | None,
    no_check: bool,
    set_default: bool,
) -> None:
    """Set up a model provider: check its key with one tiny request, store it, choose the default model.

    A key the provider rejects is not stored (a key stored before stays); a rate-limited one
    is. A key or base URL left out keeps the stored one. The default model is written to
    <state dir>/clawbot.toml, the file clawbot reads; onboard says when a file named by
    --config or $CLAWBOT_CONFIG, the environment or [providers.X] in the configuration
    takes precedence.
    """
    apply_log_level(state)
    sys.exit(run_async(_onboard(state, provider, api_key, base_url, model, no_check, set_default)) or 0)


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
    set_default: bool,
) -> int:
    # the credentials store loads the configuration schema: only when onboard runs, not when --help lists it
    from clawbot.credentials import ENV_NAMES, credential_env, credential_file, save_credential, stored_credential

    async with model_providers(state) as registered:  # only the registry is needed here
        all_providers = registered.providers
    installed = sorted(all_providers.values(), key=lambda p: (getattr(p, "detect_priority", 100), p.name))
    choices = [p.name for p in installed if p.name in ENV_NAMES]
    if not choices:
        echo("No model provider that `clawbot onboard` can set up is installed (pip install clawbot).", err=True)
        return 1

    interactive = provider_name is None
    if provider_name is None:
        provider_name = str(click.prompt("Model provider", type=click.Choice(choices), default=choices[0]))
    elif provider_name not in choices:
        if provider_name in all_providers:
            echo(
                f"`clawbot onboard` cannot store credentials for provider {provider_name!r}; set them in [providers.{provider_name}] of clawbot.toml",
                err=True,
            )
        else:
            echo(unknown_provider(provider_name, choices), err=True)
        return EXIT_CONFIG
    names = ENV_NAMES[provider_name]
    paths = StatePaths.resolve(state.env)
    stored = stored_credential(paths, provider_name)

    if api_key is None:
        if stored.api_key:
            if interactive:
                api_key = _ask_secret(f"{provider_name} API key (Enter to keep the stored one)", required=False) or None
        elif names.key_required:
            api_key = _ask_secret(f"{provider_name} API key", required=True)
        elif interactive:
            api_key = _ask_secret(f"{provider_name} API key (optional, Enter to skip)", required=False) or None
    key = stored.api_key if api_key is None else api_key.strip()
    if names.key_required and not key:
        echo(f"{provider_name} needs an API key: pass --api-key or enter it when asked", err=True)
        return EXIT_CONFIG
    if base_url is None and interactive and names.ask_base_url:
        keep = f"Enter to keep {stored.base_url}" if stored.base_url else "Enter for the default"
        base_url = str(click.prompt(f"Base URL ({keep})", default="", show_default=False, value_proc=_check_url)) or None
    try:
        url = _check_url(stored.base_url if base_url is None else base_url)
    except click.UsageError as exc:
        echo(exc.message, err=True)
        return EXIT_CONFIG

    # the provider as it will be once stored: exactly the key and base URL checked are stored
    candidate = dict(state.env)
    for variable, value in credential_env(paths).items():
        if not candidate.get(variable):
            candidate[variable] = value
    candidate[names.api_key] = key
    if names.base_url:
        candidate[names.base_url] = url
    async with model_providers(state, candidate) as booted:
        provider = booted.providers[provider_name]
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
        if not no_check:
            retry = _Retry(provider_name, api_key, base_url, model, state.config_path, set_default)
            if not await _check(provider, model, key or None, credential_file(paths, provider_name), retry):
                return 1

    try:
        written = save_credential(paths, provider_name, key, url)
    except OSError as exc:
        echo(f"cannot store the credentials in {paths.credentials}: {exc.strerror or exc}", err=True)
        return 1
    echo(f"Stored the {provider_name} credentials in {written}")
    for line in _overridden(booted, provider_name, state.env, key, url):
        echo(f"note: {line}")
    ref = f"{provider_name}/{model}"
    _set_default_model(state, ref, paths.config_file, set_default)
    echo('Try it: clawbot agent -m "hello"')
    return 0


def _overridden(booted: ModelProviders, provider: str, env: Mapping[str, str], key: str, url: str) -> list[str]:
    """What takes precedence over the stored key and base URL: the configuration file's
    ``[providers.X]`` table, then the environment."""
    from clawbot.credentials import ENV_NAMES  # loads the configuration schema, as in _onboard

    names = ENV_NAMES[provider]
    source = booted.config_source
    found = []
    for field, value, variable in (("api_key", key, names.api_key), ("base_url", url, names.base_url)):
        if booted.set_in_file(provider, field):
            found.append(f"{field} in [providers.{provider}] of {source} is used instead of the stored value; remove it there to use this one")
        elif variable and env.get(variable) and env[variable] != value:
            found.append(f"{variable} is set in your environment; it is used instead of the stored value")
    return found


def _may_replace(current: str, ref: str, target: Path, replace: bool) -> bool:
    """``--set-default``, or yes to the question on a terminal; never silently."""
    if replace or not sys.stdin.isatty():
        return replace
    return bool(click.confirm(f"{target} has the default model {current}; make it {ref}?", default=False))


def _set_default_model(state: CliState, ref: str, target: Path, replace: bool) -> None:
    """``ref`` as the default model of the file onboard writes; a file taking precedence is only named."""
    in_use = config_in_use(state)
    text = target.read_text(encoding="utf-8") if target.is_file() else ""
    try:
        data = tomllib.loads(text)
        current: str | None = default_model(data)
    except tomllib.TOMLDecodeError:
        data, current = {}, None  # reported by every command that reads it; not touched here
    if current == ref:
        echo(f"{target} already has the default model {ref}")
    elif current and not _may_replace(current, ref, target, replace):
        echo(f"{target} keeps its default model {current}; run again with --set-default to make it {ref}")
    elif current is None or (new := set_toml_string(text, *model_place(data), ref)) is None:
        echo(f"{target} was not changed (it could not be edited safely); to make {ref} the default, put this line")
        echo(f'under [agents.defaults.model] in it:\n\n    primary = "{ref}"\n')
    else:
        try:
            write_private_text(target, new)
        except OSError as exc:
            echo(f"{target} could not be written ({exc.strerror or exc}); to make {ref} the default, put this line")
            echo(f'under [agents.defaults.model] in it:\n\n    primary = "{ref}"\n')
        else:
            echo(f"{'Set' if text else 'Wrote'} the default model {ref} in {target}")
    reason = in_use.overrides(target)
    if reason is not None:
        echo(f"note: {reason}, so clawbot does not read the model set above.")
        echo(f'To use {ref} there, put this line under [agents.defaults.model] in {in_use.path}:\n\n    primary = "{ref}"\n')


@attrs.frozen
class _Retry:
    """The command to run again after a failed check: the arguments given, the key never
    shown (a placeholder), the part that failed left for the user to fill in."""

    provider: str
    api_key: str | None
    base_url: str | None
    model: str
    config_path: str | None
    set_default: bool

    def command(self, failed: str) -> str:
        words = ["clawbot"]
        if self.config_path:
            words += ["--config", shlex.quote(self.config_path)]
        words += ["onboard", "--provider", self.provider]
        if self.api_key or failed == "auth":
            words += ["--api-key", "KEY"]
        if failed == "connection":
            words += ["--base-url", "URL"]
        elif self.base_url is not None:
            words += ["--base-url", shlex.quote(_masked_url(self.base_url))]
        words += ["--model", "MODEL" if failed == "unknown_model" else shlex.quote(self.model)]
        if self.set_default:
            words.append("--set-default")
        return " ".join(words)


def _masked_url(url: str) -> str:
    """``url`` with what may be a credential (a user and password, a query, a fragment)
    replaced by placeholders: a hint printed on the terminal must not repeat a secret."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL a check could have used: nothing of it is repeated
        return "URL"
    userinfo, at, host = parts.netloc.rpartition("@")
    netloc = f"{'USER:PASSWORD' if ':' in userinfo else 'USER'}@{host}" if at else host
    return urlunsplit((parts.scheme, netloc, parts.path, "QUERY" if parts.query else "", "FRAGMENT" if parts.fragment else ""))


#: what a failed check means when it proves the key cannot work; any other answer came from
#: a provider that did not reject the key (a rate limit, an overloaded or failing server).
_REFUSED = {
    "auth": "the key was rejected",
    "connection": "the server could not be reached",
    "unknown_model": "the provider does not know the model",
    "": "the request failed",
}


async def _check(provider: LLMProvider, model: str, api_key: str | None, stored: Path, retry: _Retry) -> bool:
    ref = f"{provider.name}/{model}"
    echo(f"Checking {ref} with one short request ...")
    failure = await probe(provider, model, api_key)
    if failure is None:
        echo(f"ok: {ref} answered.")
        return True
    if failure.kind not in _REFUSED:
        echo(f"note: {ref} did not answer the check ({failure.message}), but the key was not rejected, so it is stored.")
        echo("      `clawbot doctor --live` checks again later.")
        return True
    echo(f"check failed, {_REFUSED[failure.kind]}: {failure.message}", err=True)
    kept = f"The key was not stored; the one in {stored} is kept." if stored.is_file() else "Nothing was stored."
    echo(f"{kept} To try again, run `{retry.command(failure.kind)}`; --no-check stores it without this check.", err=True)
    return False
