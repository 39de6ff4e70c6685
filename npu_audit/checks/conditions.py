"""Evaluate knowledge-base conditions over an entry's effective option set.

Options may be set on some paths only, or to one of several values, or to a value npu-audit could not
resolve. Each atom therefore yields the set of truth values it can take: T (holds), F (does not), U
(unknown: depends on an unresolved value). Combinators work element-wise (Kleene logic), treating
different options as independent. A finding is certain when the result is exactly {T}, a "may" when it
is {T, F}, and is not reported when U is possible.
"""

from __future__ import annotations

from typing import Any, Optional, cast

from npu_audit.extract.model import EffectiveOption, OptionWrite
from npu_audit.knowledge.model import Condition

T, F, U = "T", "F", "U"
ABSENT = object()
# the value of a write made with another AttrValue field than the adapter reads, for a view that sets such
# writes aside (``OptionView(skip_wrong_field=True)``): the option counts as written, but no condition
# holds or fails on it
SKIP = object()


def _and(a: str, b: str) -> str:
    if a == F or b == F:
        return F
    if a == U or b == U:
        return U
    return T


def _or(a: str, b: str) -> str:
    if a == T or b == T:
        return T
    if a == U or b == U:
        return U
    return F


def _not(a: str) -> str:
    return {T: F, F: T, U: U}[a]


def normalise(value: Any) -> Any:
    """Values as the adapter compares them: bytes decoded, other values unchanged."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.decode("latin-1")
    return value


def _steps(w: OptionWrite) -> set:
    return {(b.node_id, b.arm) for b in w.branches}


def compatible(w: OptionWrite, path: set) -> bool:
    """A write can happen on the same run as the branch ``path`` (no sibling arm of a branch in it)."""
    arms = {node: arm for node, arm in path}
    return all(arms.get(b.node_id, b.arm) == b.arm for b in w.branches)


# id(node) -> (node, text): the node is kept so that the id of a node freed since (a file analysed
# earlier in the same process) is never taken for the same test: ids are reused after collection
_TEST_TEXT: dict[int, tuple[Any, Optional[str]]] = {}


def test_text(step) -> Optional[str]:
    """The source text of the test an ``if`` arm depends on (whitespace normalised), or None for steps
    that do not test an expression (loops, try, match cases)."""
    if step.kind != "if" or step.node is None:
        return None
    key = id(step.node)
    cached = _TEST_TEXT.get(key)
    if cached is not None and cached[0] is step.node:
        return cached[1]
    if len(_TEST_TEXT) > 50_000:
        _TEST_TEXT.clear()
    import npu_audit.syntax as cst

    # (a node without a position has no text: it is matched with no other)
    text: Optional[str] = " ".join(cst.code_of(step.node).split()) or None
    _TEST_TEXT[key] = (step.node, text)
    return text


def expand(path, effective: dict[str, EffectiveOption]) -> set:
    """``path`` plus the same arm of every other ``if`` of the entry that tests the same expression.

    Scripts often repeat a guard (``if FLAGS.dump:`` before the dump switch, and again before its path):
    the two statements are two nodes, but one run takes both arms or neither, so a branch path through
    one of them goes through the other too."""
    out = set(path)
    if not out:
        return out
    by_text: dict[str, set] = {}
    text_of: dict[int, str] = {}
    for eff in effective.values():
        for w in eff.writes:
            for b in w.branches:
                text = test_text(b)
                if text is not None:
                    by_text.setdefault(text, set()).add(b.node_id)
                    text_of[b.node_id] = text
    for node, arm in list(out):
        text = text_of.get(node)
        if text is not None:
            out |= {(other, arm) for other in by_text[text]}
    return out


def consistent(path) -> bool:
    """No branch appears in the path with two different arms (such a path is never taken)."""
    arms: dict[int, int] = {}
    for node, arm in path:
        if arms.setdefault(node, arm) != arm:
            return False
    return True


class OptionView:
    """The possible final values of each option of one entry, as seen from one branch path.

    With ``path`` (a set of (branch node, arm) pairs, e.g. the branches of the write a finding is
    about), writes on that same path count as certain and writes in other arms of its branches are
    left out; writes in unrelated branches stay possible. Without a path, every write is possible.
    With ``strict``, only the writes on the path happen (see ``__init__``).
    """

    def __init__(self, effective: dict[str, EffectiveOption], path: Optional[set] = None,
                 fields: Optional[dict[str, str]] = None, strict: bool = False, skip_wrong_field: bool = False):
        self.effective = effective
        self.path = path
        self.fields = fields or {}
        # skip_wrong_field: a write with another AttrValue field than the one the adapter reads is its own
        # defect (wrong-field): the adapter fails on it first, or reads nothing from it. Its value is SKIP,
        # so a relation is judged only on the runs where the option's value comes from a well-formed write
        # (or from no write at all), never as a consequence of the wrong field
        self.skip_wrong_field = skip_wrong_field
        # strict: the run that takes exactly the branches of ``path`` and no other optional branch, so
        # writes outside the path do not happen (used to tell writes that one run takes together from
        # writes under separate conditions)
        self.strict = strict
        # flags whose default the guards of the path rule out (those of every write made on the path):
        # a value taken from such a default is not the value on this path
        self.excluded: frozenset = frozenset().union(*(
            w.excluded_flags for eff in effective.values() for w in eff.writes
            if w.excluded_flags and _steps(w) <= path)) if path else frozenset()

    def _value(self, w: OptionWrite) -> Any:
        """What the adapter reads: a write with another AttrValue field reads as that field's empty value."""
        if self.excluded and w.value.origin == "flag-default" and w.value.flag in self.excluded:
            return U
        expected = self.fields.get(w.key)
        if expected and w.field and w.via == "parameter_map" and w.field != expected:
            return SKIP if self.skip_wrong_field else {"b": False, "i": 0, "s": ""}[expected]
        return normalise(w.value.python) if w.value.resolved else U

    def alternatives(self, key: str) -> list[Any]:
        eff = self.effective.get(key)
        if eff is None:
            return [ABSENT]
        if self.strict:
            taken = [w for w in eff.writes if _steps(w) <= (self.path or set())]
            return [self._value(taken[-1])] if taken else [ABSENT]
        if self.path is None:
            candidates, definite = eff.candidates, eff.definitely_set
        else:
            writes = [w for w in eff.writes if compatible(w, self.path)]
            last_certain = max((i for i, w in enumerate(writes) if _steps(w) <= self.path), default=None)
            if last_certain is None:
                candidates, definite = writes, eff.definitely_set and len(writes) == len(eff.writes)
            else:
                candidates, definite = writes[last_certain:], True
            if not candidates:
                return [ABSENT]
        values: list[Any] = [self._value(w) for w in candidates]
        if not definite:
            values.append(ABSENT)
        return values

    def writes(self, key: str) -> list[OptionWrite]:
        eff = self.effective.get(key)
        return list(eff.candidates) if eff else []


def _atom(cond: Condition, value: Any, view: OptionView) -> str:
    if value is U:
        if cond.op == "set":
            return T
        if cond.op == "unset":
            return F
        return U
    present = value is not ABSENT
    op = cond.op
    if op == "set":
        return T if present else F
    if op == "unset":
        return F if present else T
    if not present:
        return T if op == "not_in" else F
    if op == "is":
        return T if _equal(value, cond.operand) else F
    if op == "in":
        return T if any(_equal(value, o) for o in cond.operand) else F
    if op == "not_in":
        return F if any(_equal(value, o) for o in cond.operand) else T
    number = _number(value)
    if number is None:
        return U
    if op in ("gt", "ge", "lt", "le"):
        return T if {"gt": number > cond.operand, "ge": number >= cond.operand, "lt": number < cond.operand,
                     "le": number <= cond.operand}[op] else F
    return U


def _equal(value: Any, operand: Any) -> bool:
    if isinstance(operand, bool):
        if isinstance(value, bool):
            return value is operand
        if isinstance(value, int):
            return bool(value) is operand
        return False
    if isinstance(operand, int) and not isinstance(operand, bool):
        n = _number(value)
        return n is not None and not isinstance(value, bool) and n == operand
    return value == operand


def same_value(value: Any, operand: Any) -> bool:
    """A decoded option value equals a value of the knowledge base, as conditions compare them
    (``True`` matches ``.b = True`` and ``.i = 1``)."""
    return _equal(value, operand)


def _number(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            try:
                return float(value.strip())
            except ValueError:
                return None
    return None


def evaluate(cond: Condition, view: OptionView) -> set[str]:
    if cond.op == "all":
        result = {T}
        for child in cond.children:
            sub = evaluate(child, view)
            result = {_and(a, b) for a in result for b in sub}
        return result
    if cond.op == "any":
        result = {F}
        for child in cond.children:
            sub = evaluate(child, view)
            result = {_or(a, b) for a in result for b in sub}
        return result
    if cond.op == "not":
        return {_not(a) for a in evaluate(cond.children[0], view)}
    if cond.op == "gt_key":
        out = set()
        for left in view.alternatives(cast(str, cond.key)):  # (gt_key names both options)
            for right in view.alternatives(cast(str, cond.operand)):
                if left is SKIP or right is SKIP:
                    continue
                if left is U or right is U:
                    out.add(U)
                elif left is ABSENT or right is ABSENT:
                    out.add(F)
                else:
                    a, b = _number(left), _number(right)
                    out.add(U if a is None or b is None else (T if a > b * cond.factor else F))
        return out
    return {_atom(cond, value, view) for value in view.alternatives(cast(str, cond.key))  # (atoms name one)
            if value is not SKIP}


def verdict(result: set[str]) -> Optional[str]:
    """'always' when certainly true, 'conditional' when true on some paths, None otherwise."""
    if U in result or T not in result:
        return None
    return "always" if result == {T} else "conditional"
