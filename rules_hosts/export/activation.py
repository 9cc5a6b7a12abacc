"""What a rule's activation is, in the words every target shares.

Targets can say three things: *always*, *when a touched path matches these globs* and
*on demand* (the model fetches it by its description). Everything else a rule declares —
``tools``, ``model``, ``branch``, ``match: exists``, a plugin's condition, a stream rule —
is named in ``lost`` so the target can leave the rule out (or, with ``--lossy``, keep the
condition as a sentence in the body).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from rules_core.model import Rule

Kind = Literal["always", "touched", "on-demand"]


@dataclass(frozen=True)
class Activation:
    """``kind`` with its ``globs`` (project-relative, ``!`` negations kept), what the rule
    declares that no target says (``lost``) and what changes without being lost
    (``notes``: ``match: both`` keeps only its touched half)."""

    kind: Kind
    globs: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def activation(rule: Rule, prefix: str, stream: bool) -> Activation:
    """The rule's activation seen from the project root; ``prefix`` is its base relative
    to that root ('' for the root's own rules), ``stream`` whether it is a stream rule."""
    lost: list[str] = []
    notes: list[str] = []
    if stream:
        lost.append("stream rule (it watches the model's output)")
    if rule.always_apply:  # skips every condition; an on-demand one is listed in every index
        kind: Kind = "on-demand" if rule.load == "on-demand" else "always"
        globs: tuple[str, ...] = ()
    else:
        if rule.tools:
            lost.append(f"tools: {json.dumps(list(rule.tools))}")
        if rule.model is not None:
            lost.append(f"model: {json.dumps(rule.model)}")
        if rule.branch is not None:
            lost.append(f"branch: {json.dumps(rule.branch)}")
        lost.extend(f"{name}: {json.dumps(rule.extra.get(name), default=str)}" for name in rule.extra_conditions)
        globs = tuple(rebase(glob, prefix) for glob in rule.globs)
        if globs and rule.match == "exists":
            lost.append("match: exists (active while a matching file exists)")
        elif globs and rule.match == "both":
            notes.append("match: both keeps only its touched half (no target activates on files that exist)")
        kind = "on-demand" if rule.load == "on-demand" else "touched" if globs else "always"
        if kind == "on-demand" and globs:
            lost.append("load: on-demand together with globs")
    if kind == "always" and prefix:
        kind, globs = "touched", (f"{prefix}/**",)  # a nested folder's always rule: its folder
    return Activation(kind, globs, tuple(lost), tuple(notes))


def rebase(glob: str, prefix: str) -> str:
    """``glob`` of a rule based at ``prefix`` as a project-root glob (negations kept)."""
    negated, body = (True, glob[1:]) if glob.startswith("!") else (False, glob)
    if prefix and not body.startswith("/") and not body.startswith("../"):
        body = f"{prefix}/{body.removeprefix('./')}"
    return ("!" if negated else "") + body


def widened(found: Activation, on_demand: bool, globs: bool) -> Activation:
    """``found`` with what a target lacking ``on_demand`` / ``globs`` cannot say dropped
    (``--lossy``): on-demand becomes pinned, globs become always."""
    kind, kept = found.kind, found.globs
    if kind == "on-demand" and (not on_demand or kept):
        kind = "touched" if kept else "always"
    if kind == "touched" and not globs:
        kind, kept = "always", ()
    if kind == "on-demand":
        kept = ()
    return Activation(kind, kept, found.lost, found.notes)
