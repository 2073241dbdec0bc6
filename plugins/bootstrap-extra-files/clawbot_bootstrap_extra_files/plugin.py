"""Entry point of the bootstrap-extra-files plugin: ``clawbot_bootstrap_extra_files.plugin``.

An example of a ``clawbot_bootstrap_files`` **wrapper**: the workspace plugin's default
loader produces the list of standard files (AGENTS.md, SOUL.md ...); this wrapper receives
it from ``yield`` and returns an edited copy: standard files replaced by other workspace
files, some dropped, more added by glob pattern.

A wrapper receives only the :class:`~clawbot.BootstrapContext`, which carries the plugin's
validated ``[plugins.bootstrap-extra-files]`` table as ``ctx.settings`` on each call. The
plugin holds no state, so it can be a module.

Only ``hookimpl`` is imported at module level: discovery stays cheap.
"""

from __future__ import annotations

from clawbot import hookimpl

SECTION = "plugins.bootstrap-extra-files"


@hookimpl
def clawbot_config_schema():
    from clawbot_bootstrap_extra_files.config import ExtraFilesConfig

    return ExtraFilesConfig


def settings_of(ctx):
    """The validated table, or ``None`` (no configuration, e.g. a bare plugin manager)."""
    from clawbot_bootstrap_extra_files.config import ExtraFilesConfig

    return ctx.settings if isinstance(ctx.settings, ExtraFilesConfig) else None


@hookimpl(wrapper=True)
def clawbot_bootstrap_files(ctx):
    files = yield
    settings = settings_of(ctx)
    if settings is None or not settings.active:
        return files
    from clawbot_bootstrap_extra_files.extra import edit_files

    return edit_files(files, ctx, settings)
