"""Output styles: instructions that change how the agent talks, chosen by name.

Built in: "default" (no change), "Explanatory" and "Learning". More come from Markdown
files in `~/.fuxi/output-styles/` ("user" source) and `<root>/.fuxi/output-styles/`
("project"), a later one overriding an earlier one of the same name::

    ---
    name: Terse
    description: Answers in as few words as possible
    keep-coding-instructions: true
    ---
    Answer in one or two sentences. ...

The name defaults to the file's stem; `keep-coding-instructions` (default false, as in
the comparable tool) says whether the built-in agent prompt stays, the style's text being
added to it, or is replaced by it. Names are matched case-insensitively; "default" cannot
be redefined. A style is text the user sees the effect of at once, so it applies without
trust (a project's file that is a symlink out of the project is not read, though).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import ConfigurationError
from ..common.config_folder import project_folder
from ..common.reading import Outside, config_errors, note, read_inside

__all__ = ["BUILTIN_STYLES", "DEFAULT_STYLE", "OutputStyle", "OutputStyleChoice",
           "choose_output_style", "load_output_styles"]

DEFAULT_STYLE = "default"
MAX_STYLE_CHARS = 40_000

_EXPLANATORY = """\
# Output style: Explanatory

Besides doing the task, help the user understand the code and your choices. Before or after
a meaningful step, add a short "Insight" note (two or three points) on why you did it this
way: the trade-off you weighed, the convention of this codebase you followed, what a
reader might otherwise miss. Keep insights specific to this code, not general
programming advice, and keep them brief so the work stays the focus."""

_LEARNING = """\
# Output style: Learning

The user wants to learn by doing, not only to get the task done. Do the scaffolding and the
routine parts yourself, but leave a few small, meaningful pieces (a function body of 2-10
lines, a condition, a design decision) for the user to write: put a `TODO(human)` comment
where the piece goes, say exactly what it should do and what to consider, and stop to let
them write it before going on. Ask for at most one piece at a time. Add a short "Insight"
note when a choice teaches something about this codebase. When they have written it,
review it kindly and point out one thing to improve, if there is one."""


@dataclass(frozen=True)
class OutputStyle:
    """One style: its instructions and whether the built-in coding instructions stay."""

    name: str
    description: str
    text: str
    keep_coding_instructions: bool = True
    source: str = "builtin"
    path: Path | None = None


BUILTIN_STYLES: tuple[OutputStyle, ...] = (
    OutputStyle(DEFAULT_STYLE, "The agent's usual, concise way of working", ""),
    OutputStyle("Explanatory", "Explains the choices made while working", _EXPLANATORY),
    OutputStyle("Learning", "Leaves small pieces for the user to write (TODO(human))",
                _LEARNING),
)


@dataclass(frozen=True)
class OutputStyleChoice:
    """The chosen style, the names to choose from (`available_output_styles`), and
    warnings. `unknown` is a name the settings asked for that no style has: the default
    style applies, and the init message still reports the name asked for, as the
    comparable CLI does (the warning says it is not applied)."""

    style: OutputStyle
    available: tuple[str, ...]
    warnings: tuple[str, ...] = field(default=())
    unknown: str | None = None

    @property
    def name(self) -> str:
        return self.style.name

    @property
    def reported(self) -> str:
        """The init message's `output_style`: the setting in force."""
        return self.unknown or self.style.name

    @property
    def text(self) -> str:
        return self.style.text

    @property
    def keep_coding_instructions(self) -> bool:
        return self.style.keep_coding_instructions


class StyleFileError(ValueError):
    """Why a style file was skipped."""


def _flag(value: object) -> bool:
    if value is None or value == "":
        return False
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no"):
        return value.strip().lower() in ("true", "yes")
    raise StyleFileError(f"keep-coding-instructions must be true or false, not {value!r}")


def _style_file(path: Path, source: str, zone: Path | None) -> OutputStyle:
    # lazy: agent/__init__ loads the whole loop, which will import this package
    from .front_matter import FrontMatterError, split_front_matter

    read = read_inside(path, zone, MAX_STYLE_CHARS)
    if read is None:
        raise StyleFileError("it disappeared while being read")
    if read.truncated:  # half a style is never used
        raise StyleFileError(f"it is larger than {MAX_STYLE_CHARS:,} characters")
    try:
        data, body = split_front_matter(read.text)
    except FrontMatterError as error:
        raise StyleFileError(str(error)) from None
    data = data or {}
    name, description = data.get("name") or path.stem, data.get("description") or ""
    if not isinstance(name, str) or not isinstance(description, str):
        raise StyleFileError("name and description must be single values")
    if not body.strip():
        raise StyleFileError("it has no text (the style's instructions)")
    return OutputStyle(name.strip(), description, body.strip(),
                       _flag(data.get("keep-coding-instructions")), source, path)


def load_output_styles(sources: Iterable[str], root: Path, *, user_folder: Path | None = None
                       ) -> tuple[dict[str, OutputStyle], list[str]]:
    """The styles by lower-cased name (built-ins, then user, then project files), and
    warnings for files that were skipped."""
    styles = {style.name.lower(): style for style in BUILTIN_STYLES}
    sources = set(sources)
    folders: list[tuple[str, Path, Path | None]] = []
    if "user" in sources and user_folder is not None:
        folders.append(("user", user_folder / "output-styles", None))
    if "project" in sources:
        folders.append(("project", project_folder(root) / "output-styles", root))
    warnings: list[str] = []
    seen: set[Path] = set()
    for source, folder, zone in folders:
        note(folder)  # its listing: the folder's stamps change with its entries
        if not folder.is_dir() or folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        for path in sorted(folder.glob("*.md")):
            try:
                with config_errors(str(path)):
                    style = _style_file(path, source, zone)
            except Outside as why:
                warnings.append(f"skipped the output style file {path}: {why}")
                continue
            except ConfigurationError as error:  # "<path>: why"
                warnings.append(f"skipped the output style file {error}")
                continue
            if style.name.lower() == DEFAULT_STYLE:
                warnings.append(f"skipped the output style file {path}: 'default' means "
                                "no style and cannot be redefined")
                continue
            styles[style.name.lower()] = style
    return styles, warnings


def choose_output_style(name: str | None, sources: Iterable[str], root: Path, *,
                        user_folder: Path | None = None) -> OutputStyleChoice:
    """The style called `name` (case-insensitive; None = "default"). An unknown name is a
    warning, and "default" is used: a style only changes how answers read, so a typo
    should not stop the session."""
    styles, warnings = load_output_styles(sources, root, user_folder=user_folder)
    available = tuple(style.name for style in styles.values())
    chosen = styles.get((name or DEFAULT_STYLE).strip().lower())
    if chosen is None:
        warnings.append(f"unknown output style {name!r}; the default style is used "
                        f"(available: {', '.join(available)})")
        return OutputStyleChoice(styles[DEFAULT_STYLE], available, tuple(warnings),
                                 unknown=name)
    return OutputStyleChoice(chosen, available, tuple(warnings))
