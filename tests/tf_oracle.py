"""Real TensorFlow as the oracle for the differential tests (tests/test_differential_tf.py).

Used only on the project's own fixtures and rule examples, in a subprocess of the test: npu-audit itself
never executes analysed code.

Two modes:

``python tests/tf_oracle.py FIXTURE.py``
    runs a self-contained fixture whole and prints the ConfigProtos it built (``ORACLE:`` + JSON).

``python tests/tf_oracle.py --requests REQUEST.json``
    answers, in one process (TensorFlow takes seconds to import), for each source the request names
    (``{"sources": {name: path}}``), what each ``<x>.parameter_map[<key>].<field> = <value>`` statement
    does against a real ``tf.compat.v1.ConfigProto()`` (:class:`Runner`). Prints ``ORACLE:`` + JSON
    ``{"sources": {name: [record, ...]}}``.

Only the config-building part of a source runs (:func:`runnable`): imports of TensorFlow and of a few
standard modules, flag and argument definitions, assignments and calls made of an allow-list of
callees (ConfigProto, add, as_bytes, str, ...), and calls of the source's own functions whose bodies
pass the same test. Sessions, training, npu_bridge / npu_device (absent here) and everything else are
skipped, so a write that needs one of them is reported as not evaluable rather than guessed. Both arms
of an ``if`` and the body of every loop run once (a loop variable stays undefined), and the body of
every function runs after the module's own statements, in a copy of the module namespace with its
parameters undefined, so that every write is tried once.
"""

from __future__ import annotations

import ast
import json
import runpy
import sys
import types

FIELDS = ("s", "i", "b", "f")
#: the empty value of each AttrValue field (what reading a field that the oneof does not hold gives)
EMPTY = {"s": b"", "i": 0, "b": False, "f": 0.0}
#: modules the sources may import for real; any other import is skipped (npu_bridge, npu_device, ...)
IMPORTABLE = ("tensorflow", "argparse", "os", "json", "absl")
#: callees (last name) a runnable statement may call
CALLEES = {
    "ConfigProto", "GraphOptions", "RewriterConfig", "OptimizerOptions", "GPUOptions", "add", "as_bytes", "as_str",
    "as_text", "as_str_any", "encode", "decode", "str", "int", "float", "bool", "bytes", "format", "join", "get",
    "getenv", "dict", "list", "tuple", "len", "range", "ArgumentParser", "add_argument", "parse_args",
    "parse_known_args", "append", "extend", "update", "items", "keys", "values", "lower", "upper", "strip",
    "replace", "split", "dumps", "CopyFrom", "MergeFrom",
}


def _callee(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    return f.id if isinstance(f, ast.Name) else ""


def runnable(node: ast.AST, functions: dict, seen: frozenset = frozenset()) -> bool:
    """Whether every call in ``node`` is on the allow-list (:data:`CALLEES`, ``DEFINE_*``) or a call of
    one of the source's own ``functions`` whose body is runnable itself."""
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom)):
            return False
        if not isinstance(sub, ast.Call):
            continue
        name = _callee(sub)
        if name in CALLEES or name.startswith("DEFINE"):
            continue
        if isinstance(sub.func, ast.Name) and name in functions and name not in seen:
            if all(runnable(s, functions, seen | {name}) for s in functions[name].body):
                continue
        return False
    return True


def _write_target(stmt: ast.stmt):
    """(attribute value node, key node, field) of ``<x>.parameter_map[<key>].<field> = <value>``, else None."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if not (isinstance(target, ast.Attribute) and target.attr in FIELDS and isinstance(target.value, ast.Subscript)):
        return None
    sub = target.value
    if not (isinstance(sub.value, ast.Attribute) and sub.value.attr == "parameter_map"):
        return None
    return sub, sub.slice, target.attr


def _describe(value) -> list:
    """[type name, JSON value] of a Python value (bytes decoded, others by repr when not JSON)."""
    if isinstance(value, bytes):
        return ["bytes", value.decode("utf-8", "replace")]
    if value is None or isinstance(value, (str, int, float, bool)):
        return [type(value).__name__, value]
    return [type(value).__name__, repr(value)]


class Runner:
    """Runs the config-building statements of one source, one at a time, recording every write."""

    def __init__(self, path: str, text: str, tf) -> None:
        self.path = path
        self.tree = ast.parse(text, path)
        self.tf = tf
        self.records: list[dict] = []
        self.functions = {n.name: n for n in ast.walk(self.tree) if isinstance(n, ast.FunctionDef)}

    def run(self) -> list[dict]:
        ns: dict = {"__name__": "__oracle__", "__file__": self.path}
        self.pending: list[list] = []  # function bodies, run once the module's names exist
        self.block(self.tree.body, ns)
        while self.pending:
            self.block(self.pending.pop(0), dict(ns))
        self.records.sort(key=lambda r: r["line"])
        return self.records

    def _exec(self, stmt: ast.stmt, ns: dict) -> None:
        try:
            exec(compile(ast.Module([stmt], type_ignores=[]), self.path, "exec"), ns)  # noqa: S102 - our fixtures
        except Exception:  # noqa: BLE001 - a statement that fails here leaves its names undefined
            pass

    def _eval(self, node: ast.expr, ns: dict):
        return eval(compile(ast.Expression(node), self.path, "eval"), ns)  # noqa: S307 - our own fixtures

    def _with_defaults(self, function: ast.FunctionDef) -> list:
        """The body of ``function``, after assignments of its parameters' default values (the value a
        parameter has when a call does not give it; the others stay undefined)."""
        args = function.args
        positional = args.posonlyargs + args.args
        pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        assigns = [ast.copy_location(ast.Assign([ast.Name(a.arg, ast.Store())], d), function) for a, d in pairs]
        return [ast.fix_missing_locations(a) for a in assigns] + function.body

    def block(self, body: list, ns: dict) -> None:
        for stmt in body:
            self.statement(stmt, ns)

    def statement(self, stmt: ast.stmt, ns: dict) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name == "tensorflow":  # the fixtures are TF 1.x scripts: tf.ConfigProto, tf.app.flags
                    ns[alias.asname or "tensorflow"] = self.tf.compat.v1
                elif alias.name.split(".")[0] in IMPORTABLE:
                    self._exec(ast.copy_location(ast.Import([alias]), stmt), ns)
        elif isinstance(stmt, ast.ImportFrom):
            if (stmt.module or "").split(".")[0] in IMPORTABLE and not any(a.name == "*" for a in stmt.names):
                self._exec(stmt, ns)
        elif _write_target(stmt) is not None:
            self.write(stmt, ns)
        elif isinstance(stmt, (ast.If, ast.While)):
            self.block(stmt.body, ns)
            self.block(stmt.orelse, ns)
        elif isinstance(stmt, ast.For):
            self.block(stmt.body, ns)
            self.block(stmt.orelse, ns)
        elif isinstance(stmt, ast.With):
            self.block(stmt.body, ns)
        elif isinstance(stmt, ast.Try):
            for part in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                self.block(part, ns)
        elif isinstance(stmt, ast.FunctionDef):
            self._exec(stmt, ns)  # defined, so that runnable calls of it work
            self.pending.append(self._with_defaults(stmt))
        elif isinstance(stmt, ast.ClassDef):
            self.pending.extend(self._with_defaults(part) for part in stmt.body if isinstance(part, ast.FunctionDef))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
            if runnable(stmt, self.functions):
                self._exec(stmt, ns)

    def write(self, stmt: ast.Assign, ns: dict) -> None:
        sub, key_node, field = _write_target(stmt)
        record = {"line": stmt.lineno, "end_line": stmt.end_lineno, "field": field}
        self.records.append(record)
        if not runnable(stmt, self.functions):
            record["outcome"] = "skipped"
            return
        try:
            key = self._eval(key_node, ns)
            attr_value = self._eval(sub, ns)
        except Exception as exc:  # noqa: BLE001 - e.g. the config comes from a function parameter
            record.update(outcome="not-evaluable", exception=type(exc).__name__, message=str(exc))
            return
        record["key"] = key if isinstance(key, str) else repr(key)
        try:
            value = self._eval(stmt.value, ns)
        except (NameError, AttributeError) as exc:  # a name the skipped statements would define, an unknown flag
            record.update(outcome="not-evaluable", exception=type(exc).__name__, message=str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - the value itself fails (as_bytes(None), as_str(5))
            record.update(outcome="value-raises", exception=type(exc).__name__, message=str(exc))
            return
        record["value"] = _describe(value)
        try:
            setattr(attr_value, field, value)
        except Exception as exc:  # noqa: BLE001 - the answer we want: what protobuf raises
            record.update(outcome="raises", exception=type(exc).__name__, message=str(exc))
            return
        record["outcome"] = "ok"
        record["stored"] = _describe(getattr(attr_value, field))
        record["holds"] = attr_value.WhichOneof("value")
        record["others_empty"] = all(getattr(attr_value, f) == EMPTY[f] for f in FIELDS if f != field)


def _reset_flags(flags, baseline: set) -> None:
    """Forget the flags the previous source defined (each source defines its own)."""
    for name in list(flags):
        if name not in baseline:
            delattr(flags, name)


def answer(request: dict) -> dict:
    import tensorflow as tf

    flags = tf.compat.v1.app.flags.FLAGS
    flags(["oracle"], known_only=True)  # parsed with no arguments: every flag keeps its DEFINE_* default
    baseline = set(flags)
    sources = {}
    argv = sys.argv
    for name, path in request.get("sources", {}).items():
        _reset_flags(flags, baseline)
        sys.argv = [path]  # argparse's parse_args(): no arguments, the defaults
        try:
            with open(path, encoding="utf-8") as handle:
                sources[name] = Runner(path, handle.read(), tf).run()
        finally:
            sys.argv = argv
    return {"sources": sources}


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
    if sys.argv[1] == "--requests":
        with open(sys.argv[2], encoding="utf-8") as handle:
            print("ORACLE:" + json.dumps(answer(json.load(handle))))
    else:
        main(sys.argv[1])
