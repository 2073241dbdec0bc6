"""clawbot-tool-audit: an audit log of every tool call, and rules that block calls.

Keep this file free of imports: clawbot imports ``clawbot_tool_audit.plugin`` (and so this
package) whenever it discovers plugins.
"""

__version__ = "0.1.0"
