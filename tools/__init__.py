"""Command-line tools of gemm-opt (``gemm-opt`` and developer scripts)."""
