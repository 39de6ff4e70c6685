"""Extraction: from a script's source to the effective NPU session configs it builds.

Entry point: :func:`npu_audit.extract.extraction.extract_configs`. Stages: read (npu_audit.source) ->
prefilter (npu_audit.prefilter) -> parse (npu_audit.parse) -> interpret (interpreter) -> positions
(positions), all for one file, with helper modules of the analysed tree loaded on demand (project).

This package module imports nothing: the checks, the cache and a warm run need the model
(``extract.model``) without libcst and the interpreter.
"""
