// The decode loop of Q4_K, dotprod tier: kernels/arm/dotprod/matmul_q4_k_q5_k.cpp: one super-block of a group
// of 4 rows an iteration (x1 weights, x0 activations, x11 their end, x9 scratch, v28 the sum), ordered by
// bench/cycles/order_search.py.
fcvtl v0.4s, v21.4h  // tail
fcvtl2 v1.4s, v21.8h  // tail
scvtf v26.4s, v26.4s  // tail
fmul v1.4s, v1.4s, v20.s[0]  // tail
ldr q3, [x1, #32]
movi v31.16b, #0x0f
fmul v0.4s, v0.4s, v20.s[0]  // tail
ldr q23, [x0, #36]
ldr q4, [x1, #48]
add v24.4s, v24.4s, v25.4s  // tail
fmul v1.4s, v1.4s, v26.4s  // tail
ldr q2, [x1, #16]
add x9, x0, #260
ldr q5, [x9]
ushr v9.16b, v4.16b, #2
ushr v7.16b, v2.16b, #2
sli v2.16b, v3.16b, #2
ldr q18, [x1, #96]
ldr q6, [x9, #16]
sli v2.16b, v4.16b, #4
shl v10.16b, v2.16b, #2
ldr q17, [x1, #80]
ushr v10.16b, v10.16b, #2
ldr q4, [x1, #144]
ushll2 v13.8h, v9.16b, #0
scvtf v24.4s, v24.4s  // tail
addp v11.8h, v5.8h, v6.8h
ushll v12.8h, v9.8b, #0
ushll v14.8h, v10.8b, #0
ldr q19, [x1, #112]
smull v26.4s, v12.4h, v11.h[0]
fmul v0.4s, v0.4s, v24.4s  // tail
ldr q16, [x1, #64]
smlal2 v26.4s, v12.8h, v11.h[1]
smlal v26.4s, v13.4h, v11.h[2]
fsub v0.4s, v0.4s, v1.4s  // tail
ushr v8.16b, v3.16b, #2
ushr v2.16b, v17.16b, #4
smlal2 v26.4s, v13.8h, v11.h[3]
and v30.16b, v18.16b, v31.16b
ldr q22, [x0, #4]
smlal v26.4s, v14.4h, v11.h[4]
ushll2 v15.8h, v10.16b, #0
and v27.16b, v16.16b, v31.16b
smlal2 v26.4s, v14.8h, v11.h[5]
ushr v5.16b, v18.16b, #4
ldr q6, [x1, #160]
smlal v26.4s, v15.4h, v11.h[6]
movi d14, #0
ldr q12, [x0, #20]
ushr v3.16b, v16.16b, #4
smlal2 v26.4s, v15.8h, v11.h[7]
fadd v28.4s, v28.4s, v0.4s  // tail
and v29.16b, v17.16b, v31.16b
and v1.16b, v19.16b, v31.16b
ldr q9, [x1, #176]
ushr v10.16b, v19.16b, #4
ldr q13, [x0, #52]
movi d11, #0
movi d15, #0
movi d16, #0
sdot v14.4s, v27.16b, v22.4b[0]
ldr q0, [x1, #128]
sdot v15.4s, v3.16b, v23.4b[0]
sdot v11.4s, v29.16b, v22.4b[1]
sdot v16.4s, v2.16b, v23.4b[1]
sdot v14.4s, v30.16b, v22.4b[2]
sdot v15.4s, v5.16b, v23.4b[2]
sdot v11.4s, v1.16b, v22.4b[3]
sdot v16.4s, v10.16b, v23.4b[3]
ldr q1, [x1, #240]
ushr v29.16b, v0.16b, #4
and v18.16b, v4.16b, v31.16b
ldr q10, [x0, #68]
and v17.16b, v0.16b, v31.16b
and v19.16b, v6.16b, v31.16b
ldr q2, [x1, #208]
ushr v23.16b, v9.16b, #4
and v27.16b, v9.16b, v31.16b
ushr v30.16b, v4.16b, #4
ushr v22.16b, v6.16b, #4
ldr q0, [x0, #100]
sdot v14.4s, v17.16b, v12.4b[0]
sdot v15.4s, v29.16b, v13.4b[0]
sdot v16.4s, v30.16b, v13.4b[1]
sdot v11.4s, v18.16b, v12.4b[1]
sdot v14.4s, v19.16b, v12.4b[2]
sdot v15.4s, v22.16b, v13.4b[2]
ldr q3, [x1, #192]
ushll v4.8h, v7.8b, #0
sdot v11.4s, v27.16b, v12.4b[3]
sdot v16.4s, v23.16b, v13.4b[3]
ldr q5, [x1, #224]
ushll v6.4s, v4.4h, #0
ushll2 v9.4s, v4.8h, #0
ldr q4, [x1, #304]
add v14.4s, v14.4s, v11.4s
ldr q12, [x1, #272]
add v15.4s, v15.4s, v16.4s
and v18.16b, v5.16b, v31.16b
mul v25.4s, v15.4s, v9.4s
mul v24.4s, v14.4s, v6.4s
ldr q6, [x0, #116]
and v17.16b, v3.16b, v31.16b
ushr v27.16b, v2.16b, #4
and v29.16b, v2.16b, v31.16b
and v30.16b, v1.16b, v31.16b
ldr q19, [x1, #256]
ushr v13.16b, v5.16b, #4
ushr v22.16b, v3.16b, #4
ushr v11.16b, v1.16b, #4
ldr q23, [x1, #288]
movi d14, #0
movi d15, #0
movi d9, #0
movi d3, #0
sdot v14.4s, v17.16b, v10.4b[0]
sdot v9.4s, v22.16b, v0.4b[0]
sdot v15.4s, v29.16b, v10.4b[1]
sdot v3.4s, v27.16b, v0.4b[1]
sdot v14.4s, v18.16b, v10.4b[2]
sdot v9.4s, v13.16b, v0.4b[2]
sdot v15.4s, v30.16b, v10.4b[3]
sdot v3.4s, v11.16b, v0.4b[3]
and v2.16b, v19.16b, v31.16b
and v5.16b, v12.16b, v31.16b
ldr q16, [x0, #84]
and v17.16b, v4.16b, v31.16b
ldr q27, [x1, #336]
ldr q0, [x0, #132]
ushr v18.16b, v12.16b, #4
ushr v30.16b, v23.16b, #4
and v1.16b, v23.16b, v31.16b
ushr v11.16b, v4.16b, #4
ushr v29.16b, v19.16b, #4
ldr q19, [x0, #164]
sdot v14.4s, v2.16b, v16.4b[0]
sdot v9.4s, v29.16b, v6.4b[0]
sdot v15.4s, v5.16b, v16.4b[1]
sdot v3.4s, v18.16b, v6.4b[1]
sdot v14.4s, v1.16b, v16.4b[2]
sdot v9.4s, v30.16b, v6.4b[2]
sdot v15.4s, v17.16b, v16.4b[3]
sdot v3.4s, v11.16b, v6.4b[3]
ldr s20, [x0]
ushll2 v12.8h, v7.16b, #0
and v29.16b, v27.16b, v31.16b
ldr q22, [x1, #320]
ushll v23.4s, v12.4h, #0
ldr q10, [x1, #368]
ushll2 v4.4s, v12.8h, #0
add v14.4s, v14.4s, v15.4s
ldr q13, [x1, #352]
add v9.4s, v9.4s, v3.4s
mla v24.4s, v14.4s, v23.4s
mla v25.4s, v9.4s, v4.4s
ushr v16.16b, v27.16b, #4
ushr v6.16b, v13.16b, #4
and v2.16b, v22.16b, v31.16b
and v18.16b, v10.16b, v31.16b
ldr q1, [x1, #384]
ushr v30.16b, v22.16b, #4
ldr q11, [x1, #416]
ldr q7, [x1, #432]
ushr v12.16b, v10.16b, #4
ldr q15, [x0, #148]
ldr q3, [x0, #180]
movi d23, #0
movi d14, #0
movi d9, #0
ldr q17, [x1, #400]
and v5.16b, v13.16b, v31.16b
movi d4, #0
sdot v23.4s, v2.16b, v0.4b[0]
sdot v9.4s, v30.16b, v19.4b[0]
sdot v14.4s, v29.16b, v0.4b[1]
sdot v4.4s, v16.16b, v19.4b[1]
sdot v23.4s, v5.16b, v0.4b[2]
sdot v9.4s, v6.16b, v19.4b[2]
sdot v14.4s, v18.16b, v0.4b[3]
sdot v4.4s, v12.16b, v19.4b[3]
and v22.16b, v1.16b, v31.16b
and v27.16b, v17.16b, v31.16b
and v10.16b, v7.16b, v31.16b
and v13.16b, v11.16b, v31.16b
ldr q2, [x1, #448]
ushr v30.16b, v1.16b, #4
ldr q29, [x1, #464]
ushr v16.16b, v17.16b, #4
ldr q5, [x1, #480]
ushr v6.16b, v11.16b, #4
sdot v23.4s, v22.16b, v15.4b[0]
sdot v9.4s, v30.16b, v3.4b[0]
sdot v14.4s, v27.16b, v15.4b[1]
sdot v4.4s, v16.16b, v3.4b[1]
sdot v23.4s, v13.16b, v15.4b[2]
ldr q19, [x0, #196]
ushll v1.8h, v8.8b, #0
ushr v0.16b, v7.16b, #4
and v22.16b, v29.16b, v31.16b
ldr q18, [x1, #496]
sdot v14.4s, v10.16b, v15.4b[3]
sdot v4.4s, v0.16b, v3.4b[3]
sdot v9.4s, v6.16b, v3.4b[2]
ldr q16, [x1, #512]
add v23.4s, v23.4s, v14.4s
ushll v17.4s, v1.4h, #0
ushll2 v11.4s, v1.8h, #0
ldr q12, [x0, #228]
ushr v1.16b, v18.16b, #4
add v9.4s, v9.4s, v4.4s
and v30.16b, v5.16b, v31.16b
ldr q14, [x0, #212]
mla v24.4s, v23.4s, v17.4s
mla v25.4s, v9.4s, v11.4s
ldr q4, [x0, #244]
movi d9, #0
ldr q3, [x1, #560]
ushr v13.16b, v2.16b, #4
ldr q6, [x1, #528]
ushr v0.16b, v5.16b, #4
ushr v15.16b, v29.16b, #4
and v7.16b, v2.16b, v31.16b
movi d23, #0
ldr q10, [x1, #544]
movi d17, #0
sdot v9.4s, v13.16b, v12.4b[0]
sdot v23.4s, v7.16b, v19.4b[0]
movi d11, #0
sdot v17.4s, v22.16b, v19.4b[1]
ushr v13.16b, v6.16b, #4
and v27.16b, v18.16b, v31.16b
ushr v7.16b, v16.16b, #4
sdot v11.4s, v15.16b, v12.4b[1]
sdot v23.4s, v30.16b, v19.4b[2]
sdot v9.4s, v0.16b, v12.4b[2]
add x0, x0, #292
sdot v17.4s, v27.16b, v19.4b[3]
sdot v11.4s, v1.16b, v12.4b[3]
and v2.16b, v16.16b, v31.16b
and v5.16b, v10.16b, v31.16b
and v18.16b, v3.16b, v31.16b
ushll2 v30.8h, v8.16b, #0
and v29.16b, v6.16b, v31.16b
ushr v15.16b, v3.16b, #4
ushll2 v27.4s, v30.8h, #0
ushr v22.16b, v10.16b, #4
sdot v23.4s, v2.16b, v14.4b[0]
sdot v9.4s, v7.16b, v4.4b[0]
sdot v17.4s, v29.16b, v14.4b[1]
sdot v11.4s, v13.16b, v4.4b[1]
sdot v23.4s, v5.16b, v14.4b[2]
sdot v9.4s, v22.16b, v4.4b[2]
sdot v17.4s, v18.16b, v14.4b[3]
sdot v11.4s, v15.16b, v4.4b[3]
ushll v0.4s, v30.4h, #0
add v23.4s, v23.4s, v17.4s
add v9.4s, v9.4s, v11.4s
ldr q21, [x1]
mla v24.4s, v23.4s, v0.4s
mla v25.4s, v9.4s, v27.4s
add x1, x1, #576
cmp x0, x11
b.ne #-4
