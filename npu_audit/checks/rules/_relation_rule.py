"""Shared body of the rules that report relation hits (missing-companion, conflicting-options, no-effect)."""

from npu_audit.checks.relations import KIND_TO_RULE, evaluate_relations, hit_message


def relation_findings(rule, ctx, fix_for=None):
    for hit in evaluate_relations(ctx):
        if KIND_TO_RULE[hit.relation.kind] != rule.name:
            continue
        w = hit.anchor
        related = []
        for other in hit.others:
            r = ctx.related_write(other, f"'{other.key}' is set here" + (" (by NPURunConfig)" if other.implicit else ""))
            if r is not None:
                related.append(r)
        branch = hit.branch or w.branch_text()
        f = ctx.finding(rule, w.path, w.key_range or w.range, hit_message(hit), calls=w.calls, write=w,
                        severity=hit.relation.severity, hint=hit.relation.hint, option=w.key, related=related,
                        certainty=hit.certainty, branch=branch, fix=fix_for(ctx, hit) if fix_for else None)
        if f:
            yield f
