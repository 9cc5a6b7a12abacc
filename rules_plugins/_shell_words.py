"""A shell command string as simple commands of POSIX words, never executed.

``simple_commands`` turns ``cd pkg && cat > src/a.ts <<EOF …`` into
``[Simple(("cd", "pkg"), …), Simple(("cat",), redirects=(">", "src/a.ts"), …)]``.
Words come from ``shlex`` (POSIX mode, punctuation characters split out); quoted and
escaped operator characters are shielded first, so ``grep "a|b" x`` is one command with
the word ``a|b``. A word whose value depends on the shell (``$VAR``, `` `…` ``, ``~``, a
glob, a brace) is marked ``unsure``; callers leave such words out. Here-document bodies
are removed before tokenising: they are data, not words.

Bounded: a command longer than ``MAX_COMMAND`` characters, or one ``shlex`` cannot split
(an unclosed quote), gives no commands at all.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

MAX_COMMAND = 32_768
MAX_WORDS = 4_000
_OPERATOR_CHARS = "();<>|&\n"
# Each operator character inside quotes (or after a backslash) becomes its private-use
# twin while shlex splits, and is restored in the words afterwards.
_SHIELD = {c: chr(0xE000 + i) for i, c in enumerate(_OPERATOR_CHARS)}
_UNSHIELD = {v: k for k, v in _SHIELD.items()}
REDIRECTS = frozenset({">", ">>", ">|", "<", "<>", "&>", "&>>", ">&", "<&", "<<", "<<<"})
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][\w.-]*)\2")
_UNSURE = re.compile(r"[$`*?\[\]{}]|^~")


@dataclass(frozen=True)
class Word:
    text: str
    unsure: bool


@dataclass(frozen=True)
class Simple:
    """One simple command: its words, its redirections as ``(operator, word)`` pairs, the
    operator run that ended it (``&&``, ``;``, ``|``, ``(``, ``)``, a newline, or ``""``)."""

    words: tuple[Word, ...]
    redirects: tuple[tuple[str, Word], ...]
    end: str


def simple_commands(command: str) -> list[Simple]:
    if not isinstance(command, str) or len(command) > MAX_COMMAND or "\0" in command:
        return []
    text = _shield(_without_heredoc_bodies(command))
    if text is None:
        return []
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_OPERATOR_CHARS)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True  # a word ends at blanks and operators only (`$HOME/x` is one word)
    lexer.commenters = ""  # comments are dropped by _shield, which knows where a word starts
    try:
        tokens = []
        for token in lexer:
            tokens.append(token)
            if len(tokens) > MAX_WORDS:
                return []
    except ValueError:  # an unclosed quote or a dangling escape: the shell would refuse it too
        return []
    return _group(tokens)


def _group(tokens: list[str]) -> list[Simple]:
    commands: list[Simple] = []
    words: list[Word] = []
    redirects: list[tuple[str, Word]] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if _is_operator(token):
            if token in REDIRECTS:
                if words and words[-1].text.isdigit():
                    words.pop()  # ``2>``: the descriptor, not an argument
                target = tokens[index + 1] if index + 1 < len(tokens) else ""
                if target and not _is_operator(target):
                    redirects.append((token, _word(target)))
                    index += 1
            else:
                commands.append(Simple(tuple(words), tuple(redirects), token))
                words, redirects = [], []
        else:
            words.append(_word(token))
        index += 1
    if words or redirects:
        commands.append(Simple(tuple(words), tuple(redirects), ""))
    return commands


def _is_operator(token: str) -> bool:
    return bool(token) and all(c in _OPERATOR_CHARS for c in token)


def _word(token: str) -> Word:
    text = "".join(_UNSHIELD.get(c, c) for c in token)
    return Word(text, bool(_UNSURE.search(token)) or text != token and "\n" in text)


def _shield(command: str) -> str | None:
    """Operator characters inside quotes or after a backslash, replaced by their twins, and
    comments (``#`` starting a word, outside quotes) removed; None when the command
    already holds a twin (it could not be told apart)."""
    if any(c in _UNSHIELD for c in command):
        return None
    out: list[str] = []
    quote = ""
    escaped = comment = False
    previous = " "
    for char in command:
        if comment:
            if char != "\n":
                continue
            comment = False
            out.append(char)
        elif escaped:
            out.append(_SHIELD.get(char, char) if char != "\n" else char)
            escaped = False
        elif char == "\\" and quote != "'":
            out.append(char)
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
            out.append(_SHIELD.get(char, char))
        elif char in "'\"":
            quote = char
            out.append(char)
        elif char == "#" and (previous in " \t\r" or previous in _OPERATOR_CHARS):
            comment = True
        else:
            out.append(char)
        previous = char
    return "".join(out)


def _without_heredoc_bodies(command: str) -> str:
    """The command with every here-document's body and closing delimiter line removed."""
    lines = command.split("\n")
    kept: list[str] = []
    pending: list[tuple[str, bool]] = []
    for line in lines:
        if pending:
            delimiter, strip_tabs = pending[0]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                pending.pop(0)
            continue
        kept.append(line)
        pending = [(m.group(3), m.group(1) == "-") for m in _HEREDOC.finditer(line)]
    return "\n".join(kept)
