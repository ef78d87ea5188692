"""HTML to markdown with the standard library only (`html.parser`), for WebFetch.

The model reads markdown best, and what it needs from a page is its structure (headings,
paragraphs, links, lists, code, tables), not its layout; converters such as markdownify
or html2text are not dependencies, so this is a small one of our own. Scripts, styles,
navigation, footers, forms' controls and hidden elements are dropped as noise.

The page is first parsed into a light tree (implied end tags of `p`, `li`, `td`, ...
handled roughly as browsers do), then rendered. Nesting is capped at `MAX_DEPTH` levels:
deeper elements are flattened into their ancestor, so a hostile page of 100,000 nested
`div`s cannot make the renderer recurse out of the stack.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin

__all__ = ["HtmlPage", "convert_html", "html_to_markdown", "meta_charset"]

MAX_DEPTH = 100

_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                   "param", "source", "track", "wbr"})
#: elements whose whole content is noise for a reader
_SKIP = frozenset({"head", "script", "style", "noscript", "template", "svg", "math", "canvas",
                   "iframe", "object", "embed", "nav", "footer", "aside", "button", "select",
                   "option", "textarea", "input", "dialog", "map", "audio", "video"})
_HEAD_TAGS = frozenset({"title", "meta", "link", "style", "script", "base", "noscript",
                        "template"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCK = frozenset({"p", "div", "section", "article", "main", "header", "body", "html",
                    "center", "figure", "figcaption", "address", "details", "summary", "form",
                    "fieldset", "legend", "hgroup", "pre", "blockquote", "ul", "ol", "menu",
                    "li", "dl", "dt", "dd", "table", "hr", "caption", *_HEADINGS})
#: a start tag -> (the open elements it closes, the elements that stop the search)
_IMPLIED: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "li": (frozenset({"li"}), frozenset({"ul", "ol", "menu"})),
    "dt": (frozenset({"dt", "dd"}), frozenset({"dl"})),
    "dd": (frozenset({"dt", "dd"}), frozenset({"dl"})),
    "tr": (frozenset({"tr"}), frozenset({"table", "thead", "tbody", "tfoot"})),
    "td": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "thead": (frozenset({"thead", "tbody", "tfoot"}), frozenset({"table"})),
    "tbody": (frozenset({"thead", "tbody", "tfoot"}), frozenset({"table"})),
    "tfoot": (frozenset({"thead", "tbody", "tfoot"}), frozenset({"table"})),
    "body": (frozenset({"head"}), frozenset({"html"})),
}
#: what closes an open `p`, and where the search for it stops
_P_CLOSERS = _BLOCK - {"li", "dt", "dd", "caption", "summary", "legend"}
_P_SCOPE = frozenset({"li", "td", "th", "div", "blockquote", "section", "article", "main",
                      "body", "html", "table", "ul", "ol", "dd", "dt", "figure", "details"})
_INLINE_MARKS = {"strong": "**", "b": "**", "em": "*", "i": "*", "del": "~~", "s": "~~",
                 "strike": "~~"}
_CODE = frozenset({"code", "kbd", "samp", "tt"})
_SPACES = re.compile(r"\s+")
_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9_:.\-]+)", re.I)
_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")


@dataclass
class HtmlPage:
    """A converted page: its `<title>` (if any) and its body as markdown."""

    title: str | None
    markdown: str


@dataclass(eq=False)
class _Node:
    tag: str
    attrs: dict[str, str]
    children: list[_Node | str] = field(default_factory=list)


def meta_charset(head: bytes) -> str | None:
    """The charset a page declares in a `<meta>` tag near its start (a known codec only)."""
    found = _META_CHARSET.search(head[:4096])
    if found is None:
        return None
    name = found.group(1).decode("ascii", "replace")
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


class _TreeBuilder(HTMLParser):
    """Builds the tree; forgiving, like the pages it reads."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("#root", {})
        self.stack: list[_Node] = [self.root]
        self.title: list[str] = []
        self.in_title = False
        self.base: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "title" and not any(n.tag in ("svg", "math") for n in self.stack):
            self.in_title = True
            return
        if tag == "base" and self.base is None and attributes.get("href"):
            self.base = attributes["href"]
        if self.stack[-1].tag == "head" and tag not in _HEAD_TAGS:
            self.stack.pop()  # content without a <body>: the head is over
        self._close_implied(tag)
        node = _Node(tag, attributes)
        self.stack[-1].children.append(node)
        if tag not in _VOID and len(self.stack) < MAX_DEPTH:
            self.stack.append(node)

    def _close_implied(self, tag: str) -> None:
        closes, stops = _IMPLIED.get(tag, (frozenset(), frozenset()))
        if tag in _P_CLOSERS:
            closes, stops = closes | {"p"}, stops | _P_SCOPE
        if not closes:
            return
        for index in range(len(self.stack) - 1, 0, -1):
            current = self.stack[index].tag
            if current in closes:
                del self.stack[index:]
                return
            if current in stops:
                return

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.in_title:
            self.in_title = False
            return
        for index in range(len(self.stack) - 1, 0, -1):
            if self.stack[index].tag == tag:
                del self.stack[index:]
                return  # an end tag nothing opened is ignored

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        else:
            self.stack[-1].children.append(data)


def convert_html(html: str, base_url: str | None = None) -> HtmlPage:
    """The page's title and markdown; links and images are made absolute against the
    page's `<base href>` or `base_url`."""
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    base = urljoin(base_url or "", builder.base) if builder.base else base_url
    renderer = _Renderer(base or "")
    markdown = "\n\n".join(renderer.blocks(builder.root))
    markdown = re.sub(r"\n{3,}", "\n\n", markdown).strip()
    title = _SPACES.sub(" ", "".join(builder.title)).strip() or None
    return HtmlPage(title=title, markdown=markdown)


def html_to_markdown(html: str, base_url: str | None = None) -> str:
    """The page body as markdown (see `convert_html`)."""
    return convert_html(html, base_url).markdown


def _skipped(node: _Node) -> bool:
    style = node.attrs.get("style", "").replace(" ", "").lower()
    return (node.tag in _SKIP or "hidden" in node.attrs
            or node.attrs.get("aria-hidden", "").lower() == "true"
            or "display:none" in style)


def _wrap(inner: str, mark: str) -> str:
    """`inner` marked up, its surrounding spaces kept outside the marks."""
    core = inner.strip()
    if not core:
        return inner
    lead = " " if inner[:1].isspace() else ""
    trail = " " if inner[-1:].isspace() else ""
    return f"{lead}{mark}{core}{mark}{trail}"


def _paragraph(text: str) -> str:
    lines = (_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


class _Renderer:
    """Renders the tree; blocks are strings joined by blank lines."""

    def __init__(self, base: str) -> None:
        self.base = base
        self._has_block: dict[int, bool] = {}

    def has_block(self, node: _Node) -> bool:
        key = id(node)
        if key not in self._has_block:
            self._has_block[key] = any(
                isinstance(c, _Node) and not _skipped(c)
                and (c.tag in _BLOCK or self.has_block(c)) for c in node.children)
        return self._has_block[key]

    def url(self, value: str) -> str:
        return urljoin(self.base, value.strip()) if self.base else value.strip()

    # ---------------------------------------------------------------- blocks

    def blocks(self, node: _Node) -> list[str]:
        """The node's children as blocks: runs of inline content become paragraphs."""
        out: list[str] = []
        inline: list[str] = []

        def flush() -> None:
            text = _paragraph("".join(inline))
            inline.clear()
            if text:
                out.append(text)

        for child in node.children:
            if isinstance(child, str):
                inline.append(_SPACES.sub(" ", child))
            elif _skipped(child):
                continue
            elif child.tag in _BLOCK or (child.tag != "a" and self.has_block(child)):
                flush()
                out.extend(self.block(child))
            else:
                inline.append(self.inline(child))
        flush()
        return out

    def block(self, node: _Node) -> list[str]:
        tag = node.tag
        if tag in _HEADINGS:
            text = _paragraph(self.inline_text(node)).replace("\n", " ")
            return [f"{'#' * _HEADINGS[tag]} {text}"] if text else []
        if tag == "pre":
            return [self.code_block(node)]
        if tag == "hr":
            return ["---"]
        if tag == "blockquote":
            inner = "\n\n".join(self.blocks(node))
            return ["\n".join(f"> {line}".rstrip() for line in inner.split("\n"))] if inner else []
        if tag in ("ul", "ol", "menu"):
            listed = self.list_block(node, ordered=tag == "ol")
            return [listed] if listed else []
        if tag == "li":
            return [self.item("-", self.blocks(node))]
        if tag == "dt":
            text = _paragraph(self.inline_text(node)).replace("\n", " ")
            return [f"**{text}**"] if text else []
        if tag == "table":
            return self.table(node)
        return self.blocks(node)

    def code_block(self, node: _Node) -> str:
        text = self.raw_text(node).strip("\n").rstrip()
        classes = " ".join([node.attrs.get("class", ""), *(
            c.attrs.get("class", "") for c in node.children if isinstance(c, _Node))])
        language = _LANGUAGE.search(classes)
        fence = "```"
        while fence in text:
            fence += "`"
        return f"{fence}{language.group(1) if language else ''}\n{text}\n{fence}"

    def item(self, marker: str, body: list[str]) -> str:
        lines = "\n".join(body).split("\n") if body else [""]
        pad = " " * (len(marker) + 1)
        return "\n".join([f"{marker} {lines[0]}".rstrip(),
                          *(f"{pad}{line}".rstrip() for line in lines[1:])])

    def list_block(self, node: _Node, *, ordered: bool) -> str:
        try:
            number = int(node.attrs.get("start", "1"))
        except ValueError:
            number = 1
        items: list[str] = []
        for child in node.children:
            if isinstance(child, str):
                if child.strip():
                    items.append(self.item("-", [_paragraph(child)]))
                continue
            if _skipped(child):
                continue
            if child.tag == "li":
                marker = f"{number}." if ordered else "-"
                number += 1
                items.append(self.item(marker, self.blocks(child)))
            else:  # e.g. a nested <ul> straight inside a <ul>: indent under the last item
                rendered = "\n\n".join(self.block(child) if child.tag in _BLOCK
                                       else [_paragraph(self.inline(child))])
                if rendered:
                    nested = "\n".join(f"  {line}".rstrip() for line in rendered.split("\n"))
                    items.append(nested)
        return "\n".join(items)

    def table(self, node: _Node) -> list[str]:
        rows: list[list[_Node]] = []
        caption: list[str] = []

        def collect(parent: _Node) -> None:
            for child in parent.children:
                if not isinstance(child, _Node) or _skipped(child):
                    continue
                if child.tag == "tr":
                    rows.append([c for c in child.children if isinstance(c, _Node)
                                 and c.tag in ("td", "th") and not _skipped(c)])
                elif child.tag in ("thead", "tbody", "tfoot"):
                    collect(child)
                elif child.tag == "caption":
                    caption.append(_paragraph(self.inline_text(child)))

        collect(node)
        width = max((len(r) for r in rows), default=0)
        if width <= 1:  # a layout table: its cells are just content
            return [*caption, *(b for r in rows for c in r for b in self.blocks(c))]
        lines = [f"| {' | '.join([self.cell(c) for c in r] + [''] * (width - len(r)))} |"
                 for r in rows]
        lines.insert(1, f"|{' --- |' * width}")
        return [c for c in caption if c] + ["\n".join(lines)]

    def cell(self, node: _Node) -> str:
        return _paragraph(self.inline_text(node)).replace("\n", " ").replace("|", "\\|")

    # ---------------------------------------------------------------- inline

    def inline_text(self, node: _Node) -> str:
        """Everything below `node` as inline text (blocks flattened)."""
        return "".join(_SPACES.sub(" ", c) if isinstance(c, str) else
                       ("" if _skipped(c) else f" {self.inline(c)} " if c.tag in _BLOCK
                        else self.inline(c)) for c in node.children)

    def inline(self, node: _Node) -> str:
        tag = node.tag
        if tag == "br":
            return "\n"
        if tag == "img":
            src, alt = node.attrs.get("src", ""), _SPACES.sub(" ", node.attrs.get("alt", ""))
            if "alt" in node.attrs and not alt.strip():
                return ""  # alt="" marks a decorative image
            if not src or src.startswith("data:"):
                return alt.strip()
            return f"![{alt.strip()}]({self.url(src)})"
        if tag in _CODE:
            code = _SPACES.sub(" ", self.raw_text(node))
            return _wrap(code, "``" if "`" in code else "`")
        inner = self.inline_text(node)
        if tag in _INLINE_MARKS:
            return _wrap(inner, _INLINE_MARKS[tag])
        if tag == "a":
            return self.link(node, inner)
        if tag == "q":
            return f"“{inner.strip()}”"
        return inner

    def link(self, node: _Node, inner: str) -> str:
        href = node.attrs.get("href", "").strip()
        text = _paragraph(inner).replace("\n", " ")
        if not href or href.startswith("#") or href.lower().startswith(("javascript:",
                                                                         "data:")):
            return inner
        if not text:
            return ""
        lead = " " if inner[:1].isspace() else ""
        trail = " " if inner[-1:].isspace() else ""
        return f"{lead}[{text}]({self.url(href).replace(' ', '%20')}){trail}"

    def raw_text(self, node: _Node) -> str:
        """Text below `node` exactly as written (for `pre` and `code`)."""
        parts: list[str] = []
        for child in node.children:
            if isinstance(child, str):
                parts.append(child)
            elif child.tag == "br":
                parts.append("\n")
            elif not _skipped(child):
                parts.append(self.raw_text(child))
        return "".join(parts)
