"""Shared body of the rules that report relation hits (missing-companion, conflicting-options, no-effect)."""

from npu_audit.checks import tf2
from npu_audit.checks.relations import KIND_TO_RULE, evaluate_relations, hit_message


def relation_findings(rule, ctx, fix_for=None):
    for hit in evaluate_relations(ctx):
        if KIND_TO_RULE[hit.relation.kind] != rule.name:
            continue
        w = hit.anchor
        related = []
        for other in hit.others:
            r = ctx.related_write(other, f"'{other.key}' is set here" + (_by(other) if other.implicit else ""))
            if r is not None:
                related.append(r)
        message, severity = hit_message(hit), hit.relation.severity
        # TF2 scripts read the TF2 names of the options (and whose check a failure is)
        message = tf2.wording(ctx, w, message) + tf2.relation_note(w, hit.relation)
        if tf2.unenforced(w, hit.relation):
            # the adapter that reads this config does not make the failure happen: the documented
            # incompatibility stands, the certain failure does not (Relation.enforced_by)
            severity = "warning" if severity == "error" else severity
        if hit.across_entries:
            message += (" (the options are set on different NpuOptimizer entries of one session config: the adapter "
                        "checks this per entry, so nothing stops it at session start)")
            severity = "warning" if severity == "error" else severity
        if hit.independent:
            # each option has its own condition, and no path of the script takes both: whether one run
            # turns both on is not written in the script (two opt-in flags, say), so this is information
            message += (" (the options are set under separate conditions: this happens only on a run where both "
                        "hold, so make sure they are never on together)")
            severity = "info"
        f = ctx.report(rule, hit, message, severity=severity, hint=tf2.wording(ctx, w, hit.relation.hint),
                       related=related, fix=fix_for(ctx, hit) if fix_for else None)
        if f:
            yield f


def _by(write) -> str:
    """Who writes an option the script does not set itself: a flag whose default is None (its value comes
    from the command line), a config object's default (DumpConfig's enable_dump=False) or NPURunConfig."""
    if not write.value.resolved:
        return " (by a flag whose value is given on the command line)"
    if write.via and write.via not in ("NPURunConfig", "implicit"):
        return f" ({write.via}'s default)"
    return " (by NPURunConfig)"
