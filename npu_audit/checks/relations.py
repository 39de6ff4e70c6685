"""The relation engine: evaluate every relation of rules/relations.toml on every NPU entry.

Relations are checked per optimizer entry, as the adapter does. A hit is reported on the subject's
line when the user wrote the subject, else on another option of the relation that the user wrote;
options NPURunConfig writes by itself are never blamed.

A write made with another AttrValue field than the adapter reads is its own defect (wrong-field): the
adapter fails on it first or reads nothing from it, so relations never follow from its value (the views
here set it aside, conditions.SKIP). A hit found on a branch path names the conditions of the run on
which it happens: the path of the write that triggers it, plus the branch of the write that makes it.
"""

from __future__ import annotations

from typing import Optional, cast

from npu_audit.checks.base import CheckContext, RelationHit
from npu_audit.checks.conditions import ABSENT, OptionView, compatible, consistent, evaluate, expand, verdict
from npu_audit.extract.model import CONFIG_OBJECT, OptionWrite
from npu_audit.extract.runconfig import object_keys
from npu_audit.knowledge.model import Condition, Relation
from npu_audit.knowledge.vocabulary import RELATION_CHECKS

KIND_TO_RULE = RELATION_CHECKS  # the check that reports each kind of relation


def _trigger_keys(rel: Relation) -> list[str]:
    if rel.kind in ("gated", "overrides"):
        return [rel.subject]
    if rel.kind in ("requires", "excludes") and rel.when is not None:
        keys = sorted(rel.when.keys())
        return [rel.subject] + [k for k in keys if k != rel.subject] if rel.subject in keys else keys
    return [rel.subject] + [k for k in rel.keys if k != rel.subject]


def _paths(rel: Relation, effective) -> list[frozenset]:
    """Branch paths to evaluate a relation on: those of the writes that can trigger it.

    Evaluating on the path of each triggering write keeps writes of one branch together (an option and
    its switch set in the same ``if`` are seen together, never as independent maybes). The
    unconditional path comes first, so certain violations are found as such.
    """
    out: list[frozenset] = []
    for key in _trigger_keys(rel):
        eff = effective.get(key)
        for w in eff.writes if eff else ():
            p = frozenset((b.node_id, b.arm) for b in w.branches)
            if p not in out:
                out.append(p)
    out.sort(key=len)
    return out


def _violation(rel: Relation, view: OptionView, effective, path) -> tuple[Optional[str], tuple[str, ...]]:
    missing: tuple[str, ...] = ()
    if rel.kind == "together":
        present = [k for k in rel.keys if "set" in evaluate_kinds(k, view)]
        absent = [k for k in rel.keys if k not in present]
        if not present or not absent:
            return None, ()
        certain = [k for k in present if ABSENT_NOT_POSSIBLE(k, view)]
        return ("always" if certain else "conditional"), tuple(absent)
    if rel.kind == "requires":
        result = evaluate(cast(Condition, rel.when), view)  # (every kind but "together" has a condition)
        need = evaluate(cast(Condition, rel.require), view)
        combined = {("T" if a == "T" and b == "F" else ("U" if "U" in (a, b) else "F")) for a in result for b in need}
        return verdict(combined), missing
    if rel.kind == "gated":
        if rel.subject not in effective:
            return None, ()
        result = evaluate(cast(Condition, rel.when), view)
        subject_set = evaluate(Condition(op="set", key=rel.subject), view)
        combined = {("T" if s == "T" and r == "F" else ("U" if "U" in (s, r) else "F")) for s in subject_set for r in result}
        return verdict(combined), missing
    if rel.kind == "overrides" and rel.subject not in effective:
        return None, ()
    return verdict(evaluate(cast(Condition, rel.when), view)), missing


def evaluate_kinds(key: str, view: OptionView) -> set:
    return {"absent" if v is ABSENT else "set" for v in view.alternatives(key)}


def ABSENT_NOT_POSSIBLE(key: str, view: OptionView) -> bool:  # noqa: N802 - reads like a predicate
    return ABSENT not in view.alternatives(key)


def evaluate_relations(ctx: CheckContext) -> list[RelationHit]:
    cached = getattr(ctx, "_relation_hits", None)
    if cached is not None:
        return cached
    hits: list[RelationHit] = []
    release = ctx.settings.release
    fields = {key: spec.for_release(release).field for key, spec in ctx.kb.options.items()}
    for _config, entry in ctx.entries():
        effective = entry.effective()
        if not effective:
            continue
        # a config object on its own (DumpConfig(...) no NPURunConfig npu-audit read takes): only the relations
        # among keys its class writes hold whatever session config it joins
        within = object_keys(ctx.kb, entry.object_class) if entry.kind == CONFIG_OBJECT and entry.object_class else None
        for rel in ctx.kb.relations:
            if release not in rel.releases or not any(k in effective for k in rel.keys):
                continue
            if within is not None and not set(rel.keys) <= within:
                continue
            if rel.kind in ("gated", "overrides") and not _user_candidates(effective, rel.subject):
                continue  # the option without effect was written by NPURunConfig itself, not by the user
            for path in _paths(rel, effective):
                view = OptionView(effective, expand(path, effective) if path else None, fields, skip_wrong_field=True)
                certainty, missing = _violation(rel, view, effective, path)
                if certainty is None:
                    continue
                witness = path
                if path:
                    if certainty == "conditional":  # not on every run of the path: name the branch that makes it
                        witness = _narrower(rel, effective, fields, path) or path
                    certainty = "conditional"
                elif certainty == "conditional":
                    witness = _witness(rel, effective, fields) or path
                independent = None
                if rel.kind == "excludes" and certainty == "conditional":
                    how, where = co_occurrence(rel, effective, fields)
                    if how == "together" and where:
                        witness = cast(frozenset, where)  # (a branch path)
                    elif how == "separate":
                        independent = where
                anchor, others = _anchor(rel, effective, path, ctx.path)
                if anchor is not None:
                    hit = RelationHit(rel, entry, anchor, others, certainty, missing, branch=_describe(witness, effective))
                    if independent is not None:
                        _mark_independent(hit, independent, effective)
                    hits.append(hit)
                break
    hits.extend(_across_entries(ctx, hits, fields))
    ctx._relation_hits = hits
    return hits


def _across_entries(ctx, hits: list[RelationHit], fields) -> list[RelationHit]:
    """`excludes` relations on what several NpuOptimizer entries of one config produce together.

    The adapter processes the entries in order, later ones overwriting key by key, but checks
    exclusions per entry (NPURunConfig(session_config=cfg_with_an_entry, ...) gives two entries), so a
    combination split over two entries reaches the compiler unchecked. Reported only where no single
    entry shows the same relation."""
    out = []
    release = ctx.settings.release
    for config in ctx.configs:
        entries = [e for e in config.all_entries() if e.is_npu]
        if len(entries) < 2:
            continue
        merged: dict = {}
        for entry in entries:
            merged.update(entry.effective())
        for rel in ctx.kb.relations:
            if rel.kind != "excludes" or release not in rel.releases:
                continue
            if any(h.relation is rel and h.entry in entries for h in hits):
                continue
            if len({id(e) for e in entries for k in rel.keys if k in e.effective()}) < 2:
                continue  # the options are not split over entries
            certainty, _ = _violation(rel, OptionView(merged, None, fields, skip_wrong_field=True), merged, frozenset())
            if certainty is None:
                continue
            how, where = co_occurrence(rel, merged, fields) if certainty == "conditional" else ("together", None)
            anchor, others = _anchor(rel, merged, frozenset(), ctx.path)
            if anchor is not None:
                owner = next(e for e in entries if anchor in e.writes)
                hit = RelationHit(rel, owner, anchor, others, certainty, across_entries=True)
                if how == "separate":
                    _mark_independent(hit, where, merged)
                out.append(hit)
    return out


def _all_paths(rel: Relation, effective) -> list[frozenset]:
    out: list[frozenset] = []
    for key in rel.keys:
        eff = effective.get(key)
        for w in eff.writes if eff else ():
            p = frozenset((b.node_id, b.arm) for b in w.branches)
            if p and p not in out:
                out.append(p)
    return out


def _witness(rel: Relation, effective, fields) -> Optional[frozenset]:
    """A branch path on which a possible violation certainly happens (to name it in the message)."""
    for path in _all_paths(rel, effective):
        certainty, _ = _violation(rel, OptionView(effective, expand(path, effective), fields, skip_wrong_field=True), effective, path)
        if certainty == "always":
            return path
    return None


def _narrower(rel: Relation, effective, fields, path: frozenset) -> Optional[frozenset]:
    """``path`` plus the branch of another write of the relation's options on which a violation found
    on ``path`` only possibly happens certainly happens (an overwrite under its own ``if``), so the
    message names every condition of that run; None when no single branch does it."""
    for other in _all_paths(rel, effective):
        if other <= path:
            continue
        union = expand(path | other, effective)
        if not consistent(union):
            continue
        view = OptionView(effective, union, fields, skip_wrong_field=True)
        if _violation(rel, view, effective, path | other)[0] == "always":
            return path | other
    return None


def co_occurrence(rel: Relation, effective, fields) -> tuple[str, Optional[object]]:
    """Whether the writes that make an `excludes` combination can be taken by one run.

    ``("together", path)``: one branch path (that of one of the writes, or no branch at all) holds every
    write the combination needs: they sit in the same branch, in nested branches, or one is unconditional,
    so whenever that path is taken the options conflict. ``("separate", (a, b))``: no such path exists,
    but the paths of two writes under unrelated conditions do it together: the conflict happens only on a
    run where both conditions hold (two opt-in flags, say), which the script does not tell.
    ``("unknown", None)`` otherwise (unresolved values, three or more conditions)."""
    paths = sorted(_all_paths(rel, effective), key=len)
    for path in [frozenset()] + paths:
        view = OptionView(effective, expand(path, effective), fields, strict=True, skip_wrong_field=True)
        if _violation(rel, view, effective, path)[0] == "always":
            return "together", path
    for i, a in enumerate(paths):
        for b in paths[i + 1:]:
            if a <= b or b <= a:
                continue
            union = expand(a | b, effective)
            if not consistent(union):
                continue  # arms of one if/else (or of two tests of the same expression): never together
            if _violation(rel, OptionView(effective, union, fields, strict=True, skip_wrong_field=True), effective, a | b)[0] == "always":
                return "separate", (a, b)
    return "unknown", None


def _mark_independent(hit: RelationHit, pair, effective) -> None:
    a, b = pair
    first, second = _describe(a - b, effective), _describe(b - a, effective)
    if first is None or second is None:
        return
    hit.independent = (first, second)
    hit.certainty = "conditional"
    common = _describe(a & b, effective)
    hit.branch = (f"{common}; " if common else "") + f"'{first}' and '{second}' on the same run"


def _describe(path, effective) -> Optional[str]:
    if not path:
        return None
    steps = {}
    for eff in effective.values():
        for w in eff.writes:
            for b in w.branches:
                if (b.node_id, b.arm) in path:
                    steps[(b.node_id, b.arm)] = b.description
    return "; ".join(dict.fromkeys(steps.values())) or None


def _user_candidates(effective, key) -> list[OptionWrite]:
    eff = effective.get(key)
    return [w for w in eff.candidates if not w.implicit] if eff else []


def _anchor(rel: Relation, effective, path=frozenset(), here: str = "") -> tuple[Optional[OptionWrite], list[OptionWrite]]:
    """The write to report on: the subject's if the user wrote it, else another option of the relation
    the user wrote; writes in the file being reported on come first."""
    order = [rel.subject] + [k for k in rel.keys if k != rel.subject]
    if rel.kind in ("gated", "overrides"):
        order = [rel.subject]
    anchor = None
    for in_this_file in (True, False):
        for key in order:
            user = _user_candidates(effective, key)
            if path:
                expanded = expand(path, effective)
                user = [w for w in user if compatible(w, expanded)]
            if in_this_file:
                user = [w for w in user if w.path == here]
            if user:
                anchor = user[-1]
                break
        if anchor is not None:
            break
    others = []
    for key in rel.keys:
        eff = effective.get(key)
        if eff is None:
            continue
        for w in eff.candidates:
            if w is not anchor:
                others.append(w)
    return anchor, others


def hit_message(hit: RelationHit) -> str:
    message = hit.relation.message.rstrip(".")
    if hit.missing:
        message += f" (missing: {', '.join(hit.missing)})"
    return message
