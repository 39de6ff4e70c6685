"""The calls the interpreter reads: a helper function or class of the analysed code is followed into its
body with the call's arguments, a method of a symbolic object is evaluated, and any other call goes to
the APIs the interpreter knows (:mod:`npu_audit.extract.api`, :mod:`npu_audit.extract.tf2`)."""

from __future__ import annotations

from typing import Optional

import npu_audit.extract.api as api
import npu_audit.extract.flags as flags
import npu_audit.extract.proto as proto
import npu_audit.extract.values as values
import npu_audit.syntax as cst
from npu_audit.extract.frames import (
    MAX_CALL_DEPTH,
    Ambiguous,
    Binding,
    Frame,
    InterpreterBase,
    LazyName,
)
from npu_audit.extract.model import (
    CallSite,
    CodeFact,
    SessionConfig,
)
from npu_audit.extract.symbols import (
    ADAPTER,
    ELSEWHERE,
    UNKNOWN,
    UNSEEN,
    ArgsRef,
    ClassRef,
    ConfigRef,
    Const,
    FunctionRef,
    InstanceRef,
    ListRef,
    ModuleRef,
    ParserRef,
    RunConfigRef,
    SessionRef,
    Sym,
    Unknown,
    to_python,
)


class Calls(InterpreterBase):
    """The calls part of :class:`~npu_audit.extract.interpreter.Interpreter` (see the module docstring)."""

    # ---------------------------------------------------------------------------------------
    # calls

    def _callee_name(self, func, frame: Frame) -> str:
        """Dotted name of the callee with import aliases expanded ("tf.ConfigProto" -> "tensorflow.ConfigProto")."""
        dotted = self._dotted(func)
        if not dotted:
            return ""
        first, _, rest = dotted.partition(".")
        full = frame.module.aliases.get(first, first)
        return f"{full}.{rest}" if rest else full

    def import_root(self, func, frame: Frame) -> Optional[str]:
        """The top-level package a callee's dotted name is imported from (``requests`` for
        ``requests.Session`` after ``import requests``, or for ``Session`` after ``from requests import
        Session``), when that import leads outside the analysed tree; None when the callee is not reached
        through such an import (a local name, an attribute of an object, a module of the tree, a star import)."""
        dotted = self._dotted(func)
        if not dotted:
            return None
        first = dotted.split(".", 1)[0]
        imported = frame.module.aliases.get(first)
        if imported is None or imported.startswith("."):
            return None
        sym = self.lookup(first, frame)
        external = (isinstance(sym, ModuleRef) and sym.file is None) or (
            isinstance(sym, Unknown) and sym.why == "imported")
        return imported.split(".", 1)[0] if external else None

    def arguments(self, call: cst.Call, frame: Frame, force: bool = True):
        """Evaluate a call's arguments. ``force``: the values are consumed here (imported names are
        loaded); user functions get them lazily, unknown functions never need them."""
        positional, keywords = [], {}
        for arg in call.args:
            if arg.star:
                self._eval(arg.value, frame)
                continue
            value = self._eval(arg.value, frame)
            if force:
                value = self.force(value, frame)
            if arg.keyword is not None:
                keywords[arg.keyword.value] = (value, arg.value, arg)
            else:
                positional.append((value, arg.value, arg))
        return positional, keywords

    def eval_call(self, call: cst.Call, frame: Frame) -> Sym:
        func = call.func
        full = self._callee_name(func, frame)
        last = full.rsplit(".", 1)[-1] if full else ""
        # method calls on symbolic objects
        if isinstance(func, cst.Attribute):
            base = self.force(self._eval(func.value, frame), frame)
            method = func.attr.value
            handled = self._method_call(base, method, call, frame)
            if handled is not None:
                return handled
            callee = self.get_attr(base, method, func, frame)
        else:
            callee = self.force(self._eval(func, frame), frame)
        if isinstance(callee, FunctionRef):
            positional, keywords = self.arguments(call, frame, force=False)
            return self.call_function(callee, [p[0] for p in positional], {k: v[0] for k, v in keywords.items()}, call, frame)
        if isinstance(callee, ClassRef):
            positional, keywords = self.arguments(call, frame, force=False)
            return self.instantiate(callee, [p[0] for p in positional], {k: v[0] for k, v in keywords.items()}, call, frame)
        return self._api_call(last, full, call, frame, callee)

    def _method_call(self, base: Sym, method: str, call: cst.Call, frame: Frame) -> Optional[Sym]:
        made = proto.method_call(base, method, call, frame)
        if made is not None:
            return made
        if isinstance(base, ListRef):
            if method == "append" and len(call.args) == 1:
                base.items.append(self.force(self._eval(call.args[0].value, frame), frame))
                return Const(None)
            if method == "extend" and len(call.args) == 1:
                other = self.force(self._eval(call.args[0].value, frame), frame)
                if isinstance(other, ListRef):
                    base.items.extend(other.items)
                elif isinstance(to_python(other), (list, tuple)):
                    base.items.extend(Const(v, origin="resolved") for v in to_python(other))
                else:
                    base.exact = False
                return Const(None)
            if method in ("insert", "pop", "remove", "clear", "sort", "reverse"):
                self.arguments(call, frame)
                base.exact = False
                return UNKNOWN
        if isinstance(base, Const):
            return self._const_method(base, method, call, frame)
        if isinstance(base, ParserRef) or (isinstance(base, Unknown) and method == "add_argument"):
            if method == "add_argument":
                positional, keywords = self.arguments(call, frame)
                flags.record_argument(frame.module, positional, keywords, call)
                return UNKNOWN
            if method == "parse_args":
                self.arguments(call, frame)
                return ArgsRef()
            if method == "parse_known_args":
                self.arguments(call, frame)
                return ListRef(items=[ArgsRef(), UNKNOWN], exact=False)
        if isinstance(base, Unknown) and method in ("parse_args",) and base.name is not None:
            return ArgsRef()
        return None

    def _const_method(self, base: Const, method: str, call: cst.Call, frame: Frame) -> Optional[Sym]:
        positional, keywords = self.arguments(call, frame)
        return values.const_method(base, method, [p[0] for p in positional], {k: v[0] for k, v in keywords.items()})

    def call_function(self, fn: FunctionRef, args: list[Sym], kwargs: dict[str, Sym], call, frame: Frame,
                      standalone: bool = False) -> Sym:
        node = fn.node
        if id(node) in self._active or len(self._active) >= MAX_CALL_DEPTH:
            return UNKNOWN
        if not standalone:
            self._inlined.add(id(node))
            self.project.add_call_edge(str(frame.module.file), str(fn.module.file))
        calls = frame.calls + ((CallSite(frame.module.display, call, fn.qualname),) if call is not None else ())
        defined_in = self.positions.definition(node)
        inner_locals: dict[str, Binding] = {}
        inner = Frame(
            module=fn.module,
            locals=inner_locals,
            branches=list(frame.branches) if not standalone else [],
            calls=calls if not standalone else (),
            function=fn,
            standalone=standalone or frame.standalone,
            top=defined_in[0],
            stmts=defined_in[1],
            root=frame.root if not standalone else object(),
        )
        inner.base_depth = len(inner.branches)
        params = node.params
        ordered = list(params.posonly_params) + list(params.params)
        given = list(args)
        if fn.bound_self is not None:
            given = [fn.bound_self] + given
        default_frame = Frame(module=fn.module, locals=None, top=defined_in[0], stmts=defined_in[1])
        for i, param in enumerate(ordered):
            name = param.name.value
            if i < len(given):
                sym = given[i]
            elif name in kwargs:
                sym = kwargs[name]
            elif param.default is not None:
                sym = self._eval(param.default, default_frame)
                if isinstance(sym, Const) and sym.origin == "literal":
                    sym = Const(sym.value, origin="resolved", node=sym.node, path=sym.path)
                if standalone and isinstance(sym, Const) and sym.value is None:
                    sym = Unknown(name=name, why="parameter")  # `param=None` in a helper nobody calls: "optional", not None
            else:
                sym = Unknown(name=name, why="parameter")
            inner_locals[name] = Binding(sym, inner.branch_key())
        for param in params.kwonly_params:
            name = param.name.value
            if name in kwargs:
                sym = kwargs[name]
            elif param.default is not None:
                sym = self._eval(param.default, default_frame)
            else:
                sym = Unknown(name=name, why="parameter")
            inner_locals[name] = Binding(sym, inner.branch_key())
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                inner_locals[star.name.value] = Binding(UNKNOWN, inner.branch_key())
        self._active.append(id(node))
        self.functions_read.add(id(node))
        try:
            self.exec_block(self._suite(node.body), inner)
        except RecursionError:
            pass
        finally:
            self._active.pop()
        return values.merge_returns(inner.returns)

    def instantiate(self, cls: ClassRef, args, kwargs, call, frame: Frame) -> Sym:
        instance = InstanceRef(cls=cls)
        frame.module.attr_holders.append(instance)
        init = cls.lookup("__init__")
        if isinstance(init, FunctionRef):
            bound = FunctionRef(init.node, init.module, owner=cls, bound_self=instance, qualname=init.qualname)
            self.call_function(bound, args, kwargs, call, frame)
        return instance

    # ---------------------------------------------------------------------------------------
    # known APIs

    def new_config(self, kind: str, node, frame: Frame, variable: Optional[str] = None) -> SessionConfig:
        config = SessionConfig(kind=kind, path=frame.module.display, node=node, variable=variable, calls=frame.calls)
        self.configs.append(config)
        return config

    def _api_call(self, last: str, full: str, call: cst.Call, frame: Frame, callee: Sym) -> Sym:
        tf2 = self.tf2.call(last, full, call, frame, callee)
        if tf2 is not None:
            return tf2
        return api.call(self, self.api, last, full, call, frame, callee)

    # ---------------------------------------------------------------------------------------
    # whose API a call is

    def callee_origin(self, callee: Sym, func, frame: Frame, packages=None) -> str:
        """Where the name a call goes through was bound, for an API of the adapter (rules/tf_api.toml,
        ``[adapter]``): ``ADAPTER`` (an import from one of its packages, directly, through a re-export of a
        module of the tree, or through a star import), ``ELSEWHERE`` (an import from another package, a
        parameter, a value of the script) or ``UNSEEN`` (a name whose binding npu-audit cannot see: bound
        nowhere it looks, in a branch, by a relative import it cannot find). ``callee`` is what the call's
        function evaluated to; for ``a.b.f(...)`` that gives no answer, the binding of ``a`` does.
        ``packages``: the top-level packages that count as the adapter's (default: rules/tf_api.toml's)."""
        if packages is None:
            packages = self.api.model.adapter_packages
        found = self._origin_of(callee, packages, parameter=True)
        if found is not None:
            return found
        first = func
        while isinstance(first, cst.Attribute):
            first = first.value
        if not isinstance(first, cst.Name):
            return UNSEEN
        base = self.force(self.lookup(first.value, frame), frame) if first is not func else callee
        if base is not callee and isinstance(base, (Unknown, ModuleRef)):
            # only an import says where an attribute comes from (a parameter or an object may hold anything)
            found = self._origin_of(base, packages, parameter=False)
            if found is not None:
                return found
        if isinstance(base, ModuleRef) and base.file is not None and isinstance(func, cst.Attribute) and func.value is first:
            # ``helpers.NPURunConfig(...)`` with ``helpers`` a module of the tree that star-imports the adapter
            state = self.load_module(base, frame.module, func.attr.value)
            if state is not None and self._star_supplies(state, func.attr.value, packages, set()):
                return ADAPTER
            return UNSEEN
        if isinstance(base, Unknown) and base.name == first.value and base.why == "" and base.source is None:
            # bound nowhere the interpreter looks: a star import of the adapter (here or in a module of the
            # tree this one star-imports) supplies it (``from npu_bridge.npu_init import *``, then
            # ``NPURunConfig(...)`` or ``util.set_iteration_per_loop(...)``)
            if self._star_supplies(frame.module, first.value, packages, set()):
                return ADAPTER
        found = self._binding_origin(first.value, frame, packages, parameter=first is func)
        return found if found is not None else UNSEEN

    def _binding_origin(self, name: str, frame: Frame, packages, parameter: bool) -> Optional[str]:
        """Where ``name`` was bound when its value says nothing: a chain of ``from tree_module import name``
        that ends in a module of the tree getting the name from a star import of the adapter (``from helpers
        import NPURunConfig`` where helpers has ``from npu_bridge.npu_init import *``), else the module's
        import of that name (``try: from npu_bridge... import DumpConfig`` / ``except ImportError:
        DumpConfig = None``: the only binding that can be called is the import). None when neither says."""
        sym: Optional[Sym] = None
        importer = frame.module
        for scope in (frame.locals, frame.module.globals):
            if scope is not None and name in scope:
                sym = scope[name].sym
                break
        else:
            for ref in frame.module.star_modules:
                state = self.load_module(ref, frame.module, name)
                if state is not None and name in state.globals:
                    sym, importer = state.globals[name].sym, state
                    break
        seen: set[int] = set()
        while isinstance(sym, LazyName) and id(sym) not in seen:
            seen.add(id(sym))
            state = self.load_module(sym.module, importer, sym.name)
            if state is None:
                break
            if sym.name not in state.globals:
                if self._star_supplies(state, sym.name, packages, set()):
                    return ADAPTER
                break
            sym, importer = state.globals[sym.name].sym, state
        if isinstance(sym, (Unknown, ModuleRef)) and not isinstance(sym, LazyName):
            found = self._origin_of(sym, packages, parameter=parameter)
            if found is not None:
                return found
        imported = frame.module.aliases.get(name, "")
        if imported and not imported.startswith(".") and imported != name:
            return ADAPTER if imported.split(".", 1)[0] in packages else ELSEWHERE
        return None

    @staticmethod
    def _origin_of(sym: Sym, packages, parameter: bool) -> Optional[str]:
        """ADAPTER or ELSEWHERE when ``sym`` itself says where it comes from, else None."""
        if isinstance(sym, ModuleRef):
            if sym.file is not None or sym.name.startswith("."):
                return None
            return ADAPTER if sym.name.split(".", 1)[0] in packages else ELSEWHERE
        if isinstance(sym, Unknown):
            if sym.source is not None:
                return ADAPTER if sym.source.split(".", 1)[0] in packages else ELSEWHERE
            if sym.why == "parameter" and parameter:
                return ELSEWHERE
            return None
        return ELSEWHERE  # a value of the script (an object, a constant, ...)

    def _star_supplies(self, module, name: str, packages, seen: set[int]) -> bool:
        """Whether ``from <adapter package> import *`` in ``module``, or in a module of the tree it
        star-imports (transitively), can supply ``name``."""
        if any(m and m.split(".", 1)[0] in packages for m in module.foreign_stars):
            return True
        for ref in module.star_modules:
            state = self.load_module(ref, module, name)
            if state is None or id(state) in seen:
                continue
            seen.add(id(state))
            if self._star_supplies(state, name, packages, seen):
                return True
        return False

    def attach_fact(self, sess: Optional[Sym], fact: CodeFact) -> None:
        """Attach a code fact about a session (set_iteration_per_loop) to the config it runs with."""
        if isinstance(sess, SessionRef) and isinstance(sess.config, (ConfigRef, RunConfigRef)):
            sess.config.config.facts.append(fact)
        elif isinstance(sess, Ambiguous):
            return  # one of several sessions: where the calls are followed in order, the fact has its own
        elif not isinstance(sess, SessionRef):
            self.loose_facts.append(fact)  # the session is unknown: checks may pair it with the file's config
        # else: a session whose config npu-audit cannot see; do not pair it with another config
