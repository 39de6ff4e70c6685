from npu_audit.checks.base import Expect, Invalid, Rule


class RunConfigHazard(Rule):
    code = "NPU403"
    name = "runconfig-hazard"
    severity = "error"
    summary = "An NPURunConfig/config-object call that the adapter mishandles (TypeError, silently dropped settings)."
    what = (
        "Reports known pitfalls of NPURunConfig and its config objects: unknown keywords (TypeError), "
        "insert_op_file given a str (written without as_bytes: TypeError), DumpConfig(dump_mode=None) dropping "
        "dump_debug_mode, DynamicInputConfig with a field missing (the whole dynamic-dims setting is dropped), "
        "ProfilingConfig options given with profiling disabled."
    )
    why = "These fail when the script builds its estimator, or lose settings without any message."
    fix_safety = "No automatic fix."
    invalid = (
        Invalid(
            "from npu_bridge.npu_init import *\nrun_config = NPURunConfig(iteration_per_loop=10)\n",
            (Expect(2, 27, "NPURunConfig has no keyword 'iteration_per_loop': the script fails with TypeError when "
                           "it builds the config; did you mean 'iterations_per_loop'?",
                    hint="write iterations_per_loop=", option="NPURunConfig.iteration_per_loop"),),
        ),
        Invalid(  # a keyword older releases took
            "from npu_bridge.npu_init import *\nrun_config = NPURunConfig(auto_tune_mode='RL,GA')\n",
            (Expect(2, 27, "Passing auto_tune_mode= to the current NPURunConfig raises TypeError (unexpected keyword "
                           "argument)",
                    hint='remove auto_tune_mode=; operator tuning is done with AOE now (Atlas A3, A2 and training '
                         'products): pass aoe_mode="2" to NPURunConfig to tune operators',
                    option="NPURunConfig.auto_tune_mode"),),
        ),
        Invalid(
            "from npu_bridge.npu_init import *\nrun_config = NPURunConfig(dynamic_input_config=DynamicInputConfig("
            "input_shape='data:1,-1', dynamic_dims='1;2', dynamic_node_type=1, compile_hybrid_mode=None))\n",
            (Expect(2, 48, "DynamicInputConfig needs all of input_shape, dynamic_dims, dynamic_node_type and "
                           "compile_hybrid_mode; with compile_hybrid_mode missing or None, NPUEstimator silently "
                           "drops the whole dynamic-dims setting",
                    hint="give compile_hybrid_mode a value; pass compile_hybrid_mode=0 to keep the behaviour of "
                         "releases without it", option="NPURunConfig.dynamic_input_config"),),
        ),
        Invalid(  # a config object no NPURunConfig that npu-audit reads takes: checked where it is built
            "from npu_bridge.npu_init import *\n\ndef dump_settings():\n"
            "    return DumpConfig(enable_dump=True, dump_path='/tmp/d', op_debug_level=2)\n",
            (Expect(4, 61, "DumpConfig has no keyword 'op_debug_level': the script fails with TypeError",
                    hint="remove op_debug_level=", option="DumpConfig.op_debug_level"),),
        ),
        Invalid(  # a name no import binds: perhaps not the adapter's, so a warning that says so
            "run_config = NPURunConfig(iteration_per_loop=10)\n",
            (Expect(1, 27, "NPURunConfig has no keyword 'iteration_per_loop': the script fails with TypeError when "
                           "it builds the config; did you mean 'iterations_per_loop'? (if NPURunConfig is the "
                           "adapter's: npu-audit cannot see where the name comes from, no import from npu_bridge or "
                           "npu_device binds it)",
                    severity="warning", hint="write iterations_per_loop=", option="NPURunConfig.iteration_per_loop"),),
        ),
    )
    valid = (
        "from npu_bridge.npu_init import *\nrun_config = NPURunConfig(iterations_per_loop=10)\n",
        # names of the adapter's API that are somebody else's: another package's classes, the script's own
        "from pydantic import BaseModel\n\nclass DumpConfig(BaseModel):\n    op_debug_level: int = 0\n\n"
        "dump = DumpConfig(op_debug_level=2)\n",
        "from profiler_tools.config import DumpConfig, ProfilingConfig\n"
        "dump = DumpConfig(op_debug_level=2, dump_step='every')\nprof = ProfilingConfig(sample_rate=10)\n",
        "import profiler_tools as pt\ndump = pt.DumpConfig(op_debug_level=2)\n",
        "class NPURunConfig:\n    def __init__(self, **kwargs):\n        self.kwargs = kwargs\n\n"
        "run_config = NPURunConfig(auto_tune_mode='GA')\n",
        "def build(NPURunConfig):\n    return NPURunConfig(auto_tune_mode='GA')\n",
        # profiling_options=None given with profiling off is the same as not giving it
        "from npu_bridge.npu_init import *\nprof = ProfilingConfig(enable_profiling=False, profiling_options=None)\n"
        "run_config = NPURunConfig(profiling_config=prof)\n",
    )

    def check(self, ctx):
        for _config, entry in ctx.entries():
            for hazard in entry.hazards:
                f = ctx.report(self, hazard, hazard.message, hint=hazard.hint)
                if f:
                    yield f
        for fact in ctx.facts:  # a config object built where no NPURunConfig npu-audit read takes it
            if fact.kind == "config-object-hazard":
                f = ctx.report(self, fact, fact.detail, hint=fact.hint, option=fact.option)
                if f:
                    yield f
