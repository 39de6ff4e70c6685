"""What the relevance slice and the second phase take from the knowledge base: the API names that make a
statement a seed, the calls that make, fill or take a config, the calls the interpreter models and those
that open a session (``slicing.slice_text``'s arguments), assembled once per knowledge base and process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SliceKnowledge:
    """What the slice takes from the knowledge base (``slicing.slice_text``'s arguments)."""

    identifiers: tuple[str, ...]  # more API names that make a statement a seed
    config_calls: tuple[str, ...]  # calls that make, fill, take or define what a config holds
    modelled: frozenset[str]  # the calls the interpreter models (tf_api.toml, str methods, TF2's open)
    sessions: frozenset[str]  # the calls that open a session


_SLICE_KNOWLEDGE: dict[int, tuple[Any, SliceKnowledge]] = {}


def slice_knowledge(kb) -> SliceKnowledge:
    """:class:`SliceKnowledge` of ``kb``, assembled once per knowledge base and process."""
    known = _SLICE_KNOWLEDGE.get(id(kb))
    if known is not None and known[0] is kb:
        return known[1]
    from npu_audit.extract.values import STR_METHODS

    tf2 = getattr(kb, "tf2", None)
    api = getattr(kb, "tf_api", None)
    identifiers = tuple(kb.runconfig.objects) + (tuple(tf2.modules) + tuple(tf2.option_object) if tf2 is not None else ())
    made = SliceKnowledge(
        identifiers=identifiers,
        config_calls=tuple(api.config_call_names()) if api is not None else (),
        modelled=((api.modelled_call_names() if api is not None else frozenset()) | STR_METHODS
                  | frozenset(tf2.open if tf2 is not None else ())),
        sessions=frozenset(api.call_names("session")) if api is not None else frozenset(),
    )
    _SLICE_KNOWLEDGE[id(kb)] = (kb, made)
    return made
