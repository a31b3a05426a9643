"""The bottom layer: the pure-Python rules and the one adapter to the MLIR bindings.

Nothing here imports the dialect, the passes, the lowering or Triton. ``warp_hint``,
``tdm_layout`` and ``layouts`` are pure Python (no MLIR), so the Python API and the
runtime can use them without loading the bindings; ``ext_compat`` is the only module
of the project that imports the MLIR bindings.
"""
