"""Run a self-contained fixture under real TensorFlow and print the ConfigProtos it built (JSON).

Used only by tests/test_differential_tf.py on the project's own fixtures: npu-audit itself never
executes analysed code. Usage: python tests/tf_oracle.py FIXTURE.py
"""

import json
import runpy
import sys
import types


def main(path: str) -> None:
    import tensorflow as tf

    v1 = tf.compat.v1
    created = []
    original = v1.ConfigProto

    def config_proto(*args, **kwargs):
        config = original(*args, **kwargs)
        created.append(config)
        return config

    class Session:  # a session is never started
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def run(self, *args, **kwargs):
            return None

    tf.ConfigProto = v1.ConfigProto = config_proto
    tf.Session = v1.Session = Session
    tf.app = v1.app
    for name in ("npu_bridge", "npu_bridge.npu_init"):
        module = types.ModuleType(name)
        module.__all__ = []
        sys.modules[name] = module
    runpy.run_path(path, run_name="__main__")
    out = []
    for config in created:
        entries = []
        for op in config.graph_options.rewrite_options.custom_optimizers:
            params = {}
            for key, value in op.parameter_map.items():
                field = value.WhichOneof("value")
                raw = getattr(value, field) if field else None
                if isinstance(raw, bytes):
                    raw = raw.decode("utf-8")
                params[key] = [field, raw]
            entries.append({"name": op.name, "parameter_map": params})
        out.append({"entries": entries})
    print("ORACLE:" + json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
