"""``rules_core.model.places``: where an error a plugin gave no place points (issue 34).
The file text and the message are open-ended (a repository writes the one, importers
word the other), so the bounds are checked on any input as well as on the known forms."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from rules_core.model import RuleError
from rules_core.model.places import frontmatter_keys, place_of, placed

FILE = "---\ndescription: Deploy\n'globs':\n  - src/**\n  - 7\nalwaysApply:   yes\n---\nglob 'x' in the body\n"


def test_the_known_message_forms_point_where_they_say():
    assert place_of("globs must be a list of glob strings, got a list", FILE) == (4, 3)  # the first item
    assert place_of("alwaysApply must be true or false, got 'yes'", FILE) == (6, 16)
    assert place_of("unknown alwaysApply 'yes'; use one of true, false", FILE) == (6, 16)  # an importer's choice
    assert place_of("unknown key 'globs' — did you mean 'paths'?", FILE) == (3, 1)
    assert place_of("glob 'src/**' cannot be used: …", FILE) == (4, 5)
    assert place_of("invalid YAML at line 5, column 3: …", FILE) == (5, 3)
    assert place_of("line 2: duplicate key 'x'", FILE) == (2, None)
    # Positive controls for "no place": a key the file lacks, a sentence about the whole file.
    assert place_of("paths must be a list", FILE) == (None, None)
    assert place_of("the rule can never activate; add globs", FILE) == (None, None)
    assert frontmatter_keys("no frontmatter\nglobs: x\n") == {}
    assert frontmatter_keys("---\nglobs: x\n") == {}  # never closed: nothing is frontmatter


def test_only_errors_about_this_file_without_a_place_are_placed():
    mine = RuleError("invalid-value", "/p/a.md", "alwaysApply must be true or false")
    other = RuleError("invalid-value", "/p/b.md", "alwaysApply must be true or false")
    kept = RuleError("invalid-value", "/p/a.md", "alwaysApply must be true or false", "", 2, 1)
    assert placed((mine, other, kept), "/p/a.md", FILE) == (
        RuleError("invalid-value", "/p/a.md", "alwaysApply must be true or false", "", 6, 16), other, kept)


_TEXT = st.text(st.sampled_from(list("-\n :'\"#ab\tglobs[]*0123456789")), max_size=200)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(_TEXT, _TEXT.map(lambda t: "---\n" + t)), message=st.one_of(
    _TEXT, st.sampled_from(["globs must be", "unknown key 'a'", "glob 'a' x", "line 3, column 2: x", "a: x"])))
def test_a_place_is_always_inside_the_file(text, message):
    line, column = place_of(message, text)
    lines = text.split("\n")
    if line is None:
        assert column is None
        return
    if message.startswith(("line ", "invalid YAML at line ")):
        return  # the parser's own mark, taken as it says
    assert 1 <= line <= len(lines)
    assert column is None or 1 <= column <= len(lines[line - 1]) + 1
