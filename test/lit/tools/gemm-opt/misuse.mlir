// Misuse is one line and exit 2 (checked in test_driver_logic.py), before any
// input is read: every run here names an input that does not exist.
// RUN: not gemm-opt %t.missing --target=gfx1250 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not gemm-opt %t.missing --emit=hsaco 2>&1 | FileCheck %s --check-prefix=STDOUT
// RUN: not gemm-opt %t.missing --emit=cubin --split-input-file -o %t.cubin 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not gemm-opt %t.missing --emit=tile --pass-pipeline='builtin.module(tile-to-ttgir)' 2>&1 | FileCheck %s --check-prefix=TILE
// RUN: not gemm-opt %t.missing --pass-pipeline='builtin.module(tile-fuse-tdm-copies{max-members=x})' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not gemm-opt %t.missing --pass-pipeline='builtin.module(tile-to-ttgir{colour=red})' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not gemm-opt %t.missing --emit=ttgir --target=gfx950 --pass-pipeline='builtin.module(tile-to-ttgir{target=gfx942})' 2>&1 | FileCheck %s --check-prefix=CONTRA
// RUN: not gemm-opt %t.missing --emit=ptx --target=gfx942 2>&1 | FileCheck %s --check-prefix=KIND

// TARGET: gemm-opt: error: --target applies to --emit only
// TARGET-NOT: could not open
// STDOUT: gemm-opt: error: --emit=hsaco writes a binary file: pass -o FILE
// SPLIT: gemm-opt: error: --emit=cubin writes one binary object per file; it cannot be combined with --split-input-file
// TILE: gemm-opt: error: --emit=tile prints tile IR, but the pipeline runs 'convert-tile-to-triton-gpu'
// OPTION: <pass-pipeline>:1:16: error: pass 'tile-fuse-tdm-copies' option 'max-members' expects int, got 'x'
// PIPELINE: <pass-pipeline>:1:16: error: pipeline 'tile-to-ttgir' has no option 'colour' (options: derive-hints, fuse, pipeline-mma, target)
// CONTRA: gemm-opt: error: --target=gfx950 contradicts 'convert-tile-to-triton-gpu{target=gfx942}'
// KIND: gemm-opt: error: --emit=ptx does not exist for target gfx942 (it has: tile, ttgir, llir, amdgcn, hsaco)
