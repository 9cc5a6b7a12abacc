"""``--host codex|cursor|copilot|gemini|kiro|windsurf``: what an agent pi-rules does not
drive loads by itself here — its files only, in its order, under its caps (CONTRACT §7,
docs/export.md "Previews"). ``profiles`` holds one profile per agent, ``compute`` runs
one, ``output`` prints it for ``report``/``render``/``map``, ``plugin`` declares the hosts.
"""
