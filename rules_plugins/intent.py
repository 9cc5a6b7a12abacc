"""The ``intent`` plugin: globs the turn prompt donates (RULE-SPEC §5).

Language names (whole word, any case) donate ``*.<ext>``; a rule keyword found as a whole
word donates that rule's positive globs. There is deliberately no bare ``go`` trigger.
"""

from __future__ import annotations

import re
from typing import Sequence

from rules_core import hookimpl
from rules_core.model import Intent, Rule

LANGUAGE_TRIGGERS: tuple[tuple[str, str], ...] = (
    ("python", "*.py"),
    ("pytest", "*.py"),
    ("rust", "*.rs"),
    ("typescript", "*.ts"),
    ("javascript", "*.js"),
    ("golang", "*.go"),
    ("kotlin", "*.kt"),
    ("java", "*.java"),
    ("csharp", "*.cs"),
    ("ruby", "*.rb"),
)
_LANGUAGE_WORDS = re.compile(
    r"(?<!\w)(" + "|".join(word for word, _ in LANGUAGE_TRIGGERS) + r")(?!\w)", re.IGNORECASE
)
_GLOB_OF = dict(LANGUAGE_TRIGGERS)


@hookimpl
def pi_rules_intent(prompt: str, rules: Sequence[Rule]) -> list[Intent]:
    if not prompt:
        return []
    intents: dict[Intent, None] = {}
    for found in _LANGUAGE_WORDS.finditer(prompt):
        intents.setdefault(Intent(_GLOB_OF[found.group(1).lower()], "language"), None)
    folded = prompt.casefold()
    for rule in rules:
        if rule.keywords and any(_has_word(folded, k.casefold()) for k in rule.keywords):
            for glob in rule.positive_globs:
                intents.setdefault(Intent(glob, "keyword"), None)
    return list(intents)


def _has_word(text: str, word: str) -> bool:
    """Whole-word containment that also works for words like ``c++`` or ``.net``."""
    start = text.find(word)
    while start != -1:
        end = start + len(word)
        before_ok = start == 0 or not _is_word_char(text[start - 1]) or not _is_word_char(word[0])
        after_ok = end == len(text) or not _is_word_char(text[end]) or not _is_word_char(word[-1])
        if before_ok and after_ok:
            return True
        start = text.find(word, start + 1)
    return False


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"
