"""Fuzzing gemm-opt: module generators, input mutations and the oracle.

* :mod:`.generate`: hypothesis strategies for well-formed tile modules, built
  through the dialect's typed op builders;
* :mod:`.mutate`: mutations of the examples and lit inputs (text is what the
  tool reads, so its inputs are mutated as text);
* :mod:`.oracle`: runs ``gemm-opt`` in a forked child of a warm worker and
  judges exit status, diagnostics and artifacts;
* :mod:`.commands`: the command lines a module is run with (every pass, named
  pipeline and emit kind, for every target).
"""
