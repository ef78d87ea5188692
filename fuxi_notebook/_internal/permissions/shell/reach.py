"""Every path one simple command can read or write, for the Bash permission judge.

A word is judged by every path it can reach, not by its text: a glob by its literal and
every match (and by the protected names it could match later), a copied or moved folder
by every entry that lands in the destination, `rm -r` by every entry it deletes, a copied
symbolic link by where it will point. The options of the file commands are parsed
(`cp -t DIR`, `sed -i'bak/*'`). What cannot be resolved (an expansion, an unknown option,
too many matches or entries, an unreadable folder) makes the reach unknown, and, where it
writes, also a reason that no rule may approve it without asking.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..paths import PathFacts, hard_link_reason, path_problem, protected_reason, resolve_path
from .glob import expand, has_glob, pattern_protected
from .model import SimpleCommand
from .options import SPECS, Parsed, parse_options, posix_order

__all__ = ["MAX_ENTRIES", "MAX_PATHS", "CommandReach", "command_reach"]

#: Entries walked below the folders one command copies, moves or removes (all together)
#: before its reach is unknown.
MAX_ENTRIES = 10_000
#: Paths judged for one command before the reach is unknown.
MAX_PATHS = 50_000

_NULL_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "awk"})
_READERS = frozenset({"cat", "head", "tail", "less", "more", "nl", "wc", "grep", "egrep",
                      "fgrep", "rg", "sort", "uniq", "cut", "diff", "cmp", "file", "stat",
                      "du", "ls", "tree", "find", "strings", "xxd", "od", "hexdump", "md5sum",
                      "sha1sum", "sha256sum", "base64", "awk", "cd"})
_WRITERS = frozenset({"tee", "chmod", "chown", "chgrp", "truncate", "unlink", "shred"})
_FIRST_ARG_NOT_PATH = frozenset({"chmod", "chown", "chgrp"})
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")


@dataclass
class CommandReach:
    """What one command reads and writes; `soft`: why no rule or mode may approve it."""

    reads: list[PathFacts] = field(default_factory=list)
    writes: list[PathFacts] = field(default_factory=list)
    redirect_writes: list[PathFacts] = field(default_factory=list)
    unknown: bool = False
    soft: list[str] = field(default_factory=list)

    def all_writes(self) -> list[PathFacts]:
        return [*self.writes, *self.redirect_writes]


@dataclass(frozen=True)
class _Word:
    text: str
    dynamic: bool = False


@dataclass(frozen=True)
class _Entry:
    """One entry below a walked folder: its relative path, and its text if a symlink."""

    rel: str
    link: str | None


def command_reach(cmd: SimpleCommand, base: Path) -> CommandReach:
    """Files `cmd` reads and writes (arguments and redirections), run in `base`."""
    reacher = _Reacher(base)
    inner = cmd.inner()
    name = Path(inner.argv[0]).name if inner.argv else ""
    words = [_Word(t, d) for t, d in zip(inner.argv, inner.dynamic, strict=True)]
    cut = len(cmd.argv) - len(inner.argv)
    if "xargs" in (os.path.basename(w) for w in cmd.argv[:cut]):
        reacher.unresolvable(f"`{name}` gets more arguments from its input (xargs)",
                             writes=name not in _READERS)
    if name in SPECS:
        reacher.file_command(name, inner, words)
    elif name:
        reacher.generic(name, words)
    reacher.redirects(cmd)
    return reacher.reach


class _Reacher:
    """Collects the reach of one command, within the bounds."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.reach = CommandReach()
        self.count = 0
        self.real = _RealPaths()
        self.walks: dict[str, tuple[list[_Entry], str | None]] = {}
        self.walked = 0  # entries listed by all walks so far
        self.scanned = [0]  # directory entries looked at by all glob expansions so far

    # -- words to paths ---------------------------------------------------------------

    def unresolvable(self, why: str, *, writes: bool) -> None:
        self.reach.unknown = True
        if writes and why not in self.reach.soft:
            self.reach.soft.append(why)

    def paths(self, word: _Word, *, write: bool) -> list[str]:
        """Every path `word` can name: its literal, and each match of it as a pattern."""
        if word.dynamic:
            self.reach.unknown = True  # a file command on a path we cannot know
            if write:
                self._visible_protection(word.text)
            return []
        if path_problem(word.text):
            self.reach.unknown = True
            return []
        found = [word.text]
        if word.text.startswith("~"):
            found.append(f"./{word.text}")  # a quoted `~` is a folder named `~`
        if has_glob(word.text):
            found += self._matches(word.text, write=write)
        return found

    def _matches(self, text: str, *, write: bool) -> list[str]:
        if write:
            reason = pattern_protected(text, self.base)
            if reason:
                self.reach.soft.append(reason)
        expansion = expand(text, self.base, self.scanned)
        if expansion.overflow:
            self.unresolvable(f"{text}: {expansion.overflow}", writes=write)
        if any(w.startswith("-") for w in expansion.words):
            self.unresolvable(f"{text} matches a file named like an option", writes=write)
        return list(expansion.words)

    def _visible_protection(self, text: str) -> None:
        """An expansion hides the path, but what is written of it may name a protected one."""
        for alternative in _brace_alternatives(text.replace("'", "").replace('"', "")):
            facts = resolve_path(alternative, self.base)
            reason = protected_reason(facts) or pattern_protected(alternative, self.base)
            if reason:
                self.reach.soft.append(f"{reason} (the path depends on an expansion)")
                return

    # -- recording --------------------------------------------------------------------

    def _room(self) -> bool:
        self.count += 1
        if self.count > MAX_PATHS:
            self.unresolvable(f"it reaches more than {MAX_PATHS} paths", writes=True)
            return False
        return True

    def read(self, facts: PathFacts) -> None:
        if self._room():
            self.reach.reads.append(facts)

    def write(self, facts: PathFacts, *, content: bool, redirect: bool = False) -> None:
        """A write; `content`: it rewrites an existing file in place (not a rename)."""
        if not self._room():
            return
        (self.reach.redirect_writes if redirect else self.reach.writes).append(facts)
        shared = hard_link_reason(facts) if content else None
        if shared and shared not in self.reach.soft:
            self.reach.soft.append(shared)

    def read_words(self, words: Iterable[_Word]) -> None:
        for word in words:
            for path in self.paths(word, write=False):
                self.read(resolve_path(path, self.base))

    def write_words(self, words: Iterable[_Word], *, content: bool) -> list[str]:
        found: list[str] = []
        for word in words:
            for path in self.paths(word, write=True):
                self.write(resolve_path(path, self.base), content=content)
                found.append(path)
        return found

    # -- commands -----------------------------------------------------------------------

    def generic(self, name: str, words: list[_Word]) -> None:
        """Readers, writers and copiers whose options are not parsed: flags are dropped."""
        args = [w for w in words[1:] if not w.text.startswith("-") or w.dynamic]
        if name in _PATTERN_FIRST and args and "-e" not in [w.text for w in words]:
            args = args[1:]
        if name in _FIRST_ARG_NOT_PATH:
            args = args[1:]
        if name in _WRITERS:
            self.write_words(args, content=name != "unlink")
        elif name in _GENERIC_COPIES:
            _Copy(self, _GENERIC_COPIES[name], args[-1:], args[:-1]).run()
        elif name in _READERS:
            self.read_words(args)

    def file_command(self, name: str, inner: SimpleCommand, words: list[_Word]) -> None:
        """mkdir, touch, rm, rmdir, mv, cp, sed: options parsed, every reach listed."""
        globbed = inner.globbed or tuple(has_glob(w.text) for w in words)
        parsed = parse_options(inner.argv, SPECS[name], dynamic=inner.dynamic,
                               globbed=globbed, posix=posix_order(inner.assignments))
        if parsed.problem:
            self.unresolvable(f"`{name}`: {parsed.problem}", writes=False)
            self.write_words([w for w in words[1:] if not w.text.startswith("-")], content=True)
            return
        operands = [words[i] for i in parsed.operands]
        if name in ("cp", "mv"):
            _Copy.parsed(self, name, parsed, operands, words).run()
        elif name == "sed":
            self.sed(parsed, operands)
        elif name == "rm":
            self.remove(operands, recursive=parsed.has("recursive"))
        else:
            self.write_words(operands, content=False)
            self.read_words(_Word(v) if i is None else words[i]
                            for v, i in parsed.values("reference"))

    def remove(self, operands: list[_Word], *, recursive: bool) -> None:
        """rm: each operand; with -r, every entry below a folder (a removal, by name)."""
        for path in self.write_words(operands, content=False):
            folder = resolve_path(path, self.base)
            if not recursive or not folder.link.is_dir() or (
                    folder.link.is_symlink() and not path.endswith("/")):
                continue
            for entry in self.entries(str(folder.target)):
                link = folder.link / entry.rel
                self.write(PathFacts(link, folder.target / entry.rel), content=False)

    def sed(self, parsed: Parsed, operands: list[_Word]) -> None:
        """sed: its files are read, or with -i rewritten (and backed up, if a suffix)."""
        if not parsed.has("expression", "file"):
            operands = operands[1:]  # the first operand is the script
        files = [w for w in operands if w.text != "-"]
        self.read_words(_Word(value) for value, _ in parsed.values("file"))
        if not parsed.has("in-place"):
            self.read_words(files)
            return
        suffix = parsed.values("in-place")[-1][0]
        for path in self.write_words(files, content=False):
            for backup in _backups(path, suffix):
                if path_problem(backup):
                    self.reach.unknown = True
                else:
                    self.write(resolve_path(backup, self.base), content=False)

    def redirects(self, cmd: SimpleCommand) -> None:
        for redirect in cmd.redirects:
            if redirect.op in (">&", "<&", "<<", "<<-", "<<<") and not redirect.is_write:
                continue  # fd duplication, heredoc, herestring: no file involved
            if redirect.target is None:
                self.reach.unknown = True
                if redirect.is_write:
                    self._visible_protection(redirect.raw.lstrip("0123456789&<>| \t"))
            elif redirect.target not in _NULL_DEVICES:
                self._redirect(_Word(redirect.target), write=redirect.is_write)

    def _redirect(self, word: _Word, *, write: bool) -> None:
        for path in self.paths(word, write=write):
            facts = resolve_path(path, self.base)
            if write:
                self.write(facts, content=True, redirect=True)
            else:
                self.read(facts)

    # -- folders ------------------------------------------------------------------------

    def entries(self, folder: str) -> list[_Entry]:
        """The entries below `folder` (walked once per command), or none if unknown."""
        if folder not in self.walks:
            self.walks[folder] = _walk(folder, MAX_ENTRIES - self.walked)
            self.walked += len(self.walks[folder][0])
        found, problem = self.walks[folder]
        if problem:
            self.unresolvable(problem, writes=True)
        return found

    def landing(self, root: PathFacts, rel: str) -> PathFacts:
        """Where entry `rel` lands below `root`, through symlinks that exist there."""
        return PathFacts(root.link / rel, Path(self.real.under(str(root.target), rel)))


@dataclass(frozen=True)
class _CopyMode:
    """How a copier treats its sources.

    Attributes:
        move: the sources go away (mv): they are writes, and no file is rewritten in place.
        recursive: folders are copied with everything below them.
        links: a symbolic link is copied as a link (then judged by where it points).
        deref: a symbolic link is followed (a link to a folder cannot be listed: unknown).
        linking: the destination becomes a link to the source (cp -l/-s, ln).
        symbolic: that link is symbolic, its text the source as written (ln -s).
        parents: the source path as written is kept below the destination (--parents).
    """

    move: bool = False
    recursive: bool = False
    links: bool = False
    deref: bool = False
    linking: bool = False
    symbolic: bool = False
    parents: bool = False


#: The copiers whose options are not parsed: what they may do, all at once.
_GENERIC_COPIES = {
    "rsync": _CopyMode(recursive=True, links=True, deref=True, parents=True),
    "ln": _CopyMode(linking=True, symbolic=True),
    "install": _CopyMode(),
}


def _copy_mode(name: str, parsed: Parsed) -> _CopyMode:
    """cp and mv, from their parsed options (GNU defaults: cp -r copies links as links)."""
    if name == "mv":
        return _CopyMode(move=True, recursive=True, links=True)
    has = parsed.has
    deref = has("dereference", "H")
    return _CopyMode(recursive=has("recursive", "archive"), deref=deref,
                     links=not deref and has("recursive", "archive", "no-dereference", "d"),
                     linking=has("link", "symbolic-link"), parents=has("parents"))


class _Copy:
    """cp, mv and friends: the destination, each source's landing place, every entry below."""

    def __init__(self, reacher: _Reacher, mode: _CopyMode, dest: list[_Word],
                 sources: list[_Word]) -> None:
        self.r = reacher
        self.mode = mode
        self.dest = dest
        self.sources = sources

    @classmethod
    def parsed(cls, reacher: _Reacher, name: str, parsed: Parsed, operands: list[_Word],
               words: list[_Word]) -> _Copy:
        """cp or mv: `-t DIR` names the destination, else the last operand does."""
        target = parsed.values("target-directory")
        if target:
            value, index = target[-1]
            dest = [_Word(value) if index is None else words[index]]
            return cls(reacher, _copy_mode(name, parsed), dest, operands)
        return cls(reacher, _copy_mode(name, parsed), operands[-1:], operands[:-1])

    def run(self) -> None:
        dests = self.r.write_words(self.dest, content=not self.mode.move)
        for source in self._source_paths(dests):
            for dest in dests:
                self._land(source, resolve_path(dest, self.r.base))

    def _source_paths(self, dests: list[str]) -> list[str]:
        """The sources (moved ones are removed: writes); a glob destination with several
        matches passes all but the last as sources."""
        found: list[str] = []
        for word in self.sources:
            for path in self.r.paths(word, write=self.mode.move):
                facts = resolve_path(path, self.r.base)
                if self.mode.move:
                    self.r.write(facts, content=False)
                else:
                    self.r.read(facts)
                found.append(path)
        return found + (dests[1:] if len(dests) > 2 else [])

    def _roots(self, source: str, src: PathFacts, dest: PathFacts) -> list[PathFacts]:
        """Where a source can land: the destination itself (it does not exist, or -T),
        below it under the source's name, or (--parents) under the whole source path."""
        names = [str(dest.link / n) for n in _names(source, src)]
        if self.mode.parents:
            names.append(f"{dest.link}/{source}")
        return [dest, *(resolve_path(n, self.r.base) for n in names)]

    def _land(self, source: str, dest: PathFacts) -> None:
        """Writes for one source copied or moved to `dest`."""
        src = resolve_path(source, self.r.base)
        roots = self._roots(source, src, dest)
        is_link = src.link.is_symlink() and not source.endswith("/")
        for root in roots:
            self._top(root, source, src, is_link=is_link)
        follow = not is_link or self.mode.deref
        if self.mode.recursive and follow and src.target.is_dir():
            for entry in self.r.entries(str(src.target)):
                for root in roots:
                    self._entry(entry, src.target, self.r.landing(root, entry.rel))

    def _top(self, root: PathFacts, source: str, src: PathFacts, *, is_link: bool) -> None:
        """The source itself landing at `root`: a copy, a copied link, or a new link."""
        mode = self.mode
        copies_link = is_link and (mode.links or mode.linking)
        self.r.write(root, content=not (mode.move or copies_link or mode.linking))
        if copies_link:
            self._new_link(root, str(src.link), None)
        if mode.linking:
            self.r.write(PathFacts(root.link, src.target), content=False)
            if mode.symbolic:
                self._new_link(root, str(src.link), source)

    def _entry(self, entry: _Entry, source: Path, landing: PathFacts) -> None:
        """One entry below the copied folder `source`, landing at `landing`."""
        mode = self.mode
        self.r.write(landing, content=not mode.move and entry.link is None)
        if entry.link is None and not mode.linking:
            return
        original = source / entry.rel
        if entry.link is None:
            if mode.linking:
                self.r.write(PathFacts(landing.link, original), content=False)
            return
        if mode.links:
            self._new_link(landing, str(original), entry.link)
        if not mode.links or mode.deref:
            if os.path.isdir(original):
                self.r.unresolvable(f"{original} is a symbolic link to a folder that would "
                                    "be copied through", writes=True)
            else:
                self.r.read(resolve_path(str(original), self.r.base))
                self.r.write(landing, content=True)

    def _new_link(self, at: PathFacts, original: str, value: str | None) -> None:
        """A new symlink at `at`: judged by where it points, from both places."""
        try:
            value = os.readlink(original) if value is None else value
        except OSError as error:
            self.r.unresolvable(f"{original} cannot be read ({error.strerror})", writes=True)
            return
        here = os.path.realpath(os.path.join(os.path.dirname(at.target), value))
        self.r.write(PathFacts(at.link, Path(here)), content=False)
        self.r.write(PathFacts(at.link, Path(os.path.realpath(original))), content=False)


class _RealPaths:
    """realpath of many paths below folders already resolved: one lstat per new name."""

    def __init__(self) -> None:
        self.known: dict[str, str] = {}

    def under(self, root: str, rel: str) -> str:
        path = root
        for name in rel.split("/"):
            step = os.path.join(path, name)
            hit = self.known.get(step)
            if hit is None:
                hit = os.path.realpath(step) if os.path.islink(step) else step
                self.known[step] = hit
            path = hit
        return path


def _names(text: str, facts: PathFacts) -> set[str]:
    """The names a source can land under in a destination folder."""
    names = {os.path.basename(os.path.normpath(text)), facts.link.name, facts.target.name}
    return names - {"", ".", ".."}


def _walk(folder: str, budget: int) -> tuple[list[_Entry], str | None]:
    """Entries below `folder`, not following symlinks; a problem if unreadable or more
    than `budget`."""
    found: list[_Entry] = []
    todo = [""]
    while todo:
        rel = todo.pop()
        try:
            with os.scandir(os.path.join(folder, rel) if rel else folder) as listing:
                for item in listing:
                    sub = f"{rel}/{item.name}" if rel else item.name
                    link = os.readlink(item.path) if item.is_symlink() else None
                    found.append(_Entry(sub, link))
                    if link is None and item.is_dir(follow_symlinks=False):
                        todo.append(sub)
        except OSError as error:
            return [], f"{os.path.join(folder, rel)} cannot be listed ({error.strerror})"
        if len(found) > budget:
            return [], (f"{folder} holds too many entries to check (at most {MAX_ENTRIES} "
                        "for one command)")
    return found, None


def _backups(path: str, suffix: str) -> list[str]:
    """Where `sed -i SUFFIX` keeps the original: `*` is the file's name (GNU sed 4.9
    puts in the name as given; older ones the base name, in the file's folder)."""
    if not suffix:
        return []
    if "*" not in suffix:
        return [path + suffix]
    folder, name = os.path.split(path)
    return [suffix.replace("*", path), os.path.join(folder, suffix.replace("*", name))]


def _brace_alternatives(text: str, limit: int = 64) -> list[str]:
    """Brace expansion (`a{b,c}`), bounded; the text itself is kept as one alternative."""
    out, todo = [text], [text]
    while todo and len(out) < limit:
        match = _BRACES.search(todo.pop())
        if match is None:
            continue
        for part in match.group(1).split(","):
            value = match.string[:match.start()] + part + match.string[match.end():]
            out.append(value)
            todo.append(value)
    return out[:limit]
