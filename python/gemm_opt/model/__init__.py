"""The executable model of tile IR: the per-warp copy model and the whole-function interpreter.

It lowers nothing: it is the oracle the passes and the lowering are tested against.
``copy`` executes one TDM copy per warp (pure Python and numpy); ``interpreter`` runs
whole tile functions with all warps in lock-step and detects races on shared memory.
"""
