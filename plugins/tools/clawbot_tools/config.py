"""The ``[plugins.tools]`` table."""

from typing import Literal

import attrs
from clawbot.types import InRange

from clawbot_tools.runtime.config import ExecSettings


def _http_url_or_empty(instance: object, attribute: attrs.Attribute, value: str) -> None:
    if value and not value.startswith(("http://", "https://")):
        raise ValueError(f"{attribute.name} must be an http:// or https:// URL (or empty), got {value!r}")


@attrs.frozen(kw_only=True)
class ToolsSettings:
    # file tools
    confine_to_workspace: bool = True
    # web tools
    web_allow_private_networks: bool = False
    # web_search: which search API answers it (see clawbot_tools.web.search).
    web_search_provider: Literal["brave", "searxng"] = "brave"
    # The provider's API key (Brave). Empty: the BRAVE_API_KEY environment variable.
    web_search_api_key: str = attrs.field(default="", repr=False)
    # The search endpoint. Empty: the provider's default (Brave: its public API; SearXNG has
    # none, so it must be set to the instance's URL).
    web_search_base_url: str = attrs.field(default="", validator=_http_url_or_empty)
    # Results per search when the model does not ask for a number (it may ask for 1-10).
    web_search_count: int = attrs.field(default=5, validator=InRange(1, 10))
    # Seconds before a search request is given up.
    web_search_timeout_s: float = attrs.field(default=10.0, validator=InRange(0.01, 600))
    # exec / process: the [plugins.tools.exec] table (see clawbot_tools.runtime.config).
    exec: ExecSettings = attrs.field(factory=ExecSettings)
