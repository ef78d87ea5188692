"""A project's settings: its sources, what needs trust, and hook commands.

Modules: files.py (the settings files of the "user", "project" and "local" sources, checked),
memory.py (FUXI.md), output_styles.py, gate.py (what needs trust, described as it would
run), trust.py (the trust store and fingerprints), command_hooks.py (hook commands as
`HookMatcher` callbacks), front_matter.py (the `---` lines of Markdown settings files),
project.py (`load_project_settings`, the one entry point), key_helper_setting.py (which
`apiKeyHelper` a session runs).

The rule this package exists for: nothing from a repository's `.fuxi/` (or `.mcp.json`)
that runs code or widens what runs without asking takes effect until the user trusted
that folder with exactly that content, and what it would enable is shown first. A cloned
repository cannot make the agent run anything on its own.
"""
