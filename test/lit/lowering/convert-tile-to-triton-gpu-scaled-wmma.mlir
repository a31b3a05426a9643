// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx1250})' | FileCheck %s --check-prefix=G1250
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(convert-tile-to-triton-gpu{target=gfx950})' | FileCheck %s --check-prefix=G950

// tile.scaled_wmma is tt.dot_scaled (K-packed, no fast math); the e8m0 scales
// are their i8 codes, in the linear layout Gluon's get_amd_wmma_scale_layout
// (gfx1250) or get_amd_mfma_scale_layout (gfx950) gives: each lane holds the
// four scales of its row's 128 elements of K.
#s = #tile.padded_shared<{interval = 128, amount = 16, order = array<i64: 1, 0>}>
#ss = #tile.padded_shared<{interval = 256, amount = 8, order = array<i64: 1, 0>}>
#acc = #tile.wmma_layout<{version = 3, warps_per_cta = array<i64: 2, 2>, instr_shape = array<i64: 16, 16, 128>, transposed = true}>
#opa = #tile.dot_operand<{op_idx = 0, parent = #acc, k_width = 16}>
#opb = #tile.dot_operand<{op_idx = 1, parent = #acc, k_width = 16}>
#sca = #tile.scale_layout<{op_idx = 0, parent = #acc}>
#scb = #tile.scale_layout<{op_idx = 1, parent = #acc}>
!acc = tensor<64x64xf32, #acc>
module attributes {tile.num_warps = 4 : i32} {
  // G1250: #[[SA:.*]] = #ttg.linear<{register = {{\[\[}}0, 1], [0, 2]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [32, 0]], warp = {{\[\[}}0, 0], [16, 0]], block = []}>
  // G1250: #[[SB:.*]] = #ttg.linear<{register = {{\[\[}}0, 1], [0, 2]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [32, 0]], warp = {{\[\[}}16, 0], [0, 0]], block = []}>
  // G1250: #[[MMA:.*]] = #ttg.amd_wmma<{version = 3, isTranspose = true, ctaLayout = {warp = {{\[\[}}0, 1], [1, 0]]}, instrShape = [16, 16, 128]}>
  // G1250-LABEL: tt.func private @scaled(
  // G1250: %[[SCA:.*]] = ttg.local_load %{{.*}} : !ttg.memdesc<64x4xi8, {{.*}}> -> tensor<64x4xi8, #[[SA]]>
  // G1250: %[[SCB:.*]] = ttg.local_load %{{.*}} : !ttg.memdesc<64x4xi8, {{.*}}> -> tensor<64x4xi8, #[[SB]]>
  // G1250: tt.dot_scaled %{{.*}} scale %[[SCA]], %{{.*}} scale %[[SCB]], %{{.*}} lhs = e4m3 rhs = e5m2 {fastMath = false} : tensor<64x128xf8E4M3FN, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 16}>>, tensor<64x4xi8, #[[SA]]> * tensor<128x64xf8E5M2, #ttg.dot_op<{opIdx = 1, parent = #[[MMA]], kWidth = 16}>>, tensor<64x4xi8, #[[SB]]> -> tensor<64x64xf32, #[[MMA]]>
  // G950: #[[MMA:.*]] = #ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 2], instrShape = [32, 32, 64], isTransposed = true}>
  // G950-LABEL: tt.func private @scaled(
  // G950: tt.dot_scaled %{{.*}} scale %{{.*}}, %{{.*}} scale %{{.*}}, %{{.*}} lhs = e4m3 rhs = e5m2 {fastMath = false} : tensor<64x128xf8E4M3FN, #ttg.dot_op<{opIdx = 0, parent = #[[MMA]], kWidth = 16}>>, tensor<64x4xi8, #{{.*}}> * tensor<128x64xf8E5M2, #ttg.dot_op<{opIdx = 1, parent = #[[MMA]], kWidth = 16}>>
  func.func private @scaled(%c: !acc) -> !acc {
    %a = "tile.local_alloc"() : () -> !tile.shared<tensor<64x128xf8E4M3FN, #s>>
    %b = "tile.local_alloc"() : () -> !tile.shared<tensor<128x64xf8E5M2, #s>>
    %sa = "tile.local_alloc"() : () -> !tile.shared<tensor<64x4xf8E8M0FNU, #ss>>
    %sb = "tile.local_alloc"() : () -> !tile.shared<tensor<64x4xf8E8M0FNU, #ss>>
    %ta = "tile.local_load"(%a) : (!tile.shared<tensor<64x128xf8E4M3FN, #s>>) -> tensor<64x128xf8E4M3FN, #opa>
    %tb = "tile.local_load"(%b) : (!tile.shared<tensor<128x64xf8E5M2, #s>>) -> tensor<128x64xf8E5M2, #opb>
    %tsa = "tile.local_load"(%sa) : (!tile.shared<tensor<64x4xf8E8M0FNU, #ss>>) -> tensor<64x4xf8E8M0FNU, #sca>
    %tsb = "tile.local_load"(%sb) : (!tile.shared<tensor<64x4xf8E8M0FNU, #ss>>) -> tensor<64x4xf8E8M0FNU, #scb>
    %d = "tile.scaled_wmma"(%ta, %tsa, %tb, %tsb, %c) : (tensor<64x128xf8E4M3FN, #opa>, tensor<64x4xf8E8M0FNU, #sca>, tensor<128x64xf8E5M2, #opb>, tensor<64x4xf8E8M0FNU, #scb>, !acc) -> !acc
    return %d : !acc
  }
}
