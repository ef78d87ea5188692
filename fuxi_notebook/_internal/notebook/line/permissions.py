"""`%fuxi permissions [revoke N... | revoke --all]`: the rules a cell runs under, where each
comes from, and taking back what "Always allow" granted.

The rules come from three places: the options (`--allowed-tools`, `%fuxi config`), the
settings files (`options.settings`, the user's and the project's, as far as trust lets
them apply), and the rules granted in this conversation ("Always allow"). Only the last
are the notebook's to take back; the others are changed where they are written. Revoking
is a change of policy, so it runs only as a line the user runs (as `%fuxi config`).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

from ...sessions.text.markdown import code_span

__all__ = ["permissions_command"]

_USAGE = "%fuxi permissions, %fuxi permissions revoke N [N ...], %fuxi permissions revoke --all"


@dataclass(frozen=True)
class _Row:
    behavior: str
    rule: str
    origin: str
    #: (index of the update, index of the rule in it) for a granted rule
    granted: tuple[int, int] | None = None


def permissions_command(agent: Any, words: list[str]) -> None:
    """Run `%fuxi permissions ...` (`words`: what follows `permissions`)."""
    if words and words[0] == "revoke":
        _revoke(agent, words[1:])
        return
    if words:
        raise UsageError(f"%fuxi permissions: {words[0]!r} is not understood; use {_USAGE}")
    _show_rows(*_rows(agent), "")


def _rows(agent: Any) -> tuple[list[_Row], str]:
    """The rules in force, and the permission mode (from one probe session)."""
    session = agent.probe("permissions")
    options, engine = session.options, session.permissions
    rows = [_Row("allow", rule, "options (--allowed-tools, %fuxi config)")
            for rule in options.allowed_tools]
    rows += [_Row("deny", rule, "options (--disallowed-tools, %fuxi config)")
             for rule in options.disallowed_tools]
    for source in engine.sources:
        for behavior in ("allow", "deny", "ask"):
            rows += [_Row(behavior, rule, source.origin or "settings")
                     for rule in getattr(source, behavior)]
    rows += _granted(agent)
    return rows, engine.mode


def _granted(agent: Any) -> list[_Row]:
    conversation = agent.conversations.current
    rows = []
    for number, update in enumerate(conversation.permission_updates if conversation else []):
        if update.type == "addRules":
            rows += [_Row(update.behavior or "allow", str(rule),
                          "granted in this conversation (Always allow)", (number, index))
                     for index, rule in enumerate(update.rules or [])]
    return rows


def _revoke(agent: Any, which: list[str]) -> None:
    granted = _granted(agent)
    if not which:
        raise UsageError(f"%fuxi permissions revoke: name the rules; use {_USAGE}")
    if which == ["--all"]:
        chosen = granted
    else:
        numbers = _numbers(which, len(granted))
        chosen = [granted[n - 1] for n in numbers]
    updates = agent.conversations.current.permission_updates if chosen else []
    gone = {row.granted for row in chosen}
    for number, update in enumerate(updates):
        if update.type == "addRules" and update.rules:
            update.rules = [rule for index, rule in enumerate(update.rules)
                            if (number, index) not in gone]
    updates[:] = [u for u in updates if not (u.type == "addRules" and not u.rules)]
    agent.reseal()  # a change through fuxi's own command
    said = (f"fuxi: revoked {len(chosen)} rule(s) granted in this conversation; later cells "
            "ask again" if chosen else "fuxi: no rule was granted in this conversation")
    _show_rows(*_rows(agent), said)


def _numbers(words: list[str], count: int) -> list[int]:
    numbers = []
    for word in words:
        if not word.isdigit() or not 1 <= int(word) <= count:
            where = (f"the granted rules are numbered 1 to {count}" if count
                     else "no rule was granted in this conversation")
            raise UsageError(f"%fuxi permissions revoke: {word!r} is not the number of a "
                             f"granted rule ({where}; see %fuxi permissions); nothing "
                             "changed")
        numbers.append(int(word))
    return sorted(set(numbers))


def _show_rows(rows: list[_Row], mode: str, said: str) -> None:
    from IPython.display import display

    head = said or f"fuxi: {len(rows)} rule(s) in force, permission mode {mode}"
    if not rows:
        display({"text/markdown": html.escape(head), "text/plain": head}, raw=True)
        return
    number = 0
    table = ["| revoke | rule | from |", "|---|---|---|"]
    plain = [head]
    for row in rows:
        mark = ""
        if row.granted is not None:
            number += 1
            mark = str(number)
        rule = f"{row.behavior} {row.rule}"
        cells = (code_span(rule), html.escape(row.origin))
        table.append(f"| {mark} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        plain.append(f"{mark:>3} {rule}  ({row.origin})")
    hint = ("\n\n`%fuxi permissions revoke N` takes back a granted rule (`--all`: every one)"
            if number else "")
    display({"text/markdown": f"{html.escape(head)}\n\n" + "\n".join(table) + hint,
             "text/plain": "\n".join(plain)}, raw=True)
