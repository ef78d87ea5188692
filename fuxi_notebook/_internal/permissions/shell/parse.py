"""Static analysis of a bash command string with tree-sitter-bash, failing closed.

`analyse` returns every simple command bash would run, wherever it sits (lists,
pipelines, `$(..)`, backticks, `<(..)`, subshells, control structures), and every reason
the string could not be fully analysed. It knows nothing of rules, modes or the
filesystem: the permission engine matches rules and checks redirect targets.

Redirections of a compound statement (`(a; b) > f`, `{ a; } > f`, and `a | b > f`,
which tree-sitter also parses as a redirected pipeline) are attached to every command
inside it, except commands inside `$(..)`/`<(..)`, whose output goes elsewhere.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from .checks import ALWAYS_ASK, node_problems, shorten, snippet, text_problems
from .model import Redirect, ShellAnalysis, SimpleCommand
from .redirects import REDIRECT_NODES, parse_redirect
from .words import Word, node_text, normalise_word

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

__all__ = ["analyse"]

_MAX_DEPTH = 100

_FLAT = frozenset({
    "program", "list", "pipeline", "redirected_statement", "negated_command", "command",
    "heredoc_redirect", "file_redirect", "herestring_redirect", "variable_assignments", "ERROR",
})
_WORDS = frozenset({
    "word", "string", "raw_string", "ansi_c_string", "number", "concatenation",
    "simple_expansion", "expansion", "command_substitution", "process_substitution",
    "arithmetic_expansion", "translated_string",
})
_ASSIGNMENT_PARENTS = frozenset({"command", "declaration_command", "variable_assignments"})
_TEST_NODES = frozenset({"unary_expression", "binary_expression"})
_TEST_TOKENS = frozenset({"=", "==", "!=", "!"})
_lock = threading.Lock()
_parsers: list[Parser] = []


def _parse(source: bytes) -> Tree:
    """Parse with one shared parser, created on first use so importing costs nothing."""
    with _lock:
        if not _parsers:
            import tree_sitter
            import tree_sitter_bash

            language = tree_sitter.Language(tree_sitter_bash.language())
            _parsers.append(tree_sitter.Parser(language))
        return _parsers[0].parse(source)


def analyse(command: str) -> ShellAnalysis:
    """Every simple command in `command`, and every reason it is not fully analysable."""
    problems = text_problems(command)
    source = command.encode("utf-8", "surrogatepass")
    try:
        tree = _parse(source)
    except Exception as exc:  # fail closed on anything the parser does
        return ShellAnalysis((), (*problems, f"the command could not be parsed ({exc})"))
    if tree.root_node.has_error:
        problems.append("the command has a syntax error or syntax the parser does not know")
    walker = _Walker(source)
    try:
        walker.visit(tree.root_node, _Ctx(), 0)
    except RecursionError:
        walker.problems.append("the command is nested too deeply to analyse")
    except Exception as exc:  # a bug here must not approve anything
        walker.problems.append(f"internal error while analysing the command ({exc!r})")
    return ShellAnalysis(tuple(walker.commands), tuple(dict.fromkeys(problems + walker.problems)))


@dataclass(frozen=True)
class _Ctx:
    """What the enclosing statements pass down to the commands they contain."""

    nested: bool = False
    redirects: tuple[Redirect, ...] = ()
    extra: tuple[Node, ...] = ()  # argument words tree-sitter put inside a redirect ...
    owner: tuple[int, int] | None = None  # ... which belong to the command at this span


class _Walker:
    """Depth-first walk that records commands and problems."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.commands: list[SimpleCommand] = []
        self.problems: list[str] = []

    def visit(self, node: Node, ctx: _Ctx, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.problems.append("the command is nested too deeply to analyse")
            self._flat(node, ctx)
            return
        self.problems += node_problems(node, self.source)
        handler = _HANDLERS.get(node.type)
        if handler is not None:
            handler(self, node, ctx, depth)
        else:
            self.children(node, _enter(node, ctx), depth)

    def children(self, node: Node, ctx: _Ctx, depth: int) -> None:
        for child in node.children:
            self.visit(child, ctx, depth + 1)

    def _flat(self, node: Node, ctx: _Ctx) -> None:
        """Past the depth limit, still list every command (deny rules must see them).

        Iterative, so no nesting depth can exhaust the Python stack; the words are taken
        as they are and redirects are not attached (the problem already forces a prompt).
        """
        ctx = _Ctx(nested=True)
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "command":
                items = [_Item.of(w, "word", w) for c in current.named_children
                         for w in (c.named_children if c.type == "command_name" else [c])
                         if w.type in _WORDS]
                self._emit(current, items, ctx, normalise_word)
            stack.extend(reversed(current.children))

    # -- handlers -----------------------------------------------------------------

    def command(self, node: Node, ctx: _Ctx, depth: int) -> None:
        owns = ctx.owner == (node.start_byte, node.end_byte)
        items = [_Item.of(extra, "word", extra) for extra in ctx.extra] if owns else []
        for child in node.children:
            if child.type == "variable_assignment":
                items.append(_Item.of(child, "assign", node_text(child)))
            elif child.type == "command_name":
                items += [_Item.of(c, "word", c) for c in child.named_children]
            elif child.type in REDIRECT_NODES:
                items += self._redirect_items(child)
            elif child.is_named and child.type != "comment":
                items.append(_Item.of(child, "word", child))
        self._emit(node, items, ctx, normalise_word)
        self.children(node, replace(ctx, redirects=(), extra=()), depth)

    def declaration(self, node: Node, ctx: _Ctx, depth: int) -> None:
        """`export A=1`, `unset x`: builtins tree-sitter gives their own node kinds."""
        items = [_Item.of(c, "word", c) for c in node.children if c.type != "comment"]
        self._emit(node, items, ctx, _declaration_word)
        self.children(node, replace(ctx, redirects=(), extra=()), depth)

    def assignment(self, node: Node, ctx: _Ctx, depth: int) -> None:
        """A bare `A=1` (no command) is recorded as a command with an empty argv."""
        parent = node.parent
        if node.type == "variable_assignments" or parent is None or (
                parent.type not in _ASSIGNMENT_PARENTS):
            assignments = [node_text(c) for c in _assignments_of(node)]
            self.add(node_text(node), [], assignments, ctx.redirects, ctx)
        self.children(node, replace(ctx, redirects=(), extra=()), depth)

    def redirected(self, node: Node, ctx: _Ctx, depth: int) -> None:
        body = node.child_by_field_name("body")
        redirects: list[Redirect] = []
        extra: list[Node] = []
        for child in node.children:
            if child.type in REDIRECT_NODES and child != body:
                found, words, _, problems = parse_redirect(child, self.source)
                redirects += found
                extra += words
                self.problems += problems
        if body is None:  # `> f` alone still creates/truncates f
            self.add(node_text(node), [], [], (*redirects, *ctx.redirects), ctx)
        owner = _last_command(body) if body is not None and extra else None
        if extra and owner is None:
            self.problems.append(f"words after the redirection of a compound command: "
                                 f"{snippet(node)!r}")
        inner = replace(ctx, redirects=(*ctx.redirects, *redirects), extra=tuple(extra),
                        owner=(owner.start_byte, owner.end_byte) if owner else None)
        for child in node.children:
            self.visit(child, inner if child == body else ctx, depth + 1)

    def test(self, node: Node, ctx: _Ctx, depth: int) -> None:
        """`[ ... ]` is the `[` builtin; `[[ ... ]]` evaluates operands, so it is a problem."""
        atoms: list[Node] = []
        nested = replace(ctx, nested=True, redirects=(), extra=())
        if not (node.children and node.children[0].type == "[" and _test_atoms(node, atoms)):
            self.problems.append(f"unsupported test expression: {snippet(node)!r}")
            self.children(node, nested, depth)
            return
        words = [Word("[", False), *map(_test_word, atoms), Word("]", False)]
        self.add(node_text(node), words, [], ctx.redirects, ctx)
        for atom in atoms:
            if atom.type in _WORDS:
                self.visit(atom, nested, depth + 1)

    # -- building -------------------------------------------------------------------

    def _redirect_items(self, node: Node) -> list[_Item]:
        found, words, end, problems = parse_redirect(node, self.source)
        self.problems += problems
        return [_Item(node.start_byte, end, "redirect", found),
                *(_Item.of(w, "word", w) for w in words)]

    def _emit(self, node: Node, items: list[_Item], ctx: _Ctx,
              to_word: Callable[[Node], Word]) -> None:
        """Record one command per line: tree-sitter sometimes runs two lines together."""
        items.sort(key=lambda item: item.start)
        groups = self._split_lines(items)
        if len(groups) > 1:
            self.problems.append("the parser joined two lines into one command (bash runs "
                                 f"them separately): {snippet(node)!r}")
        for group in groups:
            text = node_text(node) if len(groups) == 1 else self.source[
                group[0].start:max(i.end for i in group)].decode("utf-8", "surrogatepass")
            words = self._join_continued([i.value for i in group if i.kind == "word"], to_word)
            redirects = [r for i in group if i.kind == "redirect" for r in i.value]
            self.add(text, words, [i.value for i in group if i.kind == "assign"],
                     (*redirects, *ctx.redirects), ctx)

    def _split_lines(self, items: list[_Item]) -> list[list[_Item]]:
        groups: list[list[_Item]] = [[]]
        end = None
        for item in items:
            if end is not None and item.start > end and b"\n" in self.source[
                    end:item.start].replace(b"\\\n", b""):
                groups.append([])
            groups[-1].append(item)
            end = item.end if end is None else max(end, item.end)
        return [g for g in groups if g] or [[]]

    def _join_continued(self, nodes: list[Node], to_word: Callable[[Node], Word]) -> list[Word]:
        """Normalise words, joining those only a backslash-newline separates (`r\\<NL>m`).

        tree-sitter splits them but bash joins them; the problem is reported by the
        checks, and the joined word lets deny rules still see `rm`.
        """
        out: list[Word] = []
        for i, node in enumerate(nodes):
            word = to_word(node)
            gap = self.source[nodes[i - 1].end_byte:node.start_byte] if i else b" "
            if out and gap and not gap.replace(b"\\\n", b""):
                last = out.pop()
                word = Word(last.text + word.text, last.dynamic or word.dynamic,
                            last.glob or word.glob)
            out.append(word)
        return out

    def add(self, text: str, words: list[Word], assignments: list[str],
            redirects: tuple[Redirect, ...], ctx: _Ctx) -> None:
        cmd = SimpleCommand(
            argv=tuple(w.text for w in words), dynamic=tuple(w.dynamic for w in words),
            assignments=tuple(assignments), redirects=tuple(redirects), text=text,
            nested=ctx.nested, globbed=tuple(w.glob for w in words))
        self.commands.append(cmd)
        self._name_problems(cmd, words)

    def _name_problems(self, cmd: SimpleCommand, words: list[Word]) -> None:
        """The command that runs must be known: no expansion or glob in its name."""
        if not cmd.argv:
            return
        inner = cmd.inner()
        cut = len(cmd.argv) - len(inner.argv)
        text = shorten(cmd.text)
        if cmd.dynamic[0] or inner.dynamic[0]:
            self.problems.append(f"the command name depends on an expansion: {text!r}")
        elif any(cmd.dynamic[:cut]):
            self.problems.append(f"a wrapper argument depends on an expansion: {text!r}")
        if words[cut].glob or words[0].glob:
            self.problems.append(f"the command name contains a glob: {text!r}")
        if inner.argv[0] in ALWAYS_ASK:
            self.problems.append(f"`{inner.argv[0]}` runs code the analysis cannot see")


class _Item(NamedTuple):
    """A piece of a command in source order: a word node, an assignment or redirects."""

    start: int
    end: int
    kind: str
    value: Any

    @classmethod
    def of(cls, node: Node, kind: str, value: Any) -> _Item:
        return cls(node.start_byte, node.end_byte, kind, value)


def _enter(node: Node, ctx: _Ctx) -> _Ctx:
    """Context for the children of a node the walker has no handler for."""
    if node.type in ("command_substitution", "process_substitution"):
        return _Ctx(nested=True)
    if node.type in _FLAT:
        return ctx
    return replace(ctx, nested=True)


def _last_command(node: Node) -> Node | None:
    """The command that words after `a && b 2>/dev/null` belong to (`b`), if any.

    tree-sitter hangs the redirect (and the words after it) on the whole list.
    """
    if node.type == "command":
        return node
    if node.type in ("list", "pipeline", "negated_command") and node.named_children:
        last = node.named_children[-1]
        return _last_command(last) if last.end_byte == node.end_byte else None
    return None


def _assignments_of(node: Node) -> list[Node]:
    if node.type == "variable_assignment":
        return [node]
    return [c for c in node.named_children if c.type == "variable_assignment"]


def _declaration_word(node: Node) -> Word:
    if not node.is_named or node.type == "variable_name":
        return Word(node_text(node), False)
    if node.type == "variable_assignment":
        value = node.child_by_field_name("value")
        name = node.child_by_field_name("name")
        word = normalise_word(value) if value is not None else Word("", False)
        prefix = node_text(name) + "=" if name is not None else ""
        return Word(node_text(node), True) if word.dynamic else Word(prefix + word.text, False)
    return normalise_word(node)


def _test_atoms(node: Node, out: list[Node], top: bool = True) -> bool:
    """Collect the words of a `[ ... ]` test; False on anything but plain words/operators.

    `<` and `>` inside `[ ]` are redirections for bash but comparisons for tree-sitter.
    """
    for child in node.children:
        kind = child.type
        if top and kind in ("[", "]"):
            continue
        if kind in _TEST_NODES:
            if not _test_atoms(child, out, top=False):
                return False
        elif kind in _WORDS or kind == "test_operator" or kind in _TEST_TOKENS:
            out.append(child)
        else:
            return False
    return True


def _test_word(node: Node) -> Word:
    if node.type in _WORDS:
        return normalise_word(node)
    return Word(node_text(node), False)


_HANDLERS = {
    "command": _Walker.command,
    "declaration_command": _Walker.declaration,
    "unset_command": _Walker.declaration,
    "variable_assignment": _Walker.assignment,
    "variable_assignments": _Walker.assignment,
    "redirected_statement": _Walker.redirected,
    "test_command": _Walker.test,
}
