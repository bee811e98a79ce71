// The decode loop of Q6_K, dotprod tier: kernels/arm/dotprod/matmul_q6_k.cpp: one super-block of a group of
// 4 rows an iteration (x1 weights from the super-block's codes, 72 bytes in; x0 activations, x11 their end,
// v28 the sum). From GCC's compiled loop of SuperBlockTile<Q6_K>::compute<1> (its LD1s of three registers
// made single LDRs at offsets from x1, its pointers renamed, the float work of a super-block moved to the
// next iteration as its tail), ordered by bench/cycles/order_search.py --schedule 2 --steps 3000
// --cpu cortex-a55.
ldr q23, [x1, #112]
movi v3.16b, #0xfc
fcvtl v4.4s, v2.4h  // tail
movi v5.4s, #0
ldr q6, [x1, #0]
ldr q18, [x1, #64]
scvtf v7.4s, v0.4s, #2  // tail
ldr q9, [x1, #16]
ldr q19, [x1, #96]
shl v10.16b, v6.16b, #2
ldr q11, [x1, #32]
fmul v12.4s, v1.4s, v4.4s  // tail
sli v10.16b, v9.16b, #4
movi v14.4s, #0
ldr q15, [x0, #20]
ldr q8, [x0, #4]
ldr q13, [x1, #48]
fmul v16.4s, v12.4s, v7.4s  // tail
ldr q17, [x1, #-64]
sli v10.16b, v11.16b, #6
shl v20.16b, v13.16b, #2
and v25.16b, v3.16b, v6.16b
ldr q21, [x1, #80]
sxtl v22.8h, v17.8b
sli v20.16b, v18.16b, #4
sdot v5.4s, v25.16b, v8.4b[0]
sxtl2 v26.8h, v17.16b
shl v27.16b, v19.16b, #2
and v29.16b, v3.16b, v9.16b
ldr q30, [x1, #128]
sli v27.16b, v23.16b, #4
sdot v5.4s, v29.16b, v8.4b[1]
sli v20.16b, v21.16b, #6
sxtl v24.4s, v22.4h
and v0.16b, v3.16b, v11.16b
ldr q2, [x1, #144]
sxtl v1.4s, v26.4h
sdot v5.4s, v0.16b, v8.4b[2]
movi v4.4s, #0
fadd v28.4s, v28.4s, v16.4s  // tail
ldr q7, [x1, #-48]
sdot v5.4s, v10.16b, v8.4b[3]
ldr q12, [x1, #160]
sxtl2 v16.4s, v26.8h
shl v6.16b, v2.16b, #2
and v25.16b, v3.16b, v13.16b
sli v27.16b, v30.16b, #6
sdot v14.4s, v25.16b, v15.4b[0]
mul v0.4s, v5.4s, v24.4s
ldr q31, [x0, #36]
sli v6.16b, v12.16b, #4
ldr q17, [x1, #176]
sxtl2 v9.4s, v22.8h
ldr q29, [x0, #52]
sxtl v11.8h, v7.8b
and v8.16b, v3.16b, v18.16b
and v5.16b, v3.16b, v19.16b
ldr q10, [x1, #192]
sdot v14.4s, v8.16b, v15.4b[1]
ldr q13, [x0, #164]
sxtl2 v25.8h, v7.16b
ldr q24, [x1, #208]
sdot v4.4s, v5.16b, v31.4b[0]
ldr q22, [x0, #68]
and v18.16b, v3.16b, v21.16b
and v8.16b, v3.16b, v23.16b
sdot v14.4s, v18.16b, v15.4b[2]
movi v7.4s, #0
movi v19.4s, #0
movi v26.4s, #0
sdot v14.4s, v20.16b, v15.4b[3]
sdot v4.4s, v8.16b, v31.4b[1]
shl v21.16b, v10.16b, #2
and v23.16b, v3.16b, v30.16b
ldr q18, [x1, #240]
sdot v4.4s, v23.16b, v31.4b[2]
ldr q8, [x1, #256]
sli v21.16b, v24.16b, #4
mla v0.4s, v14.4s, v9.4s
sdot v4.4s, v27.16b, v31.4b[3]
ldr q15, [x1, #272]
and v20.16b, v3.16b, v2.16b
ldr q14, [x1, #288]
sdot v26.4s, v20.16b, v29.4b[0]
mla v0.4s, v4.4s, v1.4s
ldr q30, [x0, #84]
shl v23.16b, v18.16b, #2
and v9.16b, v3.16b, v12.16b
ldr q5, [x1, #224]
sdot v26.4s, v9.16b, v29.4b[1]
sli v23.16b, v8.16b, #4
sli v21.16b, v5.16b, #6
sli v6.16b, v17.16b, #6
sxtl v27.4s, v11.4h
ldr q31, [x1, #-32]
sli v23.16b, v15.16b, #6
sxtl2 v2.4s, v11.8h
and v20.16b, v3.16b, v17.16b
movi v1.4s, #0
sdot v26.4s, v20.16b, v29.4b[2]
and v17.16b, v3.16b, v10.16b
and v4.16b, v3.16b, v18.16b
sdot v1.4s, v4.16b, v30.4b[0]
sdot v26.4s, v6.16b, v29.4b[3]
ldr q11, [x1, #368]
ldr q9, [x1, #304]
sdot v7.4s, v17.16b, v22.4b[0]
mla v0.4s, v26.4s, v16.4s
ldr q20, [x1, #320]
shl v18.16b, v14.16b, #2
and v4.16b, v3.16b, v8.16b
and v6.16b, v3.16b, v24.16b
and v16.16b, v3.16b, v15.16b
ldr q29, [x1, #336]
movi v10.4s, #0
sdot v1.4s, v4.16b, v30.4b[1]
sdot v7.4s, v6.16b, v22.4b[1]
sli v18.16b, v9.16b, #4
ldr q12, [x0, #116]
sxtl v17.4s, v25.4h
and v26.16b, v3.16b, v5.16b
ldr q8, [x0, #100]
sdot v1.4s, v16.16b, v30.4b[2]
sdot v7.4s, v26.16b, v22.4b[2]
sli v18.16b, v20.16b, #6
ldr q24, [x1, #384]
sdot v1.4s, v23.16b, v30.4b[3]
sdot v7.4s, v21.16b, v22.4b[3]
movi v4.4s, #0
ldr q6, [x1, #352]
shl v15.16b, v29.16b, #2
and v5.16b, v3.16b, v14.16b
ldr q16, [x1, #400]
sdot v10.4s, v5.16b, v8.4b[0]
mla v0.4s, v7.4s, v27.4s
sli v15.16b, v6.16b, #4
sxtl2 v26.4s, v25.8h
ldr q23, [x1, #432]
mla v0.4s, v1.4s, v2.4s
sli v15.16b, v11.16b, #6
ldr q30, [x1, #416]
sxtl v21.8h, v31.8b
and v14.16b, v3.16b, v9.16b
shl v5.16b, v24.16b, #2
and v7.16b, v3.16b, v29.16b
ldr q29, [x0, #148]
sdot v4.4s, v7.16b, v12.4b[0]
sdot v10.4s, v14.16b, v8.4b[1]
sli v5.16b, v16.16b, #4
sxtl v27.4s, v21.4h
shl v25.16b, v23.16b, #2
and v1.16b, v3.16b, v20.16b
ldr q22, [x1, #-16]
sdot v10.4s, v1.16b, v8.4b[2]
sli v5.16b, v30.16b, #6
ldr q14, [x1, #448]
sxtl2 v9.4s, v21.8h
sdot v10.4s, v18.16b, v8.4b[3]
movi v7.4s, #0
ldr q2, [x0, #132]
sli v25.16b, v14.16b, #4
mla v0.4s, v10.4s, v17.4s
ldr q20, [x1, #464]
and v1.16b, v3.16b, v6.16b
ldr q21, [x1, #480]
sdot v4.4s, v1.16b, v12.4b[1]
sli v25.16b, v20.16b, #6
and v18.16b, v3.16b, v11.16b
sdot v4.4s, v18.16b, v12.4b[2]
ldr q10, [x1, #496]
and v17.16b, v3.16b, v24.16b
ldr q6, [x1, #512]
sdot v4.4s, v15.16b, v12.4b[3]
sdot v19.4s, v17.16b, v2.4b[0]
shl v1.16b, v21.16b, #2
and v18.16b, v3.16b, v16.16b
ldr q16, [x1, #560]
mla v0.4s, v4.4s, v26.4s
movi v24.4s, #0
sli v1.16b, v10.16b, #4
sdot v19.4s, v18.16b, v2.4b[1]
ldr q12, [x0, #196]
and v15.16b, v3.16b, v23.16b
ldr q4, [x1, #528]
sdot v7.4s, v15.16b, v29.4b[0]
sli v1.16b, v6.16b, #6
and v18.16b, v3.16b, v30.16b
ldr q11, [x0, #212]
sdot v19.4s, v18.16b, v2.4b[2]
and v26.16b, v3.16b, v14.16b
sdot v7.4s, v26.16b, v29.4b[1]
sdot v19.4s, v5.16b, v2.4b[3]
ldr q23, [x1, #544]
ldr q15, [x1, #576]
sxtl2 v30.8h, v31.16b
mla v0.4s, v19.4s, v27.4s
shl v14.16b, v4.16b, #2
and v26.16b, v3.16b, v21.16b
sdot v24.4s, v26.16b, v13.4b[0]
sli v14.16b, v23.16b, #4
sxtl v2.4s, v30.4h
and v5.16b, v3.16b, v20.16b
ldr q18, [x1, #624]
sdot v7.4s, v5.16b, v29.4b[2]
shl v31.16b, v15.16b, #2
and v19.16b, v3.16b, v10.16b
ldr q8, [x0, #180]
sdot v24.4s, v19.16b, v13.4b[1]
sli v14.16b, v16.16b, #6
sdot v7.4s, v25.16b, v29.4b[3]
movi v17.4s, #0
ldr q21, [x1, #592]
sxtl v26.8h, v22.8b
and v20.16b, v3.16b, v4.16b
and v5.16b, v3.16b, v6.16b
and v29.16b, v3.16b, v15.16b
sdot v24.4s, v5.16b, v13.4b[2]
ldr q10, [x1, #608]
movi v27.4s, #0
mla v0.4s, v7.4s, v9.4s
sli v31.16b, v21.16b, #4
sdot v24.4s, v1.16b, v13.4b[3]
sdot v17.4s, v20.16b, v8.4b[0]
sxtl2 v19.8h, v22.16b
and v25.16b, v3.16b, v23.16b
sdot v17.4s, v25.16b, v8.4b[1]
mla v0.4s, v24.4s, v2.4s
ldr q4, [x1, #640]
sxtl2 v6.4s, v30.8h
ldr q20, [x1, #672]
sdot v27.4s, v29.16b, v12.4b[0]
ldr q5, [x0, #228]
shl v7.16b, v18.16b, #2
ldr q9, [x1, #656]
sxtl v1.4s, v26.4h
and v13.16b, v3.16b, v16.16b
and v22.16b, v3.16b, v21.16b
ldr q23, [x1, #720]
sdot v17.4s, v13.16b, v8.4b[2]
sdot v27.4s, v22.16b, v12.4b[1]
movi v15.4s, #0
movi v25.4s, #0
sdot v17.4s, v14.16b, v8.4b[3]
sli v7.16b, v4.16b, #4
ldr q29, [x1, #688]
sxtl2 v24.4s, v26.8h
shl v30.16b, v20.16b, #2
and v2.16b, v3.16b, v10.16b
sdot v27.4s, v2.16b, v12.4b[2]
sli v31.16b, v10.16b, #6
mla v0.4s, v17.4s, v6.4s
ldr q16, [x0, #244]
shl v10.16b, v23.16b, #2
sxtl v21.4s, v19.4h
and v13.16b, v3.16b, v18.16b
sdot v27.4s, v31.16b, v12.4b[3]
sli v7.16b, v9.16b, #6
ldr q8, [x1, #704]
sxtl2 v14.4s, v19.8h
ldr q26, [x1, #736]
mla v0.4s, v27.4s, v1.4s
sli v30.16b, v29.16b, #4
ld1r {v1.4s}, [x0]
sdot v15.4s, v13.16b, v11.4b[0]
ldr q6, [x1, #752]
and v13.16b, v3.16b, v29.16b
and v2.16b, v3.16b, v4.16b
and v17.16b, v3.16b, v20.16b
sdot v15.4s, v2.16b, v11.4b[1]
sdot v25.4s, v17.16b, v5.4b[0]
movi v22.4s, #0
sli v30.16b, v8.16b, #6
and v27.16b, v3.16b, v6.16b
and v19.16b, v3.16b, v26.16b
sli v10.16b, v26.16b, #4
ldr d2, [x1, #-72]
add x0, x0, #292
cmp x0, x11
add x1, x1, #840
and v18.16b, v3.16b, v9.16b
and v12.16b, v3.16b, v23.16b
sdot v15.4s, v18.16b, v11.4b[2]
sdot v25.4s, v13.16b, v5.4b[1]
sdot v22.4s, v12.16b, v16.4b[0]
sli v10.16b, v6.16b, #6
sdot v15.4s, v7.16b, v11.4b[3]
and v31.16b, v3.16b, v8.16b
sdot v25.4s, v31.16b, v5.4b[2]
sdot v22.4s, v19.16b, v16.4b[1]
mla v0.4s, v15.4s, v24.4s
sdot v25.4s, v30.16b, v5.4b[3]
sdot v22.4s, v27.16b, v16.4b[2]
mla v0.4s, v25.4s, v21.4s
sdot v22.4s, v10.16b, v16.4b[3]
mla v0.4s, v22.4s, v14.4s
b.ne #-4
