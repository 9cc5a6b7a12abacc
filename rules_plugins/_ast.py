"""``astCondition`` through ast-grep (the optional ``pi-rules[ast]`` extra).

ast-grep patterns match syntax trees, so they run on complete tool-call snapshots (the
text an edit or write produces), with the language taken from the file's extension.
Without the ``ast-grep-py`` package an ``astCondition`` is an error naming the extra.
"""

from __future__ import annotations

import os
from typing import Any, Callable

INSTALL_HINT = "astCondition needs ast-grep, which is not installed: pip install 'pi-rules[ast]' (or remove astCondition)"

# File extension → ast-grep language name.
LANGUAGES = {
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".py": "python", ".pyi": "python", ".rs": "rust", ".go": "go", ".java": "java",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".cs": "csharp", ".rb": "ruby", ".kt": "kotlin", ".kts": "kotlin", ".swift": "swift",
    ".lua": "lua", ".php": "php", ".scala": "scala", ".ex": "elixir", ".exs": "elixir",
    ".hs": "haskell", ".sh": "bash", ".bash": "bash", ".html": "html", ".css": "css",
    ".json": "json", ".yaml": "yaml", ".yml": "yaml",
}


def available() -> bool:
    return _sg_root() is not None


def _sg_root() -> Any:
    try:
        from ast_grep_py import SgRoot
    except ImportError:
        return None
    return SgRoot


def matcher(patterns: tuple[str, ...]) -> Callable[[str, str], tuple[int, str] | None]:
    """(text, path) → (line of the first match, a description of it), or ``None``."""

    def match(text: str, path: str) -> tuple[int, str] | None:
        sg_root = _sg_root()
        language = LANGUAGES.get(os.path.splitext(path)[1].lower())
        if sg_root is None or language is None:
            return None
        try:
            root = sg_root(text, language).root()
        except Exception:
            return None
        for pattern in patterns:
            try:
                node = root.find(pattern=pattern)
            except Exception:  # ast-grep rejects a pattern it cannot parse for this language
                continue
            if node is not None:
                line = node.range().start.line + 1
                snippet = node.text().splitlines()[0] if node.text() else ""
                return line, f"ast pattern {pattern!r} matched: {snippet[:60]!r}"
        return None

    return match
