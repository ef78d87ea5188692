"""Whether a tool call may run: rules, modes, the filesystem boundary, the `auto`
classifier, the policy guard; `shell/` analyses bash commands.
"""
