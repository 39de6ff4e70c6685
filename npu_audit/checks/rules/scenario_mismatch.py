from typing import NamedTuple, Optional

from npu_audit.checks import tf2
from npu_audit.checks.base import Expect, Invalid, Rule, describe
from npu_audit.checks.rules import PRELUDE
from npu_audit.extract.model import CONFIG_OBJECT, OptionWrite
from npu_audit.extract.model import TF2_OPTIONS_KIND as TF2_KIND
from npu_audit.knowledge.vocabulary import SCENARIO_NAMES as NAMES


class Scenario(NamedTuple):
    """The scenario of an entry, and what decides it: "setting" (--scenario), "written" (graph_run_mode
    written with one known value; ``source`` is the write, implicit when NPURunConfig/NPUEstimator
    wrote it by itself) or "default" (graph_run_mode written on no path: the adapter's default, 1)."""

    name: Optional[str]
    source: Optional[OptionWrite] = None
    how: Optional[str] = None


def entry_scenario(ctx, entry) -> Scenario:
    """The certain scenario of an entry: --scenario, else the graph_run_mode of the session config it runs
    in, the same in every config that runs it (see :func:`_scenario_in`)."""
    if ctx.settings.scenario:
        return Scenario(ctx.settings.scenario, None, "setting")
    if entry.kind == CONFIG_OBJECT:
        return Scenario(None)  # a config object whose NPURunConfig is not seen: graph_run_mode is not known
    found = [_scenario_in(ctx, entry, holder) for holder in _holders(ctx, entry)]
    if not found or any(s.name is None or s.name != found[0].name for s in found):
        return Scenario(None)
    return found[0]


def _holders(ctx, entry) -> list:
    """The configs that run ``entry`` as one session config: those holding it that no other config wraps
    (NPURunConfig(session_config=config) runs config's entries followed by its own), and those a session
    was seen opened with."""
    holding = [c for c in ctx.configs if any(e is entry for e in c.all_entries())]
    wrapped: set[int] = set()
    todo = [inner for c in holding for inner in c.wraps]
    while todo:
        inner = todo.pop()
        if id(inner) not in wrapped:
            wrapped.add(id(inner))
            todo.extend(inner.wraps)
    return [c for c in holding if id(c) not in wrapped or c.opened]


def _scenario_in(ctx, entry, holder) -> Scenario:
    """The scenario of ``entry`` in ``holder``: the adapter processes the NPU entries of one config in order,
    a later entry overwriting graph_run_mode (../shared/adapter/README.md 2.5), so the last entry that writes
    it decides, when it writes one known value on every path. NPURunConfig's own entry writes it on every run
    (npu_estimator.py:802, 1 unless given graph_run_mode=0), after the entries of its session_config. When no
    entry writes it: training (the adapter's default is 1: rules/options/basic.toml, keys.tsv,
    npu_attrs.cc:2137; the TF2 option object passes 1 on too, tf2_options.toml), except for an entry reached
    only through an object of unknown origin (kind "orphan") or TF2 options seen without the npu_device.open()
    that reads them: code not seen may write graph_run_mode there. (A config object on its own never gets
    here: :func:`entry_scenario` leaves its scenario unknown.)

    graph_run_mode = 0 written in a ConfigProto handed on to code not read here (:func:`_handed_to_code_not_read`)
    is not a known scenario: that code decides, and NPURunConfig(session_config=config) there would run it as
    training (its own entry comes last). Without that wrapper 0 holds, with it 1 does; a config that writes 1
    or nothing is training either way."""
    entries = [e for e in holder.all_entries() if e.is_npu is not False]
    for other in reversed(entries):
        eff = other.effective().get("graph_run_mode")
        if eff is None:
            continue
        if eff.certainty != "always" or not eff.last.value.resolved:
            return Scenario(None)
        value = eff.last.value.python
        if isinstance(value, bool) or not isinstance(value, int) or value not in _SCENARIO_OF:
            return Scenario(None)
        if _SCENARIO_OF[value] == "inference" and _handed_to_code_not_read(holder):
            return Scenario(None)
        return Scenario(_SCENARIO_OF[value], eff.last, "written")
    if entry.kind == "orphan" or _tf2_unopened(ctx, entry):
        return Scenario(None)
    return Scenario("training", None, "default")


def _handed_to_code_not_read(config) -> bool:
    """Whether a session config (a ConfigProto, or an object used like one) may be taken by code npu-audit did
    not read: no session was seen opened with it, no NPURunConfig read here wraps it (else it would not hold
    the entry on its own), and it is not certain that it goes nowhere (a name only ever written into)."""
    return config.kind in ("ConfigProto", "unknown") and not config.opened and config.handed_on is not False


def _tf2_unopened(ctx, entry) -> bool:
    """Whether ``entry`` is TF2's process-wide global_options() object seen without the npu_device.open()
    that reads it: another module of the process may set graph_run_mode before the device is opened."""
    configs = [c for c in ctx.configs if c.kind == TF2_KIND and any(e is entry for e in c.all_entries())]
    return bool(configs) and not any(c.opens for c in configs)


class ScenarioMismatch(Rule):
    code = "NPU303"
    name = "scenario-mismatch"
    severity = "warning"
    summary = "An option or value meant for training used in an inference config, or the reverse."
    what = (
        "When the scenario is known, reports options and values the docs limit to the other scenario, e.g. "
        "input_shape/dynamic_dims (inference) in a training config, or precision_mode force_fp16 (inference "
        "only) in training. The scenario is `--scenario`, else graph_run_mode when it is written with one "
        "known value (0 = online inference, 1 = training; NPURunConfig writes 1 unless given "
        "graph_run_mode=0), else, when graph_run_mode is written on no path, training: the adapter's "
        "default is 1. An inference-only value in such a config most likely belongs to an inference script "
        "that forgot graph_run_mode = 0, and the message says so. The entries of one session config are "
        "merged, the last one that writes graph_run_mode deciding: a config given to "
        "NPURunConfig(session_config=...) trains unless NPURunConfig is given graph_run_mode=0, whatever the "
        "config itself writes (NPUEstimator's entry comes last). When graph_run_mode is written only on some "
        "paths or from a value not known, or a config that writes graph_run_mode = 0 is handed on to code "
        "npu-audit does not read (returned, kept on an object, given to an unknown call) with no session seen "
        "opened with it, nothing is assumed."
    )
    why = ("Options documented for the other scenario are ignored or behave differently on the device; an "
           "inference script without graph_run_mode = 0 is compiled and run as a training graph.")
    fix_safety = "No automatic fix."
    invalid = (
        Invalid(
            PRELUDE + 'custom_op.parameter_map["precision_mode"].s = b"force_fp16"\n',
            (Expect(7, 47, "graph_run_mode is not set, so the adapter runs this config as training (its default, "
                           "graph_run_mode = 1), but 'force_fp16' for 'precision_mode' is meant for online inference "
                           'only: for online inference write parameter_map["graph_run_mode"].i = 0'),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["graph_run_mode"].i = 1\n'
                      'custom_op.parameter_map["precision_mode"].s = b"force_fp16"\n',
            (Expect(8, 47, "'force_fp16' for 'precision_mode' is meant for online inference only, but this config is "
                           "for training (graph_run_mode)"),),
        ),
        Invalid(
            PRELUDE + 'custom_op.parameter_map["graph_run_mode"].i = 0\n'
                      'custom_op.parameter_map["iterations_per_loop"].i = 10\n',
            (Expect(8, 25, "'iterations_per_loop' is documented for training only, but this config is for online "
                           "inference (graph_run_mode)"),),
        ),
        Invalid(  # an option limited to inference, graph_run_mode on no path
            PRELUDE + 'if FLAGS.dynamic:\n'
                      '    custom_op.parameter_map["input_shape"].s = b"data:-1,224,224,3"\n',
            (Expect(8, 29, "graph_run_mode is not set, so the adapter runs this config as training (its default, "
                           "graph_run_mode = 1), but 'input_shape' is documented for online inference only: for "
                           'online inference write parameter_map["graph_run_mode"].i = 0 [may happen: if FLAGS.dynamic]'),),
        ),
        Invalid(  # TF2: the option object passes graph_run_mode = 1 on by default (npu_config.py:28)
            tf2.PRELUDE + 'npu.global_options().precision_mode = "force_fp16"\n'
                          'npu.open().as_default()\n',
            (Expect(3, 39, "graph_run_mode is not set, so the adapter runs this config as training (its default, "
                           "graph_run_mode = 1), but 'force_fp16' for 'precision_mode' is meant for online inference "
                           "only: for online inference write global_options().graph_run_mode = 0"),),
        ),
        Invalid(  # a session config's own 0 is overwritten by NPUEstimator's entry, processed after it
            PRELUDE + 'custom_op.parameter_map["graph_run_mode"].i = 0\n'
                      'custom_op.parameter_map["precision_mode"].s = b"force_fp16"\n'
                      'run_config = NPURunConfig(session_config=config)\n',
            (Expect(8, 47, "'force_fp16' for 'precision_mode' is meant for online inference only, but this config is "
                           "for training: NPURunConfig(session_config=...) runs NPUEstimator's own entry after this "
                           "one, and it writes graph_run_mode = 1 over the 0 written here"),),
        ),
        Invalid(  # NPURunConfig writes graph_run_mode = 1 by itself (npu_estimator.py:802)
            'from npu_bridge.npu_init import *\n\nrun_config = NPURunConfig(precision_mode="force_fp16")\n',
            (Expect(3, 42, "'force_fp16' for 'precision_mode' is meant for online inference only, but this config is "
                           "for training (NPURunConfig writes graph_run_mode = 1 when it is not given graph_run_mode=0)"),),
        ),
    )
    valid = (
        PRELUDE + 'custom_op.parameter_map["graph_run_mode"].i = 0\n'
                  'custom_op.parameter_map["precision_mode"].s = b"force_fp16"\n',
        # --scenario wins over the default
        "# npu-audit-test: scenario=inference\n" + PRELUDE + 'custom_op.parameter_map["precision_mode"].s = b"force_fp16"\n',
        # graph_run_mode on some paths only: the scenario is not known
        PRELUDE + 'if FLAGS.predict:\n    custom_op.parameter_map["graph_run_mode"].i = 0\n'
                  'custom_op.parameter_map["precision_mode"].s = b"force_fp16"\n',
        # the entry NPURunConfig merges with this one writes graph_run_mode = 0
        PRELUDE + 'custom_op.parameter_map["precision_mode"].s = b"force_fp16"\n'
                  'run_config = NPURunConfig(session_config=config, graph_run_mode=0)\n',
        # graph_run_mode = 0 in a config returned to code not read here: NPURunConfig(session_config=...)
        # there would make it a training config, a session an inference one
        'import tensorflow as tf\n\ndef make_config():\n    config = tf.ConfigProto()\n'
        '    custom_op = config.graph_options.rewrite_options.custom_optimizers.add()\n'
        '    custom_op.name = "NpuOptimizer"\n    custom_op.parameter_map["graph_run_mode"].i = 0\n'
        '    custom_op.parameter_map["iterations_per_loop"].i = 10\n    return config\n',
        # an entry of an object made elsewhere: graph_run_mode may be written there
        'def set_options(custom_op):\n    custom_op.parameter_map["precision_mode"].s = b"force_fp16"\n',
        # TF2: a helper that sets the process-wide options, the device opened elsewhere (where
        # graph_run_mode may be set)
        tf2.PRELUDE + 'def setup():\n    npu.global_options().precision_mode = "force_fp16"\n',
        # an option that is not read at all (work_path without aoe_mode): no-effect reports it, with this reason
        PRELUDE + 'custom_op.parameter_map["graph_run_mode"].i = 0\n'
                  'custom_op.parameter_map["work_path"].s = b"./tuning"\n',
        # a training value in a config without graph_run_mode (training by default)
        PRELUDE + 'custom_op.parameter_map["iterations_per_loop"].i = 10\n',
        # a DynamicInputConfig on its own: the NPURunConfig that takes it decides the scenario
        "from npu_bridge.npu_init import *\n\n\ndef dynamic_settings():\n    return DynamicInputConfig(input_shape='data:-1,224', "
        "dynamic_dims='1;2', dynamic_node_type=1, compile_hybrid_mode=0)\n",
    )

    def check(self, ctx):
        for _config, entry in ctx.entries():
            scenario = entry_scenario(ctx, entry)
            if scenario.name is None:
                continue
            source = scenario.source
            related = [r for r in [ctx.related_write(source, "graph_run_mode sets the scenario here")] if r] if source else []
            for w in entry.writes:
                if w.implicit or w.key == "graph_run_mode":
                    continue
                view = ctx.release_view(w.key)
                if view is None:
                    continue
                if scenario.name not in view.scenarios:
                    what, at, meant = f"'{w.key}' is documented for {_names(view.scenarios)} only", "key", view.scenarios
                elif w.value.resolved:
                    fact = ctx.spec(w.key).value_fact(w.value.decoded())
                    if fact is None or not fact.scenarios or scenario.name in fact.scenarios:
                        continue
                    what, at = f"{describe(w.value.decoded())} for '{w.key}' is meant for {_names(fact.scenarios)} only", "value"
                    meant = fact.scenarios
                else:
                    continue
                message, hint = (tf2.wording(ctx, w, text)
                                 for text in _message(scenario, what, meant, _lost(entry, scenario)))
                f = ctx.report(self, w, message, at=at, related=related, hint=hint)
                if f:
                    yield f


def _names(scenarios) -> str:
    names: dict = NAMES
    return " and ".join(names[s] for s in scenarios)


def _lost(entry, scenario: Scenario) -> Optional[OptionWrite]:
    """The graph_run_mode the entry writes itself when another entry processed after it decides the scenario
    (NPURunConfig(session_config=config): NPUEstimator's entry comes last)."""
    if scenario.how != "written" or scenario.source is None or any(w is scenario.source for w in entry.writes):
        return None
    own = entry.effective().get("graph_run_mode")
    return own.last if own is not None and own.last.value.resolved else None


def _message(scenario: Scenario, what: str, meant, lost: Optional[OptionWrite] = None) -> tuple[str, str]:
    """The message (what is wrong, and where the scenario comes from) and the hint. ``meant``: the scenarios
    the option (or its value) is for; ``lost``: the entry's own graph_run_mode, overwritten by the entry that
    decides."""
    inference = _mode_write("inference")
    if scenario.how == "default":
        # nothing written: most likely an inference script that forgot graph_run_mode = 0
        return (f"graph_run_mode is not set, so the adapter runs this config as training (its default, "
                f"graph_run_mode = 1), but {what}: for online inference write {inference}",
                f"for online inference write {inference}; for training remove this setting")
    if scenario.how == "written" and scenario.source is not None and scenario.source.implicit and lost is not None:
        return (f"{what}, but this config is for {_names([scenario.name])}: NPURunConfig(session_config=...) runs "
                f"NPUEstimator's own entry after this one, and it writes graph_run_mode = "
                f"{describe(scenario.source.value.python)} over the {describe(lost.value.python)} written here",
                "for online inference pass graph_run_mode=0 to NPURunConfig; for training remove this setting")
    if scenario.how == "written" and scenario.source is not None and scenario.source.implicit:
        return (f"{what}, but this config is for {_names([scenario.name])} (NPURunConfig writes graph_run_mode = 1 "
                "when it is not given graph_run_mode=0)",
                "for online inference pass graph_run_mode=0 to NPURunConfig; for training remove this setting")
    why = "--scenario" if scenario.how == "setting" else "graph_run_mode"
    other = next((s for s in meant if s != scenario.name), None)
    hint = f"for {_names([scenario.name])} remove this setting"
    if other is not None and scenario.how == "setting":
        hint += f"; if the script is for {_names([other])}, check it with --scenario {other}"
    elif other in _GRAPH_RUN_MODE:
        hint += f"; for {_names([other])} write {_mode_write(other)}"
    return f"{what}, but this config is for {_names([scenario.name])} ({why})", hint


# graph_run_mode's value for each scenario (the adapter's meaning of 0 and 1), and the scenario of each value
_GRAPH_RUN_MODE = {"training": 1, "inference": 0}
_SCENARIO_OF = {value: scenario for scenario, value in _GRAPH_RUN_MODE.items()}


def _mode_write(scenario: str) -> str:
    """The write that makes a config run as ``scenario`` (as a TF2 user reads it: tf2.wording)."""
    return f'parameter_map["graph_run_mode"].i = {_GRAPH_RUN_MODE[scenario]}'
