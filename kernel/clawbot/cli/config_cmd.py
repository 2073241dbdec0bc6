"""``clawbot config show|validate|path``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import click
import tomli_w

from clawbot.cli.output import echo, echo_json
from clawbot.cli.state import CliState, config_option, run_async, user_errors

if TYPE_CHECKING:  # deferred: annotations only; `--help` answers without loading the kernel
    from attrs import AttrsInstance

    from clawbot.boot import Loaded


@click.group()
def config() -> None:
    """Show, validate or locate the configuration."""


@config.command("path")
@config_option
@click.pass_obj
def config_path(state: CliState) -> None:
    """Print the configuration file in use (or say that the defaults are used)."""
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.config import ConfigError
    from clawbot.config.loader import locate_config
    from clawbot.config.trust import UntrustedConfigError

    with user_errors():
        path = locate_config(state.config_path, state.env, Path.cwd())
        try:
            state.load()  # refuses a file an agent can write; notes a ./clawbot.toml that is ignored
        except UntrustedConfigError:
            raise
        except ConfigError:
            pass  # the file's own problems: `clawbot config validate` lists them
    echo(str(path) if path else "no configuration file found: using the built-in defaults")


@config.command("validate")
@config_option
@click.pass_obj
def config_validate(state: CliState) -> None:
    """Check the configuration; print every problem with its key path (exit code 2).

    Besides types and unknown keys: numbers out of range, model references without a
    provider prefix, and providers that are not installed (with the closest installed name).
    """
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.config import ConfigError
    from clawbot.config.trust import UntrustedConfigError
    from clawbot.credentials import CredentialsError

    with user_errors():
        try:
            loaded = state.load()
            source, problems = loaded.config.source, []
        except (CredentialsError, UntrustedConfigError):
            raise
        except ConfigError as exc:
            loaded, source, problems = None, exc.source, list(exc.problems)
        problems += _provider_problems(state, loaded)
        if problems:
            raise ConfigError(source or "built-in defaults", sorted(dict.fromkeys(problems), key=lambda p: p.path))
    echo(f"{source or 'built-in defaults'}: valid")


def _provider_problems(state: CliState, loaded: Loaded | None) -> list:
    """Model references naming a provider that is not installed (needs the plugins' providers)."""
    # deferred: `clawbot <command> --help` answers without loading the kernel (cattrs, pluggy, rich)
    from clawbot.boot import load
    from clawbot.config.loader import load_raw
    from clawbot.config.refs import provider_problems
    from clawbot.kernel import bootstrap

    try:
        raw = load_raw(state.config_path, state.env, Path.cwd())
    except Exception:  # unreadable or not TOML: already reported by the loader
        return []

    async def names() -> list[str]:
        kernel = await bootstrap(loaded or load(None, env=state.env, defaults=True))
        await kernel.aclose()
        return kernel.llm_providers.names()

    return provider_problems(raw.core, run_async(names()) or [])


def _plain(value: object) -> object:
    cls = type(value)
    if attrs.has(cls):
        return _plain_fields(value, cls)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _plain_fields(value: object, cls: type[AttrsInstance]) -> dict[str, object]:
    """The fields of ``value``, an instance of the attrs class ``cls``, plain."""
    return {field.name: _plain(getattr(value, field.name)) for field in attrs.fields(cls)}


def _mask(value: object, key: str = "") -> object:
    """Secrets never reach the screen: any key naming a key, token or password is masked."""
    if isinstance(value, dict):
        return {k: _mask(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, key) for v in value]
    if isinstance(value, str) and value and any(s in key.lower() for s in ("key", "token", "secret", "password")):
        return "***"
    return value


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of TOML.")
@config_option
@click.pass_obj
def config_show(state: CliState, as_json: bool) -> None:
    """Print the effective configuration, defaults filled in, secrets masked."""
    with user_errors():
        loaded = state.load()
    cfg = loaded.config
    tree: dict[str, Any] = _plain_fields(cfg.core, type(cfg.core))
    for path, section in sorted(cfg.sections.items()):
        if section is None:  # installed, not configured, and without defaults (a token): an empty table would not load
            continue
        root, _, name = path.partition(".")
        if name:
            tree.setdefault(root, {})[name] = _plain(section)
        else:  # a plugin's own top-level table ([cron])
            tree[root] = _plain(section)
    tree = {key: _mask(value, key) for key, value in tree.items()}
    if as_json:
        echo_json(tree, ensure_ascii=True)
        return

    echo(f"# effective configuration from {cfg.source or 'built-in defaults'}")
    echo(tomli_w.dumps({key: _drop_none(value) for key, value in tree.items() if value is not None}))


def _drop_none(value: object) -> object:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value
