from typing import Any

from npu_audit.checks.base import Expect, Invalid, Rule, describe
from npu_audit.checks.rules import PRELUDE
from npu_audit.extract.model import CONFIG_OBJECT
from npu_audit.findings import Related


def _value(v):
    return v.python if v is not None and v.resolved else None


class InconsistentWithCode(Rule):
    code = "NPU402"
    name = "inconsistent-with-code"
    severity = "warning"
    summary = "An option that disagrees with the code around it (set_iteration_per_loop, NPUOptimizer)."
    what = (
        "Compares iterations_per_loop with the loop count passed to `util.set_iteration_per_loop(sess, op, N)` "
        "for the same session (or the same file when it has one NPU config), and is_tailing_optimization with "
        "`NPUOptimizer(..., is_tailing_optimization=...)`."
    )
    why = (
        "The docs require both places to agree: the option is used to verify the loop offload, and tailing "
        "optimization only works when the optimizer and the session agree. A mismatch fails or silently "
        "disables the optimisation."
    )
    fix_safety = "No automatic fix: which of the two numbers is right depends on your training loop."
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["iterations_per_loop"].i = 10\n'
                      'with tf.Session(config=config) as sess:\n    train_op = util.set_iteration_per_loop(sess, op, 100)\n',
            (Expect(7, 1, "iterations_per_loop is 10 but set_iteration_per_loop uses 100: both must be equal"),),
        ),
        Invalid(  # the write is on a branch: the finding may happen, it is not certain
            PRELUDE + 'if FLAGS.tail:\n    custom_op.parameter_map["is_tailing_optimization"].b = True\n'
                      'opt = NPUOptimizer(tf.train.AdamOptimizer(0.1), is_tailing_optimization=False)\n',
            (Expect(8, 5, "is_tailing_optimization is True in the session config but False in NPUOptimizer(...): "
                          "both must be equal [may happen: if FLAGS.tail]"),),
        ),
        Invalid(  # the other way round: on the path that skips the write, the default (False) disagrees
            PRELUDE + 'if FLAGS.tail:\n    custom_op.parameter_map["is_tailing_optimization"].b = True\n'
                      'opt = NPUOptimizer(tf.train.AdamOptimizer(0.1), is_tailing_optimization=True)\n',
            (Expect(9, 73, "is_tailing_optimization is False in the session config but True in NPUOptimizer(...): "
                          "both must be equal [may happen on some paths]"),),
        ),
    )
    valid = (PRELUDE + 'custom_op.parameter_map["iterations_per_loop"].i = 100\n'
                       'with tf.Session(config=config) as sess:\n    train_op = util.set_iteration_per_loop(sess, op, 100)\n',)

    def check(self, ctx):
        # TF2 option objects have no session for set_iteration_per_loop/NPUOptimizer to agree with, and a
        # config object whose NPURunConfig is not seen is no session config
        npu_configs = [c for c in ctx.configs
                       if c.npu_entries() and c.kind not in ("global_options", CONFIG_OBJECT)]
        loose = list(ctx.facts)
        for config in npu_configs:
            facts = list(config.facts) + (loose if len(npu_configs) == 1 else [])
            eff = {}
            for entry in config.npu_entries():
                eff.update(entry.effective())
            yield from self._iterations(ctx, eff, [f for f in facts if f.kind == "set_iteration_per_loop"])
            yield from self._tailing(ctx, eff, [f for f in facts if f.kind == "npu_optimizer_tailing"])

    def _iterations(self, ctx, eff, facts):
        option = eff.get("iterations_per_loop")
        for fact in facts:
            n = _value(fact.value)
            if not isinstance(n, int) or isinstance(n, bool):
                continue
            if option is None:
                if n == 1:
                    continue
                f = ctx.report(self, fact,
                               f"set_iteration_per_loop runs {n} iterations per loop, but the session config does not set "
                               "iterations_per_loop (default 1)", option="iterations_per_loop",
                               hint=f'set custom_op.parameter_map["iterations_per_loop"].i = {n}')
                if f:
                    yield f
                continue
            for w in option.candidates:
                v = _value(w.value)
                if not isinstance(v, int) or isinstance(v, bool) or v == n:
                    continue
                flag = f" (the default of flag '{w.value.flag}')" if w.value.origin == "flag-default" else ""
                if w.implicit:  # NPURunConfig's own value: shown at the call that disagrees with it
                    about: Any = fact
                    related = [r for r in [ctx.related_write(w, f"iterations_per_loop is {v} here")] if r]
                else:
                    about = w
                    related = [Related(fact.path, fact.range.line, fact.range.column,
                                       f"set_iteration_per_loop uses {n} here")] if fact.range else []
                f = ctx.report(self, about,
                               f"iterations_per_loop is {v}{flag} but set_iteration_per_loop uses {n}: both must be equal",
                               option="iterations_per_loop", related=related, write=w,
                               certainty=w.certainty, branch=w.branch_text(), hint=f"use {n} in both places")
                if f:
                    yield f

    def _tailing(self, ctx, eff, facts):
        option = eff.get("is_tailing_optimization")
        for fact in facts:
            n = _value(fact.value)
            if not isinstance(n, bool):
                continue
            fact_branch = "; ".join(step.description for step in fact.branches) or None
            # each value the session config may end with (not set: the adapter's default, False)
            writes = list(option.candidates) if option is not None else [None]
            maybe_absent = option is not None and not option.definitely_set
            if maybe_absent:
                writes.append(None)
            for w in writes:
                if w is not None and not w.value.resolved:
                    continue
                current = bool(w.value.python) if w is not None else False
                if current == n:
                    continue
                # certain only when both the write and the NPUOptimizer call always happen
                branch = "; ".join(b for b in (w.branch_text() if w is not None else None, fact_branch) if b) or None
                certainty = ("conditional" if (w is not None and w.conditional) or (w is None and maybe_absent)
                             or fact.branches else "always")
                related = []
                if w is None or w.implicit:  # NPURunConfig's own value, or the default: shown at the call
                    about: Any = fact
                    if w is not None:
                        related = [r for r in [ctx.related_write(w, f"is_tailing_optimization is {describe(current)} here")] if r]
                else:
                    about = w
                    if fact.range is not None:
                        related = [Related(fact.path, fact.range.line, fact.range.column,
                                           f"NPUOptimizer(...) sets is_tailing_optimization={describe(n)} here")]
                f = ctx.report(self, about,
                               f"is_tailing_optimization is {describe(current)} in the session config but "
                               f"{describe(n)} in NPUOptimizer(...): both must be equal",
                               option="is_tailing_optimization", related=related, certainty=certainty, branch=branch,
                               write=w if w is not None and not w.implicit else None,
                               hint=f"set is_tailing_optimization to {describe(n)} in both places")
                if f:
                    yield f
