// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-lower-gemm-schedule)' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-lower-gemm-schedule)' | gemm-opt --split-input-file > /dev/null

// The epilogue where the tile is stored: row scale (strides 1, 0), bias (0, 1) widened to f32, gelu-tanh as x / (1 + exp(-2u)), then C's old value added (accumulate), rounded once.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @persistent
  func.func @persistent(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %b: !tile.ptr<bf16>, %r: !tile.ptr<f32>) {
    // CHECK: scf.for
    // CHECK: %[[ACC:.*]] = arith.constant dense<0.000000e+00>
    // CHECK: %[[Z:.*]] = arith.constant 0 : i64
    // CHECK: %[[O:.*]] = arith.constant 1 : i64
    // CHECK: %[[RS:.*]] = "tile.load_block"(%arg6, %arg0, %arg1, %[[O]], %[[Z]], %[[MO:.*]], %[[NO:[^)]*]])
    // CHECK: %[[Y1:.*]] = arith.mulf %[[ACC]], %[[RS]]
    // CHECK: %[[Z2:.*]] = arith.constant 0 : i64
    // CHECK: %[[O2:.*]] = arith.constant 1 : i64
    // CHECK: %[[B16:.*]] = "tile.load_block"(%arg5, %arg0, %arg1, %[[Z2]], %[[O2]], %[[MO]], %[[NO]]) {{.*}} -> tensor<32x32xbf16
    // CHECK: %[[B:.*]] = arith.extf %[[B16]]
    // CHECK: %[[X:.*]] = arith.addf %[[Y1]], %[[B]]
    // CHECK: arith.constant dense<4.471500e-02>
    // CHECK: arith.constant dense<1.59576917>
    // CHECK: %[[NEG:.*]] = arith.negf
    // CHECK: %[[E:.*]] = math.exp %[[NEG]]
    // CHECK: %[[D:.*]] = arith.addf %[[E]]
    // CHECK: %[[G:.*]] = arith.divf %[[X]], %[[D]]
    // CHECK: %[[OLD:.*]] = "tile.load_block"(%arg3, %arg0, %arg1, %arg4, %{{.*}}, %[[MO]], %[[NO]]) {{.*}} -> tensor<32x32xf16
    // CHECK: %[[OLD32:.*]] = arith.extf %[[OLD]]
    // CHECK: %[[SUM:.*]] = arith.addf %[[OLD32]], %[[G]]
    // CHECK: %[[OUT:.*]] = arith.truncf %[[SUM]]
    // CHECK: "tile.store_block"(%arg3, %arg0, %arg1, %arg4, %{{.*}}, %[[MO]], %[[NO]], %[[OUT]])
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %b, %r) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", activation = "gelu-tanh", accumulate, block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<bf16>, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// Atomic stream-K: a whole tile gets the whole epilogue; a split tile's partial is scaled and gets the bias only where the program's range starts the tile (the others read the bias with a column bound of 0: zeros), then is added into C.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @atomic
  func.func @atomic(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f32>, %ldc: i64, %b: !tile.ptr<f32>, %s: !tile.ptr<f32>) {
    // CHECK: scf.for
    // CHECK: %[[SB:.*]] = arith.select %{{.*}}, %c0_i32{{.*}}, %{{.*}} : i32
    // CHECK: %[[WHOLE:.*]] = arith.andi
    // CHECK: %[[STARTS:.*]] = arith.cmpi eq, %[[SB]], %c0_i32{{.*}} : i32
    // CHECK: scf.if %[[WHOLE]] {
    // CHECK: "tile.load_block"(%arg6, %arg0, %arg1, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
    // CHECK: "tile.load_block"(%arg5, %arg0, %arg1,
    // CHECK: "tile.store_block"(%arg3
    // CHECK: } else {
    // CHECK: %[[COLS:.*]] = arith.select %[[STARTS]], %arg1, %c0_i32{{.*}} : i32
    // CHECK: "tile.load_block"(%arg6, %arg0, %arg1,
    // CHECK: "tile.load_block"(%arg5, %arg0, %[[COLS]],
    // CHECK: "tile.atomic_add_block"(%arg3
    // CHECK-NOT: math.
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %b, %s) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "atomic", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1>} : (i32, i32, i32, !tile.ptr<f32>, i64, !tile.ptr<f32>, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// Grouped "m": group g's bias row is columns [g*N, g*N + N) of the (G, N) bias, and rows end at the group's end.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @grouped
  func.func @grouped(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<bf16>, %ldc: i64, %gl: !tile.ptr<i32>, %ng: i32, %b: !tile.ptr<bf16>) {
    // CHECK: %[[W:.*]]:4 = scf.while
    // CHECK: %[[END:.*]] = arith.minsi %{{.*}}, %arg0 : i32
    // CHECK: %[[SHIFT:.*]] = arith.muli %[[W]]#0, %arg1 : i32
    // CHECK: %[[BOUND:.*]] = arith.addi %[[SHIFT]], %arg1 : i32
    // CHECK: %[[AT:.*]] = arith.addi %[[SHIFT]], %{{.*}} : i32
    // CHECK: "tile.load_block"(%arg7, %[[END]], %[[BOUND]], %{{.*}}, %{{.*}}, %{{.*}}, %[[AT]])
    // CHECK: arith.maximumf
    // CHECK: "tile.store_block"(%arg3, %[[END]], %arg1
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %ng, %b) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "m", activation = "relu", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0>} : (i32, i32, i32, !tile.ptr<bf16>, i64, !tile.ptr<i32>, i32, !tile.ptr<bf16>) -> ()
    return
  }
}

// -----

// SwiGLU: the body yields (gate, up); each gets its half of the bias ([gate | up]: the up half's columns shifted by N), then silu(gate) * up, stored once.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @swiglu
  func.func @swiglu(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %b: !tile.ptr<f32>, %gate: tensor<32x32xf32, #acc>, %up: tensor<32x32xf32, #acc>) {
    // CHECK: scf.if
    // CHECK: %[[BG:.*]] = "tile.load_block"(%arg5, %arg0, %arg1, %{{.*}}, %{{.*}}, %[[MO:[^,]*]], %[[NO:[^)]*]])
    // CHECK: %[[G:.*]] = arith.addf %arg6, %[[BG]]
    // CHECK: %[[SHIFT:.*]] = arith.muli %arg1, %c1_i32{{.*}} : i32
    // CHECK: %[[END:.*]] = arith.addi %[[SHIFT]], %arg1 : i32
    // CHECK: %[[AT:.*]] = arith.addi %[[SHIFT]], %[[NO]] : i32
    // CHECK: %[[BU:.*]] = "tile.load_block"(%arg5, %arg0, %[[END]], %{{.*}}, %{{.*}}, %[[MO]], %[[AT]])
    // CHECK: %[[U:.*]] = arith.addf %arg7, %[[BU]]
    // CHECK: %[[NEG:.*]] = arith.negf %[[G]]
    // CHECK: %[[E:.*]] = math.exp %[[NEG]]
    // CHECK: %[[D:.*]] = arith.addf %[[E]]
    // CHECK: %[[S:.*]] = arith.divf %[[G]], %[[D]]
    // CHECK: %[[Y:.*]] = arith.mulf %[[S]], %[[U]]
    // CHECK: %[[OUT:.*]] = arith.truncf %[[Y]]
    // CHECK: "tile.store_block"(%arg3, %arg0, %arg1, %arg4, %{{.*}}, %[[MO]], %[[NO]], %[[OUT]])
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %b) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      "tile.schedule_yield"(%gate, %up) : (tensor<32x32xf32, #acc>, tensor<32x32xf32, #acc>) -> ()
    }) {kind = "data-parallel", activation = "swiglu", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<f32>) -> ()
    return
  }
}
