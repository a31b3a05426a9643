// An option that takes one of a set of values is checked when the pipeline is
// parsed: a bad value is a usage error (exit 2, one line, the pipeline column),
// before any input is read (the input named here does not exist).
// RUN: not gemm-opt %t.missing --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{mma=bogus})' 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not gemm-opt %t.missing --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90 lds-copies=bogus})' 2>&1 | FileCheck %s --check-prefix=LDS
// RUN: not gemm-opt %t.missing --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{mma=WGMMA})' 2>&1 | FileCheck %s --check-prefix=CASE

// MMA: <pass-pipeline>:1:16: error: pass 'convert-tile-to-triton-gpu' option 'mma' expects one of auto, mma_v2, wgmma, got 'bogus'
// MMA-NOT: could not open
// LDS: <pass-pipeline>:1:16: error: pass 'convert-tile-to-triton-gpu' option 'lds-copies' expects one of auto, direct, registers, tma, got 'bogus'
// LDS-NOT: could not open
// CASE: error: pass 'convert-tile-to-triton-gpu' option 'mma' expects one of auto, mma_v2, wgmma, got 'WGMMA'
