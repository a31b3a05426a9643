// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== num_warps is a power of two, with or without a hint. ====
// expected-error@+1 {{'tile.num_warps' must be a power of two >= 1, got 6}}
module attributes {tile.num_warps = 6 : i32, tile.target = "gfx1250"} {
}

// -----

// ==== A huge warp count is rejected here, not spun on by a later pass. ====
// expected-error@+1 {{'tile.num_warps' = 1073741824 needs 34359738368 threads per workgroup (1073741824 warps x 32 threads), but gfx1250 launches at most 1024 (at most 32 warps)}}
module attributes {tile.num_warps = 1073741824 : i32} {
}

// -----

// ==== 64 warps of 32 threads cannot launch on gfx1250. ====
// expected-error@+1 {{'tile.num_warps' = 64 needs 2048 threads per workgroup (64 warps x 32 threads), but gfx1250 launches at most 1024 (at most 32 warps)}}
module attributes {tile.num_warps = 64 : i32, tile.target = "gfx1250"} {
}

// -----

// ==== 32 warps of 64 threads cannot launch on gfx950. ====
// expected-error@+1 {{'tile.num_warps' = 32 needs 2048 threads per workgroup (32 warps x 64 threads), but gfx950 launches at most 1024 (at most 16 warps)}}
module attributes {tile.num_warps = 32 : i32, tile.target = "gfx950"} {
}

// -----

// ==== Without a target, threads_per_warp = 64 leaves only wave64 targets. ====
// expected-error@+1 {{'tile.num_warps' = 32 needs 2048 threads per workgroup (32 warps x 64 threads), but gfx950 launches at most 1024 (at most 16 warps)}}
module attributes {tile.num_warps = 32 : i32, tile.threads_per_warp = 64 : i32} {
}

// -----

// ==== threads_per_warp must be the target's warp size (gfx1250 is wave32). ====
// expected-error@+1 {{'tile.threads_per_warp' = 64 : i32 does not match tile.target "gfx1250", whose warps have 32 threads}}
module attributes {tile.num_warps = 8 : i32, tile.threads_per_warp = 64 : i32, tile.target = "gfx1250"} {
}

// -----

// ==== An i128 warp count is an error, not a crash of the bindings. ====
// expected-error@+1 {{'tile.num_warps' must be an i32 integer, got 8 : i128}}
module attributes {tile.num_warps = 8 : i128} {
}

// -----

// ==== A misspelled module attribute is an error with a suggestion. ====
// expected-error@+1 {{unknown attribute 'tile.num_warp' on the module; did you mean 'tile.num_warps'?}}
module attributes {tile.num_warp = 8 : i32} {
}

// -----

// ==== Regions nested deeper than the tools support are one clean error. ====
// expected-error@+1 {{a 'scf.if' opens a region 65 levels deep; at most 64 nested regions are supported}}
module attributes {tile.num_warps = 8 : i32} {
  func.func @deep(%c: i1) {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    scf.if %c {
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    }
    return
  }
}

// -----

// ==== Types no tile op checks (an unused argument) follow the same rules. ====
#bad = #tile.padded_shared<{interval = 64, amount = 8, order = array<i64: 0, 0>}>
module attributes {tile.num_warps = 8 : i32} {
  // expected-error@+1 {{in 'func.func': #tile.padded_shared<{amount = 8 : i64, interval = 64 : i64, order = array<i64: 0, 0>}>: order [0, 0] must be a permutation of 0..1}}
  func.func @unused(%b: !tile.shared<tensor<128x64xf16, #bad>>) {
    return
  }
}


// -----

// ==== A kernel (a public function) returns nothing: a launch has nowhere to put a result. ====
module attributes {tile.num_warps = 4 : i32} {
  // expected-error@+1 {{kernel @counter returns i32, but a kernel returns nothing: write results through a pointer argument, or make @counter a private function that a kernel calls}}
  func.func @counter(%s: !tile.ptr<i32>, %i: i32) -> i32 {
    %v = "tile.load_scalar"(%s, %i) : (!tile.ptr<i32>, i32) -> i32
    return %v : i32
  }
}

// -----

// ==== Explicitly public is a kernel too; every result is named. ====
module attributes {tile.num_warps = 4 : i32} {
  func.func private @helper(%i: i32) -> i32 {
    return %i : i32
  }
  // expected-error@+1 {{kernel @pair returns i32, i64, but a kernel returns nothing}}
  func.func public @pair(%i: i32, %j: i64) -> (i32, i64) {
    %v = func.call @helper(%i) : (i32) -> i32
    return %v, %j : i32, i64
  }
}
