// RUN: gemm-opt %s --split-input-file --verify-diagnostics

// ==== program_id: axis 0, 1 or 2. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @axis() {
    // expected-error@+1 {{axis must be 0, 1 or 2, got 3}}
    %p = "tile.program_id"() {axis = 3 : i32} : () -> i32
    return
  }
}

// -----

// ==== program_id: axis is required. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @axis_missing() {
    // expected-error@+1 {{requires attribute 'axis'}}
    %p = "tile.program_id"() : () -> i32
    return
  }
}

// -----

// ==== async_tdm_wait: num is required. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @wait_missing() {
    // expected-error@+1 {{requires attribute 'num'}}
    "tile.async_tdm_wait"() : () -> ()
    return
  }
}

// -----

// ==== async_tdm_wait: num is non-negative. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @wait_negative() {
    // expected-error@+1 {{num must be non-negative, got -1}}
    "tile.async_tdm_wait"() {num = -1 : i32} : () -> ()
    return
  }
}

// -----

// ==== Module attributes: num_warps is a positive integer. ====
// expected-error@+1 {{'tile.num_warps' must be a positive integer, got 0 : i32}}
module attributes {tile.num_warps = 0 : i32} {
}

// -----

// ==== Module attributes: threads_per_warp is 32 or 64. ====
// expected-error@+1 {{'tile.threads_per_warp' must be 32 or 64, got 16 : i32}}
module attributes {tile.threads_per_warp = 16 : i32} {
}

// -----

// ==== Module attributes: the target is a supported GPU. ====
// expected-error@+1 {{'tile.target' must be one of gfx1250, gfx950, gfx942, cuda:90, got "sm_90"}}
module attributes {tile.target = "sm_90"} {
}

// -----

// ==== async_tdm_wait: num is an i32 (2^63 - 1 used to become num = -1). ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @wait_i64() {
    // expected-error@+1 {{attribute 'num' must be an i32 integer, got 9223372036854775807 : i64}}
    "tile.async_tdm_wait"() {num = 9223372036854775807 : i64} : () -> ()
    return
  }
}

// -----

// ==== async_tdm_wait: an i128 num is an error, not std::bad_cast. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @wait_i128() {
    // expected-error@+1 {{attribute 'num' must be an i32 integer, got 1 : i128}}
    "tile.async_tdm_wait"() {num = 1 : i128} : () -> ()
    return
  }
}

// -----

// ==== Unknown attributes name what the op takes. ====
module attributes {tile.num_warps = 8 : i32} {
  func.func @wait_unknown() {
    // expected-error@+1 {{unknown attribute 'count' (it takes: 'num')}}
    "tile.async_tdm_wait"() {num = 1 : i32, count = 1 : i32} : () -> ()
    return
  }
}

