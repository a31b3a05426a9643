// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-lower-gemm-schedule)' | FileCheck %s
// RUN: gemm-opt %s --split-input-file --pass-pipeline='builtin.module(tile-lower-gemm-schedule)' | gemm-opt --split-input-file > /dev/null

// Data-parallel: one tile per program, guarded; the body inlined once, then the store.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @data_parallel
  func.func @data_parallel(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64) {
    // CHECK-NOT: tile.gemm_schedule
    // CHECK: %[[PID:.*]] = "tile.program_id"() {axis = 0 : i32}
    // CHECK: %[[OK:.*]] = arith.cmpi slt, %[[PID]], %{{.*}} : i32
    // CHECK: scf.if %[[OK]] {
    // CHECK: %[[ACC:.*]] = arith.constant dense<0.000000e+00> : tensor<32x32xf32
    // CHECK: %[[OUT:.*]] = arith.truncf %[[ACC]] : tensor<32x32xf32, {{.*}}> to tensor<32x32xf16
    // CHECK: "tile.store_block"(%arg3, %arg0, %arg1, %arg4, %{{.*}}, %{{.*}}, %{{.*}}, %[[OUT]])
    // CHECK-NOT: tile.schedule_yield
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "data-parallel", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// Persistent: a strided tile loop over the grid, GROUP_M order (divsi/remsi by group_m * tiles_n).
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @persistent
  func.func @persistent(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64) {
    // CHECK: %[[PID:.*]] = "tile.program_id"() {axis = 0 : i32}
    // CHECK: %[[NP:.*]] = "tile.num_programs"() {axis = 0 : i32}
    // CHECK: scf.for %[[T:.*]] = %[[PID]] to %{{.*}} step %[[NP]] : i32 {
    // CHECK: arith.divsi %[[T]], %{{.*}} : i32
    // CHECK: arith.minsi
    // CHECK: "tile.store_block"
    // CHECK-NOT: tile.atomic
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// Work stealing: a claim per chiplet counter (padded slots), a while loop that stops at the chiplet's last tile, and the next claim before the store.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @work_stealing
  func.func @work_stealing(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>) {
    // CHECK: %[[NP:.*]] = "tile.num_programs"
    // CHECK: %[[X:.*]] = arith.minsi %[[NP]], %c8_i32 : i32
    // CHECK: %[[XCD:.*]] = arith.remsi %{{.*}}, %[[X]] : i32
    // CHECK: %[[SLOT0:.*]] = arith.muli %[[XCD]], %c64_i32 : i32
    // CHECK: %[[SLOT:.*]] = arith.addi %c0_i32{{.*}}, %[[SLOT0]] : i32
    // CHECK: %[[FIRST:.*]] = "tile.atomic_rmw"(%arg5, %[[SLOT]], %{{.*}}) {kind = "add", scope = "gpu", sem = "relaxed"}
    // CHECK: scf.while (%[[RAW:.*]] = %[[FIRST]]) : (i32) -> i32 {
    // CHECK: arith.cmpi slt, %[[RAW]], %{{.*}} : i32
    // CHECK: } do {
    // CHECK: %[[NEXT:.*]] = "tile.atomic_rmw"(%arg5, %[[SLOT]], %{{.*}}) {kind = "add", scope = "gpu", sem = "relaxed"}
    // CHECK: "tile.store_block"
    // CHECK: scf.yield %[[NEXT]] : i32
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "work-stealing", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, num_xcds = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>) -> ()
    return
  }
}

// -----

// Stream-K, atomic: whole tiles are stored, split ones added atomically into C (zeroed by the host).
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @stream_k_atomic
  func.func @stream_k_atomic(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64) {
    // CHECK: "tile.num_programs"
    // CHECK: scf.for %{{.*}} = %c0_i32{{.*}} to %{{.*}} step %c1_i32{{.*}} : i32 {
    // CHECK: scf.if %{{.*}} {
    // CHECK: "tile.store_block"
    // CHECK: } else {
    // CHECK: %[[P:.*]] = arith.truncf
    // CHECK: "tile.atomic_add_block"(%arg3, %arg0, %arg1, %arg4, %{{.*}}, %{{.*}}, %{{.*}}, %[[P]]) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>, scope = "gpu", sem = "relaxed"}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "atomic", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// Stream-K, linear: the others publish (store, then a release add to the owner's count); the owner waits once for the count (acquire), then adds their fp32 partials in a fixed order with no wait between loads.
// Stream-K tiles are visited last to first (unit u - n_dp is tile last - (u - n_dp)): the published partial comes before the owned tile's wait.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @stream_k_linear
  func.func @stream_k_linear(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>) {
    // CHECK: %[[IPT1:.*]] = arith.maxsi %{{.*}}, %c1_i32{{.*}} : i32
    // CHECK: %[[FIRST:.*]] = arith.divsi %{{.*}}, %[[IPT1]] : i32
    // CHECK: %[[LAST:.*]] = arith.divsi %{{.*}}, %[[IPT1]] : i32
    // CHECK: scf.for %[[U:.*]] = %c0_i32{{.*}} to %{{.*}} step %c1_i32{{.*}} : i32 {
    // CHECK-NEXT: %[[ISDP:.*]] = arith.cmpi slt, %[[U]], %[[NDP:.*]] : i32
    // CHECK-NEXT: %[[SEG:.*]] = arith.subi %[[U]], %[[NDP]] : i32
    // CHECK-NEXT: %[[TL:.*]] = arith.subi %[[LAST]], %[[SEG]] : i32
    // CHECK: arith.muli %[[TL]], %{{.*}} : i32
    // CHECK: scf.if %{{.*}} {
    // CHECK: %[[ANY:.*]] = arith.cmpi sgt, %[[OTHERS:.*]], %c0_i32{{.*}} : i32
    // CHECK: scf.if %[[ANY]] {
    // CHECK: scf.while : () -> () {
    // CHECK: %[[COUNT:.*]] = "tile.atomic_rmw"(%arg5, %{{.*}}, %c0_i32{{.*}}) {kind = "add", scope = "gpu", sem = "acquire"}
    // CHECK: %[[SHORT:.*]] = arith.cmpi slt, %[[COUNT]], %[[OTHERS]] : i32
    // CHECK: scf.condition(%[[SHORT]])
    // CHECK: %[[FIX:.*]] = scf.for %{{.*}} to %[[OTHERS]] step %{{.*}} iter_args(%[[SUM:.*]] = %{{.*}}) -> (tensor<32x32xf32
    // CHECK-NOT: tile.atomic_rmw
    // CHECK: %[[PART:.*]] = "tile.load_block"(%arg6
    // CHECK: arith.addf %[[SUM]], %[[PART]]
    // CHECK: "tile.store_block"(%arg3
    // CHECK: } else {
    // CHECK: "tile.store_block"(%arg6
    // CHECK: "tile.atomic_rmw"(%arg5, %{{.*}}, %c1_i32{{.*}}) {kind = "add", scope = "gpu", sem = "release"}
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "linear", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// Stream-K, tree: pairs at strides 1, 2, 4, ...; receivers wait and add, senders publish and leave; the last contributor stores.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @stream_k_tree
  func.func @stream_k_tree(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %s: !tile.ptr<i32>, %p: !tile.ptr<f32>) {
    // CHECK: scf.while (%[[STRIDE:.*]] = %c1_i32{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %true{{.*}}) : (i32, tensor<32x32xf32
    // CHECK: %[[TWICE:.*]] = arith.addi %[[STRIDE]], %[[STRIDE]] : i32
    // CHECK: sem = "acquire"
    // CHECK: "tile.load_block"(%arg6
    // CHECK: } else {
    // CHECK: "tile.store_block"(%arg6
    // CHECK: sem = "release"
    // CHECK: scf.yield %[[TWICE]]
    // CHECK: "tile.store_block"(%arg3
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %s, %p) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "stream-k", reduction = "tree", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, !tile.ptr<f32>) -> ()
    return
  }
}

// -----

// Grouped by M: the tile total from a scan of group_lens on the device (a negative length read as 0); each tile's group by a walk on from the program's previous tile's group (carried by the tile loop), reading lengths only below G; rows bounded by the group's end and by M.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @grouped_m
  func.func @grouped_m(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32) {
    // CHECK: %[[TOTAL:.*]] = scf.for %[[G0:.*]] = %c0_i32{{.*}} to %arg6 step %c1_i32{{.*}} iter_args(%{{.*}} = %c0_i32{{.*}}) -> (i32) : i32 {
    // CHECK: "tile.load_scalar"(%arg5, %[[G0]]) : (!tile.ptr<i32>, i32) -> i32
    // CHECK: %[[LOOP:.*]]:3 = scf.for %[[T:.*]] = %{{.*}} to %[[TOTAL]] step %{{.*}} iter_args(%[[G0:.*]] = %c0_i32{{.*}}, %[[R0:.*]] = %c0_i32{{.*}}, %[[T0:.*]] = %c0_i32{{.*}}) -> (i32, i32, i32)
    // CHECK: %[[LAST:.*]] = arith.subi %arg6, %c1_i32{{.*}} : i32
    // CHECK: %[[WALK:.*]]:4 = scf.while (%[[G:.*]] = %[[G0]], %[[R:.*]] = %[[R0]], %[[TL:.*]] = %[[T0]]) : (i32, i32, i32) -> (i32, i32, i32, i32) {
    // CHECK: %[[IDX:.*]] = arith.minsi %[[G]], %[[LAST]] : i32
    // CHECK: %[[RAW:.*]] = "tile.load_scalar"(%arg5, %[[IDX]])
    // CHECK: %[[LEN:.*]] = arith.maxsi %[[RAW]], %c0_i32{{.*}} : i32
    // CHECK: %[[PAST:.*]] = arith.cmpi sge, %[[T]], %{{.*}} : i32
    // CHECK: %[[MORE:.*]] = arith.cmpi slt, %[[G]], %[[LAST]] : i32
    // CHECK: %[[GO:.*]] = arith.andi %[[PAST]], %[[MORE]] : i1
    // CHECK: scf.condition(%[[GO]]) %[[G]], %[[R]], %[[TL]], %[[LEN]]
    // CHECK: %[[SUM:.*]] = arith.addi %[[WALK]]#1, %[[WALK]]#3 : i32
    // CHECK: %[[END:.*]] = arith.minsi %[[SUM]], %arg0 : i32
    // CHECK: "tile.store_block"(%arg3, %[[END]], %arg1,
    // CHECK: scf.yield %[[WALK]]#0, %[[WALK]]#1, %[[WALK]]#2 : i32, i32, i32
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "m", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// Grouped by K (wgrad): group t / tiles, its K range from a prefix sum summed on from the program's previous tile's group (carried by the tile loop), stored at rows g*M + m.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @grouped_k
  func.func @grouped_k(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32) {
    // CHECK: %[[NT:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
    // CHECK: %[[ALL:.*]] = arith.muli %arg6, %[[NT]] : i32
    // CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[ALL]] step %{{.*}} iter_args(%[[H0:.*]] = %c0_i32{{.*}}, %[[S0:.*]] = %c0_i32{{.*}}) -> (i32, i32)
    // CHECK: %[[G:.*]] = arith.divsi %[[T]], %[[NT]] : i32
    // CHECK: %[[START:.*]]:2 = scf.while (%[[H:.*]] = %[[H0]], %{{.*}} = %[[S0]]) : (i32, i32) -> (i32, i32) {
    // CHECK: arith.cmpi slt, %[[H]], %[[G]] : i32
    // CHECK: %[[SHIFT:.*]] = arith.muli %[[G]], %arg0 : i32
    // CHECK: %[[ROWS:.*]] = arith.addi %[[SHIFT]], %arg0 : i32
    // CHECK: "tile.store_block"(%arg3, %[[ROWS]], %arg1,
    // CHECK: scf.yield %[[G]], %[[START]]#1 : i32, i32
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "k", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// Grouped by K with tile_loop = "per-group" (a TMA twin's, whose body makes a descriptor from the group's K end): the tiles are visited group by group, and the make (with the arith it is computed from) moves out of the tile loop into the group loop, after the guard that the program owns one of the group's tiles; a make from the tile's offsets stays in the tile loop.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
#sh = #tile.padded_shared<{interval = 32, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<32x32xf16, #sh>>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @grouped_k_hoist
  func.func @grouped_k_hoist(%a: !tile.ptr<f16>, %M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32) {
    // CHECK: scf.for %[[G:.*]] = %{{.*}} to %arg7 step %{{.*}} iter_args(%[[START:.*]] = %{{.*}}) -> (i32) : i32 {
    // CHECK: %[[NEXT:.*]] = arith.addi %[[START]], %{{.*}} : i32
    // CHECK: %[[END:.*]] = arith.minsi %[[NEXT]], %arg3 : i32
    // CHECK: arith.remsi
    // CHECK: %[[FIRST:.*]] = arith.remsi
    // CHECK: %[[OWNS:.*]] = arith.cmpi slt, %[[FIRST]], %{{.*}} : i32
    // CHECK: scf.if %[[OWNS]] {
    // CHECK: %[[ROWS:.*]] = arith.maxsi %[[END]], %{{.*}} : i32
    // CHECK: "tile.make_tensor_descriptor"(%arg0, %[[ROWS]], %arg1,
    // CHECK: scf.for %[[T:.*]] = %[[FIRST]] to %{{.*}} step %{{.*}} : i32 {
    // CHECK: %[[MO:.*]] = arith.muli %{{.*}}, %c32_i32{{.*}} : i32
    // CHECK-NOT: tile.make_tensor_descriptor"(%arg0, %[[ROWS]], %arg1,
    // CHECK: "tile.make_tensor_descriptor"(%arg0, %[[ROWS]], %[[MO]],
    // CHECK: "tile.store_block"
    // CHECK: }
    // CHECK: }
    // CHECK: scf.yield %[[NEXT]] : i32
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %one = arith.constant 1 : i32
      %one64 = arith.constant 1 : i64
      %rows = arith.maxsi %ke, %one : i32
      %lda = arith.extsi %M : i32 to i64
      %d = "tile.make_tensor_descriptor"(%a, %rows, %M, %lda, %one64) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
      %d2 = "tile.make_tensor_descriptor"(%a, %rows, %mo, %lda, %one64) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "k", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, tile_loop = "per-group", operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// Grouped by K with tile_loop = "flat" and the same descriptor-making body: the attribute, not the body, picks the loop nest: one flat tile loop, the make stays in it (made per tile).
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
#sh = #tile.padded_shared<{interval = 32, amount = 8, order = array<i64: 1, 0>}>
!da = !tile.tensor_desc<tensor<32x32xf16, #sh>>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @grouped_k_flat_keeps_the_make
  func.func @grouped_k_flat_keeps_the_make(%a: !tile.ptr<f16>, %M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64, %gl: !tile.ptr<i32>, %G: i32) {
    // CHECK: %[[NT:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
    // CHECK: %[[ALL:.*]] = arith.muli %arg7, %[[NT]] : i32
    // CHECK-NOT: tile.make_tensor_descriptor
    // CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[ALL]] step %{{.*}} iter_args(
    // CHECK: scf.while
    // CHECK: "tile.make_tensor_descriptor"(%arg0,
    // CHECK: "tile.store_block"
    // CHECK-NEXT: scf.yield
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc, %gl, %G) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %one = arith.constant 1 : i32
      %one64 = arith.constant 1 : i64
      %rows = arith.maxsi %ke, %one : i32
      %lda = arith.extsi %M : i32 to i64
      %d = "tile.make_tensor_descriptor"(%a, %rows, %M, %lda, %one64) {operandSegmentSizes = array<i32: 1, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64) -> !da
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", grouped = "k", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 8 : i32, tile_loop = "flat", operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64, !tile.ptr<i32>, i32) -> ()
    return
  }
}

// -----

// GROUP_M at its i32 limit (block_n: group_m * cdiv(N, block_n) fits for every N): the band is the constant times the tile columns, as written.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @group_m_at_limit
  func.func @group_m_at_limit(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64) {
    // CHECK: %[[ROWS:.*]] = arith.divsi %{{.*}}, %c32_i32 : i32
    // CHECK: %[[COLS:.*]] = arith.divsi
    // CHECK: scf.for
    // CHECK: %[[GM:.*]] = arith.constant 32 : i32
    // CHECK-NEXT: %[[BAND:.*]] = arith.muli %[[GM]], %[[COLS]] : i32
    // CHECK: arith.divsi %{{.*}}, %[[BAND]] : i32
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 32 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}

// -----

// GROUP_M past its limit (2^31 - 1 wrapped the band and left tiles unwritten): clamped to the tile rows (and at least 1) before the band is formed, so the band is at most the tile count; the order is the same.
#acc = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {
  // CHECK-LABEL: func.func @group_m_clamped
  func.func @group_m_clamped(%M: i32, %N: i32, %K: i32, %c: !tile.ptr<f16>, %ldc: i64) {
    // CHECK: %[[ROWS:.*]] = arith.divsi %{{.*}}, %c32_i32 : i32
    // CHECK: %[[COLS:.*]] = arith.divsi
    // CHECK: scf.for
    // CHECK: %[[GM:.*]] = arith.constant 2147483647 : i32
    // CHECK-NEXT: %[[LOW:.*]] = arith.minsi %[[GM]], %[[ROWS]] : i32
    // CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
    // CHECK-NEXT: %[[CL:.*]] = arith.maxsi %[[LOW]], %[[ONE]] : i32
    // CHECK-NEXT: %[[BAND:.*]] = arith.muli %[[CL]], %[[COLS]] : i32
    // CHECK: arith.divsi %{{.*}}, %[[BAND]] : i32
    // CHECK: arith.muli %{{.*}}, %[[CL]] : i32
    "tile.gemm_schedule"(%M, %N, %K, %c, %ldc) ({
    ^bb0(%g: i32, %mo: i32, %me: i32, %no: i32, %ko: i32, %ke: i32):
      %z = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #acc>
      "tile.schedule_yield"(%z) : (tensor<32x32xf32, #acc>) -> ()
    }) {kind = "persistent", block_m = 32 : i32, block_n = 32 : i32, block_k = 32 : i32, group_m = 2147483647 : i32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>} : (i32, i32, i32, !tile.ptr<f16>, i64) -> ()
    return
  }
}
