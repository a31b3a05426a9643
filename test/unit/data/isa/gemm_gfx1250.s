	.amdgcn_target "amdgpu12.50-amd-amdhsa-unknown-gfx1250"
	.amdhsa_code_object_version 5
	.text
	.globl	gemm                            ; -- Begin function gemm
	.p2align	8
	.type	gemm,@function
gemm:                                   ; @gemm
.Lfunc_begin0:
	.file	1 "-"
	.loc	1 21 0                          ; -:21:0
	.cfi_sections .debug_frame
	.cfi_startproc
; %bb.0:
	s_setreg_imm32_b32 hwreg(HW_REG_WAVE_MODE, 25, 1), 1 ;  msbs: dst=0 src0=0 src1=0 src2=0
	s_mov_b64 s[64:65], 0
	v_nop
	global_prefetch_b8 v0, s[64:65] scope:SCOPE_SE
	.cfi_escape 0x0f, 0x04, 0x30, 0x36, 0xe9, 0x02 ; CFA is 0 in private_wave aspace
	.cfi_undefined 16
	s_setreg_imm32_b32 hwreg(HW_REG_WAVE_SCHED_MODE, 0, 2), 2
.Ltmp0:
	.loc	1 72 5 prologue_end             ; -:72:5
	s_clause 0x2
	s_load_b96 s[36:38], s[0:1], 0x18 nv
	s_load_b128 s[12:15], s[0:1], 0x28 nv
	s_load_b128 s[4:7], s[0:1], 0x0 nv
	s_and_b32 s10, ttmp7, 0xffff
	s_bfe_u32 s46, ttmp8, 0x50019
	.loc	1 31 14                         ; -:31:14
	s_lshl_b32 s2, ttmp9, 7
	.loc	1 32 14                         ; -:32:14
	s_lshl_b32 s33, s10, 7
	s_mov_b32 s11, 0
	.loc	1 72 5                          ; -:72:5
	s_load_b64 s[34:35], s[0:1], 0x10 nv
	.loc	1 45 5                          ; -:45:5
	s_mov_b32 s31, s11
	v_and_b32_e32 v1, 16, v0
                                        ; implicit-def: $vgpr69
                                        ; implicit-def: $vgpr67
                                        ; implicit-def: $vgpr66
	.loc	1 36 11                         ; -:36:11
	s_wait_kmcnt 0x0
	s_mov_b32 s8, s37
	s_mov_b32 s9, s38
	.loc	1 33 11                         ; -:33:11
	s_add_co_i32 s47, s38, 63
	.loc	1 41 12                         ; -:41:12
	s_and_b32 s13, s13, 0xffff
	.loc	1 42 12                         ; -:42:12
	s_and_b32 s18, s38, 0xffff0000
	.loc	1 36 11                         ; -:36:11
	s_and_b32 s39, s15, 0xffff
	s_lshr_b64 s[8:9], s[8:9], 16
	.loc	1 40 13                         ; -:40:13
	s_cmp_gt_i32 s47, 63
	.loc	1 35 11                         ; -:35:11
	s_bitset1_b32 s5, 31
	.loc	1 40 13                         ; -:40:13
	s_cselect_b32 s3, -1, 0
	.loc	1 36 11                         ; -:36:11
	s_bitset1_b32 s7, 31
	.loc	1 41 12                         ; -:41:12
	s_and_b32 vcc_lo, s3, exec_lo
	s_cselect_b32 s49, 1, 0
	s_ashr_i32 s3, s2, 31
	s_sub_co_i32 s9, s36, s2
	s_mul_u64 s[16:17], s[12:13], s[2:3]
	s_max_i32 s9, s9, 0
	s_lshl_b64 s[16:17], s[16:17], 1
	s_cmp_gt_i32 s2, -1
	s_add_nc_u64 s[16:17], s[16:17], s[4:5]
	s_cselect_b32 s19, s9, 0
	.loc	1 42 12                         ; -:42:12
	s_and_b32 s5, s37, 0xffff
	s_lshl_b32 s9, s8, 16
	s_lshr_b32 s48, s8, 16
	s_or_b32 s9, s9, s5
	s_or_b32 s5, s48, s18
	s_sub_co_i32 s8, s9, s33
	.loc	1 41 12                         ; -:41:12
	s_max_i32 s4, s38, 0
	.loc	1 42 12                         ; -:42:12
	s_and_b64 s[20:21], s[14:15], 0xffffffffffff
	s_lshl_b32 s10, s10, 8
	s_max_i32 s23, s5, 0
	s_max_i32 s5, s8, 0
	s_cmp_gt_i32 s33, -1
	s_add_nc_u64 s[24:25], s[6:7], s[10:11]
	s_cselect_b32 s22, s5, 0
	.loc	1 45 5                          ; -:45:5
	s_and_b32 s28, s46, 3
	.loc	1 42 12                         ; -:42:12
	s_lshr_b64 s[6:7], s[22:23], 16
	.loc	1 45 5                          ; -:45:5
	s_lshl_b32 s30, s28, 5
	s_lshl_b32 s10, s28, 6
	s_sub_co_i32 s5, s19, s30
	s_mul_u64 s[26:27], s[12:13], s[10:11]
	s_max_i32 s5, s5, 0
	s_lshl_b32 s50, s4, 16
	s_lshr_b64 s[40:41], s[4:5], 16
	s_lshr_b32 s4, s5, 16
	s_lshr_b32 s5, s6, 16
	s_and_b32 s10, s23, 0x7fff0000
	s_lshl_b32 s44, s28, 4
	s_or_b32 s5, s5, s10
	s_mul_i32 s15, s28, 0x900
	s_sub_co_i32 s5, s5, s44
	s_lshl1_add_u32 s7, s15, 0
	s_max_i32 s5, s5, 0
	s_lshr_b32 s42, s46, 2
	s_or_b32 s23, s4, 0x400000
	s_and_b32 s4, s6, 0x7fff
	s_lshl_b32 s10, s5, 16
	s_lshr_b32 s5, s5, 16
	s_xor_b32 s43, s42, 1
	s_add_co_i32 s6, s7, 0x8ff0
	s_lshl_b32 s45, s22, 16
	s_or_b32 s10, s10, s4
	s_or_b32 s41, s5, 0x800000
	s_cmp_gt_u32 s46, 3
	s_mul_u64 s[28:29], s[20:21], s[30:31]
	s_cselect_b32 s31, -1, 0
	s_add_nc_u64 s[8:9], s[16:17], s[26:27]
	s_add_nc_u64 s[4:5], s[24:25], s[28:29]
	s_and_b32 s51, s31, exec_lo
	s_cselect_b32 s54, s4, s8
	s_cselect_b32 s51, s42, s43
	s_mov_b32 s4, 0xf510000
	s_cselect_b32 s55, s5, s9
	s_cselect_b32 s53, s6, s7
	s_cselect_b32 s6, s10, s40
	s_cselect_b32 s10, s39, s13
	s_cselect_b32 s7, s41, s23
	s_cselect_b32 s5, s45, s50
	s_cselect_b32 s8, 16, 32
	s_cselect_b32 s9, s14, s12
	s_cselect_b32 s4, s4, 0x7110000
	s_and_b32 s52, s51, s49
	.loc	1 72 5                          ; -:72:5
	s_load_b64 s[40:41], s[0:1], 0x38 nv
	.loc	1 45 5                          ; -:45:5
	tensor_load_to_lds s[52:55], s[4:11]
	s_wait_xcnt 0x0
	s_mov_b32 s0, -1
	.loc	1 48 12                         ; -:48:12
	s_cbranch_vccnz .LBB0_2
; %bb.1:                                ; %.._crit_edge_crit_edge
	.loc	1 72 5                          ; -:72:5
	s_lshl_b32 s0, s46, 5
	s_delay_alu instid0(SALU_CYCLE_1) | instskip(NEXT) | instid1(SALU_CYCLE_1)
	s_and_b32 s1, s0, 32
	v_dual_mov_b32 v66, s1 :: v_dual_bitop2_b32 v69, 16, v0 bitop3:0x40
	v_mov_b32_e32 v67, s0
	s_mov_b32 s0, 0
.LBB0_2:                                ; %Flow159
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	v_mov_b32_e32 v9, 0
	s_and_b32 s0, s0, exec_lo
	s_cselect_b32 s0, 1, 0
	s_delay_alu instid0(SALU_CYCLE_1) | instskip(NEXT) | instid1(VALU_DEP_1)
	s_cmp_lg_u32 s0, 1
	v_dual_mov_b32 v8, v9 :: v_dual_mov_b32 v7, v9
	v_dual_mov_b32 v6, v9 :: v_dual_mov_b32 v5, v9
	v_dual_mov_b32 v4, v9 :: v_dual_mov_b32 v3, v9
	v_dual_mov_b32 v2, v9 :: v_dual_mov_b32 v17, v9
	v_dual_mov_b32 v16, v9 :: v_dual_mov_b32 v15, v9
	v_dual_mov_b32 v14, v9 :: v_dual_mov_b32 v13, v9
	v_dual_mov_b32 v12, v9 :: v_dual_mov_b32 v11, v9
	v_dual_mov_b32 v10, v9 :: v_dual_mov_b32 v25, v9
	v_dual_mov_b32 v24, v9 :: v_dual_mov_b32 v23, v9
	v_dual_mov_b32 v22, v9 :: v_dual_mov_b32 v21, v9
	v_dual_mov_b32 v20, v9 :: v_dual_mov_b32 v19, v9
	v_dual_mov_b32 v18, v9 :: v_dual_mov_b32 v33, v9
	v_dual_mov_b32 v32, v9 :: v_dual_mov_b32 v31, v9
	v_dual_mov_b32 v30, v9 :: v_dual_mov_b32 v29, v9
	v_dual_mov_b32 v28, v9 :: v_dual_mov_b32 v27, v9
	v_dual_mov_b32 v26, v9 :: v_dual_mov_b32 v41, v9
	v_dual_mov_b32 v40, v9 :: v_dual_mov_b32 v39, v9
	v_dual_mov_b32 v38, v9 :: v_dual_mov_b32 v37, v9
	v_dual_mov_b32 v36, v9 :: v_dual_mov_b32 v35, v9
	v_dual_mov_b32 v34, v9 :: v_dual_mov_b32 v49, v9
	v_dual_mov_b32 v48, v9 :: v_dual_mov_b32 v47, v9
	v_dual_mov_b32 v46, v9 :: v_dual_mov_b32 v45, v9
	v_dual_mov_b32 v44, v9 :: v_dual_mov_b32 v43, v9
	v_dual_mov_b32 v42, v9 :: v_dual_mov_b32 v57, v9
	v_dual_mov_b32 v56, v9 :: v_dual_mov_b32 v55, v9
	v_dual_mov_b32 v54, v9 :: v_dual_mov_b32 v53, v9
	v_dual_mov_b32 v52, v9 :: v_dual_mov_b32 v51, v9
	v_dual_mov_b32 v50, v9 :: v_dual_mov_b32 v65, v9
	v_dual_mov_b32 v64, v9 :: v_dual_mov_b32 v63, v9
	v_dual_mov_b32 v62, v9 :: v_dual_mov_b32 v61, v9
	v_dual_mov_b32 v60, v9 :: v_dual_mov_b32 v59, v9
	v_mov_b32_e32 v58, v9
	s_cbranch_scc1 .LBB0_6
; %bb.3:                                ; %.lr.ph
	v_dual_lshlrev_b32 v2, 8, v0 :: v_dual_lshlrev_b32 v3, 1, v0
	.loc	1 34 11 is_stmt 1               ; -:34:11
	s_ashr_i32 s0, s47, 31
	.loc	1 45 5                          ; -:45:5
	s_and_b32 s5, s19, 0x7fff0000
	.loc	1 34 11                         ; -:34:11
	s_lshr_b32 s0, s0, 26
	s_delay_alu instid0(VALU_DEP_1)
	v_and_b32_e32 v2, 0x700, v2
	v_dual_lshlrev_b32 v4, 7, v1 :: v_dual_bitop2_b32 v3, 16, v3 bitop3:0x40
	s_add_co_i32 s47, s47, s0
	s_lshl_b32 s0, s46, 10
	s_mov_b32 s1, 0
	s_and_b32 s0, s0, 0x1800
	v_or3_b32 v66, v3, v4, v2
	v_lshlrev_b32_e32 v5, 7, v0
	s_ashr_i32 s4, s47, 6
	s_sub_co_i32 s7, s5, s30
	s_lshl_b32 s5, s46, 5
	v_lshrrev_b32_e32 v2, 3, v66
	v_and_or_b32 v67, 0x780, v5, s0
	.loc	1 48 12                         ; -:48:12
	s_add_co_i32 s48, s48, s18
	v_mov_b32_e32 v58, 0
	.loc	1 34 11                         ; -:34:11
	s_sub_co_i32 s6, 0, s4
	v_and_b32_e32 v69, 0x1e0, v2
	v_lshrrev_b32_e32 v68, 3, v67
	s_mov_b32 s9, 1
	v_dual_mov_b32 v59, v58 :: v_dual_mov_b32 v60, v58
	v_dual_mov_b32 v61, v58 :: v_dual_mov_b32 v62, v58
	v_dual_mov_b32 v63, v58 :: v_dual_mov_b32 v64, v58
	v_dual_mov_b32 v65, v58 :: v_dual_mov_b32 v50, v58
	v_dual_mov_b32 v51, v58 :: v_dual_mov_b32 v52, v58
	v_dual_mov_b32 v53, v58 :: v_dual_mov_b32 v54, v58
	v_dual_mov_b32 v55, v58 :: v_dual_mov_b32 v56, v58
	v_dual_mov_b32 v57, v58 :: v_dual_mov_b32 v42, v58
	v_dual_mov_b32 v43, v58 :: v_dual_mov_b32 v44, v58
	v_dual_mov_b32 v45, v58 :: v_dual_mov_b32 v46, v58
	v_dual_mov_b32 v47, v58 :: v_dual_mov_b32 v48, v58
	v_dual_mov_b32 v49, v58 :: v_dual_mov_b32 v34, v58
	v_dual_mov_b32 v35, v58 :: v_dual_mov_b32 v36, v58
	v_dual_mov_b32 v37, v58 :: v_dual_mov_b32 v38, v58
	v_dual_mov_b32 v39, v58 :: v_dual_mov_b32 v40, v58
	v_dual_mov_b32 v41, v58 :: v_dual_mov_b32 v26, v58
	v_dual_mov_b32 v27, v58 :: v_dual_mov_b32 v28, v58
	v_dual_mov_b32 v29, v58 :: v_dual_mov_b32 v30, v58
	v_dual_mov_b32 v31, v58 :: v_dual_mov_b32 v32, v58
	v_dual_mov_b32 v33, v58 :: v_dual_mov_b32 v18, v58
	v_dual_mov_b32 v19, v58 :: v_dual_mov_b32 v20, v58
	v_dual_mov_b32 v21, v58 :: v_dual_mov_b32 v22, v58
	v_dual_mov_b32 v23, v58 :: v_dual_mov_b32 v24, v58
	v_dual_mov_b32 v25, v58 :: v_dual_mov_b32 v10, v58
	v_dual_mov_b32 v11, v58 :: v_dual_mov_b32 v12, v58
	v_dual_mov_b32 v13, v58 :: v_dual_mov_b32 v14, v58
	v_dual_mov_b32 v15, v58 :: v_dual_mov_b32 v16, v58
	v_dual_mov_b32 v17, v58 :: v_dual_mov_b32 v2, v58
	v_dual_mov_b32 v3, v58 :: v_dual_mov_b32 v4, v58
	v_dual_mov_b32 v5, v58 :: v_dual_mov_b32 v6, v58
	v_dual_mov_b32 v7, v58 :: v_dual_mov_b32 v8, v58
	v_mov_b32_e32 v9, v58
	s_and_b32 s8, s5, 32
	s_mov_b32 s0, 64
	.loc	1 48 12                         ; -:48:12
	s_sub_co_i32 s10, s48, 64
	s_sub_co_i32 s11, s38, 64
	s_mov_b32 s30, 0xf510000
	s_mov_b32 s46, s1
.LBB0_4:                                ; =>This Inner Loop Header: Depth=1
	.loc	1 58 7                          ; -:58:7
	s_barrier_signal -1
	.loc	1 51 19                         ; -:51:19
	s_cmp_lt_i32 s9, s4
	.loc	1 55 14                         ; -:55:14
	s_mul_u64 s[48:49], s[20:21], s[0:1]
	.loc	1 51 19                         ; -:51:19
	s_cselect_b32 s18, -1, 0
	s_delay_alu instid0(SALU_CYCLE_1)
	.loc	1 54 14                         ; -:54:14
	s_and_b32 s18, s18, exec_lo
	s_cselect_b32 s47, 1, 0
	.loc	1 55 14                         ; -:55:14
	s_max_i32 s23, s10, 0
	.loc	1 54 14                         ; -:54:14
	s_max_i32 s18, s11, 0
	.loc	1 56 13                         ; -:56:13
	s_add_co_i32 s38, s46, 0x2000
	.loc	1 55 14                         ; -:55:14
	s_lshr_b64 s[52:53], s[22:23], 16
	.loc	1 54 14                         ; -:54:14
	s_lshr_b64 s[54:55], s[18:19], 16
	.loc	1 58 7                          ; -:58:7
	s_and_b32 s23, s23, 0x7fff0000
	.loc	1 56 13                         ; -:56:13
	s_and_b32 s53, s38, 0x2000
	.loc	1 58 7                          ; -:58:7
	s_lshr_b32 s55, s52, 16
	s_lshr_b32 s56, s54, 16
	.loc	1 56 13                         ; -:56:13
	s_lshl1_add_u32 s57, s53, 0
	s_lshr_b32 s53, s53, 2
	.loc	1 58 7                          ; -:58:7
	s_or_b32 s55, s55, s23
	s_add_co_i32 s23, s7, s56
	.loc	1 56 13                         ; -:56:13
	s_add_co_i32 s57, s57, s53
	.loc	1 58 7                          ; -:58:7
	s_sub_co_i32 s53, s55, s44
	s_max_i32 s23, s23, 0
	s_max_i32 s53, s53, 0
	.loc	1 54 14                         ; -:54:14
	s_lshl_b64 s[50:51], s[0:1], 1
	.loc	1 55 14                         ; -:55:14
	s_lshl_b64 s[48:49], s[48:49], 1
	.loc	1 58 7                          ; -:58:7
	s_and_b32 s54, s54, 0x7fff
	s_and_b32 s52, s52, 0x7fff
	s_lshl1_add_u32 s55, s15, s57
	s_lshl_b32 s56, s23, 16
	s_lshl_b32 s58, s53, 16
	s_lshr_b32 s53, s53, 16
	.loc	1 54 14                         ; -:54:14
	s_add_nc_u64 s[50:51], s[16:17], s[50:51]
	.loc	1 55 14                         ; -:55:14
	s_add_nc_u64 s[48:49], s[24:25], s[48:49]
	.loc	1 58 7                          ; -:58:7
	s_lshl_b32 s18, s18, 16
	s_lshr_b32 s23, s23, 16
	s_add_co_i32 s57, s55, 0x8ff0
	s_or_b32 s54, s56, s54
	s_or_b32 s52, s58, s52
	s_or_b32 s60, s53, 0x800000
	s_and_b32 s53, s31, exec_lo
	s_add_nc_u64 s[50:51], s[50:51], s[26:27]
	s_add_nc_u64 s[48:49], s[48:49], s[28:29]
	s_cselect_b32 s53, s42, s43
	s_bitset1_b32 s23, 22
	s_cselect_b32 s57, s57, s55
	s_cselect_b32 s59, s49, s51
	s_cselect_b32 s58, s48, s50
	s_and_b32 s56, s53, s47
	s_and_b32 s47, s31, exec_lo
	s_cselect_b32 s50, s52, s54
	s_cselect_b32 s55, 0, 0
	s_cselect_b32 s54, s39, s13
	s_cselect_b32 s53, s14, s12
	s_cselect_b32 s52, 16, 32
	s_cselect_b32 s48, s30, 0x7110000
	s_cselect_b32 s51, s60, s23
	s_cselect_b32 s49, s45, s18
	s_barrier_wait -1
	s_wait_tensorcnt 0xa
	tensor_load_to_lds s[56:59], s[48:55]
	.loc	1 61 7                          ; -:61:7
	s_wait_tensorcnt 0x1
	s_barrier_signal -1
	.loc	1 63 13                         ; -:63:13
	s_and_b32 s18, s46, 0x2000
	.loc	1 48 12                         ; -:48:12
	s_add_co_i32 s9, s9, 1
	.loc	1 63 13                         ; -:63:13
	s_lshl1_add_u32 s23, s18, 0
	s_lshr_b32 s18, s18, 2
	.loc	1 48 12                         ; -:48:12
	s_sub_co_i32 s10, s10, 64
	.loc	1 63 13                         ; -:63:13
	s_add_co_i32 s23, s23, s18
	.loc	1 48 12                         ; -:48:12
	s_sub_co_i32 s11, s11, 64
	.loc	1 65 13                         ; -:65:13
	v_nop
	v_nop
	v_add_nc_u32_e32 v70, s23, v1
	.loc	1 66 13                         ; -:66:13
	s_add_co_i32 s18, s8, s23
	.loc	1 48 12                         ; -:48:12
	s_add_co_i32 s0, s0, 64
	.loc	1 66 13                         ; -:66:13
	s_wait_alu depctr_vm_vsrc(4)
	v_add3_u32 v110, s18, v66, v69
	.loc	1 48 12                         ; -:48:12
	s_add_co_i32 s18, s6, s9
	.loc	1 65 13                         ; -:65:13
	s_wait_alu depctr_vm_vsrc(0)
	v_add3_u32 v111, v70, v67, v68
	.loc	1 48 12                         ; -:48:12
	s_cmp_lg_u32 s18, 1
	s_mov_b32 s46, s38
	.loc	1 61 7                          ; -:61:7
	s_barrier_wait -1
	.loc	1 65 13                         ; -:65:13
	s_wait_alu depctr_va_vdst(0)
	ds_load_b128 v[70:73], v111
	ds_load_b128 v[74:77], v111 offset:32
	.loc	1 66 13                         ; -:66:13
	ds_load_tr16_b128 v[82:85], v110 offset:41456
	ds_load_tr16_b128 v[78:81], v110 offset:36848
	ds_load_tr16_b128 v[86:89], v110 offset:36912
	ds_load_tr16_b128 v[90:93], v110 offset:41520
	ds_load_tr16_b128 v[94:97], v110 offset:36976
	ds_load_tr16_b128 v[98:101], v110 offset:41584
	ds_load_tr16_b128 v[102:105], v110 offset:37040
	ds_load_tr16_b128 v[106:109], v110 offset:41648
	.loc	1 67 16                         ; -:67:16
	s_wait_dscnt 0x6
	v_wmma_f32_16x16x32_f16 v[58:65], v[78:85], v[70:77], v[58:65]
	s_wait_dscnt 0x4
	v_wmma_f32_16x16x32_f16 v[50:57], v[86:93], v[70:77], v[50:57]
	s_wait_dscnt 0x2
	v_wmma_f32_16x16x32_f16 v[42:49], v[94:101], v[70:77], v[42:49]
	s_wait_dscnt 0x0
	v_wmma_f32_16x16x32_f16 v[34:41], v[102:109], v[70:77], v[34:41]
	.loc	1 65 13                         ; -:65:13
	s_wait_alu depctr_va_vdst(0)
	ds_load_b128 v[70:73], v111 offset:9216
	ds_load_b128 v[74:77], v111 offset:9248
	.loc	1 67 16                         ; -:67:16
	s_wait_dscnt 0x0
	v_wmma_f32_16x16x32_f16 v[2:9], v[102:109], v[70:77], v[2:9]
	v_wmma_f32_16x16x32_f16 v[10:17], v[94:101], v[70:77], v[10:17]
	v_wmma_f32_16x16x32_f16 v[18:25], v[86:93], v[70:77], v[18:25]
	.loc	1 66 13                         ; -:66:13
	s_wait_alu depctr_va_vdst(0)
	ds_load_tr16_b128 v[86:89], v110 offset:46064
	ds_load_tr16_b128 v[94:97], v110 offset:46128
	ds_load_tr16_b128 v[90:93], v110 offset:50672
	ds_load_tr16_b128 v[98:101], v110 offset:50736
	.loc	1 67 16                         ; -:67:16
	v_wmma_f32_16x16x32_f16 v[26:33], v[78:85], v[70:77], v[26:33]
	.loc	1 66 13                         ; -:66:13
	s_wait_alu depctr_va_vdst(0)
	ds_load_tr16_b128 v[70:73], v110 offset:46192
	ds_load_tr16_b128 v[78:81], v110 offset:46256
	ds_load_tr16_b128 v[74:77], v110 offset:50800
	ds_load_tr16_b128 v[82:85], v110 offset:50864
	.loc	1 65 13                         ; -:65:13
	ds_load_b128 v[102:105], v111 offset:64
	ds_load_b128 v[106:109], v111 offset:96
	.loc	1 67 16                         ; -:67:16
	s_wait_dscnt 0x0
	v_wmma_f32_16x16x32_f16 v[50:57], v[94:101], v[102:109], v[50:57]
	v_wmma_f32_16x16x32_f16 v[58:65], v[86:93], v[102:109], v[58:65]
	v_wmma_f32_16x16x32_f16 v[42:49], v[70:77], v[102:109], v[42:49]
	v_wmma_f32_16x16x32_f16 v[34:41], v[78:85], v[102:109], v[34:41]
	.loc	1 65 13                         ; -:65:13
	s_wait_alu depctr_va_vdst(0)
	ds_load_b128 v[102:105], v111 offset:9280
	ds_load_b128 v[106:109], v111 offset:9312
	.loc	1 67 16                         ; -:67:16
	s_wait_dscnt 0x0
	v_wmma_f32_16x16x32_f16 v[26:33], v[86:93], v[102:109], v[26:33]
	v_wmma_f32_16x16x32_f16 v[18:25], v[94:101], v[102:109], v[18:25]
	v_wmma_f32_16x16x32_f16 v[10:17], v[70:77], v[102:109], v[10:17]
	v_wmma_f32_16x16x32_f16 v[2:9], v[78:85], v[102:109], v[2:9]
	.loc	1 48 12                         ; -:48:12
	s_cbranch_scc1 .LBB0_4
; %bb.5:                                ; %Flow
	.loc	1 0 12 is_stmt 0                ; -:0:12
	v_dual_mov_b32 v66, s8 :: v_dual_mov_b32 v67, s5
	v_mov_b32_e32 v69, v1
.LBB0_6:                                ; %._crit_edge
	s_delay_alu instid0(VALU_DEP_2) | instskip(SKIP_2) | instid1(VALU_DEP_1)
	.loc	1 72 5 is_stmt 1                ; -:72:5
	v_dual_lshrrev_b32 v1, 2, v67 :: v_dual_bitop2_b32 v0, 15, v0 bitop3:0x40
	.loc	1 70 5                          ; -:70:5
	s_wait_tensorcnt 0x0
	s_barrier_signal -1
	.loc	1 72 5                          ; -:72:5
	v_and_b32_e32 v1, 48, v1
	s_cmp_gt_i32 s2, -1
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(VALU_DEP_2)
	v_or3_b32 v68, v1, v0, s2
	v_or_b32_e32 v1, v66, v69
	s_wait_kmcnt 0x0
	v_mad_nc_u64_u32 v[70:71], s40, v68, 0
	.loc	1 70 5                          ; -:70:5
	s_barrier_wait -1
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(VALU_DEP_3)
	.loc	1 72 5                          ; -:72:5
	v_mad_u32 v0, s40, s3, v71
	v_lshrrev_b32_e32 v1, 1, v1
	v_cmp_gt_i32_e64 s0, s36, v68
	v_mad_u32 v71, s41, v68, v0
	s_delay_alu instid0(VALU_DEP_3) | instskip(SKIP_1) | instid1(VALU_DEP_2)
	v_dual_mov_b32 v1, 0 :: v_dual_bitop2_b32 v69, s33, v1 bitop3:0x54
	s_cselect_b32 s33, -1, 0
	v_lshl_add_u64 v[66:67], v[70:71], 1, s[34:35]
	s_and_b32 s31, s33, s0
	s_delay_alu instid0(VALU_DEP_2) | instskip(SKIP_1) | instid1(VALU_DEP_2)
	v_lshlrev_b32_e32 v0, 1, v69
	v_cmp_gt_i32_e32 vcc_lo, s37, v69
	v_add_nc_u64_e32 v[66:67], v[66:67], v[0:1]
	s_and_b32 s1, s31, vcc_lo
	.loc	1 71 12                         ; -:71:12
	v_cvt_pk_f16_f32 v1, v58, v59
	.loc	1 72 5                          ; -:72:5
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_8
; %bb.7:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off
.LBB0_8:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v58, 1, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s0, s37, v58
	s_and_b32 s2, s31, s0
	s_and_saveexec_b32 s1, s2
	s_cbranch_execz .LBB0_10
; %bb.9:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:2
.LBB0_10:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s1
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 2, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s1, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v60, v61
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s3, s31, s1
	s_and_saveexec_b32 s2, s3
	s_cbranch_execz .LBB0_12
; %bb.11:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:4
.LBB0_12:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s2
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v58, 3, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s2, s37, v58
	s_and_b32 s4, s31, s2
	s_and_saveexec_b32 s3, s4
	s_cbranch_execz .LBB0_14
; %bb.13:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:6
.LBB0_14:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s3
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 4, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s3, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v62, v63
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s5, s31, s3
	s_and_saveexec_b32 s4, s5
	s_cbranch_execz .LBB0_16
; %bb.15:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:8
.LBB0_16:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s4
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v58, 5, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s4, s37, v58
	s_and_b32 s6, s31, s4
	s_and_saveexec_b32 s5, s6
	s_cbranch_execz .LBB0_18
; %bb.17:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:10
.LBB0_18:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s5
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 6, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s5, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v64, v65
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s7, s31, s5
	s_and_saveexec_b32 s6, s7
	s_cbranch_execz .LBB0_20
; %bb.19:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:12
.LBB0_20:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s6
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v58, 7, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s6, s37, v58
	s_and_b32 s8, s31, s6
	s_and_saveexec_b32 s7, s8
	s_cbranch_execz .LBB0_22
; %bb.21:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:14
.LBB0_22:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s7
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 32, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s7, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v50, v51
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s9, s31, s7
	s_and_saveexec_b32 s8, s9
	s_cbranch_execz .LBB0_24
; %bb.23:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:64
.LBB0_24:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s8
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v50, 33, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s8, s37, v50
	s_and_b32 s10, s31, s8
	s_and_saveexec_b32 s9, s10
	s_cbranch_execz .LBB0_26
; %bb.25:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:66
.LBB0_26:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s9
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 34, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s9, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v52, v53
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s11, s31, s9
	s_and_saveexec_b32 s10, s11
	s_cbranch_execz .LBB0_28
; %bb.27:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:68
.LBB0_28:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s10
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v50, 35, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s10, s37, v50
	s_and_b32 s12, s31, s10
	s_and_saveexec_b32 s11, s12
	s_cbranch_execz .LBB0_30
; %bb.29:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:70
.LBB0_30:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s11
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 36, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s11, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v54, v55
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s13, s31, s11
	s_and_saveexec_b32 s12, s13
	s_cbranch_execz .LBB0_32
; %bb.31:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:72
.LBB0_32:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s12
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v50, 37, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s12, s37, v50
	s_and_b32 s14, s31, s12
	s_and_saveexec_b32 s13, s14
	s_cbranch_execz .LBB0_34
; %bb.33:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:74
.LBB0_34:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s13
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 38, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s13, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v56, v57
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s15, s31, s13
	s_and_saveexec_b32 s14, s15
	s_cbranch_execz .LBB0_36
; %bb.35:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:76
.LBB0_36:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s14
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v50, 39, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s14, s37, v50
	s_and_b32 s16, s31, s14
	s_and_saveexec_b32 s15, s16
	s_cbranch_execz .LBB0_38
; %bb.37:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:78
.LBB0_38:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s15
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 64, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s15, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v42, v43
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s17, s31, s15
	s_and_saveexec_b32 s16, s17
	s_cbranch_execz .LBB0_40
; %bb.39:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:128
.LBB0_40:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s16
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v42, 0x41, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s16, s37, v42
	s_and_b32 s18, s31, s16
	s_and_saveexec_b32 s17, s18
	s_cbranch_execz .LBB0_42
; %bb.41:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:130
.LBB0_42:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s17
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 0x42, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s17, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v44, v45
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s19, s31, s17
	s_and_saveexec_b32 s18, s19
	s_cbranch_execz .LBB0_44
; %bb.43:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:132
.LBB0_44:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s18
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v42, 0x43, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s18, s37, v42
	s_and_b32 s20, s31, s18
	s_and_saveexec_b32 s19, s20
	s_cbranch_execz .LBB0_46
; %bb.45:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:134
.LBB0_46:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s19
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 0x44, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s19, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v46, v47
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s21, s31, s19
	s_and_saveexec_b32 s20, s21
	s_cbranch_execz .LBB0_48
; %bb.47:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:136
.LBB0_48:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s20
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v42, 0x45, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s20, s37, v42
	s_and_b32 s22, s31, s20
	s_and_saveexec_b32 s21, s22
	s_cbranch_execz .LBB0_50
; %bb.49:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:138
.LBB0_50:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s21
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 0x46, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s21, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v48, v49
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s23, s31, s21
	s_and_saveexec_b32 s22, s23
	s_cbranch_execz .LBB0_52
; %bb.51:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:140
.LBB0_52:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s22
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v42, 0x47, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s22, s37, v42
	s_and_b32 s24, s31, s22
	s_and_saveexec_b32 s23, s24
	s_cbranch_execz .LBB0_54
; %bb.53:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:142
.LBB0_54:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s23
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 0x60, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s23, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v34, v35
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s25, s31, s23
	s_and_saveexec_b32 s24, s25
	s_cbranch_execz .LBB0_56
; %bb.55:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:192
.LBB0_56:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s24
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v34, 0x61, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s24, s37, v34
	s_and_b32 s26, s31, s24
	s_and_saveexec_b32 s25, s26
	s_cbranch_execz .LBB0_58
; %bb.57:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:194
.LBB0_58:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s25
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 0x62, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s25, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v36, v37
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s27, s31, s25
	s_and_saveexec_b32 s26, s27
	s_cbranch_execz .LBB0_60
; %bb.59:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:196
.LBB0_60:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s26
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v34, 0x63, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s26, s37, v34
	s_and_b32 s28, s31, s26
	s_and_saveexec_b32 s27, s28
	s_cbranch_execz .LBB0_62
; %bb.61:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:198
.LBB0_62:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s27
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 0x64, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s27, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v38, v39
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s29, s31, s27
	s_and_saveexec_b32 s28, s29
	s_cbranch_execz .LBB0_64
; %bb.63:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:200
.LBB0_64:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s28
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v34, 0x65, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s28, s37, v34
	s_and_b32 s30, s31, s28
	s_and_saveexec_b32 s29, s30
	s_cbranch_execz .LBB0_66
; %bb.65:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:202
.LBB0_66:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s29
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_or_b32_e32 v1, 0x66, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_2) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s29, s37, v1
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v1, v40, v41
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s38, s31, s29
	s_and_saveexec_b32 s30, s38
	s_cbranch_execz .LBB0_68
; %bb.67:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[66:67], v1, off offset:204
.LBB0_68:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s30
	.loc	1 72 5                          ; -:72:5
	v_or_b32_e32 v34, 0x67, v69
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(SALU_CYCLE_1)
	v_cmp_gt_i32_e64 s30, s37, v34
	s_and_b32 s37, s31, s30
	s_and_saveexec_b32 s31, s37
	s_cbranch_execz .LBB0_70
; %bb.69:
	s_wait_alu depctr_va_vdst(2)
	global_store_d16_hi_b16 v[66:67], v1, off offset:206
.LBB0_70:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s31
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_vm_vsrc(0)
	v_dual_ashrrev_i32 v1, 31, v68 :: v_dual_bitop2_b32 v36, 64, v68 bitop3:0x54
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v26, v26, v27
	s_delay_alu instid0(VALU_DEP_2) | instskip(SKIP_1) | instid1(VALU_DEP_2)
	.loc	1 72 5                          ; -:72:5
	v_mad_nc_u64_u32 v[34:35], s40, v36, 0
	v_cmp_gt_i32_e64 s31, s36, v36
	v_mad_u32 v1, s40, v1, v35
	s_and_b32 s31, s33, s31
	s_delay_alu instid0(VALU_DEP_1) | instskip(SKIP_1) | instid1(VALU_DEP_2)
	v_mad_u32 v35, s41, v36, v1
	v_mov_b32_e32 v1, 0
	v_lshl_add_u64 v[34:35], v[34:35], 1, s[34:35]
	s_and_b32 s34, vcc_lo, s31
	s_delay_alu instid0(VALU_DEP_1)
	v_add_nc_u64_e32 v[0:1], v[34:35], v[0:1]
	s_and_saveexec_b32 s33, s34
	s_cbranch_execz .LBB0_72
; %bb.71:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v26, off
.LBB0_72:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s33
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s33, s0, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s33
	s_cbranch_execz .LBB0_74
; %bb.73:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v26, off offset:2
.LBB0_74:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v26, v28, v29
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s1, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_76
; %bb.75:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v26, off offset:4
.LBB0_76:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s2, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_78
; %bb.77:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v26, off offset:6
.LBB0_78:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v26, v30, v31
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s3, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_80
; %bb.79:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v26, off offset:8
.LBB0_80:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s4, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_82
; %bb.81:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v26, off offset:10
.LBB0_82:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v26, v32, v33
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s5, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_84
; %bb.83:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v26, off offset:12
.LBB0_84:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s6, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_86
; %bb.85:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v26, off offset:14
.LBB0_86:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v18, v18, v19
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s7, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_88
; %bb.87:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v18, off offset:64
.LBB0_88:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s8, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_90
; %bb.89:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v18, off offset:66
.LBB0_90:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v18, v20, v21
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s9, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_92
; %bb.91:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v18, off offset:68
.LBB0_92:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s10, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_94
; %bb.93:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v18, off offset:70
.LBB0_94:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v18, v22, v23
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s11, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_96
; %bb.95:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v18, off offset:72
.LBB0_96:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s12, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_98
; %bb.97:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v18, off offset:74
.LBB0_98:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v18, v24, v25
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s13, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_100
; %bb.99:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v18, off offset:76
.LBB0_100:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s14, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_102
; %bb.101:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v18, off offset:78
.LBB0_102:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v10, v10, v11
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s15, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_104
; %bb.103:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v10, off offset:128
.LBB0_104:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s16, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_106
; %bb.105:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v10, off offset:130
.LBB0_106:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v10, v12, v13
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s17, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_108
; %bb.107:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v10, off offset:132
.LBB0_108:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s18, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_110
; %bb.109:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v10, off offset:134
.LBB0_110:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v10, v14, v15
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s19, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_112
; %bb.111:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v10, off offset:136
.LBB0_112:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s20, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_114
; %bb.113:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v10, off offset:138
.LBB0_114:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v10, v16, v17
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s21, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_116
; %bb.115:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v10, off offset:140
.LBB0_116:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s22, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_118
; %bb.117:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v10, off offset:142
.LBB0_118:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	v_cvt_pk_f16_f32 v2, v2, v3
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s23, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_120
; %bb.119:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v2, off offset:192
.LBB0_120:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s24, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_122
; %bb.121:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v2, off offset:194
.LBB0_122:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v2, v4, v5
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s25, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_124
; %bb.123:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v2, off offset:196
.LBB0_124:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s26, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_126
; %bb.125:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v2, off offset:198
.LBB0_126:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v2, v6, v7
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s27, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_128
; %bb.127:
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v2, off offset:200
.LBB0_128:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s28, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execz .LBB0_130
; %bb.129:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v2, off offset:202
.LBB0_130:
	.loc	1 0 5                           ; -:0:5
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 71 12 is_stmt 1               ; -:71:12
	s_wait_alu depctr_vm_vsrc(0)
	v_cvt_pk_f16_f32 v2, v8, v9
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s1, s29, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s0, s1
	s_cbranch_execnz .LBB0_133
; %bb.131:
	.loc	1 0 5 is_stmt 0                 ; -:0:5
	s_or_b32 exec_lo, exec_lo, s0
	.loc	1 72 5                          ; -:72:5
	s_and_b32 s0, s30, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s1, s0
	s_cbranch_execnz .LBB0_134
.LBB0_132:
	.loc	1 73 5 is_stmt 1                ; -:73:5
	s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
	s_endpgm
.LBB0_133:
	.loc	1 72 5                          ; -:72:5
	s_wait_alu depctr_va_vdst(0)
	global_store_b16 v[0:1], v2, off offset:204
	s_wait_xcnt 0x0
	s_or_b32 exec_lo, exec_lo, s0
	s_and_b32 s0, s30, s31
	s_delay_alu instid0(SALU_CYCLE_1)
	s_and_saveexec_b32 s1, s0
	s_cbranch_execz .LBB0_132
.LBB0_134:
	s_wait_alu depctr_va_vdst(0)
	global_store_d16_hi_b16 v[0:1], v2, off offset:206
	.loc	1 73 5                          ; -:73:5
	s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
	s_endpgm
.Ltmp1:
.Lfunc_end0:
	.size	gemm, .Lfunc_end0-gemm
	.cfi_endproc
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel gemm
		.amdhsa_group_segment_fixed_size 0
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 80
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_dispatch_ptr 0
		.amdhsa_user_sgpr_queue_ptr 0
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_dispatch_id 0
		.amdhsa_user_sgpr_kernarg_preload_length 0
		.amdhsa_user_sgpr_kernarg_preload_offset 0
		.amdhsa_user_sgpr_private_segment_size 0
		.amdhsa_wavefront_size32 1
		.amdhsa_uses_dynamic_stack 0
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 1
		.amdhsa_system_sgpr_workgroup_id_z 1
		.amdhsa_system_sgpr_workgroup_info 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 112
		.amdhsa_next_free_sgpr 66
		.amdhsa_named_barrier_count 0
		.amdhsa_reserve_vcc 1
		.amdhsa_reserve_xnack_mask 1
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_round_mode_16_64 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
		.amdhsa_fp16_overflow 0
		.amdhsa_memory_ordered 1
		.amdhsa_forward_progress 1
		.amdhsa_inst_pref_size ((instprefsize(.Lfunc_end0-gemm)<<4)&4080)>>4
		.amdhsa_round_robin_scheduling 0
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
	.set .Lgemm.num_vgpr, 112
	.set .Lgemm.num_agpr, 0
	.set .Lgemm.numbered_sgpr, 66
	.set .Lgemm.num_named_barrier, 0
	.set .Lgemm.private_seg_size, 0
	.set .Lgemm.uses_vcc, 1
	.set .Lgemm.uses_flat_scratch, 0
	.set .Lgemm.has_dyn_sized_stack, 0
	.set .Lgemm.has_recursion, 0
	.set .Lgemm.has_indirect_call, 0
	.section	.AMDGPU.csdata,"",@progbits
; Kernel info:
; codeLenInByte = 5624
; TotalNumSgprs: 68
; NumVgprs: 112
; ScratchSize: 0
; MemoryBound: 0
; FloatMode: 240
; IeeeMode: 1
; LDSByteSize: 0 bytes/workgroup (compile time only)
; SGPRBlocks: 0
; VGPRBlocks: 6
; NumSGPRsForWavesPerEU: 68
; NumVGPRsForWavesPerEU: 112
; NamedBarCnt: 0
; Occupancy: 9
; WaveLimiterHint : 0
; COMPUTE_PGM_RSRC2:SCRATCH_EN: 0
; COMPUTE_PGM_RSRC2:USER_SGPR: 2
; COMPUTE_PGM_RSRC2:TRAP_HANDLER: 0
; COMPUTE_PGM_RSRC2:TGID_X_EN: 1
; COMPUTE_PGM_RSRC2:TGID_Y_EN: 1
; COMPUTE_PGM_RSRC2:TGID_Z_EN: 1
; COMPUTE_PGM_RSRC2:TIDIG_COMP_CNT: 0
	.text
	.p2alignl 7, 3214868480
	.fill 96, 4, 3214868480
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
  - .args:
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
    .group_segment_fixed_size: 0
    .kernarg_segment_align: 8
    .kernarg_segment_size: 80
    .max_flat_workgroup_size: 256
    .name:           gemm
    .private_segment_fixed_size: 0
    .sgpr_count:     68
    .sgpr_spill_count: 0
    .symbol:         gemm.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     112
    .vgpr_spill_count: 0
    .wavefront_size: 32
amdhsa.target:   amdgpu12.50-amd-amdhsa-unknown-gfx1250
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
	.section	.debug_line,"",@progbits
.Lline_table_start0:
