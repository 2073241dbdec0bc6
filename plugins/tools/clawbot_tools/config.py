"""The ``[plugins.tools]`` table."""

import attrs


@attrs.frozen(kw_only=True)
class ToolsSettings:
    # file tools
    confine_to_workspace: bool = True
    # web tools
    web_allow_private_networks: bool = False
