// The decode loop of Q4_K, i8mm tier: kernels/arm/i8mm/matmul_q4_k_q5_k.cpp: one super-block of one tile of 4
// rows an iteration (x1 weights, x0 activations, x11 their end, v28 the sum). From GCC's compiled loop of
// row_block<false> (its pointers renamed, its copies folded, the float work of a super-block moved to the
// next iteration as its tail), ordered by bench/cycles/order_search.py --schedule 5 --steps 0 --cpu cortex-a510.
scvtf v4.4s, v0.4s  // tail
fcvtl v5.4s, v2.4h  // tail
movi v6.16b, #0x0f
movi v7.4s, #0
ldp q8, q9, [x1, #64]
scvtf v10.4s, v3.4s  // tail
fcvtl2 v11.4s, v2.8h  // tail
movi v12.16b, #0x3f
fmul v13.4s, v4.4s, v5.4s  // tail
movi v14.4s, #0
and v15.16b, v8.16b, v6.16b
ldp q16, q17, [x0, #48]
ldp q18, q19, [x1, #128]
and v20.16b, v9.16b, v6.16b
ldp q21, q22, [x1, #16]
movi v23.4s, #0
smmla v7.4s, v16.16b, v15.16b
fmls v13.4s, v10.4s, v11.4s  // tail
movi v24.4s, #0
and v25.16b, v18.16b, v6.16b
ushr v26.16b, v8.16b, #4
ldr q27, [x1, #48]
ushr v29.16b, v21.16b, #6
and v30.16b, v21.16b, v12.16b
ldp q31, q0, [x0, #112]
ushr v3.16b, v18.16b, #4
ushr v4.16b, v27.16b, #4
smmla v14.4s, v16.16b, v25.16b
fmla v28.4s, v13.4s, v1.4s  // tail
smmla v7.4s, v17.16b, v20.16b
sli v27.16b, v29.16b, #4
and v2.16b, v19.16b, v6.16b
ushr v5.16b, v22.16b, #6
ldp q15, q10, [x1, #96]
smmla v23.4s, v31.16b, v26.16b
ldp q11, q8, [x1, #160]
smmla v24.4s, v31.16b, v3.16b
smmla v14.4s, v17.16b, v2.16b
sli v4.16b, v5.16b, #4
ushr v21.16b, v19.16b, #4
ushr v18.16b, v9.16b, #4
ushr v16.4s, v30.4s, #8
ldp q25, q1, [x0, #80]
and v13.16b, v15.16b, v6.16b
and v20.16b, v11.16b, v6.16b
smmla v24.4s, v0.16b, v21.16b
smmla v23.4s, v0.16b, v18.16b
sli v16.4s, v27.4s, #24
smmla v7.4s, v25.16b, v13.16b
smmla v14.4s, v25.16b, v20.16b
ushr v29.16b, v15.16b, #4
ldp q26, q3, [x0, #144]
ushr v31.16b, v11.16b, #4
and v2.16b, v10.16b, v6.16b
and v17.16b, v8.16b, v6.16b
sub v5.16b, v30.16b, v16.16b
smmla v23.4s, v26.16b, v29.16b
smmla v24.4s, v26.16b, v31.16b
smmla v7.4s, v1.16b, v2.16b
smmla v14.4s, v1.16b, v17.16b
ushr v19.16b, v10.16b, #4
ushr v9.16b, v8.16b, #4
ldp q21, q18, [x1, #192]
shl v0.4s, v5.4s, #24
ldp q13, q20, [x1, #256]
shl v25.4s, v5.4s, #16
smmla v24.4s, v3.16b, v9.16b
smmla v23.4s, v3.16b, v19.16b
zip1 v15.2d, v7.2d, v14.2d
and v11.16b, v21.16b, v6.16b
ldp q16, q30, [x0, #176]
and v29.16b, v13.16b, v6.16b
sshr v26.4s, v0.4s, #24
and v31.16b, v22.16b, v12.16b
zip1 v2.2d, v23.2d, v24.2d
smmla v7.4s, v16.16b, v11.16b
smmla v14.4s, v16.16b, v29.16b
mul v0.4s, v26.4s, v15.4s
and v1.16b, v18.16b, v6.16b
and v17.16b, v20.16b, v6.16b
sshr v10.4s, v25.4s, #24
ldp q8, q9, [x1, #224]
ldp q3, q19, [x1, #288]
add v12.4s, v2.4s, v15.4s
ushr v22.16b, v21.16b, #4
smmla v7.4s, v30.16b, v1.16b
smmla v14.4s, v30.16b, v17.16b
and v11.16b, v8.16b, v6.16b
ldp q16, q29, [x0, #208]
and v26.16b, v3.16b, v6.16b
mla v0.4s, v12.4s, v10.4s
ushr v25.16b, v13.16b, #4
ldp q15, q21, [x0, #240]
smmla v7.4s, v16.16b, v11.16b
smmla v14.4s, v16.16b, v26.16b
and v1.16b, v9.16b, v6.16b
and v17.16b, v19.16b, v6.16b
smmla v23.4s, v15.16b, v22.16b
smmla v24.4s, v15.16b, v25.16b
ushr v30.16b, v18.16b, #4
ushr v10.16b, v20.16b, #4
smmla v7.4s, v29.16b, v1.16b
smmla v14.4s, v29.16b, v17.16b
ushr v12.16b, v8.16b, #4
ushr v13.16b, v3.16b, #4
smmla v23.4s, v21.16b, v30.16b
smmla v24.4s, v21.16b, v10.16b
ldp q11, q16, [x0, #272]
ushr v26.16b, v9.16b, #4
ushr v22.16b, v19.16b, #4
ldp q15, q25, [x1, #384]
ldp q18, q20, [x1, #320]
ushr v1.4s, v27.4s, #8
smmla v23.4s, v11.16b, v12.16b
smmla v24.4s, v11.16b, v13.16b
zip1 v17.2d, v7.2d, v14.2d
shl v29.4s, v5.4s, #8
ldp q8, q3, [x0, #304]
and v30.16b, v15.16b, v6.16b
and v10.16b, v18.16b, v6.16b
sub v21.16b, v27.16b, v1.16b
sshr v9.4s, v5.4s, #24
smmla v23.4s, v16.16b, v26.16b
smmla v24.4s, v16.16b, v22.16b
sshr v19.4s, v29.4s, #24
smmla v14.4s, v8.16b, v30.16b
smmla v7.4s, v8.16b, v10.16b
add v12.4s, v2.4s, v17.4s
and v11.16b, v25.16b, v6.16b
ushr v13.16b, v18.16b, #4
ushr v1.16b, v15.16b, #4
zip1 v27.2d, v23.2d, v24.2d
and v5.16b, v20.16b, v6.16b
ldp q26, q16, [x1, #416]
mla v0.4s, v12.4s, v19.4s
smmla v14.4s, v3.16b, v11.16b
ldp q22, q29, [x0, #368]
ushr v30.16b, v20.16b, #4
ldp q8, q10, [x1, #352]
smmla v7.4s, v3.16b, v5.16b
and v2.16b, v26.16b, v6.16b
ldp q18, q15, [x0, #336]
smmla v24.4s, v22.16b, v1.16b
smmla v23.4s, v22.16b, v13.16b
and v12.16b, v8.16b, v6.16b
add v19.4s, v27.4s, v17.4s
ushr v11.16b, v25.16b, #4
smmla v14.4s, v18.16b, v2.16b
and v20.16b, v10.16b, v6.16b
and v3.16b, v16.16b, v6.16b
smmla v7.4s, v18.16b, v12.16b
smmla v23.4s, v29.16b, v30.16b
smmla v24.4s, v29.16b, v11.16b
mla v0.4s, v19.4s, v9.4s
ushr v5.16b, v26.16b, #4
ushr v1.16b, v8.16b, #4
ldp q13, q22, [x0, #400]
smmla v14.4s, v15.16b, v3.16b
smmla v7.4s, v15.16b, v20.16b
ushr v17.16b, v10.16b, #4
ushr v25.16b, v16.16b, #4
smmla v24.4s, v13.16b, v5.16b
smmla v23.4s, v13.16b, v1.16b
ldp q2, q12, [x1, #448]
shl v18.4s, v21.4s, #24
ldp q30, q11, [x1, #512]
zip1 v29.2d, v7.2d, v14.2d
ldp q9, q19, [x0, #432]
and v26.16b, v2.16b, v6.16b
smmla v24.4s, v22.16b, v25.16b
smmla v23.4s, v22.16b, v17.16b
and v8.16b, v30.16b, v6.16b
and v3.16b, v12.16b, v6.16b
smmla v7.4s, v9.16b, v26.16b
sshr v15.4s, v18.4s, #24
and v20.16b, v11.16b, v6.16b
zip1 v10.2d, v23.2d, v24.2d
smmla v14.4s, v9.16b, v8.16b
ushr v16.16b, v2.16b, #4
add v5.4s, v27.4s, v29.4s
ldp q1, q13, [x1, #480]
smmla v7.4s, v19.16b, v3.16b
ushr v25.16b, v12.16b, #4
ushr v17.16b, v30.16b, #4
add v22.4s, v10.4s, v29.4s
smmla v14.4s, v19.16b, v20.16b
ldp q26, q18, [x1, #544]
and v8.16b, v1.16b, v6.16b
ldp q9, q2, [x0, #464]
shl v27.4s, v21.4s, #16
ldp q3, q12, [x0, #496]
mla v0.4s, v5.4s, v15.4s
and v30.16b, v26.16b, v6.16b
ushr v29.16b, v26.16b, #4
smmla v7.4s, v9.16b, v8.16b
movi v19.4s, #0
sshr v20.4s, v27.4s, #24
smmla v23.4s, v3.16b, v16.16b
smmla v24.4s, v3.16b, v17.16b
smmla v14.4s, v9.16b, v30.16b
ushr v5.16b, v11.16b, #4
ldp q15, q26, [x0, #16]
and v8.16b, v13.16b, v6.16b
and v27.16b, v18.16b, v6.16b
smmla v23.4s, v12.16b, v25.16b
mla v0.4s, v22.4s, v20.4s
smmla v24.4s, v12.16b, v5.16b
zip1 v16.2d, v15.2d, v26.2d
ushr v3.16b, v1.16b, #4
ldp q17, q9, [x0, #528]
smmla v7.4s, v2.16b, v8.16b
smmla v14.4s, v2.16b, v27.16b
ushr v30.16b, v13.16b, #4
ushr v11.16b, v18.16b, #4
ld1r {v1.4s}, [x0]
smmla v23.4s, v17.16b, v3.16b
smmla v24.4s, v17.16b, v29.16b
sdot v19.4s, v31.16b, v16.4b[2]
zip1 v6.2d, v7.2d, v14.2d
shl v25.4s, v21.4s, #8
sshr v20.4s, v21.4s, #24
smmla v23.4s, v9.16b, v30.16b
smmla v24.4s, v9.16b, v11.16b
sdot v19.4s, v4.16b, v16.4b[3]
add v22.4s, v10.4s, v6.4s
sshr v5.4s, v25.4s, #24
ldr q2, [x1]
zip1 v12.2d, v23.2d, v24.2d
shl v3.4s, v19.4s, #7
mla v0.4s, v22.4s, v5.4s
sdot v3.4s, v31.16b, v16.4b[0]
add v15.4s, v12.4s, v6.4s
add x0, x0, #624
add x1, x1, #576
mla v0.4s, v15.4s, v20.4s
sdot v3.4s, v4.16b, v16.4b[1]
cmp x0, x11
b.ne #-4
