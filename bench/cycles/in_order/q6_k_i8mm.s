// The decode loop of Q6_K, i8mm tier: kernels/arm/i8mm/matmul_q6_k.cpp: one super-block of one tile of 4
// rows an iteration (x1 weights from the tile's super-block + 8, x0 activations, x11 their end, x9 scratch,
// v28 the sum). From GCC's compiled loop of row_block (its pointers renamed, the float work of a super-block
// moved to the next iteration as its tail), ordered by bench/cycles/order_search.py --schedule 5 --steps 0
// --cpu cortex-a510.
movi v3.16b, #0xfc
ld2 {v20.4s - v21.4s}, [x1]
movi v4.4s, #0
movi v5.4s, #0
ldp q6, q7, [x1, #64]
fcvtl v8.4s, v2.4h  // tail
ldp q9, q10, [x1, #96]
scvtf v11.4s, v0.4s  // tail
ldp q12, q13, [x0, #48]
and v14.16b, v6.16b, v3.16b
ldp q15, q16, [x1, #160]
and v17.16b, v10.16b, v3.16b
ldp q18, q19, [x1, #192]
ext v22.16b, v20.16b, v21.16b, #4
fmul v23.4s, v8.4s, v1.4s  // tail
smmla v4.4s, v12.16b, v14.16b
smmla v5.4s, v12.16b, v17.16b
and v24.16b, v15.16b, v3.16b
and v25.16b, v19.16b, v3.16b
ssubl v26.8h, v20.8b, v22.8b
ssubl2 v27.8h, v20.16b, v22.16b
fmla v28.4s, v11.4s, v23.4s  // tail
ldp q29, q30, [x1, #128]
and v31.16b, v7.16b, v3.16b
smmla v4.4s, v13.16b, v24.16b
smmla v5.4s, v13.16b, v25.16b
ldp q2, q1, [x0, #112]
and v0.16b, v16.16b, v3.16b
and v8.16b, v29.16b, v3.16b
ldp q14, q12, [x1, #224]
sxtl v17.4s, v26.4h
sxtl2 v20.4s, v26.8h
zip1 v22.2d, v4.2d, v5.2d
smmla v4.4s, v2.16b, v31.16b
smmla v5.4s, v2.16b, v8.16b
and v11.16b, v14.16b, v3.16b
and v23.16b, v30.16b, v3.16b
and v24.16b, v9.16b, v3.16b
ldp q13, q25, [x0, #176]
smmla v4.4s, v1.16b, v0.16b
mul v0.4s, v22.4s, v17.4s
smmla v5.4s, v1.16b, v11.16b
shl v26.16b, v30.16b, #2
shl v31.16b, v9.16b, #2
and v2.16b, v18.16b, v3.16b
and v8.16b, v12.16b, v3.16b
shl v17.16b, v18.16b, #2
shl v22.16b, v12.16b, #2
zip1 v1.2d, v4.2d, v5.2d
smmla v4.4s, v13.16b, v24.16b
smmla v5.4s, v13.16b, v23.16b
sli v26.16b, v29.16b, #4
sli v31.16b, v7.16b, #4
sli v17.16b, v16.16b, #4
sli v22.16b, v14.16b, #4
smmla v4.4s, v25.16b, v2.16b
mla v0.4s, v1.4s, v20.4s
smmla v5.4s, v25.16b, v8.16b
sli v26.16b, v10.16b, #6
sli v31.16b, v6.16b, #6
sli v17.16b, v15.16b, #6
ldp q11, q30, [x0, #240]
sli v22.16b, v19.16b, #6
ldp q9, q18, [x1, #256]
sxtl v12.4s, v27.4h
zip1 v24.2d, v4.2d, v5.2d
smmla v4.4s, v11.16b, v31.16b
smmla v5.4s, v11.16b, v26.16b
ldp q13, q23, [x1, #288]
and v29.16b, v9.16b, v3.16b
ldp q7, q16, [x0, #80]
sxtl2 v14.4s, v27.8h
ldp q2, q1, [x1, #352]
mla v0.4s, v24.4s, v12.4s
smmla v4.4s, v30.16b, v17.16b
smmla v5.4s, v30.16b, v22.16b
and v20.16b, v23.16b, v3.16b
ldp q8, q25, [x1, #384]
and v10.16b, v2.16b, v3.16b
and v6.16b, v18.16b, v3.16b
ldp q15, q19, [x0, #144]
and v31.16b, v1.16b, v3.16b
zip1 v11.2d, v4.2d, v5.2d
smmla v4.4s, v7.16b, v29.16b
smmla v5.4s, v7.16b, v20.16b
movi v26.4s, #0
and v27.16b, v25.16b, v3.16b
ldp q12, q24, [x1, #320]
ldp q17, q22, [x1, #416]
and v30.16b, v13.16b, v3.16b
smmla v4.4s, v16.16b, v10.16b
mla v0.4s, v11.4s, v14.4s
smmla v5.4s, v16.16b, v27.16b
and v29.16b, v12.16b, v3.16b
and v7.16b, v17.16b, v3.16b
shl v20.16b, v22.16b, #2
ldp q10, q11, [x0, #208]
and v14.16b, v24.16b, v3.16b
zip1 v16.2d, v4.2d, v5.2d
smmla v4.4s, v15.16b, v6.16b
smmla v5.4s, v15.16b, v29.16b
sli v20.16b, v17.16b, #4
shl v27.16b, v24.16b, #2
smmla v4.4s, v19.16b, v31.16b
smmla v5.4s, v19.16b, v7.16b
sli v20.16b, v25.16b, #6
sli v27.16b, v12.16b, #4
ldp q15, q29, [x0, #272]
add x9, x1, #32
zip1 v17.2d, v4.2d, v5.2d
smmla v4.4s, v10.16b, v30.16b
ld2 {v6.4s - v7.4s}, [x9]
smmla v5.4s, v10.16b, v14.16b
sli v27.16b, v23.16b, #6
shl v24.16b, v13.16b, #2
and v31.16b, v22.16b, v3.16b
shl v19.16b, v8.16b, #2
ext v25.16b, v21.16b, v6.16b, #4
sli v24.16b, v18.16b, #4
smmla v5.4s, v11.16b, v31.16b
sli v19.16b, v1.16b, #4
ldp q12, q30, [x1, #480]
ext v10.16b, v6.16b, v7.16b, #4
ssubl v14.8h, v21.8b, v25.8b
ssubl2 v23.8h, v21.16b, v25.16b
and v13.16b, v8.16b, v3.16b
sli v24.16b, v9.16b, #6
sli v19.16b, v2.16b, #6
sxtl v22.4s, v14.4h
sxtl2 v18.4s, v14.8h
smmla v4.4s, v11.16b, v13.16b
ldp q31, q1, [x1, #448]
sxtl v21.4s, v23.4h
mla v0.4s, v16.4s, v22.4s
ldp q25, q8, [x0, #304]
sxtl2 v9.4s, v23.8h
zip1 v2.2d, v4.2d, v5.2d
smmla v5.4s, v15.16b, v27.16b
smmla v4.4s, v15.16b, v24.16b
mla v0.4s, v17.4s, v18.4s
and v14.16b, v31.16b, v3.16b
and v11.16b, v30.16b, v3.16b
smmla v5.4s, v29.16b, v20.16b
smmla v4.4s, v29.16b, v19.16b
ldp q13, q16, [x1, #544]
mla v0.4s, v2.4s, v21.4s
ldp q22, q23, [x1, #576]
ssubl v27.8h, v6.8b, v10.8b
ssubl2 v15.8h, v6.16b, v10.16b
ldp q24, q17, [x1, #512]
zip1 v18.2d, v4.2d, v5.2d
smmla v4.4s, v25.16b, v14.16b
smmla v5.4s, v25.16b, v11.16b
ext v20.16b, v7.16b, v26.16b, #4
and v19.16b, v13.16b, v3.16b
and v29.16b, v23.16b, v3.16b
and v2.16b, v1.16b, v3.16b
and v21.16b, v24.16b, v3.16b
mla v0.4s, v18.4s, v9.4s
smmla v4.4s, v8.16b, v19.16b
smmla v5.4s, v8.16b, v29.16b
ldp q6, q10, [x0, #368]
sxtl v14.4s, v27.4h
ldp q11, q25, [x1, #608]
and v26.16b, v16.16b, v3.16b
sxtl2 v9.4s, v27.8h
shl v18.16b, v12.16b, #2
zip1 v19.2d, v4.2d, v5.2d
smmla v4.4s, v6.16b, v2.16b
smmla v5.4s, v6.16b, v21.16b
and v8.16b, v11.16b, v3.16b
and v29.16b, v17.16b, v3.16b
sli v18.16b, v1.16b, #4
smmla v4.4s, v10.16b, v26.16b
mla v0.4s, v19.4s, v14.4s
smmla v5.4s, v10.16b, v8.16b
and v27.16b, v12.16b, v3.16b
ldp q2, q6, [x0, #432]
shl v21.16b, v17.16b, #2
and v1.16b, v22.16b, v3.16b
and v26.16b, v25.16b, v3.16b
shl v14.16b, v22.16b, #2
zip1 v19.2d, v4.2d, v5.2d
smmla v4.4s, v2.16b, v27.16b
smmla v5.4s, v2.16b, v29.16b
sli v21.16b, v24.16b, #4
shl v8.16b, v25.16b, #2
sli v18.16b, v31.16b, #6
sli v14.16b, v16.16b, #4
smmla v4.4s, v6.16b, v1.16b
mla v0.4s, v19.4s, v9.4s
smmla v5.4s, v6.16b, v26.16b
sli v8.16b, v11.16b, #4
sli v21.16b, v30.16b, #6
ldp q10, q12, [x0, #496]
sli v14.16b, v13.16b, #6
ldp q17, q22, [x1, #672]
sxtl v27.4s, v15.4h
zip1 v2.2d, v4.2d, v5.2d
sli v8.16b, v23.16b, #6
smmla v4.4s, v10.16b, v18.16b
smmla v5.4s, v10.16b, v21.16b
ldp q29, q24, [x1, #640]
and v25.16b, v22.16b, v3.16b
ldp q31, q16, [x0, #336]
ssubl2 v1.8h, v7.16b, v20.16b
ldp q9, q19, [x1, #736]
ssubl v6.8h, v7.8b, v20.8b
smmla v4.4s, v12.16b, v14.16b
smmla v5.4s, v12.16b, v8.16b
and v26.16b, v29.16b, v3.16b
ldp q11, q30, [x1, #768]
and v13.16b, v9.16b, v3.16b
mla v0.4s, v2.4s, v27.4s
ldp q23, q18, [x1, #704]
sxtl2 v10.4s, v15.8h
zip1 v21.2d, v4.2d, v5.2d
smmla v4.4s, v31.16b, v26.16b
smmla v5.4s, v31.16b, v25.16b
and v7.16b, v30.16b, v3.16b
and v20.16b, v24.16b, v3.16b
ldp q14, q8, [x0, #400]
and v12.16b, v23.16b, v3.16b
smmla v4.4s, v16.16b, v13.16b
mla v0.4s, v21.4s, v10.4s
smmla v5.4s, v16.16b, v7.16b
ldp q2, q27, [x1, #800]
and v15.16b, v19.16b, v3.16b
sxtl v26.4s, v6.4h
sxtl2 v25.4s, v6.8h
and v31.16b, v17.16b, v3.16b
shl v13.16b, v17.16b, #2
zip1 v10.2d, v4.2d, v5.2d
smmla v4.4s, v14.16b, v20.16b
smmla v5.4s, v14.16b, v12.16b
and v21.16b, v2.16b, v3.16b
ldp q7, q16, [x0, #464]
and v6.16b, v18.16b, v3.16b
shl v17.16b, v18.16b, #2
smmla v4.4s, v8.16b, v15.16b
mla v0.4s, v10.4s, v26.4s
smmla v5.4s, v8.16b, v21.16b
sli v13.16b, v24.16b, #4
and v20.16b, v11.16b, v3.16b
and v12.16b, v27.16b, v3.16b
sli v17.16b, v23.16b, #4
shl v14.16b, v11.16b, #2
shl v18.16b, v27.16b, #2
zip1 v15.2d, v4.2d, v5.2d
smmla v4.4s, v7.16b, v31.16b
smmla v5.4s, v7.16b, v6.16b
sli v13.16b, v29.16b, #6
sli v14.16b, v19.16b, #4
sli v18.16b, v2.16b, #4
sli v17.16b, v22.16b, #6
smmla v4.4s, v16.16b, v20.16b
mla v0.4s, v15.4s, v25.4s
smmla v5.4s, v16.16b, v12.16b
ldp q10, q26, [x0, #528]
sli v14.16b, v9.16b, #6
sli v18.16b, v30.16b, #6
sxtl v8.4s, v1.4h
sxtl2 v21.4s, v1.8h
ld1r {v1.4s}, [x0]
zip1 v24.2d, v4.2d, v5.2d
smmla v4.4s, v10.16b, v13.16b
smmla v5.4s, v10.16b, v17.16b
ldr d2, [x1, #-8]
smmla v4.4s, v26.16b, v14.16b
mla v0.4s, v24.4s, v8.4s
smmla v5.4s, v26.16b, v18.16b
add x0, x0, #624
add x1, x1, #840
zip1 v3.2d, v4.2d, v5.2d
cmp x0, x11
mla v0.4s, v3.4s, v21.4s
b.ne #-4
