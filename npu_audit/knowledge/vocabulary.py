"""The words npu-audit shares across stages, each defined once: releases, scenarios, products, engine
names and how the adapter reacts to a bad setting.

The knowledge base (``rules/*.toml``) is validated against these (:mod:`npu_audit.knowledge.loader`),
settings accept them, checks and explanations phrase them from here. Each set is a ``Literal`` type
for annotations and a tuple (or a table keyed by it) for code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

#: Adapter releases whose session-options tables the knowledge base describes (``--release``).
Release = Literal["current", "legacy"]
RELEASES: tuple[Release, ...] = get_args(Release)

#: What the session runs (``--scenario``; ``graph_run_mode`` 1 and 0).
Scenario = Literal["training", "inference"]
SCENARIOS: tuple[Scenario, ...] = get_args(Scenario)
#: A scenario as messages name it (inference on a session is online inference).
SCENARIO_NAMES: dict[Scenario, str] = {"training": "training", "inference": "online inference"}

#: Product ids (``--product``; their document names and aliases are data in rules/products.toml).
ProductId = Literal["atlas-training", "atlas-inference", "atlas-a2", "atlas-a3"]
PRODUCT_IDS: tuple[ProductId, ...] = get_args(ProductId)
#: A product as value grammars name it in their messages (rules/products.toml has the full name).
PRODUCT_SHORT_NAMES: dict[str, str] = {  # keyed by ProductId
    "atlas-training": "Atlas training products",
    "atlas-inference": "Atlas inference products",
    "atlas-a2": "Atlas A2 products",
    "atlas-a3": "Atlas A3 products",
}

#: Engine names of stream_max_parallel_num in the current release.
ENGINES: tuple[str, ...] = ("DNN_VM_AICPU", "AIcoreEngine")
#: Legacy engine name -> current name (the rows of the ``stream_engine_names`` migration in
#: rules/migrations.toml, which the loader checks against this table).
LEGACY_ENGINES: dict[str, str] = {"DNN_VM_TF": "DNN_VM_AICPU", "DNN_V100": "AIcoreEngine"}

#: Severities of findings and knowledge-base facts.
Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)


@dataclass(frozen=True)
class Reaction:
    """How the adapter reacts, said two ways: ``summary`` for a table of facts (``--explain``, hovers),
    ``consequence`` as the end of a finding's message."""

    summary: str
    consequence: str


#: How the adapter reacts to a value outside the option's domain.
InvalidReaction = Literal["session-error", "abort", "runtime-error", "clamped", "unchecked"]
INVALID_REACTIONS: dict[InvalidReaction, Reaction] = {
    # errors::Internal / InvalidArgument: exception at session creation or first run
    "session-error": Reaction("rejected when the session starts (exception)",
                              "the adapter rejects it and the session fails to start"),
    # LOG(FATAL): the process aborts
    "abort": Reaction("the process aborts (LOG(FATAL))",
                      "the adapter aborts the whole process (LOG(FATAL))"),
    # rejected later, while the graph is built or run on the device
    "runtime-error": Reaction("fails later, when the graph is built or run",
                              "it fails when the graph is built or run on the device"),
    # the adapter clamps the value and logs a warning
    "clamped": Reaction("clamped to the limit with a warning",
                        "the adapter clamps it to the limit"),
    # the adapter passes it through; the constraint is documented only
    "unchecked": Reaction("not checked by the adapter (documented limit only)",
                          "the adapter passes it on unchecked, so it is not applied as documented"),
}

#: How the adapter reacts when an option is written with another AttrValue field than the one it reads
#: (``{right}`` in a consequence: the field it reads).
WrongFieldReaction = Literal["session-error", "ignored", "reads-default", "reads-empty-invalid"]
WRONG_FIELD_REACTIONS: dict[WrongFieldReaction, Reaction] = {
    # explicit field check: InvalidArgument at session start
    "session-error": Reaction("rejected at session start (explicit field check)",
                              "the adapter checks the field and fails the session with InvalidArgument"),
    # the adapter skips the key: the setting is silently lost
    "ignored": Reaction("the key is silently skipped",
                        "the adapter only accepts .{right} for this key and silently skips it otherwise"),
    # the adapter reads ''/0/false from the empty oneof: the setting is silently lost
    "reads-default": Reaction("setting silently lost (the adapter reads an empty value)",
                              "the adapter reads .{right} and finds nothing, so the option silently keeps its "
                              "default"),
    # the adapter reads ''/0 and then rejects that value
    "reads-empty-invalid": Reaction("the empty value read is rejected at session start",
                                    "the adapter reads .{right}, finds an empty value and rejects it: the session "
                                    "fails to start"),
}

#: What a violated relation between options leads to.
Failure = Literal["script-error", "session-error", "abort", "runtime-error", "ignored", "docs"]
FAILURES: tuple[Failure, ...] = get_args(Failure)
#: The check that reports a violated relation of each kind (rules/relations.toml, rules/README.md).
RELATION_CHECKS: dict[str, str] = {
    "requires": "missing-companion",
    "together": "missing-companion",
    "excludes": "conflicting-options",
    "overrides": "no-effect",
    "gated": "no-effect",
}
#: The adapters that read a config: "tf1" (tf_adapter: parameter_map, NPURunConfig) and "tf2"
#: (tf_adapter_2.x: npu_device.global_options()). A relation's failure names the ones whose own code
#: makes it happen (Relation.enforced_by).
Adapter = Literal["tf1", "tf2"]
ADAPTERS: tuple[Adapter, ...] = get_args(Adapter)
#: The failures an adapter's own check raises (a relation with one says which adapters enforce it).
ADAPTER_CHECKS: tuple[str, ...] = ("session-error", "abort")
#: The reactions and failures that stop the job: findings about them are errors, the others warnings.
FATAL: tuple[str, ...] = ("session-error", "abort", "runtime-error", "script-error")
