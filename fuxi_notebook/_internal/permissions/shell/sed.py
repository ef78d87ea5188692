"""What a sed command does besides editing text: parsed, not guessed (security.md case 34).

`sed -i` is auto-approved in `acceptEdits` as an edit of the files it names, which is only
true if its script does nothing else. GNU sed can run commands (`e`, and the `e` flag of
`s///`), write other files (`w`, `W`, the `w` flag), read other files (`r`, `R`) and take its
script from a file (`-f`). `sed_problem` parses the options and the script and names the
first such thing, or anything it does not understand (failing closed); None means the
command only reads its input files and edits them in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["sed_problem"]

#: Options without an argument (short letters; long forms below).
_FLAGS = frozenset("nrEsuzi")
_LONG_FLAGS = frozenset({"--quiet", "--silent", "--regexp-extended", "--separate",
                         "--unbuffered", "--null-data", "--posix", "--debug", "--sandbox",
                         "--follow-symlinks", "--in-place"})
#: Commands that only act on the pattern and hold spaces or print to stdout.
_PLAIN = frozenset("dDpPnNgGhHxlzF=")
_QUIT = frozenset("qQ")
_LABELLED = frozenset("btT")
_TEXT = frozenset("aic")
_DANGEROUS = {"e": "runs a shell command (sed's e command)",
              "w": "writes a file named in its script (w)",
              "W": "writes a file named in its script (W)",
              "r": "reads a file named in its script (r)",
              "R": "reads a file named in its script (R)"}


def sed_problem(argv: Sequence[str]) -> str | None:
    """Why this sed command is more than an in-place edit of its files (None: it is not)."""
    scripts: list[str] = []
    rest: list[str] = []
    index = 1
    while index < len(argv):
        word = argv[index]
        index += 1
        if word == "--":
            rest.extend(argv[index:])
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            if name == "--expression":
                if not eq:
                    if index >= len(argv):
                        return "its --expression has no script"
                    value, index = argv[index], index + 1
                scripts.append(value)
            elif name == "--file":
                return "takes its script from a file (--file)"
            elif name == "--line-length":
                index += 0 if eq else 1  # its number is the next word
            elif name not in _LONG_FLAGS:
                return f"has an option that is not understood ({name})"
            continue
        if word.startswith("-") and len(word) > 1:
            problem, script, index = _short_options(word, argv, index)
            if problem:
                return problem
            if script is not None:
                scripts.append(script)
            continue
        rest.append(word)
    if not scripts:
        if not rest:
            return "has no script"
        scripts.append(rest[0])
    for script in scripts:
        problem = _script_problem(script)
        if problem:
            return problem
    return None


def _short_options(word: str, argv: Sequence[str], index: int) -> tuple[str | None, str | None,
                                                                        int]:
    """(problem, script given by -e, next index) for a cluster like `-ne` or `-i.bak`."""
    letters = word[1:]
    for position, letter in enumerate(letters):
        tail = letters[position + 1:]
        if letter == "i":
            return None, None, index  # -i[SUFFIX]: the rest of the word is the suffix
        if letter in ("e", "f", "l"):
            value = tail
            if not value:
                if index >= len(argv):
                    return f"its -{letter} has no argument", None, index
                value, index = argv[index], index + 1
            if letter == "f":
                return "takes its script from a file (-f)", None, index
            return None, (value if letter == "e" else None), index
        if letter not in _FLAGS:
            return f"has an option that is not understood (-{letter})", None, index
    return None, None, index


def _script_problem(script: str) -> str | None:
    """The first command or flag of the script that does more than edit text."""
    reader = _Reader(script)
    while True:
        reader.skip_separators()
        if reader.done():
            return None
        if reader.peek() == "#":
            reader.skip_line()
            continue
        problem = reader.address()
        if problem:
            return problem
        reader.skip_spaces()
        if reader.peek() == "!":
            reader.take()
            reader.skip_spaces()
        problem = _command(reader)
        if problem:
            return problem


def _command(reader: _Reader) -> str | None:
    command = reader.take()
    if command in ("{", "}") or command in _PLAIN:
        return None
    if command in _DANGEROUS:
        return _DANGEROUS[command]
    if command in _QUIT or command == "L":  # a number may follow
        reader.take_while(str.isdigit)
        return None
    if command in _LABELLED or command == ":" or command == "v":
        reader.skip_line(stop_at_semicolon=command != ":")
        return None
    if command in _TEXT:
        reader.skip_text()
        return None
    if command == "s":
        return _substitute(reader)
    if command == "y":
        delimiter = reader.take()
        if not delimiter or delimiter in "\\\n":
            return "has a y command that is not understood"
        return None if (reader.until(delimiter) is not None
                        and reader.until(delimiter) is not None) else "has an unterminated y"
    return f"has a command that is not understood ({command or 'end of script'})"


def _substitute(reader: _Reader) -> str | None:
    delimiter = reader.take()
    if not delimiter or delimiter in "\\\n":
        return "has an s command that is not understood"
    if reader.until(delimiter) is None or reader.until(delimiter) is None:
        return "has an unterminated s command"
    while not reader.done() and reader.peek() not in ";\n}#":
        flag = reader.take()
        if flag == "e":
            return "runs the result of a substitution as a command (s///e)"
        if flag == "w":
            return "writes a file named in its script (s///w)"
        if not (flag in "gpiImM" or flag.isdigit() or flag.isspace()):
            return f"has an s flag that is not understood ({flag})"
    return None


class _Reader:
    """A cursor over a sed script, with the few lexical rules sed has."""

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def done(self) -> bool:
        return self.at >= len(self.text)

    def peek(self) -> str:
        return self.text[self.at] if not self.done() else ""

    def take(self) -> str:
        char = self.peek()
        self.at += 1 if char else 0
        return char

    def take_while(self, test: Callable[[str], bool]) -> str:
        start = self.at
        while not self.done() and test(self.peek()):
            self.at += 1
        return self.text[start:self.at]

    def skip_spaces(self) -> None:
        self.take_while(lambda c: c in " \t")

    def skip_separators(self) -> None:
        self.take_while(lambda c: c in " \t\n;")

    def skip_line(self, *, stop_at_semicolon: bool = False) -> None:
        stops = "\n;}" if stop_at_semicolon else "\n"
        self.take_while(lambda c: c not in stops)

    def skip_text(self) -> None:
        """`a text`, `a\\` + lines: to the end of the line, continued by a backslash."""
        while not self.done():
            char = self.take()
            if char == "\\":
                self.take()
            elif char == "\n":
                return

    def until(self, delimiter: str) -> str | None:
        """Text up to an unescaped `delimiter` (consumed); None if it never comes."""
        start = self.at
        while not self.done():
            char = self.take()
            if char == "\\":
                self.take()
            elif char == delimiter:
                return self.text[start:self.at - 1]
        return None

    def address(self) -> str | None:
        """Skip an address or range: numbers, `$`, `/re/`, `\\cREc`, `first~step`, `,+N`."""
        for part in range(2):
            if part == 1:
                if self.peek() != ",":
                    return None
                self.take()
                if self.peek() in "+~":
                    self.take()
            char = self.peek()
            if char.isdigit():
                self.take_while(str.isdigit)
                if self.peek() == "~":
                    self.take()
                    self.take_while(str.isdigit)
            elif char == "$":
                self.take()
            elif char in ("/", "\\"):
                if char == "\\":
                    self.take()
                delimiter = self.take()
                if not delimiter or self.until(delimiter) is None:
                    return "has an unterminated address"
                self.take_while(lambda c: c in "IM")
            elif part == 1:
                return "has a range that is not understood"
        return None
