"""``pi-rules export``: the project's rules written in other agents' formats (docs/export.md).

``activation`` reduces a rule to what other tools can say (always, touched globs,
on-demand) and names what they cannot; ``files`` holds the one-file-per-rule targets,
``sections`` the generated section inside ``AGENTS.md``/``GEMINI.md``; ``plan`` turns
rules into the files a run wants, ``write`` compares them with the disk and writes them
(never through a symlink the repository ships, never over a hand-written file), and
``run`` is the command.
"""
