"""Command-line defaults: ``flags.DEFINE_*`` (tf.flags / absl) and argparse's ``add_argument``.

A script's options often come from its command line (``FLAGS.precision_mode``, ``args.dump_path``).
What npu-audit can know is the default the script declares; a value read from one is marked
``flag-default`` (the run may change it), so checks say "unless the flag is given". Declarations are
recorded per module (``ModuleState.flags`` / ``ModuleState.arguments``: name -> (value, node)), and a
read looks in the reading module first, then in every other module read.
"""

from __future__ import annotations

from collections.abc import Iterable

import npu_audit.syntax as cst
from npu_audit.extract.model import UNRESOLVED
from npu_audit.extract.project import ModuleState
from npu_audit.extract.symbols import Const, Sym, Unknown, to_python


def declared_default(modules: Iterable[ModuleState], table: str, name: str, what: str) -> Sym:
    """The default of flag/argument ``name`` (``table``: "flags" or "arguments") as a flag-default."""
    for state in modules:
        declared = getattr(state, table)
        if name in declared:
            sym, _node = declared[name]
            v = to_python(sym)
            if v is UNRESOLVED:
                break
            return Const(v, origin="flag-default", flag=name,
                         node=getattr(sym, "node", None), path=getattr(sym, "path", None))
    return Unknown(why=f"{what} {name}")


def record_argument(module: ModuleState, positional: list, keywords: dict, call: cst.Call) -> None:
    """``parser.add_argument("--name", default=...)``: the dest argparse derives, and its default."""
    names = [to_python(p[0]) for p in positional if isinstance(to_python(p[0]), str)]
    dest = to_python(keywords["dest"][0]) if "dest" in keywords else None
    if not isinstance(dest, str):
        longs = [n for n in names if n.startswith("--")]
        chosen = longs[0] if longs else (names[0] if names else None)
        if not chosen:
            return
        dest = chosen.lstrip("-").replace("-", "_")
    default = keywords["default"][0] if "default" in keywords else Const(None)
    module.arguments[dest] = (default, call)
