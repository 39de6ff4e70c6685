"""Fields the JSON value of an option must hold in one scenario (``[[field_requirement]]`` of
rules/relations.toml): a training run that profiles needs training_trace (and task_trace) on in
profiling_options. missing-companion reports them: the value is well-formed, what it lacks is a
setting the run needs.

The scenario is the one scenario-mismatch reads (``entry_scenario``: --scenario, else the graph_run_mode
the session runs with, the adapter's default being training); where it is not known (a config object
whose NPURunConfig is not seen, TF2 options without the device open, a config handed to code not read
here) nothing is reported. When graph_run_mode is not written the adapter's default (training) holds,
but whether the script trains is not written: the finding is then information.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from npu_audit.checks import tf2
from npu_audit.checks.base import CheckContext, Rule
from npu_audit.checks.conditions import OptionView, evaluate, expand
from npu_audit.checks.rules.scenario_mismatch import Scenario, entry_scenario
from npu_audit.findings import Finding
from npu_audit.knowledge.grammars.profiling import parse_profiling_options
from npu_audit.knowledge.vocabulary import SCENARIO_NAMES
from npu_audit.knowledge.vocabulary import Scenario as ScenarioName


def field_requirement_findings(rule: Rule, ctx: CheckContext) -> Iterator[Finding]:
    requirements = ctx.kb.field_requirements
    if not requirements:
        return
    fields = {key: spec.for_release(ctx.settings.release).field for key, spec in ctx.kb.options.items()}
    for _config, entry in ctx.entries():
        effective = entry.effective()
        for req in requirements:
            eff = effective.get(req.option)
            if eff is None:
                continue  # absent: the adapter's default value, which meets the requirement
            scenario = entry_scenario(ctx, entry)
            if scenario.name != req.scenario:
                continue
            for w in eff.candidates:
                if w.implicit or not w.value.resolved or not isinstance(w.value.decoded(), str):
                    continue
                # the condition on the run that makes this write (profiling switched on in the same `if`)
                path = frozenset((b.node_id, b.arm) for b in w.branches)
                view = OptionView(effective, expand(path, effective) if path else None, fields, skip_wrong_field=True)
                if evaluate(req.when, view) != {"T"}:
                    continue
                parsed = parse_profiling_options(w.value.decoded())
                if not parsed:
                    continue  # not a JSON object (malformed-value), or empty: the adapter's default
                lacking = _lacking(req, parsed)
                if not lacking:
                    continue
                orphans = [f for f, needs in req.goes_with.items() if f in parsed and needs in lacking]
                message = (f"{req.option} {' and '.join(lacking.values())} in a {_scenario_name(req.scenario)} run "
                           f"({_why(scenario)}): {req.message}")
                for needs in dict.fromkeys(req.goes_with[f] for f in orphans):
                    given = [f for f in orphans if req.goes_with[f] == needs]
                    message += f" ({' and '.join(given)}, given here, {'is' if len(given) == 1 else 'are'} only read with {needs} on)"
                # graph_run_mode left at its default: the adapter runs the graph as training, but whether the
                # script trains (or evaluates without saying so) is not written there: say less
                severity = "info" if scenario.how == "default" else req.severity
                f = ctx.report(rule, w, tf2.wording(ctx, w, message) or message, at="value", severity=severity,
                               hint=tf2.wording(ctx, w, req.hint))
                if f:
                    yield f


def _lacking(req, parsed: dict) -> dict[str, str]:
    """The required fields ``parsed`` does not meet, each with what is wrong with it."""
    out = {}
    for name, allowed in req.fields.items():
        if name not in parsed:
            if name not in req.absent_ok:
                out[name] = f"has no {name}"
        elif not (isinstance(parsed[name], str) and parsed[name] in allowed):
            out[name] = f"sets {name} to {parsed[name]!r}"
    return out


def _scenario_name(scenario: str) -> str:
    """A scenario as messages name it ("online inference")."""
    return SCENARIO_NAMES.get(cast(ScenarioName, scenario), scenario)


def _why(scenario: Scenario) -> str:
    """What makes the run one of training."""
    if scenario.how == "setting":
        return "--scenario"
    if scenario.how == "written" and scenario.source is not None and scenario.source.implicit:
        return "NPURunConfig writes graph_run_mode = 1"
    if scenario.how == "written":
        return "graph_run_mode = 1"
    return "graph_run_mode is not written: the adapter's default is training"
