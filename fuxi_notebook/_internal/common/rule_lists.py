"""Several permission rules in one text field (an approval's `rule` in a session record).

One rule is stored as it is written; several ("Always allow" on `wc -c x && cat y` grants
a rule per part) as a JSON list. A rule starts with a tool name, never with `[`, so the
two cannot be confused, and a rule may hold any character (a command with `;` or a
newline) without breaking the list. This module imports nothing from the package.
"""

from __future__ import annotations

import json

__all__ = ["joined_rules", "split_rules"]


def joined_rules(rules: list[str]) -> str | None:
    """The field for `rules` (None: no rule)."""
    if not rules:
        return None
    return rules[0] if len(rules) == 1 else json.dumps(rules)


def split_rules(field: str | None) -> list[str]:
    """The rules a field holds (a field that is not a list of strings is one rule)."""
    if not field:
        return []
    if field.startswith("["):
        try:
            found = json.loads(field)
        except ValueError:
            return [field]
        if isinstance(found, list) and all(isinstance(r, str) and r for r in found):
            return found
    return [field]
