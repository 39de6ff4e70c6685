"""Statement-level relevance slice: the statements of a file that can reach NPU configuration.

Building the syntax tree and the interpreter are the expensive steps of an analysis, and in a training
script most statements (the model, the input pipeline, logging) cannot change what the script configures
on the NPU. :func:`slice_text` finds, with CPython's ``ast``, the statements that can, at any depth
(inside function bodies too), and returns the text with every other statement's lines blanked, and the
dropped statements (the syntax tree is built without them): the interpreter reads what is left. Lines
keep their numbers and kept statements their columns, so every position is exact; fixes and
suppressions work on the original text (``pipeline._analyze``). ``NPU_AUDIT_NO_SLICE=1`` turns the
slice off.

The stages, one module each: :mod:`.seeds` (what makes a statement a seed), :mod:`.reach` (which
imports lead to code of the tree that can reach NPU configuration), :mod:`.units` (one unit per
statement, with what it reads, binds and uses), :mod:`.fixpoint` (which units are kept) and
:mod:`.blanking` (the text with the dropped statements blanked).

What is kept (when in doubt, a statement is kept: a missing statement loses findings, an extra one
only costs time):

- **seeds**: a statement whose text holds an NPU marker (``npu_audit.prefilter``), or that names an
  API the interpreter models (``ConfigProto``, sessions, ``graph_options``/``rewrite_options``,
  ``init_resource``, the TF2 device module); flag and argparse definitions (``DEFINE_*``,
  ``add_argument``: defaults written into options are read through them); ``app.run(main)``; a call of
  one of the NPU names of a module of the tree (:meth:`TreeReach.exports`: a name whose code can reach
  NPU configuration; the module's other names are called to load data or build models);
- **forward**: a statement that uses an object built by a seed (a config, a session, a run config) in
  a way the interpreter follows: writes into it, aliases, returns or stores it, passes it to a helper
  of the file, to another name of a module of the tree that can reach NPU code (what it returns may
  hold the config: its methods are uses), or to an API that takes a config. Passing it as the
  receiver of an unmodelled method (``sess.run(train_op)``) or to an unmodelled function is not such a
  use (the interpreter ignores those calls). A name bound to a session a statement opens
  (``with tf.Session(config=c) as sess``, or an attribute it is stored in: ``self.sess = tf.Session(...)``)
  is not followed forward at all: the session's NPU options were
  fixed when it opened, so handing it to a helper that runs the model (with the data that helper is
  given) changes nothing; a call that uses it for NPU code (``set_iteration_per_loop(sess, ...)``) is a
  seed and keeps it. A constant stored in an attribute of such an object (``custom_op.name =
  "NpuOptimizer"``) makes no other ``x.name`` a use: whoever reads the attribute of the object reads the
  object too. A helper of the file called with it gets the parameter tainted; a helper returning
  it taints its call sites' targets;
- **backward**: every statement that binds or mutates a name a kept statement reads (all of them in
  the name's scope, before or after: loops), attribute stores and class attributes of an attribute
  a kept statement reads (``self.mode``), and the statements that change what such an attribute holds
  (``self.opts["mode"] = ...``); of a name whose data attributes alone a kept statement reads
  (``self.mode``), a statement that only stores another attribute into it (``self.model = ...``) is not
  needed for that read, since the attributes read are needed on their own (a read of the whole object,
  ``self.__dict__``, ``helper(self)``, ``str(self)``, a method of another module ``self.run()`` or
  ``run = self.build``, whose method may hand ``self`` on, needs every such store); the return statements
  of a helper whose value a kept statement uses, and the arguments of a kept call of a helper for the
  parameters the helper's kept statements read, the receiver of a call of a method of the class on a
  method's own ``self`` (``self.build()``) included: it is needed whole only if the method reads its first
  parameter whole, else only its attributes (any other receiver of a name the file defines is read whole:
  it may be an object of another module's class);
  not what is read only by an argument, calling nothing itself, of a call through a name that only imports
  from outside the tree bind (``tf.layers.dense(features, units)``, ``np.mean(losses)``), or that nothing
  in the file binds while no star import of a module of the tree could bind it (a builtin: ``hasattr(self,
  "cache")``, ``len(batches)``), when the interpreter models no call of that name: it reads no code behind
  such a call, whose value is unknown whatever its arguments; nor, for an attribute read only on names
  bound to a module from outside the tree (``tf.train``, ``np.mean``, ``FLAGS.steps`` with ``FLAGS =
  flags.FLAGS``), the statements storing an attribute of that name (``self.steps = 0``): the interpreter
  gives such attributes from the module or the flag definitions, which no store of the file changes;
- **context**: the headers of the compound statements around a kept statement (their tests, loops
  and ``with`` items, with their dependencies: guards matter), every clause of a kept ``if``/``try``
  (so "has an else" stays true; an emptied block gets a ``pass``), the call sites of a function or
  class that has kept statements (reading it from its caller gives the caller's arguments and
  branches, not a standalone reading; a mention through a name bound to a module from outside the tree,
  ``tf.train.Saver()`` for a method ``train``, is none), its ``return`` statements (control flow) and ``global``
  declarations, every import at module level, and statements sharing a line with a kept one.
"""

from __future__ import annotations

from npu_audit.slicing.blanking import ENV_OFF, SliceResult, enabled, slice_text, stand_in
from npu_audit.slicing.reach import Exports, HelperUse, Reaches, TreeReach
from npu_audit.slicing.seeds import (
    CONSUMERS,
    DEFINITION_CALLS,
    HANDLED_METHODS,
    MARKER_TEXT_RE,
    SEED_IDENTIFIERS,
)

__all__ = [
    "CONSUMERS",
    "DEFINITION_CALLS",
    "ENV_OFF",
    "HANDLED_METHODS",
    "MARKER_TEXT_RE",
    "SEED_IDENTIFIERS",
    "Exports",
    "HelperUse",
    "Reaches",
    "SliceResult",
    "TreeReach",
    "enabled",
    "slice_text",
    "stand_in",
]
