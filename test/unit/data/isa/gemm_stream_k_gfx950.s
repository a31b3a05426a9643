	.amdgcn_target "amdgpu9.50-amd-amdhsa-unknown-gfx950"
	.amdhsa_code_object_version 5
	.text
	.globl	gemm                            ; -- Begin function gemm
	.p2align	8
	.type	gemm,@function
gemm:                                   ; @gemm
.Lfunc_begin0:
	.cfi_sections .debug_frame
	.cfi_startproc
; %bb.97:
	.file	1 "-"
	.loc	1 23 0 prologue_end             ; -:23:0
	s_load_dwordx2 s[2:3], s[0:1], 0x0
	s_load_dwordx8 s[4:11], s[0:1], 0x8
	s_load_dwordx4 s[12:15], s[0:1], 0x28
	s_waitcnt lgkmcnt(0)
	s_branch .LBB0_0
	.loc	1 0 0 is_stmt 0                 ; :0:0
.Ltmp0:
	.p2align	8
; %bb.98:
.LBB0_0:
	.cfi_escape 0x0f, 0x04, 0x30, 0x36, 0xe9, 0x02 ; CFA is 0 in private_wave aspace
	.cfi_undefined 16
.Ltmp1:
	.loc	1 24 5 is_stmt 1                ; -:24:5
	s_add_i32 s18, s8, 63
	s_ashr_i32 s19, s18, 31
	s_load_dword s11, s[0:1], 0x60
	s_lshr_b32 s19, s19, 26
	s_add_i32 s18, s18, s19
	s_ashr_i32 s33, s18, 6
	s_add_i32 s18, s9, 63
	s_ashr_i32 s19, s18, 31
	s_lshr_b32 s19, s19, 26
	s_add_i32 s18, s18, s19
	s_waitcnt lgkmcnt(0)
	s_abs_i32 s19, s11
	v_cvt_f32_u32_e32 v1, s19
	s_sub_i32 s24, 0, s19
	s_ashr_i32 s20, s18, 6
	s_mul_i32 s18, s20, s33
	v_rcp_f32_e32 v1, v1
	s_add_i32 s21, s10, 31
	s_ashr_i32 s22, s21, 31
	s_abs_i32 s23, s18
	v_mul_f32_e32 v1, 0x4f7ffffe, v1
	v_cvt_u32_f32_e32 v1, v1
	s_lshr_b32 s22, s22, 27
	s_add_i32 s21, s21, s22
	s_ashr_i32 s54, s21, 5
	v_readfirstlane_b32 s25, v1
	s_mul_i32 s24, s24, s25
	s_mul_hi_u32 s24, s25, s24
	s_add_i32 s25, s25, s24
	s_mul_hi_u32 s24, s23, s25
	s_mul_i32 s24, s24, s19
	s_sub_i32 s23, s23, s24
	s_max_i32 s22, s54, 1
	s_ashr_i32 s21, s18, 31
	s_sub_i32 s24, s23, s19
	s_cmp_ge_u32 s23, s19
	s_cselect_b32 s23, s24, s23
	s_sub_i32 s24, s23, s19
	s_cmp_ge_u32 s23, s19
	s_cselect_b32 s23, s24, s23
	s_xor_b32 s23, s23, s21
	s_sub_i32 s21, s23, s21
	s_add_i32 s23, s21, s11
	s_cmp_gt_i32 s18, s11
	s_cselect_b32 s23, s23, s18
	s_cmp_lg_u32 s21, 0
	s_cselect_b32 s21, s23, 0
	s_mul_i32 s23, s21, s54
	s_cmp_ge_i32 s23, s11
	s_cselect_b32 s21, s21, 0
	s_sub_i32 s55, s18, s21
	s_mul_i32 s18, s21, s54
	s_abs_i32 s23, s18
	s_mul_hi_u32 s24, s23, s25
	s_mul_i32 s26, s24, s19
	s_xor_b32 s21, s18, s11
	s_sub_i32 s23, s23, s26
	s_ashr_i32 s21, s21, 31
	s_add_i32 s26, s24, 1
	s_sub_i32 s27, s23, s19
	s_cmp_ge_u32 s23, s19
	s_cselect_b32 s24, s26, s24
	s_cselect_b32 s23, s27, s23
	s_add_i32 s26, s24, 1
	s_cmp_ge_u32 s23, s19
	s_cselect_b32 s23, s26, s24
	s_xor_b32 s23, s23, s21
	s_sub_i32 s21, s23, s21
	s_mul_i32 s23, s21, s11
	s_sub_i32 s56, s18, s23
	s_mul_i32 s18, s21, s16
	s_min_i32 s57, s16, s56
	s_add_i32 s57, s57, s18
	s_cmp_lt_i32 s16, s56
	s_addc_u32 s58, s57, s21
	s_sub_i32 s18, s55, s16
	s_max_i32 s18, s18, 0
	s_add_i32 s18, s11, s18
	s_add_i32 s18, s18, -1
	s_xor_b32 s23, s18, s11
	s_abs_i32 s18, s18
	v_cvt_f32_u32_e32 v1, s22
	s_mul_hi_u32 s24, s18, s25
	s_mul_i32 s25, s24, s19
	s_sub_i32 s18, s18, s25
	s_ashr_i32 s23, s23, 31
	s_add_i32 s25, s24, 1
	s_sub_i32 s26, s18, s19
	v_rcp_f32_e32 v1, v1
	s_cmp_ge_u32 s18, s19
	s_cselect_b32 s24, s25, s24
	s_cselect_b32 s18, s26, s18
	s_add_i32 s25, s24, 1
	s_cmp_ge_u32 s18, s19
	v_mul_f32_e32 v1, 0x4f7ffffe, v1
	s_cselect_b32 s18, s25, s24
	v_cvt_u32_f32_e32 v1, v1
	s_xor_b32 s18, s18, s23
	s_sub_i32 s18, s18, s23
	s_cmp_gt_i32 s55, s16
	s_cselect_b32 s59, s18, 0
	s_sub_i32 s23, 0, s22
	v_readfirstlane_b32 s24, v1
	s_mul_i32 s23, s23, s24
	s_mul_hi_u32 s23, s24, s23
	s_abs_i32 s19, s57
	s_add_i32 s24, s24, s23
	s_mul_hi_u32 s23, s19, s24
	s_mul_i32 s25, s23, s22
	s_sub_i32 s19, s19, s25
	s_ashr_i32 s18, s57, 31
	s_add_i32 s25, s23, 1
	s_sub_i32 s26, s19, s22
	s_cmp_ge_u32 s19, s22
	s_cselect_b32 s23, s25, s23
	s_cselect_b32 s19, s26, s19
	s_add_i32 s25, s23, 1
	s_cmp_ge_u32 s19, s22
	s_cselect_b32 s19, s25, s23
	s_add_i32 s23, s58, -1
	s_ashr_i32 s25, s23, 31
	s_abs_i32 s23, s23
	s_mul_hi_u32 s24, s23, s24
	s_mul_i32 s26, s24, s22
	s_sub_i32 s23, s23, s26
	s_xor_b32 s19, s19, s18
	s_add_i32 s26, s24, 1
	s_sub_i32 s27, s23, s22
	s_cmp_ge_u32 s23, s22
	s_cselect_b32 s24, s26, s24
	s_cselect_b32 s23, s27, s23
	s_add_i32 s26, s24, 1
	s_cmp_ge_u32 s23, s22
	s_cselect_b32 s22, s26, s24
	s_xor_b32 s22, s22, s25
	s_sub_i32 s60, s22, s25
	s_sub_i32 s18, s18, s19
	s_add_i32 s18, s60, s18
	s_add_i32 s18, s18, 1
	s_cmp_gt_i32 s58, s57
	s_cselect_b32 s18, s18, 0
	s_add_i32 s61, s59, s18
	v_readfirstlane_b32 s17, v0
	s_cmp_lt_i32 s61, 1
	s_mov_b32 s62, 0
	s_cbranch_scc1 .LBB0_96
; %bb.1:                                ; %.lr.ph45
	s_max_i32 s63, s21, 1
	v_and_b32_e32 v1, 63, v0
	s_and_b32 s21, s17, 0xc0
	v_or_b32_e32 v4, s21, v1
	v_and_b32_e32 v2, 3, v0
	s_load_dwordx4 s[36:39], s[0:1], 0x38
	s_load_dwordx2 s[18:19], s[0:1], 0x48
	v_lshlrev_b32_e32 v16, 3, v2
	v_lshlrev_b32_e32 v2, 6, v2
	v_lshlrev_b32_e32 v3, 2, v4
	v_bfe_i32 v7, v0, 5, 1
	s_movk_i32 s0, 0x330
	v_bfe_i32 v5, v0, 4, 1
	v_and_b32_e32 v7, 0xdc0, v7
	v_and_or_b32 v2, v3, s0, v2
	s_movk_i32 s0, 0x980
	v_bitop3_b32 v3, v5, v7, s0 bitop3:0x6c
	v_and_b32_e32 v6, 32, v0
	v_xor_b32_e32 v5, v3, v2
	v_lshlrev_b32_e32 v2, 4, v0
	v_bfe_i32 v8, v0, 2, 1
	v_and_b32_e32 v7, 0x130, v2
	v_and_b32_e32 v2, 0x980, v8
	v_bfe_i32 v9, v0, 3, 1
	v_lshlrev_b32_e32 v10, 1, v6
	s_and_b32 s1, s17, 0x80
	v_and_b32_e32 v3, 0xdc0, v9
	s_lshl_b32 s25, s1, 2
	v_bitop3_b32 v2, v10, v2, v7 bitop3:0x36
	v_xor_b32_e32 v10, v2, v3
	v_bitop3_b32 v11, s25, v2, v3 bitop3:0xf6
	v_mov_b32_e32 v2, 0x80
	v_bitop3_b32 v10, s25, v2, v10 bitop3:0x36
	v_lshlrev_b32_e32 v2, 3, v0
	v_lshrrev_b32_e32 v12, 1, v0
	s_and_b32 s23, s17, 64
	v_and_b32_e32 v18, 56, v2
	v_lshlrev_b32_e32 v2, 5, v1
	v_and_b32_e32 v3, 28, v12
	s_lshr_b32 s27, s23, 4
	s_lshr_b32 s1, s1, 6
	s_movk_i32 s0, 0x80
	v_or_b32_e32 v13, v2, v3
	v_bitop3_b32 v2, s27, v2, v3 bitop3:0x1e
	v_mov_b32_e32 v3, s1
	v_bitop3_b32 v27, v2, s0, v3 bitop3:0x36
	s_movk_i32 s0, 0x88
	v_bitop3_b32 v28, v2, s0, v3 bitop3:0x36
	s_movk_i32 s0, 0x90
	v_bitop3_b32 v29, v2, s0, v3 bitop3:0x36
	s_movk_i32 s0, 0x98
	v_bitop3_b32 v13, s27, v3, v13 bitop3:0xde
	v_bitop3_b32 v14, v2, 8, s1 bitop3:0x36
	v_bitop3_b32 v15, v2, 16, s1 bitop3:0x36
	v_bitop3_b32 v26, v2, 24, s1 bitop3:0x36
	v_bitop3_b32 v30, v2, s0, v3 bitop3:0x36
	v_lshlrev_b32_e32 v2, 2, v0
	v_lshrrev_b32_e32 v3, 3, v6
	s_lshl_b32 s28, s23, 1
	v_mov_b32_e32 v6, 0x880
	v_and_b32_e32 v2, 0x60, v2
	v_bitop3_b32 v6, s28, v8, v6 bitop3:0x78
	v_or3_b32 v2, v3, v2, v6
	v_or_b32_e32 v6, v2, v16
	v_bitop3_b32 v31, v2, 4, v16 bitop3:0x36
	v_bitop3_b32 v32, v2, 8, v16 bitop3:0x36
	v_bitop3_b32 v33, v2, 12, v16 bitop3:0x36
	v_bitop3_b32 v34, v2, 16, v16 bitop3:0x36
	v_bitop3_b32 v35, v2, 20, v16 bitop3:0x36
	v_bitop3_b32 v78, v2, 24, v16 bitop3:0x36
	v_bitop3_b32 v79, v2, 28, v16 bitop3:0x36
	s_lshl_b32 s65, s16, 6
	v_and_b32_e32 v2, 31, v0
	s_lshr_b32 s0, s17, 2
	s_lshr_b32 s22, s17, 6
	s_lshl_b32 s64, s20, 3
	s_bfe_i32 s24, s17, 0x10007
	s_bfe_i32 s26, s17, 0x10006
	s_add_i32 s23, s65, 64
	v_and_or_b32 v44, s0, 32, v2
	v_or_b32_e32 v2, s65, v44
	s_cmp_gt_i32 s65, -1
	s_cselect_b64 s[0:1], -1, 0
	v_cmp_gt_i32_e32 vcc, s23, v2
	s_and_b64 s[34:35], s[0:1], vcc
	v_lshrrev_b32_e32 v17, 3, v0
	s_lshr_b32 s0, s17, 1
	s_ashr_i32 s17, s16, 31
	v_ashrrev_i32_e32 v3, 31, v2
	v_and_b32_e32 v17, 4, v17
	v_and_or_b32 v1, s22, 3, v1
	s_add_i32 s29, s63, 1
	s_lshl_b64 s[22:23], s[16:17], 2
	v_lshlrev_b64 v[2:3], 8, v[2:3]
	v_and_or_b32 v20, s0, 32, v17
	s_waitcnt lgkmcnt(0)
	s_add_u32 s40, s38, s22
	v_lshl_add_u64 v[2:3], s[18:19], 0, v[2:3]
	v_mov_b32_e32 v23, 0
	v_lshlrev_b32_e32 v22, 2, v20
	v_cmp_eq_u32_e64 s[0:1], 0, v1
	s_addc_u32 s41, s39, s23
	v_and_b32_e32 v1, 48, v0
	s_and_b32 s22, s26, 0x2180
	v_lshl_add_u64 v[24:25], v[2:3], 0, v[22:23]
	v_and_b32_e32 v2, 15, v0
	s_movk_i32 s17, 0x2180
	v_or_b32_e32 v3, s22, v1
	v_lshlrev_b32_e32 v0, 10, v0
	v_and_b32_e32 v9, 0x31c0, v9
	s_movk_i32 s22, 0xc00
	v_and_or_b32 v0, v0, s22, v7
	v_bitop3_b32 v7, v8, v9, s17 bitop3:0x6c
	v_and_or_b32 v8, v12, 16, s28
	v_xor_b32_e32 v0, v7, v0
	s_movk_i32 s27, 0x60
	v_xor_b32_e32 v7, v0, v8
	v_bitop3_b32 v0, v0, s25, v8 bitop3:0xde
	v_mov_b32_e32 v8, s25
	s_abs_i32 s17, s64
	v_bitop3_b32 v9, v7, 32, s25 bitop3:0x36
	v_bitop3_b32 v12, v7, 64, s25 bitop3:0x36
	v_bitop3_b32 v7, v7, s27, v8 bitop3:0x36
	v_cvt_f32_u32_e32 v8, s17
	v_lshlrev_b32_e32 v22, 4, v2
	v_lshl_or_b32 v2, v1, 6, v22
	v_mov_b32_e32 v17, 0x31c0
	v_rcp_f32_e32 v8, v8
	s_abs_i32 s67, s29
	v_bitop3_b32 v2, s24, v2, v17 bitop3:0x6c
	v_cvt_f32_u32_e32 v17, s67
	v_mul_f32_e32 v8, 0x4f7ffffe, v8
	v_cvt_f32_u32_e32 v19, s63
	v_cvt_u32_f32_e32 v8, v8
	v_rcp_f32_e32 v17, v17
	s_bfe_i32 s68, s20, 0x1001c
	v_rcp_f32_e32 v19, v19
	v_readfirstlane_b32 s69, v8
	v_mul_f32_e32 v8, 0x4f7ffffe, v17
	v_cvt_u32_f32_e32 v8, v8
	s_sub_i32 s20, 0, s17
	v_mul_f32_e32 v17, 0x4f7ffffe, v19
	s_mul_i32 s20, s20, s69
	v_cvt_u32_f32_e32 v17, v17
	s_mul_hi_u32 s20, s69, s20
	v_readfirstlane_b32 s71, v8
	s_add_i32 s69, s69, s20
	s_sub_i32 s20, 0, s67
	s_mul_i32 s20, s20, s71
	s_mul_hi_u32 s20, s71, s20
	v_readfirstlane_b32 s72, v17
	s_add_i32 s71, s71, s20
	s_sub_i32 s20, 0, s63
	v_xor_b32_e32 v2, v2, v3
	s_mul_i32 s20, s20, s72
	v_xor_b32_e32 v3, 0x100, v2
	s_mul_hi_u32 s20, s72, s20
	v_or_b32_e32 v1, s21, v1
	v_lshrrev_b32_e32 v36, 2, v4
	v_or_b32_e32 v37, 1, v18
	v_or_b32_e32 v38, 2, v18
	v_or_b32_e32 v39, 3, v18
	v_or_b32_e32 v40, 4, v18
	v_or_b32_e32 v41, 5, v18
	v_or_b32_e32 v42, 6, v18
	v_or_b32_e32 v43, 7, v18
	v_mov_b32_e32 v21, v23
	s_mul_i32 s66, s29, s56
	v_or_b32_e32 v45, 1, v20
	v_or_b32_e32 v46, 2, v20
	v_or_b32_e32 v47, 3, v20
	v_or_b32_e32 v48, 8, v20
	v_or_b32_e32 v49, 9, v20
	v_or_b32_e32 v50, 10, v20
	v_or_b32_e32 v51, 11, v20
	v_or_b32_e32 v52, 16, v20
	v_or_b32_e32 v53, 17, v20
	v_or_b32_e32 v54, 18, v20
	v_or_b32_e32 v55, 19, v20
	v_or_b32_e32 v56, 24, v20
	v_or_b32_e32 v57, 25, v20
	v_or_b32_e32 v58, 26, v20
	v_mov_b32_e32 v17, v23
	v_mov_b32_e32 v19, v23
	s_ashr_i32 s70, s29, 31
	s_add_i32 s72, s72, s20
	v_lshrrev_b32_e32 v59, 3, v4
	v_lshrrev_b32_e32 v60, 4, v1
	s_mov_b32 s73, 0x5040100
	v_add_u32_e32 v61, 0, v5
	v_add_u32_e32 v62, 0, v11
	v_add_u32_e32 v63, 0, v10
	v_add_u32_e32 v64, 0, v13
	v_add_u32_e32 v65, 0, v14
	v_add_u32_e32 v66, 0, v15
	v_add_u32_e32 v67, 0, v26
	v_add_u32_e32 v68, 0, v27
	v_add_u32_e32 v69, 0, v28
	v_add_u32_e32 v70, 0, v29
	v_add_u32_e32 v71, 0, v30
	v_add_u32_e32 v72, 0, v6
	v_add_u32_e32 v73, 0, v31
	v_add_u32_e32 v74, 0, v32
	v_add_u32_e32 v75, 0, v33
	v_add_u32_e32 v76, 0, v34
	v_add_u32_e32 v77, 0, v35
	v_add_u32_e32 v78, 0, v78
	v_add_u32_e32 v79, 0, v79
	s_mov_b32 s74, 0x7060302
	v_add_u32_e32 v80, 0, v2
	v_add_u32_e32 v81, 0, v3
	v_add_u32_e32 v82, 0, v0
	v_add_u32_e32 v83, 0, v9
	v_add_u32_e32 v84, 0, v12
	v_add_u32_e32 v85, 0, v7
	v_or_b32_e32 v86, 27, v20
	v_lshl_add_u64 v[26:27], s[18:19], 0, v[22:23]
	s_branch .LBB0_4
.LBB0_2:                                ; %Flow177
                                        ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_or_b64 exec, exec, s[18:19]
.LBB0_3:                                ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 24 5 is_stmt 1                ; -:24:5
	s_add_i32 s62, s62, 1
	s_cmp_lg_u32 s62, s61
	s_cbranch_scc0 .LBB0_96
.LBB0_4:                                ; =>This Loop Header: Depth=1
                                        ;     Child Loop BB0_7 Depth 2
                                        ;     Child Loop BB0_83 Depth 2
                                        ;     Child Loop BB0_88 Depth 2
	s_sub_i32 s18, s59, s62
	s_add_i32 s76, s18, s60
	s_add_i32 s19, s76, s55
	s_mul_i32 s76, s76, s54
	s_add_i32 s78, s76, s54
	s_mul_i32 s18, s62, s11
	s_max_i32 s20, s57, s76
	s_min_i32 s21, s58, s78
	s_add_i32 s18, s18, s16
	s_sub_i32 s20, s20, s76
	s_sub_i32 s21, s21, s76
	s_cmp_gt_i32 s59, s62
	s_cselect_b32 s18, s18, s19
	s_cselect_b32 s77, 0, s20
	s_cselect_b32 s79, s54, s21
	s_abs_i32 s20, s18
	s_mul_hi_u32 s21, s20, s69
	s_lshl_b32 s19, s79, 5
	s_mul_i32 s22, s21, s17
	s_min_i32 s80, s19, s10
	s_ashr_i32 s19, s18, 31
	s_sub_i32 s20, s20, s22
	s_xor_b32 s19, s19, s68
	s_add_i32 s22, s21, 1
	s_sub_i32 s23, s20, s17
	s_cmp_ge_u32 s20, s17
	s_cselect_b32 s21, s22, s21
	s_cselect_b32 s20, s23, s20
	s_add_i32 s22, s21, 1
	s_cmp_ge_u32 s20, s17
	s_cselect_b32 s20, s22, s21
	s_xor_b32 s20, s20, s19
	s_sub_i32 s19, s20, s19
	s_lshl_b32 s20, s19, 3
	s_sub_i32 s21, s33, s20
	s_min_i32 s21, s21, 8
	s_abs_i32 s22, s21
	v_cvt_f32_u32_e32 v0, s22
	s_sub_i32 s24, 0, s22
	s_mul_i32 s19, s19, s64
	s_sub_i32 s18, s18, s19
	v_rcp_f32_e32 v0, v0
	s_abs_i32 s23, s18
	s_xor_b32 s19, s18, s21
	s_ashr_i32 s19, s19, 31
	v_mul_f32_e32 v0, 0x4f7ffffe, v0
	v_cvt_u32_f32_e32 v0, v0
	s_nop 0
	v_readfirstlane_b32 s25, v0
	s_mul_i32 s24, s24, s25
	s_mul_hi_u32 s24, s25, s24
	s_add_i32 s25, s25, s24
	s_mul_hi_u32 s24, s23, s25
	s_mul_i32 s25, s24, s22
	s_sub_i32 s23, s23, s25
	s_add_i32 s25, s24, 1
	s_sub_i32 s26, s23, s22
	s_cmp_ge_u32 s23, s22
	s_cselect_b32 s24, s25, s24
	s_cselect_b32 s23, s26, s23
	s_add_i32 s25, s24, 1
	s_cmp_ge_u32 s23, s22
	s_cselect_b32 s22, s25, s24
	s_xor_b32 s22, s22, s19
	s_sub_i32 s19, s22, s19
	s_mul_i32 s21, s19, s21
	s_sub_i32 s18, s18, s21
	s_add_i32 s18, s18, s20
	.loc	1 34 13                         ; -:34:13
	s_lshl_b32 s44, s77, 5
	.loc	1 24 5                          ; -:24:5
	s_lshl_b32 s75, s18, 6
	.loc	1 34 13                         ; -:34:13
	s_sub_i32 s18, s80, s44
	.loc	1 24 5                          ; -:24:5
	s_lshl_b32 s42, s19, 6
	.loc	1 34 13                         ; -:34:13
	s_add_i32 s18, s18, 31
	.loc	1 36 14                         ; -:36:14
	s_cmp_lt_i32 s18, 32
	s_cbranch_scc1 .LBB0_39
; %bb.5:                                ; %.lr.ph
                                        ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 35 13                         ; -:35:13
	s_ashr_i32 s19, s18, 31
	s_lshr_b32 s19, s19, 27
	s_add_i32 s18, s18, s19
	s_ashr_i32 s81, s18, 5
	v_or_b32_e32 v0, s75, v36
	s_cmp_gt_i32 s75, -1
	s_cselect_b64 s[18:19], -1, 0
	v_cmp_gt_i32_e32 vcc, s8, v0
	s_and_b64 s[46:47], s[18:19], vcc
	s_ashr_i32 s18, s75, 31
	v_mul_lo_u32 v2, s13, v0
	s_mul_i32 s20, s12, s18
	v_mad_u64_u32 v[0:1], s[18:19], s12, v0, 0
	v_add3_u32 v1, v1, s20, v2
	v_lshl_add_u64 v[28:29], v[0:1], 1, s[2:3]
	v_or_b32_e32 v30, s42, v18
	v_or_b32_e32 v0, s42, v37
	v_or_b32_e32 v1, s42, v38
	v_or_b32_e32 v2, s42, v39
	v_or_b32_e32 v3, s42, v40
	v_or_b32_e32 v4, s42, v41
	v_or_b32_e32 v5, s42, v42
	v_or_b32_e32 v6, s42, v43
	s_cmp_gt_i32 s42, -1
	s_cselect_b64 s[50:51], -1, 0
	v_cmp_gt_i32_e32 vcc, s9, v30
	v_cmp_gt_i32_e64 s[18:19], s9, v0
	v_cmp_gt_i32_e64 s[20:21], s9, v1
	v_cmp_gt_i32_e64 s[22:23], s9, v2
	v_cmp_gt_i32_e64 s[24:25], s9, v3
	v_cmp_gt_i32_e64 s[26:27], s9, v4
	v_cmp_gt_i32_e64 s[28:29], s9, v5
	v_cmp_gt_i32_e64 s[30:31], s9, v6
	s_ashr_i32 s43, s42, 31
	v_mov_b32_e32 v0, 0
	s_and_b64 s[48:49], s[50:51], vcc
	s_and_b64 s[18:19], s[18:19], s[50:51]
	s_and_b64 s[20:21], s[20:21], s[50:51]
	s_and_b64 s[22:23], s[22:23], s[50:51]
	s_and_b64 s[24:25], s[24:25], s[50:51]
	s_and_b64 s[26:27], s[26:27], s[50:51]
	s_and_b64 s[28:29], s[28:29], s[50:51]
	s_and_b64 s[30:31], s[30:31], s[50:51]
	v_ashrrev_i32_e32 v31, 31, v30
	v_lshl_add_u64 v[32:33], s[42:43], 0, v[18:19]
	v_mov_b32_e32 v1, v0
	v_mov_b32_e32 v2, v0
	v_mov_b32_e32 v3, v0
	v_mov_b32_e32 v4, v0
	v_mov_b32_e32 v5, v0
	v_mov_b32_e32 v6, v0
	v_mov_b32_e32 v7, v0
	v_mov_b32_e32 v8, v0
	v_mov_b32_e32 v9, v0
	v_mov_b32_e32 v10, v0
	v_mov_b32_e32 v11, v0
	v_mov_b32_e32 v12, v0
	v_mov_b32_e32 v13, v0
	v_mov_b32_e32 v14, v0
	v_mov_b32_e32 v15, v0
	s_branch .LBB0_7
.LBB0_6:                                ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 13 is_stmt 0                ; -:0:13
	s_or_b64 exec, exec, s[50:51]
	.loc	1 41 15 is_stmt 1               ; -:41:15
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_waitcnt vmcnt(0)
	ds_write_b16 v64, v96
	ds_write_b16 v65, v87
	ds_write_b16 v66, v22
	ds_write_b16 v67, v98
	ds_write_b16 v68, v97 offset:2048
	ds_write_b16 v69, v100 offset:2048
	ds_write_b16 v70, v99 offset:2048
	ds_write_b16 v71, v101 offset:2048
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b32 v22, v72
	ds_read_b32 v34, v73 offset:256
	ds_read_b32 v35, v74 offset:512
	ds_read_b32 v87, v75 offset:768
	ds_read_b32 v102, v76 offset:1024
	ds_read_b32 v103, v77 offset:1280
	ds_read_b32 v104, v78 offset:1536
	ds_read_b32 v105, v79 offset:1792
	.loc	1 42 17                         ; -:42:17
	s_waitcnt lgkmcnt(6)
	v_perm_b32 v96, v34, v22, s73
	s_waitcnt lgkmcnt(4)
	v_perm_b32 v97, v87, v35, s73
	s_waitcnt lgkmcnt(2)
	v_perm_b32 v98, v103, v102, s73
	v_perm_b32 v100, v34, v22, s74
	s_waitcnt lgkmcnt(0)
	v_perm_b32 v99, v105, v104, s73
	v_perm_b32 v101, v87, v35, s74
	v_perm_b32 v102, v103, v102, s74
	v_mfma_f32_32x32x16_f16 v[0:15], v[96:99], v[92:95], v[0:15]
	v_perm_b32 v103, v105, v104, s74
	.loc	1 36 14                         ; -:36:14
	s_add_i32 s81, s81, -1
	s_add_i32 s44, s44, 32
	s_cmp_lg_u32 s81, 0
	.loc	1 42 17                         ; -:42:17
	v_mfma_f32_32x32x16_f16 v[0:15], v[100:103], v[88:91], v[0:15]
	.loc	1 36 14                         ; -:36:14
	s_cbranch_scc0 .LBB0_40
.LBB0_7:                                ;   Parent Loop BB0_4 Depth=1
                                        ; =>  This Inner Loop Header: Depth=2
	.loc	1 0 14 is_stmt 0                ; -:0:14
	v_add_u32_e32 v22, s44, v16
	.loc	1 40 15 is_stmt 1               ; -:40:15
	s_cmp_gt_i32 s44, -1
	s_cselect_b64 s[50:51], -1, 0
	v_cmp_gt_i32_e32 vcc, s80, v22
	s_and_b64 s[52:53], s[50:51], vcc
	v_mov_b32_e32 v87, 0
	s_and_b64 s[82:83], s[46:47], s[52:53]
	v_mov_b32_e32 v88, v87
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_9
; %bb.8:                                ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15 is_stmt 0                ; -:0:15
	v_lshl_add_u64 v[34:35], v[22:23], 1, v[28:29]
	.loc	1 40 15                         ; -:40:15
	global_load_ushort v88, v[34:35], off
.LBB0_9:                                ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	v_add_u32_e32 v34, 1, v22
	.loc	1 40 15                         ; -:40:15
	v_cmp_gt_i32_e32 vcc, s80, v34
	s_ashr_i32 s45, s44, 31
	s_and_b64 s[52:53], vcc, s[50:51]
	v_lshl_add_u64 v[34:35], s[44:45], 0, v[16:17]
	s_and_b64 s[82:83], s[46:47], s[52:53]
	v_lshl_add_u64 v[34:35], v[34:35], 1, v[28:29]
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_11
; %bb.10:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v87, v[34:35], off offset:2
.LBB0_11:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	v_add_u32_e32 v89, 2, v22
	.loc	1 40 15                         ; -:40:15
	v_cmp_gt_i32_e32 vcc, s80, v89
	s_and_b64 s[52:53], vcc, s[50:51]
	v_mov_b32_e32 v89, 0
	s_and_b64 s[82:83], s[46:47], s[52:53]
	v_mov_b32_e32 v90, v89
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_13
; %bb.12:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v90, v[34:35], off offset:4
.LBB0_13:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	v_add_u32_e32 v91, 3, v22
	.loc	1 40 15                         ; -:40:15
	v_cmp_gt_i32_e32 vcc, s80, v91
	s_and_b64 s[52:53], vcc, s[50:51]
	s_and_b64 s[82:83], s[46:47], s[52:53]
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_15
; %bb.14:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v89, v[34:35], off offset:6
.LBB0_15:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	v_add_u32_e32 v91, 4, v22
	.loc	1 40 15                         ; -:40:15
	v_cmp_gt_i32_e32 vcc, s80, v91
	s_and_b64 s[52:53], vcc, s[50:51]
	v_mov_b32_e32 v91, 0
	s_and_b64 s[82:83], s[46:47], s[52:53]
	v_mov_b32_e32 v92, v91
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_17
; %bb.16:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v92, v[34:35], off offset:8
.LBB0_17:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	v_add_u32_e32 v93, 5, v22
	.loc	1 40 15                         ; -:40:15
	v_cmp_gt_i32_e32 vcc, s80, v93
	s_and_b64 s[52:53], vcc, s[50:51]
	s_and_b64 s[82:83], s[46:47], s[52:53]
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_19
; %bb.18:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v91, v[34:35], off offset:10
.LBB0_19:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	v_add_u32_e32 v93, 6, v22
	.loc	1 40 15                         ; -:40:15
	v_cmp_gt_i32_e32 vcc, s80, v93
	s_and_b64 s[52:53], vcc, s[50:51]
	s_and_b64 s[82:83], s[46:47], s[52:53]
	v_mov_b32_e32 v93, 0
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_21
; %bb.20:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v93, v[34:35], off offset:12
.LBB0_21:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	.loc	1 40 15                         ; -:40:15
	v_add_u32_e32 v22, 7, v22
	v_cmp_gt_i32_e32 vcc, s80, v22
	s_and_b64 s[52:53], vcc, s[50:51]
	s_and_b64 s[82:83], s[46:47], s[52:53]
	v_mov_b32_e32 v96, 0
	v_mov_b32_e32 v22, 0
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_23
; %bb.22:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v22, v[34:35], off offset:14
.LBB0_23:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	.loc	1 40 15                         ; -:40:15
	s_waitcnt vmcnt(0)
	v_perm_b32 v92, v91, v92, s73
	v_perm_b32 v91, v89, v90, s73
	v_perm_b32 v90, v87, v88, s73
	v_perm_b32 v93, v22, v93, s73
	s_barrier
	ds_write_b128 v61, v[90:93]
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b128 v[92:95], v62
	ds_read_b128 v[88:91], v63
	.loc	1 41 15 is_stmt 1               ; -:41:15
	v_add_u32_e32 v22, s44, v59
	v_ashrrev_i32_e32 v34, 31, v22
	v_cmp_gt_i32_e32 vcc, s80, v22
	v_mul_lo_u32 v87, s14, v34
	v_mul_lo_u32 v97, s15, v22
	v_mad_u64_u32 v[34:35], s[52:53], s14, v22, 0
	s_and_b64 s[50:51], s[50:51], vcc
	v_add3_u32 v35, v35, v87, v97
	v_lshl_add_u64 v[34:35], v[34:35], 1, s[4:5]
	s_and_b64 s[82:83], s[48:49], s[50:51]
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_25
; %bb.24:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15 is_stmt 0                ; -:0:15
	v_lshl_add_u64 v[96:97], v[30:31], 1, v[34:35]
	.loc	1 41 15                         ; -:41:15
	global_load_ushort v96, v[96:97], off
.LBB0_25:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	.loc	1 41 15                         ; -:41:15
	s_and_b64 s[82:83], s[18:19], s[50:51]
	v_lshl_add_u64 v[34:35], v[32:33], 1, v[34:35]
	v_mov_b32_e32 v22, 0
	v_mov_b32_e32 v87, 0
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_27
; %bb.26:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v87, v[34:35], off offset:2
.LBB0_27:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	.loc	1 41 15                         ; -:41:15
	s_and_b64 s[82:83], s[20:21], s[50:51]
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_29
; %bb.28:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v22, v[34:35], off offset:4
.LBB0_29:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	.loc	1 41 15                         ; -:41:15
	s_and_b64 s[82:83], s[22:23], s[50:51]
	v_mov_b32_e32 v97, 0
	v_mov_b32_e32 v98, 0
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_31
; %bb.30:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v98, v[34:35], off offset:6
.LBB0_31:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	.loc	1 41 15                         ; -:41:15
	s_and_b64 s[82:83], s[24:25], s[50:51]
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_33
; %bb.32:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v97, v[34:35], off offset:8
.LBB0_33:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	.loc	1 41 15                         ; -:41:15
	s_and_b64 s[82:83], s[26:27], s[50:51]
	v_mov_b32_e32 v99, 0
	v_mov_b32_e32 v100, 0
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_35
; %bb.34:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v100, v[34:35], off offset:10
.LBB0_35:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	.loc	1 41 15                         ; -:41:15
	s_and_b64 s[82:83], s[28:29], s[50:51]
	s_and_saveexec_b64 s[52:53], s[82:83]
	s_cbranch_execz .LBB0_37
; %bb.36:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v99, v[34:35], off offset:12
.LBB0_37:                               ;   in Loop: Header=BB0_7 Depth=2
	.loc	1 0 15                          ; -:0:15
	s_or_b64 exec, exec, s[52:53]
	.loc	1 41 15                         ; -:41:15
	s_and_b64 s[52:53], s[30:31], s[50:51]
	v_mov_b32_e32 v101, 0
	s_and_saveexec_b64 s[50:51], s[52:53]
	s_cbranch_execz .LBB0_6
; %bb.38:                               ;   in Loop: Header=BB0_7 Depth=2
	global_load_ushort v101, v[34:35], off offset:14
	s_branch .LBB0_6
.LBB0_39:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 15                          ; -:0:15
	v_mov_b32_e32 v22, v23
	v_mov_b64_e32 v[14:15], v[22:23]
	v_mov_b64_e32 v[12:13], v[22:23]
	v_mov_b64_e32 v[10:11], v[22:23]
	v_mov_b64_e32 v[8:9], v[22:23]
	v_mov_b64_e32 v[6:7], v[22:23]
	v_mov_b64_e32 v[4:5], v[22:23]
	v_mov_b64_e32 v[2:3], v[22:23]
	v_mov_b64_e32 v[0:1], v[22:23]
.LBB0_40:                               ; %._crit_edge
                                        ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 24 5 is_stmt 1                ; -:24:5
	s_cmp_lg_u32 s79, s54
	s_mov_b64 s[18:19], -1
	s_cbranch_scc1 .LBB0_42
; %bb.41:                               ; %Flow181
                                        ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_and_b64 vcc, exec, s[18:19]
	s_cbranch_vccz .LBB0_3
	s_branch .LBB0_48
.LBB0_42:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 24 5                          ; -:24:5
	s_and_saveexec_b64 s[18:19], s[34:35]
	s_cbranch_execz .LBB0_44
; %bb.43:                               ; %.critedge
                                        ;   in Loop: Header=BB0_4 Depth=1
	s_nop 5
	global_store_dwordx4 v[24:25], v[0:3], off
	global_store_dwordx4 v[24:25], v[4:7], off offset:32
	global_store_dwordx4 v[24:25], v[8:11], off offset:64
	global_store_dwordx4 v[24:25], v[12:15], off offset:96
.LBB0_44:                               ; %.critedge4
                                        ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[18:19]
	.loc	1 24 5                          ; -:24:5
	s_barrier
	s_barrier
	s_and_saveexec_b64 s[18:19], s[0:1]
	s_cbranch_execz .LBB0_47
; %bb.45:                               ;   in Loop: Header=BB0_4 Depth=1
	s_mov_b64 s[20:21], exec
	v_mbcnt_lo_u32_b32 v22, s20, 0
	v_mbcnt_hi_u32_b32 v22, s21, v22
	v_cmp_eq_u32_e32 vcc, 0, v22
	s_and_b64 s[22:23], exec, vcc
	s_mov_b64 exec, s[22:23]
	s_cbranch_execz .LBB0_47
; %bb.46:                               ;   in Loop: Header=BB0_4 Depth=1
	s_add_i32 s78, s78, -1
	s_abs_i32 s23, s78
	s_mul_hi_u32 s24, s23, s71
	s_mul_i32 s25, s24, s67
	s_ashr_i32 s22, s78, 31
	s_sub_i32 s23, s23, s25
	s_xor_b32 s22, s22, s70
	s_add_i32 s25, s24, 1
	s_sub_i32 s26, s23, s67
	s_cmp_ge_u32 s23, s67
	s_cselect_b32 s24, s25, s24
	s_cselect_b32 s23, s26, s23
	s_add_i32 s25, s24, 1
	s_cmp_ge_u32 s23, s67
	s_cselect_b32 s23, s25, s24
	s_xor_b32 s23, s23, s22
	s_sub_i32 s22, s23, s22
	s_sub_i32 s23, s78, s66
	s_ashr_i32 s24, s23, 31
	s_abs_i32 s23, s23
	s_mul_hi_u32 s25, s23, s72
	s_mul_i32 s26, s25, s63
	s_sub_i32 s23, s23, s26
	s_add_i32 s26, s25, 1
	s_sub_i32 s27, s23, s63
	s_cmp_ge_u32 s23, s63
	s_cselect_b32 s25, s26, s25
	s_cselect_b32 s23, s27, s23
	s_add_i32 s26, s25, 1
	s_cmp_ge_u32 s23, s63
	s_cselect_b32 s23, s26, s25
	s_xor_b32 s23, s23, s24
	s_sub_i32 s23, s23, s24
	s_add_i32 s23, s23, s56
	s_cmp_lt_i32 s78, s66
	s_cselect_b32 s22, s22, s23
	s_ashr_i32 s23, s22, 31
	s_lshl_b64 s[22:23], s[22:23], 2
	s_add_u32 s22, s38, s22
	s_addc_u32 s23, s39, s23
	s_bcnt1_i32_b64 s20, s[20:21]
	v_mov_b32_e32 v22, s20
	buffer_wbl2 sc1
	s_waitcnt vmcnt(0)
	global_atomic_add v23, v22, s[22:23]
.LBB0_47:                               ; %Flow176
                                        ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[18:19]
	s_branch .LBB0_3
.LBB0_48:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 24 5 is_stmt 1                ; -:24:5
	s_abs_i32 s19, s76
	s_mul_hi_u32 s20, s19, s71
	s_mul_i32 s21, s20, s67
	s_ashr_i32 s18, s76, 31
	s_sub_i32 s19, s19, s21
	s_xor_b32 s18, s18, s70
	s_add_i32 s21, s20, 1
	s_sub_i32 s22, s19, s67
	s_cmp_ge_u32 s19, s67
	s_cselect_b32 s20, s21, s20
	s_cselect_b32 s19, s22, s19
	s_add_i32 s21, s20, 1
	s_cmp_ge_u32 s19, s67
	s_cselect_b32 s19, s21, s20
	s_xor_b32 s19, s19, s18
	s_sub_i32 s18, s19, s18
	s_sub_i32 s19, s76, s66
	s_ashr_i32 s20, s19, 31
	s_abs_i32 s19, s19
	s_mul_hi_u32 s21, s19, s72
	s_mul_i32 s22, s21, s63
	s_sub_i32 s19, s19, s22
	s_add_i32 s22, s21, 1
	s_sub_i32 s23, s19, s63
	s_cmp_ge_u32 s19, s63
	s_cselect_b32 s21, s22, s21
	s_cselect_b32 s19, s23, s19
	s_add_i32 s22, s21, 1
	s_cmp_ge_u32 s19, s63
	s_cselect_b32 s19, s22, s21
	s_xor_b32 s19, s19, s20
	s_sub_i32 s19, s19, s20
	s_add_i32 s19, s19, s56
	s_cmp_lt_i32 s76, s66
	s_cselect_b32 s18, s18, s19
	s_sub_i32 s18, s16, s18
	s_cmp_lg_u32 s77, 0
	s_cselect_b32 s22, s18, 0
	s_cmp_lt_i32 s22, 1
	s_cbranch_scc0 .LBB0_83
.LBB0_49:                               ; %._crit_edge30
                                        ;   in Loop: Header=BB0_4 Depth=1
	v_cvt_pk_f16_f32 v28, v0, v1
	v_or_b32_e32 v0, s75, v44
	s_cmp_gt_i32 s75, -1
	s_cselect_b64 s[18:19], -1, 0
	v_cmp_gt_i32_e32 vcc, s8, v0
	s_and_b64 s[18:19], vcc, s[18:19]
	s_ashr_i32 s20, s75, 31
	v_or_b32_e32 v22, s42, v20
	v_mul_lo_u32 v29, s37, v0
	s_mul_i32 s22, s36, s20
	v_mad_u64_u32 v[0:1], s[20:21], s36, v0, 0
	s_cmp_gt_i32 s42, -1
	s_cselect_b64 s[20:21], -1, 0
	v_cmp_gt_i32_e32 vcc, s9, v22
	v_add3_u32 v1, v1, s22, v29
	s_and_b64 s[22:23], s[20:21], vcc
	v_lshl_add_u64 v[0:1], v[0:1], 1, s[6:7]
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_51
; %bb.50:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	v_lshl_add_u64 v[30:31], v[22:23], 1, v[0:1]
	.loc	1 24 5                          ; -:24:5
	global_store_short v[30:31], v28, off
.LBB0_51:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v22, s42, v45
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v22
	s_ashr_i32 s43, s42, 31
	s_and_b64 s[22:23], vcc, s[20:21]
	v_lshl_add_u64 v[30:31], s[42:43], 0, v[20:21]
	s_and_b64 s[24:25], s[18:19], s[22:23]
	v_lshl_add_u64 v[0:1], v[30:31], 1, v[0:1]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_53
; %bb.52:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short_d16_hi v[0:1], v28, off offset:2
.LBB0_53:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	.loc	1 24 5                          ; -:24:5
	v_cvt_pk_f16_f32 v2, v2, v3
	v_or_b32_e32 v3, s42, v46
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_55
; %bb.54:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short v[0:1], v2, off offset:4
.LBB0_55:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v47
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_57
; %bb.56:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short_d16_hi v[0:1], v2, off offset:6
.LBB0_57:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v48
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	v_cvt_pk_f16_f32 v2, v4, v5
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_59
; %bb.58:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short v[0:1], v2, off offset:16
.LBB0_59:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v49
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_61
; %bb.60:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short_d16_hi v[0:1], v2, off offset:18
.LBB0_61:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v50
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	v_cvt_pk_f16_f32 v2, v6, v7
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_63
; %bb.62:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short v[0:1], v2, off offset:20
.LBB0_63:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v51
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_65
; %bb.64:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short_d16_hi v[0:1], v2, off offset:22
.LBB0_65:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v52
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	v_cvt_pk_f16_f32 v2, v8, v9
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_67
; %bb.66:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short v[0:1], v2, off offset:32
.LBB0_67:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v53
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_69
; %bb.68:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short_d16_hi v[0:1], v2, off offset:34
.LBB0_69:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v54
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	v_cvt_pk_f16_f32 v2, v10, v11
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_71
; %bb.70:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short v[0:1], v2, off offset:36
.LBB0_71:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v55
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_73
; %bb.72:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short_d16_hi v[0:1], v2, off offset:38
.LBB0_73:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v56
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	v_cvt_pk_f16_f32 v2, v12, v13
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_75
; %bb.74:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short v[0:1], v2, off offset:48
.LBB0_75:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v57
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_77
; %bb.76:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short_d16_hi v[0:1], v2, off offset:50
.LBB0_77:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v58
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[22:23], vcc, s[20:21]
	v_cvt_pk_f16_f32 v2, v14, v15
	s_and_b64 s[24:25], s[18:19], s[22:23]
	s_and_saveexec_b64 s[22:23], s[24:25]
	s_cbranch_execz .LBB0_79
; %bb.78:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short v[0:1], v2, off offset:52
.LBB0_79:                               ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[22:23]
	v_or_b32_e32 v3, s42, v86
	.loc	1 24 5                          ; -:24:5
	v_cmp_gt_i32_e32 vcc, s9, v3
	s_and_b64 s[20:21], vcc, s[20:21]
	s_and_b64 s[20:21], s[18:19], s[20:21]
	s_and_saveexec_b64 s[18:19], s[20:21]
	s_cbranch_execz .LBB0_2
; %bb.80:                               ;   in Loop: Header=BB0_4 Depth=1
	global_store_short_d16_hi v[0:1], v2, off offset:54
	s_branch .LBB0_2
.LBB0_81:                               ;   in Loop: Header=BB0_83 Depth=2
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[20:21]
	.loc	1 24 5                          ; -:24:5
	v_readfirstlane_b32 s20, v22
	s_nop 1
	v_mov_b32_e32 v22, s20
	ds_write_b32 v23, v22
.LBB0_82:                               ; %Flow179
                                        ;   in Loop: Header=BB0_83 Depth=2
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[18:19]
	.loc	1 24 5                          ; -:24:5
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b32 v22, v23
	s_waitcnt lgkmcnt(0)
	v_cmp_gt_i32_e32 vcc, s22, v22
	s_cbranch_vccz .LBB0_86
.LBB0_83:                               ; %.preheader15
                                        ;   Parent Loop BB0_4 Depth=1
                                        ; =>  This Inner Loop Header: Depth=2
	s_barrier
	s_and_saveexec_b64 s[18:19], s[0:1]
	s_cbranch_execz .LBB0_82
; %bb.84:                               ;   in Loop: Header=BB0_83 Depth=2
	v_mbcnt_lo_u32_b32 v22, exec_lo, 0
	v_mbcnt_hi_u32_b32 v22, exec_hi, v22
	v_cmp_eq_u32_e32 vcc, 0, v22
                                        ; implicit-def: $vgpr22
	s_and_saveexec_b64 s[20:21], vcc
	s_cbranch_execz .LBB0_81
; %bb.85:                               ;   in Loop: Header=BB0_83 Depth=2
	global_atomic_or v22, v23, v23, s[40:41] sc0
	s_waitcnt vmcnt(0)
	buffer_inv sc1
	s_branch .LBB0_81
.LBB0_86:                               ; %.lr.ph29.preheader
                                        ;   in Loop: Header=BB0_4 Depth=1
	.loc	1 0 5                           ; -:0:5
	s_mov_b32 s23, s65
	s_branch .LBB0_88
.LBB0_87:                               ;   in Loop: Header=BB0_88 Depth=2
	s_or_b64 exec, exec, s[20:21]
	.loc	1 24 5                          ; -:24:5
	s_barrier
	s_waitcnt vmcnt(0)
	ds_write_b128 v80, v[88:91]
	ds_write_b128 v80, v[96:99] offset:512
	ds_write_b128 v81, v[30:33]
	ds_write_b128 v81, v[92:95] offset:512
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b128 v[28:31], v82
	ds_read_b128 v[32:35], v83
	ds_read_b128 v[88:91], v84
	ds_read_b128 v[92:95], v85
	s_add_i32 s22, s22, -1
	s_waitcnt lgkmcnt(3)
	v_pk_add_f32 v[0:1], v[0:1], v[28:29]
	v_pk_add_f32 v[2:3], v[2:3], v[30:31]
	s_waitcnt lgkmcnt(2)
	v_pk_add_f32 v[4:5], v[4:5], v[32:33]
	v_pk_add_f32 v[6:7], v[6:7], v[34:35]
	s_waitcnt lgkmcnt(1)
	v_pk_add_f32 v[8:9], v[8:9], v[88:89]
	v_pk_add_f32 v[10:11], v[10:11], v[90:91]
	s_waitcnt lgkmcnt(0)
	v_pk_add_f32 v[12:13], v[12:13], v[92:93]
	s_cmp_lg_u32 s22, 0
	v_pk_add_f32 v[14:15], v[14:15], v[94:95]
	s_cbranch_scc0 .LBB0_49
.LBB0_88:                               ; %.lr.ph29
                                        ;   Parent Loop BB0_4 Depth=1
                                        ; =>  This Inner Loop Header: Depth=2
	.loc	1 0 5                           ; -:0:5
	s_mov_b32 s20, s23
	.loc	1 24 5 is_stmt 1                ; -:24:5
	s_sub_i32 s23, s23, 64
	v_add_u32_e32 v28, s20, v60
	v_subrev_u32_e32 v22, 64, v28
	s_cmp_gt_i32 s23, -1
	s_cselect_b64 s[18:19], -1, 0
	v_cmp_gt_i32_e32 vcc, s20, v22
	s_and_b64 s[18:19], s[18:19], vcc
	v_mov_b32_e32 v30, 0
	v_mov_b32_e32 v88, 0
	v_mov_b32_e32 v89, 0
	v_mov_b32_e32 v90, 0
	v_mov_b32_e32 v91, 0
	s_and_saveexec_b64 s[20:21], s[18:19]
	s_cbranch_execz .LBB0_90
; %bb.89:                               ;   in Loop: Header=BB0_88 Depth=2
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	v_lshlrev_b64 v[32:33], 8, v[22:23]
	v_lshl_add_u64 v[32:33], v[26:27], 0, v[32:33]
	.loc	1 24 5                          ; -:24:5
	global_load_dwordx4 v[88:91], v[32:33], off
.LBB0_90:                               ;   in Loop: Header=BB0_88 Depth=2
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[20:21]
	v_mov_b32_e32 v31, 0
	v_mov_b32_e32 v32, 0
	v_mov_b32_e32 v33, 0
	.loc	1 24 5                          ; -:24:5
	s_and_saveexec_b64 s[20:21], s[18:19]
	s_cbranch_execz .LBB0_92
; %bb.91:                               ;   in Loop: Header=BB0_88 Depth=2
	.loc	1 0 5                           ; -:0:5
	v_subrev_u32_e32 v30, 48, v28
	.loc	1 24 5                          ; -:24:5
	v_ashrrev_i32_e32 v31, 31, v30
	v_lshlrev_b64 v[30:31], 8, v[30:31]
	v_lshl_add_u64 v[30:31], v[26:27], 0, v[30:31]
	global_load_dwordx4 v[30:33], v[30:31], off
.LBB0_92:                               ;   in Loop: Header=BB0_88 Depth=2
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[20:21]
	v_mov_b32_e32 v92, 0
	v_mov_b32_e32 v96, 0
	v_mov_b32_e32 v97, 0
	v_mov_b32_e32 v98, 0
	v_mov_b32_e32 v99, 0
	.loc	1 24 5                          ; -:24:5
	s_and_saveexec_b64 s[20:21], s[18:19]
	s_cbranch_execz .LBB0_94
; %bb.93:                               ;   in Loop: Header=BB0_88 Depth=2
	.loc	1 0 5                           ; -:0:5
	v_subrev_u32_e32 v34, 32, v28
	.loc	1 24 5                          ; -:24:5
	v_ashrrev_i32_e32 v35, 31, v34
	v_lshlrev_b64 v[34:35], 8, v[34:35]
	v_lshl_add_u64 v[34:35], v[26:27], 0, v[34:35]
	global_load_dwordx4 v[96:99], v[34:35], off
.LBB0_94:                               ;   in Loop: Header=BB0_88 Depth=2
	.loc	1 0 5                           ; -:0:5
	s_or_b64 exec, exec, s[20:21]
	v_mov_b32_e32 v93, 0
	v_mov_b32_e32 v94, 0
	v_mov_b32_e32 v95, 0
	.loc	1 24 5                          ; -:24:5
	s_and_saveexec_b64 s[20:21], s[18:19]
	s_cbranch_execz .LBB0_87
; %bb.95:                               ;   in Loop: Header=BB0_88 Depth=2
	v_add_u32_e32 v28, -16, v28
	v_ashrrev_i32_e32 v29, 31, v28
	v_lshlrev_b64 v[28:29], 8, v[28:29]
	v_lshl_add_u64 v[28:29], v[26:27], 0, v[28:29]
	global_load_dwordx4 v[92:95], v[28:29], off
	s_branch .LBB0_87
.LBB0_96:                               ; %._crit_edge46
	.loc	1 47 5 is_stmt 1                ; -:47:5
	s_endpgm
.Ltmp2:
.Lfunc_end0:
	.size	gemm, .Lfunc_end0-gemm
	.cfi_endproc
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel gemm
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 352
		.amdhsa_user_sgpr_count 16
		.amdhsa_user_sgpr_dispatch_ptr 0
		.amdhsa_user_sgpr_queue_ptr 0
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_dispatch_id 0
		.amdhsa_user_sgpr_kernarg_preload_length 14
		.amdhsa_user_sgpr_kernarg_preload_offset 0
		.amdhsa_user_sgpr_private_segment_size 0
		.amdhsa_uses_dynamic_stack 0
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_sgpr_workgroup_info 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 106
		.amdhsa_next_free_sgpr 84
		.amdhsa_accum_offset 108
		.amdhsa_reserve_vcc 1
		.amdhsa_reserve_xnack_mask 1
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_round_mode_16_64 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
		.amdhsa_dx10_clamp 1
		.amdhsa_ieee_mode 1
		.amdhsa_fp16_overflow 0
		.amdhsa_tg_split 0
		.amdhsa_exception_fp_ieee_invalid_op 0
		.amdhsa_exception_fp_denorm_src 0
		.amdhsa_exception_fp_ieee_div_zero 0
		.amdhsa_exception_fp_ieee_overflow 0
		.amdhsa_exception_fp_ieee_underflow 0
		.amdhsa_exception_fp_ieee_inexact 0
		.amdhsa_exception_int_div_zero 0
	.end_amdhsa_kernel
	.text
                                        ; -- End function
	.set .Lgemm.num_vgpr, 106
	.set .Lgemm.num_agpr, 0
	.set .Lgemm.numbered_sgpr, 84
	.set .Lgemm.num_named_barrier, 0
	.set .Lgemm.private_seg_size, 0
	.set .Lgemm.uses_vcc, 1
	.set .Lgemm.uses_flat_scratch, 0
	.set .Lgemm.has_dyn_sized_stack, 0
	.set .Lgemm.has_recursion, 0
	.set .Lgemm.has_indirect_call, 0
	.section	.AMDGPU.csdata,"",@progbits
; Kernel info:
; codeLenInByte = 5416
; TotalNumSgprs: 90
; NumVgprs: 106
; NumAgprs: 0
; TotalNumVgprs: 106
; ScratchSize: 0
; MemoryBound: 0
; FloatMode: 240
; IeeeMode: 1
; LDSByteSize: 0 bytes/workgroup (compile time only)
; SGPRBlocks: 11
; VGPRBlocks: 13
; NumSGPRsForWavesPerEU: 90
; NumVGPRsForWavesPerEU: 106
; AccumOffset: 108
; Occupancy: 4
; WaveLimiterHint : 0
; COMPUTE_PGM_RSRC2:SCRATCH_EN: 0
; COMPUTE_PGM_RSRC2:USER_SGPR: 16
; COMPUTE_PGM_RSRC2:TRAP_HANDLER: 0
; COMPUTE_PGM_RSRC2:TGID_X_EN: 1
; COMPUTE_PGM_RSRC2:TGID_Y_EN: 0
; COMPUTE_PGM_RSRC2:TGID_Z_EN: 0
; COMPUTE_PGM_RSRC2:TIDIG_COMP_CNT: 0
; COMPUTE_PGM_RSRC3_GFX90A:ACCUM_OFFSET: 26
; COMPUTE_PGM_RSRC3_GFX90A:TG_SPLIT: 0
	.text
	.p2alignl 6, 3212836864
	.fill 256, 4, 3212836864
	.section	.AMDGPU.gpr_maximums,"",@progbits
	.set amdgpu.max_num_vgpr, 0
	.set amdgpu.max_num_agpr, 0
	.set amdgpu.max_num_sgpr, 0
	.set amdgpu.max_num_named_barrier, 0
	.text
	.section	.debug_abbrev,"",@progbits
	.byte	1                               ; Abbreviation Code
	.byte	17                              ; DW_TAG_compile_unit
	.byte	0                               ; DW_CHILDREN_no
	.byte	37                              ; DW_AT_producer
	.byte	14                              ; DW_FORM_strp
	.byte	19                              ; DW_AT_language
	.byte	5                               ; DW_FORM_data2
	.byte	3                               ; DW_AT_name
	.byte	14                              ; DW_FORM_strp
	.byte	16                              ; DW_AT_stmt_list
	.byte	23                              ; DW_FORM_sec_offset
	.ascii	"\341\177"                      ; DW_AT_APPLE_optimized
	.byte	25                              ; DW_FORM_flag_present
	.byte	17                              ; DW_AT_low_pc
	.byte	1                               ; DW_FORM_addr
	.byte	18                              ; DW_AT_high_pc
	.byte	6                               ; DW_FORM_data4
	.byte	0                               ; EOM(1)
	.byte	0                               ; EOM(2)
	.byte	0                               ; EOM(3)
	.section	.debug_info,"",@progbits
.Lcu_begin0:
	.long	.Ldebug_info_end0-.Ldebug_info_start0 ; Length of Unit
.Ldebug_info_start0:
	.short	4                               ; DWARF version number
	.long	.debug_abbrev                   ; Offset Into Abbrev. Section
	.byte	8                               ; Address Size (in bytes)
	.byte	1                               ; Abbrev [1] 0xb:0x1b DW_TAG_compile_unit
	.long	.Linfo_string0                  ; DW_AT_producer
	.short	2                               ; DW_AT_language
	.long	.Linfo_string1                  ; DW_AT_name
	.long	.Lline_table_start0             ; DW_AT_stmt_list
                                        ; DW_AT_APPLE_optimized
	.quad	.Lfunc_begin0                   ; DW_AT_low_pc
	.long	.Lfunc_end0-.Lfunc_begin0       ; DW_AT_high_pc
.Ldebug_info_end0:
	.section	.debug_str,"MS",@progbits,1
.Linfo_string0:
	.asciz	"triton"                        ; string offset=0 ; triton
.Linfo_string1:
	.asciz	"-"                             ; string offset=7 ; -
	.section	".note.GNU-stack","",@progbits
	.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
    .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
      - .offset:         24
        .size:           4
        .value_kind:     by_value
      - .offset:         28
        .size:           4
        .value_kind:     by_value
      - .offset:         32
        .size:           4
        .value_kind:     by_value
      - .offset:         40
        .size:           8
        .value_kind:     by_value
      - .offset:         48
        .size:           8
        .value_kind:     by_value
      - .offset:         56
        .size:           8
        .value_kind:     by_value
      - .address_space:  global
        .offset:         64
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         72
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         80
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .offset:         88
        .size:           8
        .value_kind:     global_buffer
      - .offset:         96
        .size:           4
        .value_kind:     hidden_block_count_x
      - .offset:         100
        .size:           4
        .value_kind:     hidden_block_count_y
      - .offset:         104
        .size:           4
        .value_kind:     hidden_block_count_z
      - .offset:         108
        .size:           2
        .value_kind:     hidden_group_size_x
      - .offset:         110
        .size:           2
        .value_kind:     hidden_group_size_y
      - .offset:         112
        .size:           2
        .value_kind:     hidden_group_size_z
      - .offset:         114
        .size:           2
        .value_kind:     hidden_remainder_x
      - .offset:         116
        .size:           2
        .value_kind:     hidden_remainder_y
      - .offset:         118
        .size:           2
        .value_kind:     hidden_remainder_z
      - .offset:         136
        .size:           8
        .value_kind:     hidden_global_offset_x
      - .offset:         144
        .size:           8
        .value_kind:     hidden_global_offset_y
      - .offset:         152
        .size:           8
        .value_kind:     hidden_global_offset_z
      - .offset:         160
        .size:           2
        .value_kind:     hidden_grid_dims
      - .offset:         216
        .size:           4
        .value_kind:     hidden_dynamic_lds_size
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 352
    .max_flat_workgroup_size: 256
    .name:           gemm
    .private_segment_fixed_size: 0
    .sgpr_count:     90
    .sgpr_spill_count: 0
    .symbol:         gemm.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     106
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgpu9.50-amd-amdhsa-unknown-gfx950
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
	.section	.debug_line,"",@progbits
.Lline_table_start0:
