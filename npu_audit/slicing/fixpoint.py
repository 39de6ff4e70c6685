"""The fixed point of the relevance slice over the units (:class:`_Slicer`): from the seeds, keep what
they read (backward), what uses what they build (forward) and the statements around them (context),
until nothing changes. What each of these covers is told in :mod:`npu_audit.slicing`.
"""

from __future__ import annotations

import ast
from collections import deque
from typing import Callable, Optional

from npu_audit.slicing.seeds import _FUNCS, _dotted_root
from npu_audit.slicing.units import DEFINES, MENTIONS, WRITES, _Builder, _Scope, _Unit
from npu_audit.syntax import python_children

#: How many names deep :meth:`_Slicer._fixed` follows aliases (``FLAGS = tf.app.flags.FLAGS``, each deciding the
#: name it reads first) before it answers "not fixed": a chain of thousands would exhaust Python's stack.
_FIXED_DEPTH = 32


class _Slicer:
    """The fixed point over the units (see :mod:`npu_audit.slicing`)."""

    def __init__(self, b: _Builder):
        self.b = b
        self.module = b.module
        self.tasks: deque[tuple[Callable, tuple]] = deque()
        self.binders: dict[tuple[int, str], list[_Unit]] = {}
        self.mutators: dict[tuple[int, str], list[_Unit]] = {}
        self.attr_mutators: dict[tuple[int, str], list[_Unit]] = {}  # ``name.attr = ...``, by resolved name
        self.readers: dict[tuple[int, str], list[_Unit]] = {}  # taint uses, by resolved name
        self.attr_readers: dict[str, list[_Unit]] = {}
        self.attr_stores: dict[str, list[_Unit]] = {}
        self.attr_changers: dict[str, list[_Unit]] = {}  # ``x.attr[k] = ...``, ``x.attr.y = ...``, by attribute
        self.class_binders: dict[str, list[_Unit]] = {}
        # the statements that give an attribute its data, by attribute: ``x.attr = ...``, ``x.attr[k] = ...``
        # (and ``x.attr.y = ...``, ``x.attr.append(...)``), ``attr = ...`` in a class body
        self.attr_definers = (self.attr_stores, self.attr_changers, self.class_binders)
        self.class_methods: set[str] = set()  # the names of the methods of the file's classes
        self.mention_sites: dict[str, list[_Unit]] = {}
        self.call_sites: dict[str, list[_Unit]] = {}
        self.name_call_sites: dict[str, list[_Unit]] = {}  # statements calling a name, by the name
        self.defs: dict[str, list[_Unit]] = {}
        self.needed: set[tuple[int, str]] = set()
        self.needed_as_base: set[tuple[int, str]] = set()  # (only its attributes are read: ``need_base``)
        self.needed_attrs: set[str] = set()
        self.fixed: dict[str, bool] = {}  # module-level names whose attributes no statement changes (_fixed)
        self.fixed_depth = 0  # (names being decided, each for the one before: _FIXED_DEPTH)
        self.tainted: set[tuple[int, str]] = set()
        self.tainted_attrs: set[str] = set()
        self.relevant: set[int] = set()
        self.returns_needed: set[int] = set()
        self.returns_taint: set[int] = set()
        # arguments of kept calls of helpers of the file, by the parameter they bind: needed when the helper
        # reads it (the last item: the argument is the receiver of a method call, ``self.build()``)
        self.waiting: dict[tuple[int, str], list[tuple[_Unit, set[str], set[str], set[tuple[str, str]], bool]]] = {}
        # receivers handed to a method that reads only attributes of its first parameter: needed whole once
        # the method reads it whole
        self.receivers_as_base: dict[tuple[int, str], list[tuple[_Unit, set[str], set[str], set[tuple[str, str]]]]] = {}
        self.receiver_readers: dict[tuple[int, str], list[_Unit]] = {}
        self.instances: set[tuple[int, str]] = set()  # names bound to what a helper of another module returned
        self.self_passers: dict[int, list[_Unit]] = {}  # class statement -> its methods' statements passing self
        self._scopes: dict[int, _Scope] = {id(self.module): self.module}
        self._index(b.units)

    # -- indices ---------------------------------------------------------------------------------

    def resolve(self, scope: _Scope, name: str) -> Optional[_Scope]:
        if scope.kind == "function" and name in scope.globals:
            return self.module
        s: Optional[_Scope] = scope
        first = True
        while s is not None:
            if (first or s.kind != "class") and name in s.bound:
                return s
            first = False
            s = s.parent
        return None

    def _external(self, scope: _Scope, name: str) -> bool:
        """Whether ``name``, read in ``scope``, is a module-level name that only imports from outside the
        tree bind, or a name the file binds nowhere (a builtin such as ``hasattr``, or one of a star import
        from outside the tree) while no star import of a module of the tree could bind it: the interpreter
        reads no code behind a call through it."""
        target = self.resolve(scope, name)
        if target is None:
            return not self.b.star_in_tree
        if target is not self.module:
            return False
        self._wake(name, WRITES)
        binders = self.binders.get((id(self.module), name))
        return bool(binders) and all(b.external is not None and name in b.external for b in binders)

    def _bind_scope(self, unit: _Unit, name: str) -> _Scope:
        return self.module if name in unit.scope.globals else unit.scope

    def _wake(self, word: str, kind: int = MENTIONS) -> None:
        """Before the statements indexed under ``word`` for a ``kind`` of question are looked up: read the
        definitions asleep listed so (:meth:`_Builder.wake`), index their units and start them as
        :meth:`run` starts the others. A definition is listed under every word a unit of it could be
        indexed under for that kind, so one woken later adds nothing under a word already asked about."""
        if word in self.b.asleep[kind]:
            units = self.b.wake(word, kind)
            self._index(units)
            self._start(units)

    def _wake_module_name(self, scope: _Scope, name: str, kind: int) -> None:
        """:meth:`_wake` for a name that resolves to the module (definitions asleep are module-level: no
        other scope of theirs exists yet)."""
        if scope is self.module:
            self._wake(name, kind)

    def _index(self, units: list[_Unit]) -> None:
        # (locals and one resolution per scope and name: this loop visits every statement of the file)
        resolved: dict[tuple[int, str], Optional[_Scope]] = {}
        resolve = self.resolve
        binders, mutators, readers = self.binders, self.mutators, self.readers
        attr_readers, receiver_readers, attr_stores = self.attr_readers, self.receiver_readers, self.attr_stores
        mention_sites, call_sites, class_binders = self.mention_sites, self.call_sites, self.class_binders
        def_names = self.b.def_names
        module = self.module
        for u in units:
            scope = u.scope
            sid = id(scope)
            if u.body_scope is not None:
                self._scopes[id(u.body_scope)] = u.body_scope
                self.defs.setdefault(u.node.name, []).append(u)  # type: ignore[attr-defined]
            if u.binds:
                in_class = scope.kind == "class"
                for name in u.binds:
                    binders.setdefault((id(module if name in scope.globals else scope), name), []).append(u)
                    if in_class:
                        class_binders.setdefault(name, []).append(u)
                        if isinstance(u.node, _FUNCS):
                            self.class_methods.add(name)
            for table, names in ((mutators, u.mutated), (self.attr_mutators, u.attr_mutated), (readers, u.uses),
                                 (receiver_readers, u.receivers)):
                for name in names:
                    key = (sid, name)
                    if key in resolved:
                        s = resolved[key]
                    else:
                        s = resolved[key] = resolve(scope, name)
                    if s is not None:
                        table.setdefault((id(s), name), []).append(u)
            for _callee, _slot, names, _attrs, bases in u.pending:
                for name in names.union(base for base, _attr in bases):
                    s = resolve(scope, name)
                    if s is not None:
                        readers.setdefault((id(s), name), []).append(u)
            for attr in u.attr_uses:
                attr_readers.setdefault(attr, []).append(u)
            if u.passes_self and scope.kind == "function" and scope.parent is not None \
                    and scope.parent.kind == "class" and scope.parent.unit is not None:
                self.self_passers.setdefault(id(scope.parent.unit), []).append(u)
            for attr in u.attr_stores:
                attr_stores.setdefault(attr, []).append(u)
            for attr in u.attr_changes:
                self.attr_changers.setdefault(attr, []).append(u)
            if def_names:
                for name in u.mentions & def_names:
                    mention_sites.setdefault(name, []).append(u)
            for name in u.calls:
                call_sites.setdefault(name, []).append(u)
            for name in u.name_calls:
                self.name_call_sites.setdefault(name, []).append(u)

    # -- the fixed point -------------------------------------------------------------------------

    def run(self) -> None:
        self._start(self.b.units)
        while self.tasks:
            fn, args = self.tasks.popleft()
            fn(*args)

    def _start(self, units: list[_Unit]) -> None:
        """The tasks ``units`` start the fixed point with: seeds, module-level imports."""
        push = self.tasks.append
        for u in units:
            if u.star_calls and u.seed is None and any(self.resolve(u.scope, n) is None for n in u.star_calls):
                u.seed = "config"
            if isinstance(u.node, (ast.Import, ast.ImportFrom)) and u.scope is self.module:
                push((self.keep, (u, 0)))
            if u.seed is not None:
                push((self.keep, (u, 2)))
                if u.seed == "config":
                    push((self.taint_use, (u,)))
                if u.helper_call:
                    for name in u.binds:
                        push((self.instance, (self._bind_scope(u, name), name)))

    def keep(self, u: _Unit, level: int) -> None:
        old = u.level
        if level <= old:
            return
        u.level = level
        push = self.tasks.append
        if old < 0:
            for g in u.glue:
                push((self.keep, (g, 2)))
            if u.parent is not None:
                push((self.keep, (u.parent, 2)))
            owner = u.scope.unit
            if owner is not None and id(owner) not in self.relevant:
                push((self.make_relevant, (owner,)))
        if level >= 1 > old:
            for name in u.reads:
                push((self.need, (u.scope, name)))
            self._need_bases(u, u.reads, u.base_reads)
            if u.attr_reads:
                self._need_attrs(u)
            for callee, slot, names, attrs, bases in u.pending:
                self._pending(u, callee, slot, names, attrs, bases)
            for through, names, attrs, bases in u.external_args or ():
                if not self._external(u.scope, through):
                    self._need_part(u, names, attrs, bases)
        if level >= 2 > old:
            for name in u.calls:
                push((self.need_returns, (name,)))

    def make_relevant(self, d: _Unit) -> None:
        """``d`` (a def or class) has kept statements: keep it, its call sites, returns and declarations."""
        if id(d) in self.relevant:
            return
        self.relevant.add(id(d))
        push = self.tasks.append
        push((self.keep, (d, 2)))
        name = d.node.name  # type: ignore[attr-defined]
        self._wake(name)
        for site in self.mention_sites.get(name, ()):
            if site is not d and self._may_name(site, name):
                push((self.keep, (site, 1)))
                if site.alias_of == name:  # ``f = self.setup``: the calls of ``f`` call it too
                    for alias in site.binds:
                        self._wake(alias)
                        for call in self.name_call_sites.get(alias, ()):
                            push((self.keep, (call, 1)))
        scope = d.body_scope
        assert scope is not None
        for r in scope.returns:
            push((self.keep, (r, 0)))
        for g in scope.declarations:
            push((self.keep, (g, 0)))
        for u in self.self_passers.get(id(d), ()):
            push((self.keep, (u, 2)))  # `callbacks.set_trainer(self)`: the callee may call its methods back

    def _may_name(self, site: _Unit, name: str) -> bool:
        """Whether ``site`` may refer to the file's definition ``name``: not when every mention of it is an
        attribute of a chain rooted in a name that only imports from outside the tree bind (``tf.train``
        for a method ``train``), which the interpreter resolves to no code of the file."""
        todo: list[ast.AST] = [site.node]
        outside = False  # (a mention seen only as such an attribute; none seen at all: keep, to be sure)
        while todo:
            node = todo.pop()
            kind = type(node)
            if kind is ast.Name:
                if node.id == name:  # type: ignore[attr-defined]
                    return True
                continue
            if kind is ast.Attribute:
                if node.attr == name:  # type: ignore[attr-defined]
                    root = _dotted_root(node.value)  # type: ignore[attr-defined]
                    if type(root) is not ast.Name or not self._external(site.scope, root.id):  # type: ignore[attr-defined]
                        return True
                    outside = True
                todo.append(node.value)  # type: ignore[attr-defined]
                continue
            if isinstance(node, ast.stmt) and node is not site.node:
                continue  # (a statement of a block: a unit of its own)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name == name:
                    return True
            todo.extend(python_children(node))
        return not outside

    def need(self, scope: _Scope, name: str) -> None:
        """A kept statement reads ``name`` whole: every statement that binds or changes it is needed."""
        target = self.resolve(scope, name)
        if target is None:
            return
        key = (id(target), name)
        if key in self.needed:
            return
        self.needed.add(key)
        self._wake_module_name(target, name, WRITES)
        if key not in self.needed_as_base:
            self._need_binding(key)
        for entry in self.receivers_as_base.pop(key, ()):
            self._need_part(*entry)
        for u in self.attr_mutators.get(key, ()):
            self.tasks.append((self.keep, (u, 2)))

    def need_base(self, scope: _Scope, name: str) -> None:
        """A kept statement reads only attributes of ``name`` (``self.sess``): the statements that bind it
        or change it otherwise are needed; one that stores another attribute (``self.model = ...``) is
        needed only if that attribute is read (:meth:`need_attr`) or the name read whole."""
        target = self.resolve(scope, name)
        if target is None:
            return
        key = (id(target), name)
        if key in self.needed or key in self.needed_as_base:
            return
        self.needed_as_base.add(key)
        self._wake_module_name(target, name, WRITES)
        self._need_binding(key)

    def _need_binding(self, key: tuple[int, str]) -> None:
        push = self.tasks.append
        for u in self.binders.get(key, ()):
            push((self.keep, (u, 2)))
        for u in self.mutators.get(key, ()):
            push((self.keep, (u, 2)))
        for u, names, attrs, bases, receiver in self.waiting.pop(key, ()):
            if receiver and key not in self.needed:
                self._receiver_as_base(key, u, names, attrs, bases)
            else:
                self._need_part(u, names, attrs, bases)

    def _receiver_as_base(self, key: tuple[int, str], u: _Unit, names: set[str], attrs: set[str],
                          bases: set[tuple[str, str]]) -> None:
        """The receiver of a kept call of a method of the file that reads only attributes of its first
        parameter (``key``): only its attributes are needed (the method's reads need them, by attribute), until
        the method reads the parameter whole."""
        self.receivers_as_base.setdefault(key, []).append((u, names, attrs, bases))
        for name in names:
            self.tasks.append((self.need_base, (u.scope, name)))

    def _need_attrs(self, u: _Unit) -> None:
        """The attributes ``u`` reads: :meth:`need_attr` for each, but one read only on names that hold a module
        from outside the tree (``tf.train``, ``np.mean``, ``FLAGS.steps``: :meth:`_fixed`), which no statement of
        the file can change for the interpreter."""
        push = self.tasks.append
        loose = u.loose_attrs
        roots: dict[str, list[str]] = {}  # attribute -> the names it is read on
        for pairs in (u.base_reads, u.rooted or ()):
            for name, attr in pairs:
                roots.setdefault(attr, []).append(name)
        for attr in u.attr_reads:
            if attr in self.needed_attrs:
                continue
            if loose is None or attr not in loose:
                on = roots.get(attr)
                if on and all(self._fixed(u.scope, name) for name in on):
                    continue
            push((self.need_attr, (attr,)))

    def _fixed(self, scope: _Scope, name: str) -> bool:
        """Whether ``name``, read in ``scope``, is a module-level name bound only to a module from outside the
        tree (``import tensorflow as tf``), to a dotted name read from one (``FLAGS = tf.app.flags.FLAGS``), or to
        the ``FLAGS`` of a name imported from outside the tree (``FLAGS = flags.FLAGS`` after ``from absl import
        flags``). The interpreter gives the attributes of such a name from the module or the flag definitions:
        no attribute stored by a statement of the file changes them."""
        if self.resolve(scope, name) is not self.module:
            return False
        known = self.fixed.get(name)
        if known is None:
            if self.fixed_depth >= _FIXED_DEPTH:
                return False  # (a long chain of aliases, ``a2 = a1.x``, ``a1 = a0.x``, ...: not followed)
            self.fixed[name] = False  # (while deciding: ``a = b.x`` and ``b = a.y`` are not fixed)
            self._wake(name, WRITES)
            binders = self.binders.get((id(self.module), name))
            self.fixed_depth += 1
            try:
                known = bool(binders) and all(self._fixed_binding(b, name) for b in binders)  # type: ignore[union-attr]
            finally:
                self.fixed_depth -= 1
            self.fixed[name] = known
        return known

    def _fixed_binding(self, b: _Unit, name: str) -> bool:
        node = b.node
        if type(node) is ast.Import:
            return b.external is not None and name in b.external
        if type(node) is not ast.Assign or len(node.targets) != 1 or type(node.targets[0]) is not ast.Name:
            return False
        value = node.value
        attrs = []
        while type(value) is ast.Attribute:
            attrs.append(value.attr)
            value = value.value
        if not attrs or type(value) is not ast.Name:
            return False
        if self._fixed(b.scope, value.id):
            return True
        return attrs == ["FLAGS"] and self._external(b.scope, value.id)

    def need_attr(self, attr: str) -> None:
        if attr in self.needed_attrs:
            return
        self.needed_attrs.add(attr)
        self._wake(attr, WRITES)
        for table in self.attr_definers:
            for u in table.get(attr, ()):
                self.tasks.append((self.keep, (u, 2)))

    def need_returns(self, name: str) -> None:
        self._wake(name, DEFINES)
        for d in self.defs.get(name, ()):
            if id(d) in self.returns_needed or d.body_scope is None or d.body_scope.kind != "function":
                continue
            self.returns_needed.add(id(d))
            for r in d.body_scope.returns:
                self.tasks.append((self.keep, (r, 2)))

    def _params_for(self, d: _Unit, slot: tuple) -> Optional[str]:
        """The parameter of def/class ``d`` an argument in ``slot`` binds (None: cannot tell)."""
        scope = d.body_scope
        assert scope is not None
        if slot[0] == "receiver":  # (``x.method()``: its first parameter, when ``d`` is a method)
            if scope.kind == "class" or not d.is_method:
                return None
            return scope.params[0] if scope.params else scope.vararg
        if scope.kind == "class":
            init = next((u for u in self.defs.get("__init__", ()) if u.scope is scope), None)
            if init is None:
                return None
            d, by_attribute, scope = init, True, init.body_scope  # C(...) calls __init__(self, ...)
            assert scope is not None
        kind, where, by_attribute = slot
        if kind == "kw":
            if where in scope.params or where in scope.kwonly:
                return str(where)
            return scope.kwarg
        index = int(where) + (1 if d.is_method and by_attribute else 0)
        if index < len(scope.params):
            return scope.params[index]
        return scope.vararg

    def _pending(self, u: _Unit, callee: str, slot: tuple, names: set[str], attrs: set[str],
                 bases: set[tuple[str, str]]) -> None:
        """Arguments of a kept call of helper ``callee``: needed when the helper reads the parameter."""
        self._wake(callee, DEFINES)
        for d in self.defs.get(callee, ()):
            param = self._params_for(d, slot)
            target = d.body_scope
            if target is not None and target.kind == "class":
                init = next((x for x in self.defs.get("__init__", ()) if x.scope is target), None)
                target = init.body_scope if init is not None else None
            if param is None or target is None:
                self._need_part(u, names, attrs, bases)
                continue
            key = (id(target), param)
            receiver = slot[0] == "receiver"
            if key in self.needed or (key in self.needed_as_base and not receiver):
                self._need_part(u, names, attrs, bases)
            elif key in self.needed_as_base:
                self._receiver_as_base(key, u, names, attrs, bases)
            else:
                self.waiting.setdefault(key, []).append((u, names, attrs, bases, receiver))

    def _need_part(self, u: _Unit, names: set[str], attrs: set[str], bases: set[tuple[str, str]]) -> None:
        push = self.tasks.append
        for name in names:
            push((self.need, (u.scope, name)))
        self._need_bases(u, names, bases)
        for attr in attrs:
            push((self.need_attr, (attr,)))

    def _need_bases(self, u: _Unit, whole: set[str], bases: set[tuple[str, str]]) -> None:
        """The names of ``u`` read as the base of an attribute (``bases``: (name, attribute)) and not
        ``whole``: only their attributes are needed (:meth:`need_base`) when each of those is data the file
        stores (``x.attr = ...``, ``x.attr[k] = ...``) or a class attribute of the file that is no method.
        A method read without being called (``run = self.configure``, ``callbacks=[self.on_step]``) takes
        the object with it, and may hand it on; an attribute the file does not define may be a method of a
        class of another module, which may read any attribute of the object: the name is needed whole."""
        if not bases:
            return
        methods = self.class_methods
        known = self.attr_definers
        partly: dict[str, bool] = {}
        for name, attr in bases:
            if name not in whole:
                self._wake(attr, WRITES)
                partly[name] = partly.get(name, True) and attr not in methods and any(
                    attr in table for table in known)
        push = self.tasks.append
        for name, only_attributes in partly.items():
            push((self.need_base if only_attributes else self.need, (u.scope, name)))

    # -- taint: objects built by seeds -------------------------------------------------------------

    def _spread(self, marked: set, key, readers: dict) -> None:
        """Mark ``key`` once; the statements that read it (``readers[key]``) then use a tainted object."""
        if key in marked:
            return
        marked.add(key)
        for u in readers.get(key, ()):
            self.tasks.append((self.taint_use, (u,)))

    def taint(self, scope: _Scope, name: str) -> None:
        self._wake_module_name(scope, name, MENTIONS)
        self._spread(self.tainted, (id(scope), name), self.readers)

    def instance(self, scope: _Scope, name: str) -> None:
        """``name`` holds what a helper of another module returned (an object of a class the
        interpreter reads): calling its methods is a use (``trainer.build_graph()``)."""
        self._wake_module_name(scope, name, MENTIONS)
        self._spread(self.instances, (id(scope), name), self.receiver_readers)

    def taint_attr(self, attr: str) -> None:
        self._wake(attr)
        self._spread(self.tainted_attrs, attr, self.attr_readers)

    def taint_use(self, u: _Unit) -> None:
        """``u`` uses an object built by a seed (or is a seed): keep it, pass the taint on."""
        push = self.tasks.append
        self.keep(u, 2)
        for name in u.binds:
            if u.sessions is not None and name in u.sessions:
                continue  # a session: its NPU options were fixed when it opened (_Builder._opens_session)
            push((self.taint, (self._bind_scope(u, name), name)))
        for attr in u.attr_stores:
            if u.inert_attrs is not None and attr in u.inert_attrs:
                # a session (as for a name above), or a constant: what ``x.attr`` gives elsewhere is no object
                # a seed built (a statement that reads the attribute of such an object reads the object too)
                continue
            push((self.taint_attr, (attr,)))
        if u.helper_consumer:  # a config handed to another module's class or function: what it returns
            for name in u.binds:  # may hold it (``trainer = Trainer(config)``: its methods are uses)
                push((self.instance, (self._bind_scope(u, name), name)))
        for callee, slot, names, attrs, bases in u.pending:
            if slot[0] == "receiver" or not self._carries(u, names.union(base for base, _attr in bases), attrs):
                continue  # (a receiver: the method's own statements read it, as uses of their parameter)
            self._wake(callee, DEFINES)
            for d in self.defs.get(callee, ()):
                param = self._params_for(d, slot)
                target = d.body_scope
                if target is not None and target.kind == "class":
                    init = next((x for x in self.defs.get("__init__", ()) if x.scope is target), None)
                    target = init.body_scope if init is not None else None
                if target is None:
                    continue
                for p in [param] if param is not None else target.params + target.kwonly:
                    push((self.taint, (target, p)))
        if isinstance(u.node, ast.Return) and u.scope.unit is not None and id(u.scope.unit) not in self.returns_taint:
            owner = u.scope.unit
            self.returns_taint.add(id(owner))
            self._wake(owner.node.name)  # type: ignore[attr-defined]
            for site in self.call_sites.get(owner.node.name, ()):  # type: ignore[attr-defined]
                push((self.taint_use, (site,)))

    def _carries(self, u: _Unit, names: set[str], attrs: set[str]) -> bool:
        if attrs & self.tainted_attrs:
            return True
        for name in names:
            s = self.resolve(u.scope, name)
            if s is not None and (id(s), name) in self.tainted:
                return True
        return u.seed == "config"
