from npu_audit.checks.base import Expect, Invalid, Rule
from npu_audit.extract.model import CONFIG_OBJECT


class ConfigObjectUnused(Rule):
    code = "NPU406"
    name = "config-object-unused"
    severity = "warning"
    summary = "A DumpConfig, ProfilingConfig or other NPURunConfig object that a function builds and never uses."
    what = (
        "Reports a config object of NPURunConfig (`DumpConfig`, `ProfilingConfig`, `DynamicInputConfig`, "
        "`MemoryConfig`, `ExperimentalConfig`) that a function binds to a name and then never reads: every use "
        "of the name rebinds it or writes into it, so the object reaches no `NPURunConfig(...)`, return value, "
        "attribute, container or global. An object built at module level is not reported (another module may "
        "import it), nor one whose way out npu-audit cannot rule out."
    )
    why = (
        "The adapter only sees what NPUEstimator writes from the objects passed to NPURunConfig "
        "(`dump_config=`, `profiling_config=`, ...). An object nobody passes turns nothing on: the dump or "
        "profile that `enable_dump=True` or `enable_profiling=True` promises never happens, and no message "
        "says so."
    )
    fix_safety = "No automatic fix: pass the object to the NPURunConfig the estimator uses, or remove it."
    invalid = (
        Invalid(
            "from npu_bridge.npu_init import *\n\n\ndef run_config(model_dir):\n"
            "    dump_config = DumpConfig(enable_dump=True, dump_path='/tmp/dump', dump_step='0|5')\n"
            "    return NPURunConfig(model_dir=model_dir, precision_mode_v2='mixed_float16')\n",
            (Expect(5, 19, "this DumpConfig (dump_config) is built but never used: no NPURunConfig receives it, so "
                           "none of its settings apply (no data dump happens)",
                    hint="pass it to the NPURunConfig the estimator uses: NPURunConfig(..., dump_config=dump_config)",
                    option="DumpConfig.enable_dump"),),
        ),
    )
    valid = (
        "from npu_bridge.npu_init import *\n\n\ndef run_config(model_dir):\n"
        "    dump_config = DumpConfig(enable_dump=True, dump_path='/tmp/dump', dump_step='0|5')\n"
        "    return NPURunConfig(model_dir=model_dir, dump_config=dump_config)\n",
        # returned, or at module level (another module may import it): where it goes is not known
        "from npu_bridge.npu_init import *\n\n\ndef dump_settings():\n"
        "    dump_config = DumpConfig(enable_dump=True, dump_path='/tmp/dump')\n    return dump_config\n",
        "from npu_bridge.npu_init import *\n\ndump_config = DumpConfig(enable_dump=True, dump_path='/tmp/dump')\n",
        # only its own defaults: it turns nothing on
        "from npu_bridge.npu_init import *\n\n\ndef run_config():\n    unused = DumpConfig(enable_dump=False)\n"
        "    return NPURunConfig(model_dir='/tmp/m')\n",
    )

    def check(self, ctx):
        kb = ctx.kb
        for config in ctx.configs:
            if config.kind != CONFIG_OBJECT or config.handed_on is not False or config.path != ctx.path:
                continue
            entry = config.entries[0] if config.entries else None
            if entry is None or not any(not w.implicit for w in entry.writes):
                continue  # only defaults: nothing is lost
            cls = entry.object_class or "config object"
            taking = kb.runconfig.keyword_taking(cls)
            keyword = taking.name if taking is not None else None
            # the option it is about: the first keyword the script gives (the switch, as a rule: enable_dump)
            given = next((w.kwarg for w in entry.writes if not w.implicit and w.kwarg), None)
            what = {"DumpConfig": " (no data dump happens)", "ProfilingConfig": " (no profile is collected)"}.get(cls, "")
            f = ctx.finding(self, config.path, config.range,
                            f"this {cls} ({config.bound_to}) is built but never used: no NPURunConfig receives it, "
                            f"so none of its settings apply{what}",
                            calls=config.calls, option=f"{cls}.{given}" if given else None,
                            hint=(f"pass it to the NPURunConfig the estimator uses: NPURunConfig(..., "
                                  f"{keyword}={config.bound_to})") if keyword else "remove it")
            if f:
                yield f
