"""``rules_importers._includes``: expanding Claude, Gemini and Kiro file imports in place,
inside the bound, with bounded work whatever a repository holds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules_core.discovery.reading import MAX_RULE_BYTES
from rules_core.discovery.containment import Containment
from rules_importers._includes import MAX_LOOKUPS, MAX_PROBLEMS, Expanded, expand
from rules_importers._regions import code_regions, strip_html_comments


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    return root


def claude(repo: Path, text: str, *, path: str = "CLAUDE.md", home: str | None = None):
    return expand(text, path=str(repo / path), bound=str(repo), home=home, syntax="claude")


def size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


# -- Claude's spelling ------------------------------------------------------------------------


def test_a_fragment_is_dropped_and_an_escaped_space_is_a_space(repo):
    write(repo, {"docs/my notes.md": "N\n", "docs/a.md": "A\n"})
    result = claude(repo, "@docs/a.md#setup and @docs/my\\ notes.md\n")
    assert (result.text, result.problems) == ("A and N\n", ())


def test_sentence_punctuation_after_a_path_is_prose(repo):
    write(repo, {"a.md": "A\n"})
    assert claude(repo, "(see @a.md). Then @a.md, done\n").text == "(see A). Then A, done\n"


def test_urls_emails_and_decorators_are_not_imports(repo):
    text = "See @https://example.com/a.md, mail me@example.com, use @Component and @@x.md.\n"
    result = claude(repo, text)
    assert (result.text, result.problems) == (text, ())


def test_a_folder_named_plainly_is_a_problem_and_a_bare_folder_name_is_prose(repo):
    write(repo, {"docs/a.md": "A\n"})
    result = claude(repo, "@docs then @./docs\n")
    assert result.text == "@docs then @./docs\n"
    assert result.problems == ("import @./docs: docs is a folder, not a file; import a file inside it",)


def test_without_a_bound_nothing_is_read(repo):
    write(repo, {"a.md": "A\n"})
    result = expand("@./a.md\n", path=str(repo / "CLAUDE.md"), bound="", home=None, syntax="claude")
    assert result == Expanded("@./a.md\n", (), ("import @./a.md: this file may not import other files; not read",))


def test_an_unknown_home_folder_is_said(repo):
    assert claude(repo, "@~/x.md\n").problems == ("import @~/x.md: the home folder is not known; not read",)


def test_binary_and_invalid_utf8_imports_are_problems(repo):
    write(repo, {"logo.png": b"\x89PNG\x00\x00", "latin.md": b"caf\xe9\n", "nul.md": b"a\x00b\n"})
    result = claude(repo, "@logo.png @latin.md @nul.md\n")
    assert result.text == "@logo.png @latin.md @nul.md\n"
    assert result.problems == (
        "import @logo.png: logo.png: not valid UTF-8 (byte 0); save the file as UTF-8",
        "import @latin.md: latin.md: not valid UTF-8 (byte 3); save the file as UTF-8",
        "import @nul.md: nul.md contains NUL bytes (a binary file); import a text file",
    )


def test_a_fifo_is_never_opened(repo):
    os.mkfifo(repo / "pipe.md")
    result = claude(repo, "@pipe.md\n")  # would hang if opened for reading
    assert result.problems == ("import @pipe.md: pipe.md is not a regular file (FIFO, socket or device); "
                               "import a plain file",)


# -- what the cache depends on ----------------------------------------------------------------


def test_depends_names_physical_files_read_and_the_folder_of_a_missing_import(repo):
    write(repo, {"docs/real.md": "R\n", "docs/a.md": "@real.md\n"})
    os.symlink("real.md", repo / "docs/alias.md")
    result = claude(repo, "@docs/a.md @docs/alias.md @docs/later/new.md\n")
    assert result.text == "R R @docs/later/new.md\n"
    assert result.depends == (str(repo / "docs/a.md"), str(repo / "docs/real.md"), str(repo / "docs"))


# -- Gemini's spelling ------------------------------------------------------------------------


def test_gemini_reads_dot_slash_parent_and_letter_paths_not_tilde_or_digits(repo):
    write(repo, {"pkg/a.md": "A\n", "b.md": "B\n", "pkg/c/d.md": "D\n"})
    result = expand("@./a.md @../b.md @c/d.md @~/x.md @1.md\n", path=str(repo / "pkg/GEMINI.md"),
                    bound=str(repo), home=None, syntax="gemini")
    assert (result.text, result.problems) == ("A B D @~/x.md @1.md\n", ())


# -- Kiro references ------------------------------------------------------------------------


def kiro(repo: Path, text: str, root: Path | None = None):
    return expand(text, path=str(repo / ".kiro/steering/api.md"), bound=str(repo), home=None, syntax="kiro",
                  root=str(root) if root else None)


def test_kiro_references_are_relative_to_the_workspace_root(repo):
    write(repo, {"api/openapi.yaml": "openapi: 3.1.0\n", ".kiro/steering/api/openapi.yaml": "wrong\n"})
    result = kiro(repo, "Spec:\n#[[file:api/openapi.yaml]]\n", root=repo)
    assert (result.text, result.problems) == ("Spec:\nopenapi: 3.1.0\n", ())


def test_kiro_references_are_inserted_verbatim_never_expanded_further(repo):
    write(repo, {"a.md": "see #[[file:b.md]] and @b.md\n", "b.md": "B\n"})
    assert kiro(repo, "#[[file:a.md]]\n").text == "see #[[file:b.md]] and @b.md\n"


def test_kiro_references_in_code_and_missing_ones(repo):
    result = kiro(repo, "`#[[file:x.md]]` #[[file: api/gone.yaml ]] #[[file:]]\n")
    assert result.text == "`#[[file:x.md]]` #[[file: api/gone.yaml ]] #[[file:]]\n"
    assert result.problems == ("import #[[file: api/gone.yaml ]]: no such file api/gone.yaml; "
                               "create it or correct the path",)


# -- bounded work -----------------------------------------------------------------------------


def test_the_expanded_text_never_passes_the_rule_size_cap(repo):
    write(repo, {"big.md": "x" * (600 * 1024) + "\n"})
    result = claude(repo, "@big.md\n@big.md\n")
    assert size(result.text) <= MAX_RULE_BYTES
    assert result.text.endswith("\n@big.md\n")
    assert result.problems == (f"import @big.md: not read — the expanded text would pass {MAX_RULE_BYTES} bytes, "
                               "the limit for one rule; import smaller or fewer files",)


def test_a_file_importing_another_many_times_at_every_level_stays_cheap(repo, monkeypatch):
    write(repo, {"a.md": "@b.md " * 3000, "b.md": "@c.md " * 3000, "c.md": "@d.md " * 3000, "d.md": "tiny\n"})
    lookups = []
    real_resolve = Containment.resolve
    monkeypatch.setattr(Containment, "resolve", lambda self, path: lookups.append(path) or real_resolve(self, path))
    result = claude(repo, "@a.md " * 3000)
    # Work is counted, not timed: 3000^4 imports are written, at most MAX_LOOKUPS are looked up.
    assert len(lookups) <= MAX_LOOKUPS + 1
    assert size(result.text) <= MAX_RULE_BYTES
    assert any("pass the limit" in p for p in result.problems)


def test_problems_are_capped_with_a_count_of_the_rest(repo):
    result = claude(repo, " ".join(f"@missing{i}.md" for i in range(MAX_PROBLEMS + 7)))
    assert len(result.problems) == MAX_PROBLEMS + 1
    assert result.problems[-1] == "… and 7 more imports not read; fix the ones above first"


# -- Markdown regions -------------------------------------------------------------------------


def spans(text: str) -> list[str]:
    return [text[start:end] for start, end in code_regions(text)]


def test_code_spans_pair_equal_backtick_runs_within_a_paragraph():
    assert spans("a `x` b ``y ` z`` c ` d") == ["`x`", "``y ` z``"]
    assert spans("`open\n\nclose`") == []


def test_fences_run_to_their_closing_line_or_the_end():
    assert spans("a\n```py\nx\n```\nb\n~~~\ny") == ["```py\nx\n```\n", "~~~\ny"]
    assert spans("```a`b\nnot a fence\n") == []  # a backtick info string is no fence (an unclosed one would run on)


def test_strip_html_comments_keeps_what_follows_on_the_closing_line():
    assert strip_html_comments("<!-- a --> <!-- b -->\nx\n<!-- c -->rest\n  <!-- d -->\n") == "x\nrest\n"
    assert strip_html_comments("`<!-- code -->`\n") == "`<!-- code -->`\n"


# -- whatever the text ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    repo = root / "repo"
    write(repo, {
        "a.md": "@b.md @a.md `@c.md` <!-- @b.md -->\n", "b.md": "@./c.md #[[file:a.md]] @../out.md\n",
        "c.md": "```\n@a.md\n@~/x.md @big.md", "big.md": "y" * (300 * 1024), "docs/d.md": "@../a.md\n",
    })
    (root / "out.md").write_text("outside\n")
    os.symlink(root / "out.md", repo / "link.md")
    return repo


FRAGMENTS = ["@a.md", "@b.md", "@./c.md", "@big.md", "@docs/d.md", "@link.md", "@~/x.md", "@../out.md",
             "#[[file:a.md]]", "#[[file:big.md]]", "`", "```", "~~~", "<!--", "-->", "\n", " ", "\\ ", "#",
             "@", "x", "\n\n", ".", "\x00", "é", "@/etc/passwd", "@" + "z" * 300 + ".md"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=60),
       st.sampled_from(["claude", "gemini", "kiro"]))
def test_any_text_expands_without_raising_and_within_bounds(hostile, pieces, syntax):
    text = "".join(pieces)
    result = expand(text, path=str(hostile / "CLAUDE.md"), bound=str(hostile), home=str(hostile),
                    syntax=syntax)
    assert size(result.text) <= max(size(text), MAX_RULE_BYTES)
    assert len(result.problems) <= MAX_PROBLEMS + 1
    assert all(p.startswith(str(hostile)) for p in result.depends)
    assert "outside" in text or "outside" not in result.text  # the link leading out is never read
