// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=cuda:90})' | FileCheck %s --check-prefix=CUDA
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx1250})' | FileCheck %s --check-prefix=G1250
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx950})' | FileCheck %s --check-prefix=G950

// Plain 8-bit MMA. cuda:90: wgmma reads both operands K-major, so B is the
// transposed view of an (N, K) buffer; its instruction K is 32 and each
// wgmma's sum is added into the fp32 accumulator (maxNumImpreciseAcc = 32).
// gfx1250: the 16x16x64 WMMA; gfx950: the 32x32x16 MFMA with kWidth 8.
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#t = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 1>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
!acc = tensor<64x128xf32, #acc>
module attributes {tile.num_warps = 4 : i32} {
  // CUDA: #[[MMA:.*]] = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 128, 32]}>
  // CUDA: #[[NVT:.*]] = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = true, elementBitWidth = 8}>
  // CUDA-LABEL: tt.func private @b_k_major(
  // CUDA-NOT: ttg.local_load
  // CUDA: ttng.warp_group_dot %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {isAsync = true, maxNumImpreciseAcc = 32 : i32} : !ttg.memdesc<64x64xf8E4M3FN, {{.*}}> * !ttg.memdesc<64x128xf8E4M3FN, #[[NVT]], #smem, mutable> -> tensor<64x128xf32, #[[MMA]]>
  // G1250: #[[MMA:.*]] = #ttg.amd_wmma<{version = 3, isTranspose = true, ctaLayout = {warp = {{\[\[}}0, 1], [1, 0]]}, instrShape = [16, 16, 64]}>
  // G1250-LABEL: tt.func private @b_k_major(
  // G1250: tt.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64xf8E4M3FN, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 16}>> * tensor<64x128xf8E4M3FN, #ttg.dot_op<{opIdx = 1, parent = #[[MMA]], kWidth = 16}>> -> tensor<64x128xf32, #[[MMA]]>
  // G950: #[[MMA:.*]] = #ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 2], instrShape = [32, 32, 16], isTransposed = true}>
  // G950-LABEL: tt.func private @b_k_major(
  // G950: tt.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x64xf8E4M3FN, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 8}>> * tensor<64x128xf8E4M3FN, #ttg.dot_op<{opIdx = 1, parent = #[[MMA]], kWidth = 8}>>
  func.func private @b_k_major(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !tile.shared<tensor<64x64xf8E4M3FN, #s>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf8E4M3FN, #s>>
    %bt = "tile.memdesc_trans"(%b) {order = array<i32: 1, 0>} : (!tile.shared<tensor<128x64xf8E4M3FN, #s>>) -> !tile.shared<tensor<64x128xf8E4M3FN, #t>>
    %ta = "tile.local_load"(%a) : (!tile.shared<tensor<64x64xf8E4M3FN, #s>>) -> tensor<64x64xf8E4M3FN, #opa>
    %tb = "tile.local_load"(%bt) : (!tile.shared<tensor<64x128xf8E4M3FN, #t>>) -> tensor<64x128xf8E4M3FN, #opb>
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf8E4M3FN, #opa>, tensor<64x128xf8E4M3FN, #opb>, !acc) -> !acc
    return %d : !acc
  }
}

// -----

// B stored (K, N) is N-major: cuda:90 keeps the 8-bit MMA on mma.sync (the
// AMD targets read it as any other operand).
#s = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 64>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
!acc = tensor<64x128xf32, #acc>
module attributes {tile.num_warps = 4 : i32} {
  // CUDA-LABEL: tt.func private @b_n_major(
  // CUDA-NOT: warp_group_dot
  // CUDA: tt.dot {{.*}} : tensor<64x64xf8E5M2, #ttg.dot_op<{opIdx = 0, parent = #{{.*}}, kWidth = 4}>> * tensor<64x128xf8E5M2, #ttg.dot_op<{opIdx = 1, parent = #{{.*}}, kWidth = 4}>>
  // G1250-LABEL: tt.func private @b_n_major(
  // G1250: tt.dot
  // G950-LABEL: tt.func private @b_n_major(
  // G950: tt.dot
  func.func private @b_n_major(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !tile.shared<tensor<64x64xf8E5M2, #s>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<64x128xf8E5M2, #s>>
    %ta = "tile.local_load"(%a) : (!tile.shared<tensor<64x64xf8E5M2, #s>>) -> tensor<64x64xf8E5M2, #opa>
    %tb = "tile.local_load"(%b) : (!tile.shared<tensor<64x128xf8E5M2, #s>>) -> tensor<64x128xf8E5M2, #opb>
    %d = "tile.wmma"(%ta, %tb, %c) : (tensor<64x64xf8E5M2, #opa>, tensor<64x128xf8E5M2, #opb>, !acc) -> !acc
    return %d : !acc
  }
}
