// Kernels whose programs talk through global memory, for the model's
// concurrency tests (test_model_concurrency.py). Flags and counters sit on
// padded slots of 64 i32 (256 B), as the schedules lay them out.
#bl = #tile.blocked<{size_per_thread = array<i64: 1, 4>, threads_per_warp = array<i64: 8, 4>, warps_per_cta = array<i64: 4, 1>, order = array<i64: 1, 0>}>
!t = tensor<16x16xf32, #bl>
!h = tensor<16x16xf16, #bl>
!row = tensor<1x16xi32, #bl>
module attributes {tile.num_warps = 4 : i32, tile.threads_per_warp = 32 : i32} {

  // Linear fix-up (stream-K style): every program but 0 stores its 16x16
  // partial tile (rows pid*16 of x) into its slot of `partials` and signals
  // its flag with a release exchange; program 0 waits on each flag in turn
  // (acquire), adds that partial in program order and stores the sum.
  func.func @linear_fixup(%x: !tile.ptr<f32>, %partials: !tile.ptr<f32>, %flags: !tile.ptr<i32>, %out: !tile.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c16 = arith.constant 16 : i32
    %c64 = arith.constant 64 : i32
    %one = arith.constant 1 : i64
    %ld = arith.constant 16 : i64
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %n = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    %rows = arith.muli %n, %c16 : i32
    %row0 = arith.muli %pid, %c16 : i32
    %v = "tile.load_block"(%x, %rows, %c16, %ld, %one, %row0, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> !t
    %owner = arith.cmpi eq, %pid, %c0 : i32
    scf.if %owner {
      %sum = scf.for %j = %c1 to %n step %c1 iter_args(%acc = %v) -> (!t) : i32 {
        %slot = arith.muli %j, %c64 : i32
        %seen = scf.while (%s = %c0) : (i32) -> i32 {
          %old = "tile.atomic_rmw"(%flags, %slot, %c0) {kind = "add", sem = "acquire", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
          %unset = arith.cmpi eq, %old, %c0 : i32
          scf.condition(%unset) %old : i32
        } do {
        ^bb0(%o: i32):
          scf.yield %o : i32
        }
        %jrow = arith.muli %j, %c16 : i32
        %p = "tile.load_block"(%partials, %rows, %c16, %ld, %one, %jrow, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> !t
        %next = arith.addf %acc, %p : !t
        scf.yield %next : !t
      }
      "tile.store_block"(%out, %c16, %c16, %ld, %one, %c0, %c0, %sum) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, !t) -> ()
    } else {
      "tile.store_block"(%partials, %rows, %c16, %ld, %one, %row0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, !t) -> ()
      %slot = arith.muli %pid, %c64 : i32
      %prev = "tile.atomic_rmw"(%flags, %slot, %c1) {kind = "xchg", sem = "release", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    }
    return
  }

  // A reverse chain: program i waits for program i+1's flag before it
  // raises its own, so the last program must run first. Needs every program
  // resident at once.
  func.func @reverse_chain(%flags: !tile.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %n = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    %next = arith.addi %pid, %c1 : i32
    %has_next = arith.cmpi slt, %next, %n : i32
    scf.if %has_next {
      %slot = arith.muli %next, %c64 : i32
      %seen = scf.while (%s = %c0) : (i32) -> i32 {
        %got = "tile.atomic_rmw"(%flags, %slot, %c0) {kind = "add", sem = "acquire", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
        %unset = arith.cmpi eq, %got, %c0 : i32
        scf.condition(%unset) %got : i32
      } do {
      ^bb0(%o: i32):
        scf.yield %o : i32
      }
    }
    %mine = arith.muli %pid, %c64 : i32
    %prev = "tile.atomic_rmw"(%flags, %mine, %c1) {kind = "xchg", sem = "release", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }

  // Work distribution: programs claim items from the counter at sync[0]
  // (relaxed add) until it passes %items; each claim counts a hit and
  // stores the claiming program's id into its row of `owner`. The last
  // program out (the done counter at sync[64], acq_rel) resets both
  // counters, so the next launch starts from zero.
  func.func @claim_items(%sync: !tile.ptr<i32>, %hits: !tile.ptr<i32>, %owner: !tile.ptr<i32>, %items: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c16 = arith.constant 16 : i32
    %c64 = arith.constant 64 : i32
    %one = arith.constant 1 : i64
    %ld = arith.constant 16 : i64
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %n = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    %first = "tile.atomic_rmw"(%sync, %c0, %c1) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    %last = scf.while (%item = %first) : (i32) -> i32 {
      %more = arith.cmpi slt, %item, %items : i32
      scf.condition(%more) %item : i32
    } do {
    ^bb0(%i: i32):
      %h = "tile.atomic_rmw"(%hits, %i, %c1) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %id = tensor.splat %pid : !row
      "tile.store_block"(%owner, %items, %c16, %ld, %one, %i, %c0, %id) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32, !row) -> ()
      %claim = "tile.atomic_rmw"(%sync, %c0, %c1) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      scf.yield %claim : i32
    }
    %done = "tile.atomic_rmw"(%sync, %c64, %c1) {kind = "add", sem = "acq_rel", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    %n1 = arith.subi %n, %c1 : i32
    %is_last = arith.cmpi eq, %done, %n1 : i32
    scf.if %is_last {
      %r0 = "tile.atomic_rmw"(%sync, %c0, %c0) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      %r1 = "tile.atomic_rmw"(%sync, %c64, %c0) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    }
    return
  }

  // Atomic reduction: every program adds its 16x16 tile of x into `out`.
  func.func @atomic_sum_f32(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>) {
    %c0 = arith.constant 0 : i32
    %c16 = arith.constant 16 : i32
    %one = arith.constant 1 : i64
    %ld = arith.constant 16 : i64
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %n = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    %rows = arith.muli %n, %c16 : i32
    %row0 = arith.muli %pid, %c16 : i32
    %v = "tile.load_block"(%x, %rows, %c16, %ld, %one, %row0, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> !t
    "tile.atomic_add_block"(%out, %c16, %c16, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>, sem = "relaxed", scope = "gpu"} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, !t) -> ()
    return
  }

  // The same into f16 memory: each add is done in fp32, then rounded to f16.
  func.func @atomic_sum_f16(%x: !tile.ptr<f16>, %out: !tile.ptr<f16>) {
    %c0 = arith.constant 0 : i32
    %c16 = arith.constant 16 : i32
    %one = arith.constant 1 : i64
    %ld = arith.constant 16 : i64
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %n = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    %rows = arith.muli %n, %c16 : i32
    %row0 = arith.muli %pid, %c16 : i32
    %v = "tile.load_block"(%x, %rows, %c16, %ld, %one, %row0, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32) -> !h
    "tile.atomic_add_block"(%out, %c16, %c16, %ld, %one, %c0, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f16>, i32, i32, i64, i64, i32, i32, !h) -> ()
    return
  }

  // No synchronization at all: every program stores its tile of x into
  // `out` at row %stride*pid, then reads the tile of the next program.
  // With %stride = 16 the stores are disjoint but the read is not ordered;
  // with %stride = 0 the stores overlap.
  func.func @unsynchronized(%x: !tile.ptr<f32>, %out: !tile.ptr<f32>, %res: !tile.ptr<f32>, %stride: i32, %read: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c16 = arith.constant 16 : i32
    %one = arith.constant 1 : i64
    %ld = arith.constant 16 : i64
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %n = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    %rows = arith.muli %n, %c16 : i32
    %row0 = arith.muli %pid, %c16 : i32
    %v = "tile.load_block"(%x, %rows, %c16, %ld, %one, %row0, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> !t
    %orow = arith.muli %pid, %stride : i32
    "tile.store_block"(%out, %rows, %c16, %ld, %one, %orow, %c0, %v) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, !t) -> ()
    %do_read = arith.cmpi ne, %read, %c0 : i32
    scf.if %do_read {
      %next = arith.addi %pid, %c1 : i32
      %wrapped = arith.remsi %next, %n : i32
      %nrow = arith.muli %wrapped, %stride : i32
      %w = "tile.load_block"(%out, %rows, %c16, %ld, %one, %nrow, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32) -> !t
      "tile.store_block"(%res, %rows, %c16, %ld, %one, %row0, %c0, %w) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<f32>, i32, i32, i64, i64, i32, i32, !t) -> ()
    }
    return
  }

  // A wrong flag wait: every program but %who spins on a plain load of the
  // flag row, which program %who sets with a plain store (no atomics at all).
  func.func @plain_spin(%flag: !tile.ptr<i32>, %who: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c16 = arith.constant 16 : i32
    %one = arith.constant 1 : i64
    %ld = arith.constant 16 : i64
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %setter = arith.cmpi eq, %pid, %who : i32
    scf.if %setter {
      %ones = tensor.splat %c1 : !row
      "tile.store_block"(%flag, %c1, %c16, %ld, %one, %c0, %c0, %ones) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32, !row) -> ()
    } else {
      %done = scf.while (%s = %c0) : (i32) -> i32 {
        %f = "tile.load_block"(%flag, %c1, %c16, %ld, %one, %c0, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32) -> !row
        %i0 = arith.constant 0 : index
        %v = tensor.extract %f[%i0, %i0] : !row
        %unset = arith.cmpi eq, %v, %c0 : i32
        scf.condition(%unset) %s : i32
      } do {
      ^bb0(%o: i32):
        scf.yield %o : i32
      }
    }
    return
  }

  // The same wait after a relaxed atomic: the programs now run concurrently,
  // and the spinning program waits until another one writes anything.
  func.func @plain_spin_concurrent(%flag: !tile.ptr<i32>, %who: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c16 = arith.constant 16 : i32
    %c64 = arith.constant 64 : i32
    %one = arith.constant 1 : i64
    %ld = arith.constant 16 : i64
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %ticket = "tile.atomic_rmw"(%flag, %c64, %c1) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    %setter = arith.cmpi eq, %pid, %who : i32
    scf.if %setter {
      %ones = tensor.splat %c1 : !row
      "tile.store_block"(%flag, %c1, %c16, %ld, %one, %c0, %c0, %ones) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32, !row) -> ()
    } else {
      %done = scf.while (%s = %c0) : (i32) -> i32 {
        %f = "tile.load_block"(%flag, %c1, %c16, %ld, %one, %c0, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32) -> !row
        %i0 = arith.constant 0 : index
        %v = tensor.extract %f[%i0, %i0] : !row
        %unset = arith.cmpi eq, %v, %c0 : i32
        scf.condition(%unset) %s : i32
      } do {
      ^bb0(%o: i32):
        scf.yield %o : i32
      }
    }
    return
  }

  // Program 0 waits until either flag 1 or flag 2 is set; only program 2
  // sets its flag (release), program 1 never does.
  func.func @wait_any(%flags: !tile.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c64 = arith.constant 64 : i32
    %c128 = arith.constant 128 : i32
    %pid = "tile.program_id"() {axis = 0 : i32} : () -> i32
    %waiter = arith.cmpi eq, %pid, %c0 : i32
    scf.if %waiter {
      %which = scf.while (%s = %c0) : (i32) -> i32 {
        %f1 = "tile.atomic_rmw"(%flags, %c64, %c0) {kind = "add", sem = "acquire", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
        %f2 = "tile.atomic_rmw"(%flags, %c128, %c0) {kind = "add", sem = "acquire", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
        %any = arith.ori %f1, %f2 : i32
        %none = arith.cmpi eq, %any, %c0 : i32
        scf.condition(%none) %f2 : i32
      } do {
      ^bb0(%o: i32):
        scf.yield %o : i32
      }
    } else {
      %signals = arith.cmpi eq, %pid, %c2 : i32
      scf.if %signals {
        %prev = "tile.atomic_rmw"(%flags, %c128, %c1) {kind = "xchg", sem = "release", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
      }
    }
    return
  }

  // A spin whose body stores the same values every iteration (after the
  // first): such stores change nothing another program or the loop could see,
  // so nobody setting the flag is a deadlock, not a loop that runs forever.
  func.func @plain_spin_rewrite(%flag: !tile.ptr<i32>, %out: !tile.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c16 = arith.constant 16 : i32
    %one = arith.constant 1 : i64
    %ld = arith.constant 16 : i64
    %spin = scf.while (%s = %c0) : (i32) -> i32 {
      %f = "tile.load_block"(%flag, %c1, %c16, %ld, %one, %c0, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32) -> !row
      %i0 = arith.constant 0 : index
      %v = tensor.extract %f[%i0, %i0] : !row
      %unset = arith.cmpi eq, %v, %c0 : i32
      scf.condition(%unset) %s : i32
    } do {
    ^bb0(%o: i32):
      %zeros = tensor.splat %c0 : !row
      "tile.store_block"(%out, %c1, %c16, %ld, %one, %c0, %c0, %zeros) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32, !row) -> ()
      scf.yield %o : i32
    }
    return
  }

  // Zeroes %out until it reads zero: each pass starts as the last did (no
  // loop-carried change), so only the store's change of memory is progress.
  func.func @plain_drain(%out: !tile.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c16 = arith.constant 16 : i32
    %one = arith.constant 1 : i64
    %ld = arith.constant 16 : i64
    %drain = scf.while (%s = %c0) : (i32) -> i32 {
      %f = "tile.load_block"(%out, %c1, %c16, %ld, %one, %c0, %c0) {operandSegmentSizes = array<i32: 1, 2, 2, 2>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32) -> !row
      %i0 = arith.constant 0 : index
      %v = tensor.extract %f[%i0, %i0] : !row
      %set = arith.cmpi ne, %v, %c0 : i32
      scf.condition(%set) %s : i32
    } do {
    ^bb0(%o: i32):
      %zeros = tensor.splat %c0 : !row
      "tile.store_block"(%out, %c1, %c16, %ld, %one, %c0, %c0, %zeros) {operandSegmentSizes = array<i32: 1, 2, 2, 2, 1>} : (!tile.ptr<i32>, i32, i32, i64, i64, i32, i32, !row) -> ()
      scf.yield %o : i32
    }
    return
  }

  // Each program stores the grid's size along every axis: out[0..2] = the
  // program counts of axes 0, 1 and 2.
  func.func @grid_dims(%out: !tile.ptr<i32>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %n0 = "tile.num_programs"() {axis = 0 : i32} : () -> i32
    %n1 = "tile.num_programs"() {axis = 1 : i32} : () -> i32
    %n2 = "tile.num_programs"() {axis = 2 : i32} : () -> i32
    %o0 = "tile.atomic_rmw"(%out, %c0, %n0) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    %o1 = "tile.atomic_rmw"(%out, %c1, %n1) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    %o2 = "tile.atomic_rmw"(%out, %c2, %n2) {kind = "xchg", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }

  // One atomic add of 1 at flags[%at].
  func.func @bump(%flags: !tile.ptr<i32>, %at: i32) {
    %c1 = arith.constant 1 : i32
    %old = "tile.atomic_rmw"(%flags, %at, %c1) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }

  // flags[%at] += flags[%from] (a scalar load, then an atomic add).
  func.func @copy_scalar(%flags: !tile.ptr<i32>, %from: i32, %at: i32) {
    %v = "tile.load_scalar"(%flags, %from) : (!tile.ptr<i32>, i32) -> i32
    %old = "tile.atomic_rmw"(%flags, %at, %v) {kind = "add", sem = "relaxed", scope = "gpu"} : (!tile.ptr<i32>, i32, i32) -> i32
    return
  }
}
