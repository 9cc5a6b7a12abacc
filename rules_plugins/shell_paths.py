"""The ``shell-paths`` plugin: the paths a shell command touches, read from its text
(docs/shell.md). The command is never run, and nothing on disk is looked at.

| form | paths taken |
| --- | --- |
| redirections ``> f``, ``>> f``, ``>| f``, ``< f``, ``<> f``, ``&> f``, ``&>> f``, ``>& f`` | ``f`` (never a descriptor ``2>&1``, a here-document ``<<EOF`` or a here-string ``<<<``) |
| ``cat``, ``head``, ``tail``, ``less``, ``more``, ``bat``, ``wc``, ``nl`` | every file operand |
| ``sed`` | file operands (the first operand is the script unless ``-e``/``-f`` gave it) |
| ``awk``, ``gawk``, ``mawk`` | file operands (the first is the program unless ``-f``; ``x=1`` operands are not files) |
| ``grep``, ``egrep``, ``fgrep``, ``rg`` | file operands (the first is the pattern unless ``-e``/``-f`` gave it) |
| ``cp``, ``mv``, ``touch``, ``tee`` | every operand (and ``cp``/``mv -t DIR``) |
| ``git add``, ``git rm``, ``git restore`` | every pathspec operand |
| ``git diff``, ``git show``, ``git log``, ``git checkout``, ``git blame`` | the operands after ``--`` only (before it they may be revisions) |
| ``python``, ``python3``, ``python3.N``, ``node``, ``bash``, ``sh`` | the script (nothing with ``-c``, ``-m``, ``-e``) |
| ``./script`` | the script itself |
| ``cd DIR``, ``pushd DIR`` | later commands' paths are read from ``DIR`` (subshells restore it) |

Leading ``VAR=value`` words and the wrappers ``sudo``, ``env``, ``time``, ``nohup``,
``command``, ``exec``, ``nice`` (without options of their own) are skipped.

Inside the project only, and anything unsure left out: a word holding ``$``, a backquote, a
glob or brace character or a leading ``~``; an absolute path (the hook call does not say
where the project is); a path that leaves the working directory (``../x``, ``cd ..``); the
paths after a ``cd`` somewhere unknown (``cd``, ``cd -``, ``cd /abs``, ``cd $X``); an option
this table does not know; a command this table does not know. A command longer than 32,768
characters, or one with an unclosed quote, touches nothing. At most ``MAX_PATHS`` paths.
"""

from __future__ import annotations

import posixpath
from typing import Any, Callable, Collection, Mapping, Sequence

from rules_core import hookimpl

from ._shell_words import Simple, Word, simple_commands

# The tool names of the shell tools we know: Pi's ``bash``, Claude Code's ``Bash``.
SHELL_TOOLS = frozenset({"bash", "Bash"})
MAX_PATHS = 64

_READERS = frozenset({"cat", "head", "tail", "less", "more", "bat", "wc", "nl"})
_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "command", "exec", "nice"})
_INTERPRETERS = {
    # name → (options whose value follows, options after which no script is named)
    "python": ({"-W", "-X", "-Q"}, {"-c", "-m"}),
    "node": ({"-r", "--require", "--import", "--loader"}, {"-e", "--eval", "-p", "--print"}),
    "bash": ({"-o", "-O", "+O", "+o"}, {"-c", "-s"}),
    "sh": ({"-o", "+o"}, {"-c", "-s"}),
}
_VALUE_OPTIONS = {
    "head": {"-n", "-c"}, "tail": {"-n", "-c"},
    "sed": {"-e", "-f", "-l", "--expression", "--file", "--line-length"},
    "awk": {"-F", "-v", "-f"},
    "grep": {"-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--regexp", "--file", "--max-count", "--context",
             "--after-context", "--before-context", "--include", "--exclude", "--exclude-dir", "--label"},
    "rg": {"-e", "-f", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "-M", "-j", "-E", "--regexp", "--file", "--glob",
           "--iglob", "--type", "--type-not", "--max-count", "--context", "--after-context", "--before-context",
           "--max-columns", "--threads", "--encoding", "--sort", "--sortr", "--max-depth", "--replace", "-r"},
    "cp": {"-t", "-S", "--target-directory", "--suffix"}, "mv": {"-t", "-S", "--target-directory", "--suffix"},
    "touch": {"-d", "-r", "-t", "--date", "--reference"},
}
_PATTERN_GIVEN = {"sed": {"-e", "-f", "--expression", "--file"}, "awk": {"-f"},
                  "grep": {"-e", "-f", "--regexp", "--file"}, "rg": {"-e", "-f", "--regexp", "--file"}}
_ALIASES = {"egrep": "grep", "fgrep": "grep", "gawk": "awk", "mawk": "awk", "nawk": "awk", "python3": "python",
            "zsh": "bash", "dash": "sh"}
_GIT_OPERANDS = frozenset({"add", "rm", "restore"})
_GIT_AFTER_DASHES = frozenset({"diff", "show", "log", "checkout", "blame"})
_GIT_VALUE_OPTIONS = {"restore": {"-s", "--source"}, "rm": set(), "add": {"--chmod"}}
_PATH_REDIRECTS = frozenset({">", ">>", ">|", "<", "<>", "&>", "&>>", ">&"})


@hookimpl
def pi_rules_capture_paths(host: str, tool: str, args: Any) -> list[str]:
    """The paths of a shell tool's ``command``, for every host whose tool is named ``bash``
    or ``Bash`` (Pi, Claude Code); other tools and odd arguments capture nothing."""
    if tool not in SHELL_TOOLS or not isinstance(args, Mapping):
        return []
    command = args.get("command")
    return list(shell_paths(command)) if isinstance(command, str) else []


def shell_paths(command: str) -> tuple[str, ...]:
    """The paths ``command`` touches, relative to the directory it starts in, first-seen."""
    found: dict[str, None] = {}
    stack: list[str | None] = []
    where: str | None = ""
    for simple in simple_commands(command):
        where = _visit(simple, where, lambda p: _add(found, p))
        if simple.end == "(":
            stack.append(where)
        elif simple.end == ")":
            where = stack.pop() if stack else None
        if len(found) >= MAX_PATHS:
            break
    return tuple(found)[:MAX_PATHS]


def _add(found: dict[str, None], path: str) -> None:
    found.setdefault(path, None)


def _visit(simple: Simple, where: str | None, add: Callable[[str], None]) -> str | None:
    """Report ``simple``'s paths read from ``where`` (None: unknown, report nothing);
    return the directory the next command starts in."""
    for operator, word in simple.redirects:
        if operator in _PATH_REDIRECTS and not (operator == ">&" and (word.text.isdigit() or word.text == "-")):
            _report(word, where, add)
    words = _command_words(simple.words)
    if not words:
        return where
    name = posixpath.basename(words[0].text) if not words[0].unsure else ""
    name = _ALIASES.get(name, name)
    if name.startswith("python3."):
        name = "python"
    operands = words[1:]
    if name in ("cd", "pushd"):
        return _cd(operands, where)
    if words[0].text.startswith("./"):
        _report(words[0], where, add)
    for word in _operand_paths(name, operands):
        _report(word, where, add)
    return where


def _command_words(words: Sequence[Word]) -> Sequence[Word]:
    """The words from the command name on: assignments and option-less wrappers skipped."""
    index = 0
    while index < len(words):
        text = words[index].text
        if "=" in text and not text.startswith(("=", "-")) and text.split("=", 1)[0].isidentifier():
            index += 1
        elif text in _WRAPPERS:
            if index + 1 < len(words) and words[index + 1].text.startswith("-"):
                return ()  # the wrapper's own options: not worth guessing
            index += 1
        else:
            break
    return words[index:]


def _cd(operands: Sequence[Word], where: str | None) -> str | None:
    if where is None or len(operands) != 1:
        return None
    word = operands[0]
    if word.unsure or not word.text or word.text.startswith(("-", "/")):
        return None
    return _inside(posixpath.join(where, word.text))


def _operand_paths(name: str, words: Sequence[Word]) -> list[Word]:
    if name in _READERS or name in ("cp", "mv", "touch", "tee"):
        return _operands(words, _VALUE_OPTIONS.get(name, set()), value_is_path={"-t", "--target-directory",
                                                                               "-r", "--reference"})
    if name in _PATTERN_GIVEN:
        given = any(w.text in _PATTERN_GIVEN[name] or _attached(w.text, _PATTERN_GIVEN[name]) for w in words)
        operands = _operands(words, _VALUE_OPTIONS[name])
        operands = operands if given else operands[1:]
        return [w for w in operands if not (name == "awk" and "=" in w.text)]
    if name in _INTERPRETERS:
        values, stops = _INTERPRETERS[name]
        for index, word in enumerate(words):
            if word.text in stops or word.text == "-":
                return []
            if word.text in values:
                continue
            if index and words[index - 1].text in values:
                continue
            if word.text.startswith("-"):
                continue
            return [word]
        return []
    if name == "git":
        return _git(words)
    return []


def _git(words: Sequence[Word]) -> list[Word]:
    index = 0
    while index < len(words) and words[index].text.startswith("-"):
        if words[index].text in ("-C", "--git-dir", "--work-tree"):
            return []  # another repository or folder: where its paths are is not ours to guess
        index += 2 if words[index].text == "-c" else 1
    if index >= len(words):
        return []
    sub, rest = words[index].text, words[index + 1 :]
    texts = [w.text for w in rest]
    if "--" in texts:
        after = [w for w in rest[texts.index("--") + 1 :] if not w.text.startswith(":")]
        return after if sub in _GIT_OPERANDS | _GIT_AFTER_DASHES else []
    if sub in _GIT_OPERANDS:
        return [w for w in _operands(rest, _GIT_VALUE_OPTIONS[sub]) if not w.text.startswith(":")]
    return []


def _operands(words: Sequence[Word], values: Collection[str], value_is_path: Collection[str] = ()) -> list[Word]:
    """The non-option words (after ``--`` every word is one); an option in ``values``
    consumes the next word, which is an operand itself when listed in ``value_is_path``."""
    found: list[Word] = []
    index, ended = 0, False
    while index < len(words):
        word = words[index]
        if ended or not word.text.startswith("-") or word.text == "-":
            if word.text != "-":
                found.append(word)
        elif word.text == "--":
            ended = True
        elif word.text in values:
            if word.text in value_is_path and index + 1 < len(words):
                found.append(words[index + 1])
            index += 1
        index += 1
    return found


def _attached(text: str, options: Collection[str]) -> bool:
    """``-efoo`` or ``--regexp=foo``: an option given with its value in one word."""
    return any(text.startswith(o + "=") if o.startswith("--") else text.startswith(o) and len(text) > len(o)
               for o in options)


def _report(word: Word, where: str | None, add: Callable[[str], None]) -> None:
    if where is None or word.unsure or not word.text or word.text.startswith("/"):
        return
    path = _inside(posixpath.join(where, word.text))
    if path:
        add(path)


def _inside(path: str) -> str | None:
    """``path`` normalised, or None when it leaves the starting directory; ``""`` is it."""
    normal = posixpath.normpath(path) if path else ""
    if normal in (".", ""):
        return ""
    if normal == ".." or normal.startswith("../") or normal.startswith("/"):
        return None
    return normal
