"""Output styles: the built-ins, custom files, choosing by name, unknown names."""

from __future__ import annotations

from fuxi_notebook._internal.settings.output_styles import choose_output_style
from fuxi_notebook._internal.settings.project import load_project_settings

from .helpers import project_settings, user_dir


def _style(folder, name, text):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


def test_builtins(tmp_path):
    choice = choose_output_style(None, [], tmp_path)
    assert (choice.name, choice.text, choice.keep_coding_instructions) == ("default", "", True)
    assert choice.available == ("default", "Explanatory", "Learning")
    learning = choose_output_style("learning", [], tmp_path)
    assert learning.name == "Learning" and "TODO(human)" in learning.text
    assert learning.keep_coding_instructions
    assert "Insight" in choose_output_style("EXPLANATORY", [], tmp_path).text


def test_custom_styles_from_user_and_project(tmp_path):
    _style(user_dir() / "output-styles", "terse.md",
           "---\ndescription: Short answers\n---\nAnswer in one sentence.\n")
    _style(tmp_path / ".fuxi" / "output-styles", "teacher.md",
           "---\nname: Teacher\nkeep-coding-instructions: true\n---\nTeach as you go.\n")
    choice = choose_output_style("terse", ["user", "project"], tmp_path, user_folder=user_dir())
    assert choice.available == ("default", "Explanatory", "Learning", "terse", "Teacher")
    assert (choice.name, choice.text, choice.keep_coding_instructions) == (
        "terse", "Answer in one sentence.", False)
    teacher = choose_output_style("teacher", ["project"], tmp_path)
    assert teacher.keep_coding_instructions and teacher.style.source == "project"
    # without the project source, its styles are not offered
    assert "Teacher" not in choose_output_style(None, ["user"], tmp_path,
                                                user_folder=user_dir()).available


def test_project_overrides_user_and_builtin_but_not_default(tmp_path):
    _style(user_dir() / "output-styles", "learning.md", "---\nname: Learning\n---\nuser's\n")
    _style(tmp_path / ".fuxi" / "output-styles", "l.md", "---\nname: learning\n---\nproject's\n")
    _style(tmp_path / ".fuxi" / "output-styles", "d.md", "---\nname: Default\n---\nhijack\n")
    choice = choose_output_style("Learning", ["user", "project"], tmp_path,
                                 user_folder=user_dir())
    assert choice.text == "project's"
    assert choose_output_style("default", ["project"], tmp_path).text == ""
    assert any("cannot be redefined" in w for w in choice.warnings)


def test_unknown_name_warns_and_uses_default(tmp_path):
    choice = choose_output_style("Pirate", [], tmp_path)
    assert choice.name == "default" and choice.text == choose_output_style(None, [], tmp_path).text
    assert choice.reported == "Pirate"  # the init message names the setting in force
    assert "unknown output style 'Pirate'" in choice.warnings[0]


def test_malformed_files_are_skipped_with_a_warning(tmp_path):
    folder = tmp_path / ".fuxi" / "output-styles"
    _style(folder, "empty.md", "---\nname: Empty\n---\n")
    _style(folder, "open.md", "---\nname: Open\n")
    _style(folder, "flag.md", "---\nkeep-coding-instructions: maybe\n---\ntext\n")
    choice = choose_output_style(None, ["project"], tmp_path)
    assert choice.available == ("default", "Explanatory", "Learning")
    assert len(choice.warnings) == 3


def test_setting_and_option_choose_the_style(tmp_path):
    project_settings(tmp_path, {"outputStyle": "Explanatory"})
    assert load_project_settings(["project"], tmp_path).output_style.name == "Explanatory"
    chosen = load_project_settings(["project"], tmp_path, output_style="learning")
    assert chosen.output_style.name == "Learning"
    project_settings(tmp_path, {"outputStyle": "nope"})
    fallback = load_project_settings(["project"], tmp_path)
    assert fallback.output_style.name == "default"
    assert any("unknown output style 'nope'" in w for w in fallback.warnings)
