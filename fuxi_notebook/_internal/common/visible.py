"""Text shown to someone who must judge it: characters that hide or reorder text, revealed.

A command or a piece of code on an approval or consent card is what the user decides on,
so what they read must be what runs. Some characters do not show at all (zero-width
spaces, joiners, fillers, tags), some reorder the text around them (bidirectional
overrides and isolates: U+202E makes `gpj.exe` read `exe.jpg`), some end a line or move
the cursor where a terminal prints them (`\\r`, ESC). `hidden_reason` says why a character
is one of them; `reveal` shows each as `\\uXXXX` and names what it found. Newlines and
tabs are ordinary layout and stay as they are.

This module imports nothing from the package: the shell analysis and the cards share it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

__all__ = ["Revealed", "hidden_reason", "reveal"]

#: Letters and symbols that render as blank space although they are not whitespace.
_BLANK_GLYPHS = frozenset({
    "\u115f", "\u1160", "\u3164", "\uffa0",  # Hangul fillers
    "\u2800",  # Braille pattern blank
    "\u034f",  # combining grapheme joiner
    "\u17b4", "\u17b5",  # Khmer inherent vowels
    "\u180b", "\u180c", "\u180d", "\u180f",  # Mongolian variation selectors
})
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def hidden_reason(char: str) -> str | None:
    """Why `char` hides or reorders text where it is shown (None: it shows as itself).

    Newline and tab are layout, not hidden; ASCII printable characters never are.
    """
    if char in "\n\t" or " " <= char < "\x7f":
        return None
    if char == "\r":
        return "a carriage return"
    if char in _BIDI:
        return "a bidirectional control character, which reorders the text around it"
    if char in _BLANK_GLYPHS or _variation_selector(char):
        return "an invisible character"
    category = unicodedata.category(char)
    if category == "Cc":
        return "a control character"
    if category in ("Cf", "Co", "Cn", "Cs"):
        return "an invisible or formatting character"
    if category in ("Zs", "Zl", "Zp"):
        return "non-ASCII whitespace"
    return None


def _variation_selector(char: str) -> bool:
    point = ord(char)
    return 0xFE00 <= point <= 0xFE0F or 0xE0100 <= point <= 0xE01EF


@dataclass(frozen=True)
class Revealed:
    """Text with its hidden characters escaped, and what they were."""

    text: str
    #: (code point as U+XXXX, its Unicode name, why it is hidden), each character once
    found: tuple[tuple[str, str, str], ...] = ()

    def warning(self) -> str:
        """One sentence naming what was escaped ("" when nothing was)."""
        if not self.found:
            return ""
        names = ", ".join(f"{point} {name}" for point, name, _ in self.found[:8])
        more = f" and {len(self.found) - 8} more" if len(self.found) > 8 else ""
        return ("contains characters that do not show or that reorder text, shown here "
                f"escaped as \\uXXXX: {names}{more}")


def reveal(text: str) -> Revealed:
    """`text` with every character `hidden_reason` names written as `\\uXXXX`."""
    if text.isascii() and text.isprintable():
        return Revealed(text)  # the common case: nothing to look for
    out: list[str] = []
    found: dict[str, tuple[str, str, str]] = {}
    for char in text:
        reason = hidden_reason(char)
        if reason is None:
            out.append(char)
            continue
        point = ord(char)
        out.append(f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}")
        if char not in found:
            found[char] = (f"U+{point:04X}", unicodedata.name(char, "unnamed"), reason)
    return Revealed("".join(out), tuple(found.values()))
