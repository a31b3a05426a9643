// Every bad input ends in file:line:col: error and exit 1, never a traceback.
// RUN: %PYTHON -c "open(r'%t.syntax', 'w').write('module {\n  func.func @f( {\n}\n')"
// RUN: not gemm-opt %t.syntax 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: {{.*}}.syntax:2:16: error: expected non-function type
// SYNTAX-NOT: Traceback

// RUN: %PYTHON -c "open(r'%t.unknown_op', 'w').write('\"tile.frobnicate\"() : () -> ()\n')"
// RUN: not gemm-opt %t.unknown_op 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OP
// UNKNOWN-OP: .unknown_op:1:1: error: unregistered operation 'tile.frobnicate'

// RUN: %PYTHON -c "open(r'%t.unknown_type', 'w').write('func.func @f(%%a: !tile.bogus) {\n  return\n}\n')"
// RUN: not gemm-opt %t.unknown_type 2>&1 | FileCheck %s --check-prefix=UNKNOWN-TYPE
// UNKNOWN-TYPE: .unknown_type:1:{{[0-9]+}}: error:

// RUN: %PYTHON -c "open(r'%t.binary', 'wb').write(bytes(range(256)) * 4)"
// RUN: not gemm-opt %t.binary 2>&1 | FileCheck %s --check-prefix=BINARY
// BINARY: .binary:2:118: error: input is not UTF-8 text (byte 0x80)

// RUN: %PYTHON -c "open(r'%t.nul', 'wb').write(b'module {\n}\0garbage')"
// RUN: not gemm-opt %t.nul 2>&1 | FileCheck %s --check-prefix=NUL
// NUL: .nul:2:2: error: input contains a NUL byte; expected MLIR text

// RUN: %PYTHON -c "open(r'%t.latin1', 'wb').write(b'module {\n  \xff\n}\n')"
// RUN: not gemm-opt %t.latin1 2>&1 | FileCheck %s --check-prefix=LATIN1
// LATIN1: .latin1:2:3: error: input is not UTF-8 text (byte 0xff)

// RUN: %PYTHON -c "open(r'%t.empty', 'w').write('')"
// RUN: not gemm-opt %t.empty 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: .empty:1:1: error: input is empty; expected an MLIR module

// RUN: %PYTHON -c "t = open(r'%S/../../Inputs/copy.mlir').read(); open(r'%t.truncated', 'w').write(t[: len(t) // 2])"
// RUN: not gemm-opt %t.truncated 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: .truncated:{{[0-9]+}}:{{[0-9]+}}: error:

// RUN: %PYTHON -c "open(r'%t.hugeint', 'w').write('module attributes {tile.num_warps = 99999999999999999999999999 : i32} {\n}\n')"
// RUN: not gemm-opt %t.hugeint 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: .hugeint:1:{{[0-9]+}}: error: integer constant out of range for attribute

// RUN: %PYTHON -c "open(r'%t.hugehint', 'w').write(open(r'%S/../../Inputs/copy.mlir').read().replace('240 : i32', '4294967296 : i64'))"
// RUN: not gemm-opt %t.hugehint 2>&1 | FileCheck %s --check-prefix=HUGEHINT
// HUGEHINT: .hugehint:4:5: error: 'tile.async_tdm_copy_global_to_local' op

// RUN: not gemm-opt %t.does-not-exist 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: gemm-opt: error: could not open input file '{{.*}}does-not-exist': No such file or directory
