"""Issue 18, finding 8: a shell word is judged by every path it can reach.

acceptEdits auto-approves file commands inside the working directory, so a glob word, a
copied folder, an option that names the destination or a link must never hide a write
into a protected folder. The working directory here plays `$HOME` with the fuxi
configuration folder `~/.fuxi` in it, as when the kernel starts in the home directory.
"""

from __future__ import annotations

import asyncio
import fnmatch
import getpass
import os
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fuxi_notebook._internal.permissions.bash import BashVerdict, judge_bash
from fuxi_notebook._internal.permissions.judge import RuleBook
from fuxi_notebook._internal.permissions.shell import glob as shell_glob
from fuxi_notebook._internal.permissions.shell import reach as shell_reach

from .test_security_cases import bash, make_engine, outcome


def _tree(home: Path) -> None:
    """The home folder: the config folder, a payload, stages with a `.fuxi` inside."""
    files = {
        ".fuxi/README": "original\n", ".fuxi/settings.json": "{}\n", ".fuxi/c.json": "{}\n",
        "payload.json": '{"marker": "planted"}\n',
        "repo/stage/.fuxi/settings.json": '{"marker": "planted"}\n',
        "stage/.fuxi/settings.json": '{"marker": "planted"}\n',
        "src/a.txt": "a\n", "src/sub/b.txt": "b\n", "a.txt": "a\n", "old.txt": "old\n",
        "notes.txt": "alpha\n", "f.txt": "a\n", "x.pyc": "", "src/y.pyc": "",
        "settings.json": '{"marker": "planted"}\n',
    }
    for name, text in files.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory that is `$HOME`, with the config folder at `~/.fuxi`."""
    where = tmp_path / "home"
    where.mkdir()
    _tree(where)
    monkeypatch.setenv("HOME", str(where))
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(where / ".fuxi"))
    return where


def accept_edits(home: Path, command: str, **options: object) -> str:
    return asyncio.run(bash(home, command, permission_mode="acceptEdits", **options))


ATTACKS = {
    "glob-dest": "cp payload.json .fux?/settings.json",
    "glob-star": "cp payload.json .fu*/settings.json",
    "glob-bracket": "cp payload.json .[f]uxi/settings.json",
    "glob-last-bracket": "cp payload.json .fux[i]/settings.json",
    "glob-partly-quoted": "cp payload.json '.fux'?/settings.json",
    "glob-is-the-dest-dir": "cp payload.json .fux?",
    "dir-copy-dot": "cp -r repo/stage/. .",
    "dir-copy-R-slash": "cp -R repo/stage/. ./",
    "dir-copy-long": "cp --recursive repo/stage/. .",
    "dir-copy-archive": "cp --archive repo/stage/. .",
    "dir-copy-a-home": "cp -a stage/. ~",
    "dir-copy-glob-source": "cp -r repo/st*/. .",
    "dir-copy-dot-glob": "cp -r repo/stage/.[!.]* .",
    "dir-copy-t": "cp -rt . repo/stage/.fuxi",
    "target-t": "cp -t .fuxi payload.json",
    "target-t-attached": "cp -t.fuxi payload.json",
    "target-long": "cp --target-directory=.fuxi payload.json",
    "target-abbreviated": "cp --target .fuxi payload.json",
    "target-glob": "cp -t .fux? payload.json",
    "target-after-operand": "cp payload.json -t .fuxi",
    "mv-t": "mv -t .fuxi settings.json",
    "mv-folder-out-of-stage": "mv stage/.fuxi .",
    "mv-folder-to-config": "mv stage .fuxi",
    "mv-home": "mv stage/.fuxi ~/",
    "sed-glob": "sed -i 's/original/planted/' .fux?/README",
    "sed-long-in-place": "sed --in-place 's/original/planted/' .fux?/README",
    "sed-cluster": "sed -si 's/original/planted/' .fux?/README",
    "sed-e-then-i": "sed -e 's/original/planted/' -i .fux?/README",
    "sed-expression-long": "sed --expression=s/original/planted/ -i .fuxi/README",
    "sed-backup-into-config": "sed -i'.fuxi/*' 's/x/x/' settings.json",
    "sed-backup-glob": "sed -i.bak 's/a/b/' .fux?/README",
    "redirect-glob": "cat payload.json > .fux?/c.json",
    "redirect-append-glob": "cat payload.json >> .fux?/c.json",
    "redirect-both-glob": "cat payload.json &> .fux?/c.json",
    "redirect-stderr-glob": "cat payload.json 2> .fux?/c.json",
    "redirect-echo-glob": "echo planted > .fu*/x",
    "touch-glob": "touch .fux?/x",
    "mkdir-glob": "mkdir -p .fux?/commands",
    "mkdir-bracket": "mkdir -p .[f]uxi/commands",
    "rm-glob": "rm .fux?/README",
    "rm-r-glob": "rm -r .fu??",
    "rm-r-everything": "rm -r *",
    "brace": "cp payload.json .{fuxi,x}/settings.json",
    "quotes-empty": "cp payload.json .fu''xi/settings.json",
    "quotes-double": 'cp payload.json ".fuxi"/settings.json',
    "backslash": "cp payload.json .fu\\xi/settings.json",
    "ansi-c": "cp payload.json $'\\x2efuxi'/settings.json",
    "tilde": "cp payload.json ~/.fuxi/settings.json",
    "tilde-user": f"cp payload.json ~{getpass.getuser()}/.fuxi/settings.json",
    "variable": "cp payload.json $HOME/.fuxi/settings.json",
    "cd-then-copy": "cd .fuxi && cp ../payload.json settings.json",
    "unknown-option": "cp --frobnicate payload.json notes.txt",
    "option-from-glob": "cp ?t.fuxi payload.json",
    "xargs": "echo .fuxi | xargs cp payload.json",
    "hard-link-then-write": "cp -l .fuxi/settings.json mine.json && cat payload.json > mine.json",
    "symlink-then-write": "cp -s ~/.fuxi/settings.json mine.json && cat payload.json > mine.json",
    "copied-link-then-write": "cp -a link-kit/. . && cp payload.json conf/settings.json",
}


@pytest.mark.parametrize("command", ATTACKS.values(), ids=ATTACKS.keys())
def test_accept_edits_never_writes_into_the_config_folder_through_the_shell(home, command):
    (home / "-t.fuxi").write_text("")  # for `?t.fuxi`: bash passes it as the option `-t.fuxi`
    (home / "link-kit").mkdir()
    (home / "link-kit" / "conf").symlink_to("../.fuxi")  # lands as ./conf -> ../.fuxi
    assert accept_edits(home, command) == "ask"


@pytest.mark.parametrize("command", [
    "cp payload.json .fux?/settings.json", "cp -r repo/stage/. .", "touch .fux?/x",
    "cat payload.json > .fux?/c.json", "cp -t .fuxi payload.json", "mv stage .fuxi",
    "cp payload.json .{fuxi,x}/settings.json", "cp payload.json $HOME/.fuxi/settings.json",
])
def test_a_bare_bash_allow_rule_does_not_cover_those_writes_either(home, command):
    assert accept_edits(home, command, allowed_tools=["Bash"]) == "ask"
    assert asyncio.run(bash(home, command, allowed_tools=["Bash"])) == "ask"


@pytest.mark.parametrize("pattern", [".fux?", ".fu*", ".[f]uxi", ".fux[!a]", "[.]fuxi/../.fu??"])
def test_a_pattern_that_can_name_the_config_folder_asks_even_if_it_matches_nothing(
        tmp_path, monkeypatch, pattern):
    """The folder can appear between the check and the run (or in another spelling)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / "elsewhere"))
    (tmp_path / "payload.json").write_text("x")
    command = f"cp payload.json {pattern}/settings.json"
    assert accept_edits(tmp_path, command) == "ask"
    assert accept_edits(tmp_path, f"touch {pattern}") == "ask"


def test_a_pattern_that_can_name_the_user_config_folder_asks(tmp_path, monkeypatch):
    """FUXI_CONFIG_DIR need not be called `.fuxi`: its own name counts too."""
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / "cfg"))
    assert accept_edits(tmp_path, "touch c?g/settings.json") == "ask"
    assert accept_edits(tmp_path, "touch d?g/settings.json") == "allow"


LEGIT = {
    "copy-file": "cp a.txt b.txt",
    "copy-folder": "cp -r src dst",
    "copy-folder-contents": "cp -r src/. dst",
    "copy-into-folder": "cp *.txt src/",
    "copy-t": "cp -t src a.txt",
    "copy-backup": "cp --backup=numbered -S .orig a.txt b.txt",
    "remove-glob-below": "rm src/*.pyc",
    "remove-folder": "rm -rf src",
    "move": "mv old.txt new.txt",
    "move-folder": "mv src src2",
    "sed-glob": "sed -i 's/a/b/' *.txt",
    "sed-glob-py": "sed -i 's/a/b/' *.py",  # could name sitecustomize.py: judged if it exists
    "remove-glob-json": "rm src/*.json",
    "sed-backup": "sed -i.bak 's/a/b/' notes.txt",
    "touch": "touch notes.txt",
    "touch-reference": "touch -r a.txt notes.txt",
    "mkdir": "mkdir -p build/out",
    "mkdir-mode": "mkdir -m 755 build",
    "redirect": "echo x > out.txt",
    "redirect-glob-to-a-file": "cat a.txt > no?es.txt",
    "tilde-literal-name": "cp a.txt ~/copy.txt",
}


@pytest.mark.parametrize("command", LEGIT.values(), ids=LEGIT.keys())
def test_ordinary_edits_stay_accepted(home, command):
    assert accept_edits(home, command) == "allow"


def test_a_glob_that_matches_a_protected_file_now_asks(home):
    """`*.json` may name kernel.json: it is judged by the files it matches."""
    (home / "src" / "kernel.json").write_text("{}")
    assert accept_edits(home, "rm src/*.json") == "ask"
    assert accept_edits(home, "sed -i 's/a/b/' src/*.json") == "ask"


def test_removing_a_glob_in_a_project_folder_is_an_edit(tmp_path, monkeypatch):
    """(In `$HOME` itself, `rm *.pyc` is a critical removal: it always asks.)"""
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "x.pyc").write_text("")
    assert accept_edits(tmp_path, "rm *.pyc") == "allow"
    assert accept_edits(tmp_path, "rm -r x.py?") == "allow"


def test_a_symlink_in_the_working_directory_counts_by_its_target(home):
    (home / "link").symlink_to(home / ".fuxi")
    assert accept_edits(home, "cp payload.json link/settings.json") == "ask"
    assert accept_edits(home, "cp payload.json lin?/settings.json") == "ask"
    assert accept_edits(home, "echo x > l*/settings.json") == "ask"


def test_a_copied_folder_writes_through_a_symlink_it_lands_on(home):
    (home / "conf").symlink_to(home / ".fuxi")
    (home / "kit" / "conf").mkdir(parents=True)
    (home / "kit" / "conf" / "settings.json").write_text("{}")
    assert accept_edits(home, "cp -r kit/. .") == "ask"


@pytest.mark.parametrize("value", ["../.fuxi", "{home}/.fuxi", "../../.fuxi"])
def test_a_symlink_inside_a_copied_stage_is_judged_by_where_it_points(home, value):
    """Copied as a link, it would let the next command write through it unchecked."""
    stage = home / "kit" / "inner"
    stage.mkdir(parents=True)
    (stage / "conf").symlink_to(value.format(home=home))
    assert accept_edits(home, "cp -r kit/inner/. .") == "ask"
    assert accept_edits(home, "cp -r kit/inner/. . && cp payload.json conf/settings.json") == "ask"
    assert accept_edits(home, "mv kit/inner/conf .") == "ask"


@pytest.mark.parametrize(("command", "rule"), [
    ("rsync -a repo/stage/ .", "Bash(rsync -a repo/stage/ .)"),  # rsync runs -e: exact only
    ("rsync -a repo/stage .", "Bash(rsync -a repo/stage .)"),
    ("ln -s .fuxi conf", "Bash(ln *)"),
    ("ln .fuxi/settings.json mine.json", "Bash(ln *)"),
    ("install payload.json .fux?/settings.json", "Bash(install *)"),
])
def test_copiers_a_rule_allows_are_judged_by_what_they_reach_too(home, command, rule):
    assert asyncio.run(bash(home, command, allowed_tools=[rule])) == "ask"


@pytest.mark.parametrize(("command", "rule"), [
    ("rsync -a src/ copy", "Bash(rsync -a src/ copy)"), ("ln -s a.txt alias.txt", "Bash(ln *)"),
])
def test_copiers_a_rule_allows_still_run_inside(home, command, rule):
    assert asyncio.run(bash(home, command, allowed_tools=[rule])) == "allow"


def test_a_copy_that_follows_a_link_to_a_folder_asks(home):
    (home / "kit").mkdir()
    (home / "kit" / "data").symlink_to(home / "src")
    assert accept_edits(home, "cp -rL kit/. out") == "ask"
    assert accept_edits(home, "cp -r kit/. out") == "allow"  # copies the link, into src


def test_a_hard_link_is_no_plain_file_to_write(home, tmp_path):
    """`shared.txt` is the same file as one outside; writing it changes that file."""
    other = tmp_path / "elsewhere.txt"
    other.write_text("x")
    os.link(other, home / "shared.txt")
    assert accept_edits(home, "cp a.txt shared.txt") == "ask"
    assert accept_edits(home, "echo x > shared.txt") == "ask"
    assert accept_edits(home, "echo x > share?.txt") == "ask"
    assert accept_edits(home, "rm shared.txt") == "allow"  # removes a name, not the file


def test_a_folder_too_large_to_list_asks(home, monkeypatch):
    monkeypatch.setattr(shell_reach, "MAX_ENTRIES", 5)
    for i in range(6):
        (home / "src" / f"n{i}.txt").write_text("")
    assert accept_edits(home, "cp -r src dst") == "ask"
    assert accept_edits(home, "rm -r src") == "ask"
    assert accept_edits(home, "cp -r src dst", allowed_tools=["Bash"]) == "ask"


def test_the_entry_bound_holds_for_all_folders_of_a_command(home, monkeypatch):
    monkeypatch.setattr(shell_reach, "MAX_ENTRIES", 5)
    for name in ("one", "two"):
        for i in range(3):
            (home / name / f"n{i}.txt").parent.mkdir(exist_ok=True)
            (home / name / f"n{i}.txt").write_text("")
    assert accept_edits(home, "cp -r one dst") == "allow"
    assert accept_edits(home, "cp -r one two dst") == "ask"


def test_globignore_turns_dotglob_on(home, monkeypatch):
    """With GLOBIGNORE set, bash's `*` matches `.fuxi` too."""
    assert accept_edits(home, "cp -r repo/stage/* .") == "allow"
    monkeypatch.setenv("GLOBIGNORE", "x")
    assert accept_edits(home, "cp -r repo/stage/* .") == "ask"


def test_a_glob_with_too_many_matches_asks(home, monkeypatch):
    monkeypatch.setattr(shell_glob, "MAX_MATCHES", 3)
    (home / "logs").mkdir()
    for i in range(4):
        (home / "logs" / f"m{i}.log").write_text("")
    assert accept_edits(home, "rm logs/*.log") == "ask"
    assert accept_edits(home, "rm logs/m0.l?g") == "allow"


def test_a_glob_in_a_redirect_target_is_seen(home):
    verdict = judge(home, "echo x > .fux?/c.json")
    assert verdict.soft_ask and not _auto(verdict)


# -- the parts: options, expansion, walking --------------------------------------------------

def judge(home: Path, command: str) -> BashVerdict:
    book = RuleBook({"allow": [], "deny": [], "ask": []}, [home.resolve()])
    return judge_bash(command, base=home, rules=book.rules, paths=book, refuse=lambda _: None)


def _auto(verdict: BashVerdict) -> bool:
    return verdict.accept_edits and not verdict.soft_ask


@pytest.mark.parametrize(("command", "written"), [
    ("cp -t .fuxi payload.json", ".fuxi/payload.json"),
    ("cp payload.json -t .fuxi", ".fuxi/payload.json"),
    ("cp -S .x -t out a.txt", "out/a.txt"),
    ("mv --target-directory=out a.txt", "out/a.txt"),
    ("cp -rT src out", "out/sub/b.txt"),
    ("cp -r src out", "out/src/sub/b.txt"),
    ("cp -r src/ out", "out/sub/b.txt"),
    ("sed -i.orig s/a/b/ f.txt", "f.txt.orig"),
    ("sed -i'bak/*' s/a/b/ f.txt", "bak/f.txt"),
    ("touch -r a.txt -d now new.txt", "new.txt"),
    ("cp --parents src/a.txt out", "out/src/a.txt"),
    ("mkdir -m 700 -p a/b", "a/b"),
])
def test_file_command_options_are_parsed(home, command, written):
    reach = shell_reach.command_reach(_only(command), home)
    assert home / written in {f.link for f in reach.all_writes()}
    assert not reach.unknown
    values = {home / "700", home / "now", home / ".x"}  # option values are no paths
    assert not values & {f.link for f in reach.all_writes()}


def test_the_reference_file_of_touch_is_read_not_written(home):
    reach = shell_reach.command_reach(_only("touch -r a.txt notes.txt"), home)
    assert [f.link for f in reach.writes] == [home / "notes.txt"]
    assert [f.link for f in reach.reads] == [home / "a.txt"]


@pytest.mark.parametrize("command", [
    "cp --no-such-option a b", "mv -Q a b", "rm -W x", "touch --bogus x", "mkdir -k x",
    "sed -Q -i s/a/b/ x", "cp --re a b",  # ambiguous: --recursive, --reflink, --remove-...
])
def test_an_option_the_parser_does_not_know_is_unresolvable(home, command):
    assert shell_reach.command_reach(_only(command), home).unknown


def _only(command: str):
    from fuxi_notebook._internal.permissions.shell.analysis import analyse

    commands = analyse(command).commands
    assert len(commands) == 1
    return commands[0]


GLOB_TREE = [".fuxi/settings.json", "fuxi/x", ".fu/y", "u/.i", "x.txt", "[x]", "]", "f]i",
             "i.txt", ".x", "uu/ii/x"]
GLOB_ALPHABET = ".fuxi?*[]/!"


@pytest.fixture(scope="module")
def glob_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("globs")
    for name in GLOB_TREE:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    return root


def _bash_expands(root: Path, pattern: str) -> set[str]:
    script = f"shopt -s nullglob; for f in {pattern}; do printf '%s\\0' \"$f\"; done"
    out = subprocess.run(["bash", "-c", script], cwd=root, capture_output=True, check=True)
    return {w for w in out.stdout.decode().split("\0") if w}


@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=GLOB_ALPHABET, min_size=1, max_size=8))
@example(".fu?/*")
@example("*")
@example(".*")
@example("[.]*")
@example("[x]")
@example("f]?")
@example("*/*/*")
@example("[!.]*")
def test_property_expansion_covers_every_word_bash_makes(glob_tree, pattern):
    """Whatever bash makes of a pattern, the judge looks at it too (the literal word is
    always judged, so it counts)."""
    expansion = shell_glob.expand(pattern, glob_tree)
    assert not expansion.overflow
    judged = {os.path.normpath(w) for w in (pattern, *expansion.words)}
    assert {os.path.normpath(w) for w in _bash_expands(glob_tree, pattern)} <= judged


def _bash_can_match(component: str, name: str) -> bool:
    """bash semantics: fnmatch, and a leading `.` only matches a literal leading `.`."""
    if name.startswith(".") and not component.startswith("."):
        return False
    return fnmatch.fnmatchcase(name, component)


@pytest.fixture(scope="module")
def config_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("config-home")
    (where / ".fuxi").mkdir()
    (where / "payload").write_text("x")
    return where


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=".fuxi?*[]/", min_size=1, max_size=9))
@example(".fux?")
@example(".[f]uxi")
@example(".fu*")
@example("*/.fux?")
@example(".fuxi")
@example("[.]fuxi")
@example(".f[u]x?")
@example("x/../.fu??")
def test_property_no_pattern_that_can_match_the_config_folder_is_auto_approved(
        config_home, monkeypatch, pattern):
    monkeypatch.setenv("HOME", str(config_home))
    monkeypatch.setenv("FUXI_CONFIG_DIR", str(config_home / ".fuxi"))
    if not any(_bash_can_match(part, ".fuxi") for part in pattern.split("/")):
        return
    engine = make_engine(config_home, permission_mode="acceptEdits")
    command = f"cp payload {pattern}/settings.json"
    assert asyncio.run(outcome(engine, "Bash", {"command": command})) == "ask"


def test_judging_a_large_folder_copy_is_bounded_in_time(home):
    big = home / "big"
    for i in range(100):
        folder = big / f"d{i}"
        folder.mkdir(parents=True)
        for j in range(99):
            (folder / f"f{j}.txt").write_text("")
    started = time.perf_counter()
    verdict = judge(home, "cp -r big out")
    elapsed = time.perf_counter() - started
    assert _auto(verdict), verdict
    assert elapsed < 5, elapsed


@pytest.mark.parametrize("command", [
    "touch .bash*", "cp notes.txt .bash*", "cp notes.txt .z?hrc", "echo x > .npm[r]c",
    "mv notes.txt .git*", "touch sub/.profil?",
])
def test_a_pattern_that_can_name_a_protected_dot_file_asks_though_nothing_matches(
        home, command):
    """Issue 35, finding 12 (a mutation that survived): in a folder where nothing matches
    yet, `.bash*` is still a name `.bashrc` can take, so acceptEdits asks."""
    (home / "sub").mkdir()
    assert not list(home.glob(".bash*")) and not list(home.glob(".z?hrc"))
    assert accept_edits(home, command) == "ask"


def test_a_pattern_that_names_no_protected_file_is_an_ordinary_edit(home):
    assert accept_edits(home, "touch plain_bash*") == "allow"
