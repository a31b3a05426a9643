"""The executable model of tile IR: the per-warp copy model and the whole-function interpreter.

It lowers nothing: it is the oracle the passes and the lowering are tested against.
``copy`` executes one TDM copy per warp (pure Python and numpy); ``interpreter`` runs
whole tile functions with all warps in lock-step and detects races on shared memory;
its core (``core``, ``values``, ``races``) owns no op: each op family (``arith``,
``control_flow``, ``memory``, ``tdm``, ``mma``, ``barriers``, ``sync``,
``warp_specialize``) registers its implementations in a ``registry``, one per op.
``concurrency`` runs the programs of a grid concurrently (a fixed number resident,
interleaved at atomics and global block accesses, in program order or by a seed),
reports flag waits that can never end, and checks that programs read each other's
global data only after a release -> acquire chain; ``warp_specialize`` runs the
partitions of a ``tile.warp_specialize`` as agents interleaved at barrier ops and
reports deadlocks between them (``barriers`` models the barriers themselves).
"""
