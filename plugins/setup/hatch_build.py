"""Ship plugin-template/ inside the wheel as clawbot_setup/_plugin_template.

From a checkout the template sits at the repository root (../../plugin-template); from an unpacked
sdist it is already inside the package (the sdist force-include put it there), so the
wheel picks it up with the package and nothing needs adding.
"""

from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class PluginTemplateHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version, build_data):  # noqa: ANN001, ANN201 - hatchling's signature
        template = Path(self.root, "..", "..", "plugin-template").resolve()
        if template.is_dir():
            build_data["force_include"][str(template)] = "clawbot_setup/_plugin_template"
