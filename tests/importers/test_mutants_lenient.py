"""The importers' listing helpers (``rules_importers/_lenient.py``: ``list_flat``,
``single_file``, ``path_kind``, ``list_import_root``, ``enabled*``, ``rule_file_at``),
pinned where mutation testing found them unpinned (issue 32; docs/mutation.md, "Shared
importer helpers"). Each test is a real tree and what discovery answers.
"""

from __future__ import annotations

from rules_core.rule_tests.pytest_plugin import rule_text  # noqa: F401 - the rule_project fixture's module
from rules_importers.simple import SimpleFormat

from importer_helpers import discover


def test_third_party_formats_share_one_rank_whichever_helper_lists_them(rule_project):
    # Two third-party formats, one read recursively (list_import_root), one flat
    # (list_flat → rule_file_at): both rank 90, so only their files' names order them.
    deep = SimpleFormat(name="acme", summary="Acme", folders=(".acme",))
    flat = SimpleFormat(name="zeta", summary="Zeta", folders=(".zeta",), recursive=False)
    rule_project.write({".acme/b.md": "B.\n", ".acme/d.md": "D.\n", ".zeta/a.md": "A.\n", ".zeta/c.md": "C.\n"})
    found = discover(rule_project, plugins=[("acme", deep), ("zeta", flat)])
    assert [(r.id, r.file.plugin) for r in found.rules] == [
        ("a", "zeta"), ("b", "acme"), ("c", "zeta"), ("d", "acme")]
