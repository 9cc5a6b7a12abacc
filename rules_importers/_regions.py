"""Where in a Markdown text imports are not read: fenced code blocks, inline code spans,
and (for Claude Code) HTML comments — shared by the import expander (``_includes``)."""

from __future__ import annotations

import bisect
import re

_FENCE = re.compile(r"[ \t]*(?:>[ \t]?)*(`{3,}|~{3,})(.*)")
_BACKTICKS = re.compile(r"`+")
_LINE_COMMENT = re.compile(r"^ {0,3}<!--", re.M)
_NEXT_COMMENT = re.compile(r"[ \t]*<!--")
_BLANK = re.compile(r"\s*")


def code_regions(text: str) -> list[tuple[int, int]]:
    """Sorted, disjoint (start, end) spans of fenced code blocks and inline code spans.
    Fences are found leniently (any indentation, in block quotes; unclosed ones run to the
    end): a fence indented into a list item is code to its reader too. Code spans follow
    CommonMark: N backticks close at the next run of exactly N in the same paragraph."""
    regions: list[tuple[int, int]] = []
    prose_start, offset, fence = 0, 0, None  # fence: (char, length, start)
    for line in text.split("\n"):
        match, line_end = _FENCE.match(line), min(offset + len(line) + 1, len(text))
        if fence is None and match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            regions += _spans(text, prose_start, offset)
            fence = (match.group(1)[0], len(match.group(1)), offset)
        elif fence is not None and match and match.group(1)[0] == fence[0] and len(match.group(1)) >= fence[1] \
                and not match.group(2).strip():
            regions.append((fence[2], line_end))
            fence, prose_start = None, line_end
        offset = line_end
    if fence is not None:
        return regions + [(fence[2], len(text))]
    return regions + _spans(text, prose_start, len(text))


def _spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for paragraph in re.finditer(r"(?:[^\n]|\n(?![ \t]*\n))+", text[start:end]):
        runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(paragraph.group())]
        following: list[int | None] = [None] * len(runs)  # the next run of the same length: O(n)
        seen: dict[int, int] = {}
        for index in range(len(runs) - 1, -1, -1):
            following[index] = seen.get(runs[index][1] - runs[index][0])
            seen[runs[index][1] - runs[index][0]] = index
        index, base = 0, start + paragraph.start()
        while index < len(runs):
            closing = following[index]
            if closing is not None:
                found.append((base + runs[index][0], base + runs[closing][1]))
            index = index + 1 if closing is None else closing + 1  # an unmatched run is literal
    return found


def strip_html_comments(text: str) -> str:
    """``text`` without the HTML comments that start a line outside code, as Claude Code
    hides them from the model (a maintainer's note costs no context). The rest of the
    comment's closing line is kept when it holds text; a comment inside a paragraph, in
    code, or never closed stays (an unclosed one is a typo that must not swallow the file)."""
    if "<!--" not in text:
        return text
    regions = code_regions(text)
    starts = [r[0] for r in regions]
    pieces, last = [], 0
    for match in _LINE_COMMENT.finditer(text):
        if match.start() < last or inside_any(regions, starts, match.start()):
            continue
        end = _comment_end(text, match.end())
        if end is None:
            break  # no "-->" anywhere after: every later comment is unclosed too
        following = _NEXT_COMMENT.match(text, end)
        while following:  # further comments on the closing line go with it
            later = _comment_end(text, following.end())
            if later is None:
                break
            end, following = later, _NEXT_COMMENT.match(text, later)
        line_end = text.find("\n", end)
        line_end = len(text) if line_end == -1 else line_end
        pieces.append(text[last:match.start()])
        # A blank rest of line goes too, newline included; text after "-->" stays.
        last = end if not _BLANK.fullmatch(text, end, line_end) else min(line_end + 1, len(text))
    pieces.append(text[last:])
    return "".join(pieces)


def _comment_end(text: str, after: int) -> int | None:
    """The index just past the first ``-->`` at or after ``after``."""
    end = text.find("-->", after)
    return None if end == -1 else end + 3


def comment_regions(text: str, regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """HTML comments outside ``regions`` (code); one opened at a line start and never
    closed runs to the end (a CommonMark HTML block), an unclosed inline one is text."""
    starts = [r[0] for r in regions]
    found: list[tuple[int, int]] = []
    position = text.find("<!--")
    while position != -1:
        if inside_any(regions, starts, position):
            position = text.find("<!--", position + 4)
            continue
        end = _comment_end(text, position + 4)
        if end is None:
            line_start = text.rfind("\n", 0, position) + 1
            if not text[line_start:position].strip(" "):
                found.append((position, len(text)))
            break
        found.append((position, end))
        position = text.find("<!--", end)
    return found


def inside_any(regions: list[tuple[int, int]], starts: list[int], position: int) -> bool:
    index = bisect.bisect_right(starts, position) - 1
    return index >= 0 and position < regions[index][1]
