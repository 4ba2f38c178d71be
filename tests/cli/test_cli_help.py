"""Help a person can read: every command's help, at any width, is whole sentences in plain
words, and every ``crowdsift …`` command that help, ``doctor`` or the README names exists and
takes the arguments it is shown with."""

from __future__ import annotations

import itertools
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
import typer.core
from typer.testing import CliRunner

from crowdsift.cli.main import app
from crowdsift.cli.support import reflowed
from tests.support.paths import REPO

runner = CliRunner()
ROOT = typer.main.get_command(app)
README = REPO / "README.md"
DOCS = (README, REPO / "docs" / "REFERENCE.md")
"""The front page and the reference: every command either names must exist."""


Command = typer.core.TyperCommand | typer.core.TyperGroup


def _commands(group: Command = ROOT, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    if isinstance(group, typer.core.TyperGroup):
        for name, command in sorted(group.commands.items()):
            yield from _commands(command, (*path, name))


COMMANDS = list(_commands())


def _help(path: tuple[str, ...], columns: int) -> str:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.stdout


def _description(text: str) -> list[str]:
    """The lines between the usage line and the first box: the command's own help."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    end = next((i for i, line in enumerate(lines) if line.lstrip().startswith("╭")), len(lines))
    return [line.rstrip() for line in lines[start:end]]


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "crowdsift")
def test_help_has_no_internal_phase_numbers(path: tuple[str, ...]) -> None:
    text = _help(path, 200)
    assert not re.search(r"(?i)\bphases? [0-9]", text), text


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "crowdsift")
def test_help_breaks_lines_only_where_the_terminal_is_full(
    path: tuple[str, ...], columns: int
) -> None:
    """A line that ends before the terminal is full while its sentence goes on below is a
    break from the source text, not the terminal's ("a deep" / "drill")."""
    lines = _description(_help(path, columns))
    for line, after in itertools.pairwise(lines):
        if not line.strip() or not after.strip() or after.lstrip().startswith(("-", "•")):
            continue
        next_word = after.split()[0]
        assert len(line) + 1 + len(next_word) > columns - 2, f"broken early: {line!r}"


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "crowdsift")
def test_each_help_paragraph_ends_as_a_sentence(path: tuple[str, ...]) -> None:
    """At a width nothing wraps at, every paragraph is one line that ends its sentence."""
    for line in _description(_help(path, 1000)):
        if line.strip():
            assert line.rstrip()[-1] in ".:)!?`", f"unfinished: {line.strip()!r}"


def test_reflowed_joins_a_paragraphs_lines_and_keeps_list_items() -> None:
    text = "First line\n    goes on.\n\nA list:\n- one\n  continued\n- two"
    assert reflowed(text) == "First line goes on.\n\nA list:\n- one continued\n- two"


# --- every command named exists -------------------------------------------------------------

MENTION = re.compile(r"`(crowdsift(?: [^`]*)?)`")


def _resolve(words: list[str]) -> tuple[Command, list[str], list[str]]:
    """The command ``words`` name (the longest run of command names), its path, the rest."""
    command: Command = ROOT
    path: list[str] = []
    rest = list(words)
    while rest and isinstance(command, typer.core.TyperGroup) and rest[0] in command.commands:
        path.append(rest[0])
        command = command.commands[rest.pop(0)]
    return command, path, rest


def _check(mention: str, *, complete: bool = False) -> str | None:
    """Why ``mention`` (``crowdsift …``, as shown to a user) would fail; None when it parses.

    A ``complete`` line (a README example) must parse as it is; a mention in prose names a
    command and may leave out what it needs, but what it shows must be the command's own."""
    shell = mention.split(" > ")[0].split(" | ")[0]
    try:
        words = shlex.split(shell)[1:]
    except ValueError:
        return f"{mention!r} is not a command line"
    words = [re.sub(r"\{[a-z_]+\}", "x", word) for word in words]  # a message's placeholders
    command, path, rest = _resolve(words)
    if not path and rest and not rest[0].startswith("-"):
        return f"{mention!r}: crowdsift has no command {rest[0]!r}"
    if isinstance(command, typer.core.TyperGroup):
        if rest and not rest[0].startswith("-"):
            return f"{mention!r}: {' '.join(path)} has no command {rest[0]!r}"
        if not rest or rest == ["--help"]:
            return None  # a group named alone: its help lists its commands
    if "--help" in rest:
        return None
    name = " ".join(["crowdsift", *path])
    try:
        if complete:
            command.make_context(name, rest, resilient_parsing=False)
            return None
        known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        unknown = [w for w in rest if w.startswith("-") and w.split("=")[0] not in known]
        if unknown:
            return f"{mention!r}: No such option {unknown[0]} for {name}"
        context = command.make_context(name, [], resilient_parsing=True)
        _, arguments, _ = command.make_parser(context).parse_args(args=list(rest))
    except typer.TyperException as exc:
        return f"{mention!r}: {exc}"
    slots = [p.nargs for p in command.params if p.param_type_name == "argument"]
    if len(arguments) > (len(rest) if -1 in slots else sum(slots)):
        return f"{mention!r}: {name} takes no argument {arguments[sum(slots)]!r}"
    return None


def _mentions_in(text: str) -> set[str]:
    return {found.strip() for found in MENTION.findall(text)}


def test_commands_named_in_help_texts_exist() -> None:
    mentions: set[str] = set()
    for path in COMMANDS:
        mentions |= _mentions_in(_help(path, 1000))
    assert len(mentions) >= 3  # the walk found the mentions
    assert [why for mention in sorted(mentions) if (why := _check(mention))] == []


def test_commands_named_by_doctor_exist() -> None:
    result = runner.invoke(app, ["doctor"], env={"COLUMNS": "1000"})
    mentions = _mentions_in(result.stdout)
    assert mentions, result.stdout
    assert [why for mention in sorted(mentions) if (why := _check(mention))] == []


def readme_command_lines(path: Path = README) -> set[str]:
    """``crowdsift …`` lines of a document's shell code blocks."""
    text = path.read_text()
    lines: set[str] = set()
    for block in re.findall(r"```(?:bash|sh|console|shell)\n(.*?)```", text, re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ")
            if line.startswith("crowdsift ") or line == "crowdsift":
                lines.add(line.split(" #")[0].strip())
    return lines


@pytest.mark.parametrize("path", DOCS, ids=lambda path: path.name)
def test_commands_named_in_the_docs_exist(path: Path) -> None:
    lines = readme_command_lines(path)
    assert len(lines) >= 5
    assert [why for line in sorted(lines) if (why := _check(line, complete=True))] == []
    mentions = _mentions_in(path.read_text())
    assert [why for mention in sorted(mentions) if (why := _check(mention))] == []


@pytest.mark.parametrize(
    ("mention", "why"),
    [
        ("crowdsift feed index", "feed"),
        ("crowdsift fetch PLAN --json", "takes no argument 'PLAN'"),
        ("crowdsift ask --frobnicate", "No such option"),
        ("crowdsift archive frobnicate", "no command 'frobnicate'"),
        ("crowdsift nothing", "no command 'nothing'"),
    ],
)
def test_the_check_catches_what_a_user_could_not_run(mention: str, why: str) -> None:
    found = _check(mention)
    assert found is not None and why in found, found
