"""Skills: folders holding a ``SKILL.md`` that tell the agent how to do one kind of task.

* :mod:`clawbot.skills.frontmatter` reads one ``SKILL.md`` (YAML frontmatter or none).
* :mod:`clawbot.skills.discovery` lists the skill folders of each source, in precedence order.
* :mod:`clawbot.skills.eligibility` checks a skill's OS, binaries, variables and config flags.
* :mod:`clawbot.skills.catalog` puts them together per agent, cached until a file changes.

Nothing here is imported at ``clawbot --help`` or plugin discovery time; PyYAML is imported
only when a ``SKILL.md`` with frontmatter is parsed.
"""
