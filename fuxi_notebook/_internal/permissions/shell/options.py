"""The options of the file commands acceptEdits may approve, parsed as GNU getopt does.

Which word is a destination depends on the options (`cp -t DIR SRC`, `sed -i.bak`,
`touch -r REF`), so they are parsed, not dropped: short clusters (`-rt DIR`), attached
values (`-tDIR`, `--target-directory=DIR`), unambiguous long prefixes (`--target`),
options after operands (GNU permutes them) and `--`. An option not listed for the
command, an ambiguous prefix, a missing value or an option spelled by an expansion or a
glob is a problem: the command's reach is then unknown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["SPECS", "OptionSpec", "Parsed", "parse_options", "posix_order"]


@dataclass(frozen=True)
class OptionSpec:
    """What one command accepts. Keys name options: a short letter or a long name.

    Attributes:
        flags: short letters without a value.
        values: short letters taking a value (the rest of the word, else the next word).
        attached: short letters whose optional value can only be attached (`sed -i.bak`).
        long_flags / long_values / long_optional: long names without a value, with a
            required value (`=V` or the next word), with an optional value (`=V` only).
        aliases: short letter -> the long name it means (one key for both spellings).
    """

    flags: str = ""
    values: str = ""
    attached: str = ""
    long_flags: frozenset[str] = frozenset()
    long_values: frozenset[str] = frozenset()
    long_optional: frozenset[str] = frozenset()
    aliases: dict[str, str] = field(default_factory=dict)

    def long_names(self) -> frozenset[str]:
        return self.long_flags | self.long_values | self.long_optional


@dataclass
class Parsed:
    """Options by key (long name, else short letter) with their values, and operands.

    `operands` and the value positions are indices into argv (None: attached value).
    """

    options: dict[str, list[tuple[str, int | None]]] = field(default_factory=dict)
    operands: list[int] = field(default_factory=list)
    problem: str | None = None

    def has(self, *keys: str) -> bool:
        return any(key in self.options for key in keys)

    def values(self, key: str) -> list[tuple[str, int | None]]:
        return self.options.get(key, [])


_COMMON = frozenset({"help", "version", "verbose"})
_BACKUP = frozenset({"backup", "update"})
SPECS: dict[str, OptionSpec] = {
    "cp": OptionSpec(
        flags="abdfiHlLnPpRrsTuvxZ", values="St",
        long_flags=_COMMON | {"archive", "attributes-only", "copy-contents", "debug", "force",
                              "interactive", "dereference", "link", "no-clobber",
                              "no-dereference", "parents", "recursive", "remove-destination",
                              "strip-trailing-slashes", "symbolic-link",
                              "no-target-directory", "keep-directory-symlink",
                              "one-file-system"},
        long_values=frozenset({"suffix", "target-directory", "no-preserve", "sparse"}),
        long_optional=_BACKUP | {"preserve", "reflink", "context"},
        aliases={"a": "archive", "r": "recursive", "R": "recursive", "t": "target-directory",
                 "T": "no-target-directory", "L": "dereference", "l": "link",
                 "s": "symbolic-link", "S": "suffix", "P": "no-dereference"}),
    "mv": OptionSpec(
        flags="bfinTuvZ", values="St",
        long_flags=_COMMON | {"force", "interactive", "no-clobber", "no-copy", "exchange",
                              "strip-trailing-slashes", "no-target-directory", "context",
                              "debug"},
        long_values=frozenset({"suffix", "target-directory"}), long_optional=_BACKUP,
        aliases={"t": "target-directory", "T": "no-target-directory", "S": "suffix"}),
    "rm": OptionSpec(
        flags="fiIrRdv",
        long_flags=_COMMON | {"force", "one-file-system", "no-preserve-root", "recursive",
                              "dir"},
        long_optional=frozenset({"interactive", "preserve-root"}),
        aliases={"r": "recursive", "R": "recursive"}),
    "rmdir": OptionSpec(flags="pv", long_flags=_COMMON | {"ignore-fail-on-non-empty",
                                                          "parents"}),
    "touch": OptionSpec(
        flags="acfhm", values="drt", long_flags=_COMMON | {"no-create", "no-dereference"},
        long_values=frozenset({"date", "reference", "time"}), aliases={"r": "reference"}),
    "mkdir": OptionSpec(flags="pvZ", values="m", long_flags=_COMMON | {"parents"},
                        long_values=frozenset({"mode"}), long_optional=frozenset({"context"})),
    "sed": OptionSpec(
        flags="nrEsuz", values="efl", attached="i",
        long_flags=_COMMON | {"quiet", "silent", "regexp-extended", "separate", "unbuffered",
                              "null-data", "zero-terminated", "posix", "debug", "sandbox",
                              "follow-symlinks"},
        long_values=frozenset({"expression", "file", "line-length"}),
        long_optional=frozenset({"in-place"}),
        aliases={"e": "expression", "f": "file", "i": "in-place"}),
}


def parse_options(argv: tuple[str, ...], spec: OptionSpec, *, dynamic: tuple[bool, ...],
                  globbed: tuple[bool, ...], posix: bool = False) -> Parsed:
    """Parse argv[1:] against `spec`; `posix`: options end at the first operand."""
    parsed = Parsed()
    at, ended = 1, False
    while at < len(argv) and parsed.problem is None:
        word = argv[at]
        if ended or word == "-" or not word.startswith("-") or dynamic[at]:
            parsed.operands.append(at)
            ended = ended or posix
            at += 1
        elif word == "--":
            ended, at = True, at + 1
        elif globbed[at]:
            parsed.problem = f"the option {word!r} contains a glob (bash may expand it)"
        elif word.startswith("--"):
            at = _long(argv, at, spec, parsed, dynamic)
        else:
            at = _short(argv, at, spec, parsed, dynamic)
    return parsed


def posix_order(assignments: tuple[str, ...]) -> bool:
    """Whether getopt stops at the first operand (POSIXLY_CORRECT in the environment)."""
    return "POSIXLY_CORRECT" in os.environ or any(
        a.startswith("POSIXLY_CORRECT=") for a in assignments)


def _long(argv: tuple[str, ...], at: int, spec: OptionSpec, parsed: Parsed,
          dynamic: tuple[bool, ...]) -> int:
    name, eq, value = argv[at][2:].partition("=")
    full = _long_name(name, spec)
    if full is None:
        parsed.problem = f"the option --{name} is not known or is ambiguous"
        return at + 1
    if full in spec.long_flags:
        if eq:
            parsed.problem = f"the option --{full} takes no value"
        _record(parsed, full, "", None)
        return at + 1
    if full in spec.long_optional or eq:
        _record(parsed, full, value, None)
        return at + 1
    return _take_next(argv, at, full, parsed, dynamic)


def _long_name(name: str, spec: OptionSpec) -> str | None:
    """The option `name` abbreviates (getopt_long accepts any unambiguous prefix)."""
    names = spec.long_names()
    if name in names:
        return name
    found = [n for n in names if n.startswith(name)] if name else []
    return found[0] if len(found) == 1 else None


def _short(argv: tuple[str, ...], at: int, spec: OptionSpec, parsed: Parsed,
           dynamic: tuple[bool, ...]) -> int:
    letters = argv[at][1:]
    for position, letter in enumerate(letters):
        key = spec.aliases.get(letter, letter)
        tail = letters[position + 1:]
        if letter in spec.attached:
            _record(parsed, key, tail, None)
            return at + 1
        if letter in spec.values:
            if tail:
                _record(parsed, key, tail, None)
                return at + 1
            return _take_next(argv, at, key, parsed, dynamic)
        if letter not in spec.flags:
            parsed.problem = f"the option -{letter} is not known"
            return at + 1
        _record(parsed, key, "", None)
    return at + 1


def _take_next(argv: tuple[str, ...], at: int, key: str, parsed: Parsed,
               dynamic: tuple[bool, ...]) -> int:
    """The value of option `key` is the next word."""
    if at + 1 >= len(argv):
        parsed.problem = f"the option {argv[at]!r} has no value"
    elif dynamic[at + 1]:
        parsed.problem = f"the value of {argv[at]!r} depends on an expansion"
    else:
        _record(parsed, key, argv[at + 1], at + 1)
    return at + 2


def _record(parsed: Parsed, key: str, value: str, index: int | None) -> None:
    parsed.options.setdefault(key, []).append((value, index))
