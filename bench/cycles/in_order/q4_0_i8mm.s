// The decode loop of Q4_0, i8mm tier: kernels/arm/i8mm/matmul_q4_0.cpp: two blocks of one tile of 4 rows an
// iteration (x1 weights, x0 activations, x11 their end, v28 the sum), ordered by bench/cycles/order_search.py
// --cpu cortex-a510.
ldr q0, [x1, #8]
ldr q2, [x1, #40]
ldr q4, [x0, #16]
ldr q5, [x0, #32]
ldr q30, [x1, #96]
movi v31.16b, #0xf0
movi d26, #0
fcvtl v22.4s, v22.4h  // tail
shl v12.16b, v0.16b, #4
shl v16.16b, v2.16b, #4
ldr q1, [x1, #24]
ldr q3, [x1, #56]
ldr q6, [x0, #48]
and v17.16b, v2.16b, v31.16b
ext v8.16b, v4.16b, v4.16b, #8
and v15.16b, v1.16b, v31.16b
smmla v26.4s, v4.16b, v12.16b
shl v14.16b, v1.16b, #4
movi d27, #0
fmul v22.4s, v22.4s, v24.s[0]  // tail
fcvtl v23.4s, v23.4h  // tail
shl v18.16b, v3.16b, #4
scvtf v20.4s, v20.4s  // tail
ext v10.16b, v6.16b, v6.16b, #8
ext v9.16b, v5.16b, v5.16b, #8
smmla v26.4s, v8.16b, v16.16b
smmla v27.4s, v5.16b, v14.16b
and v13.16b, v0.16b, v31.16b
and v19.16b, v3.16b, v31.16b
ldr q7, [x0, #64]
fmla v28.4s, v20.4s, v22.4s  // tail
ldr q29, [x1, #80]
ldr q3, [x0, #112]
ldr q2, [x0, #96]
smmla v27.4s, v9.16b, v18.16b
smmla v26.4s, v6.16b, v13.16b
ldr q12, [x0, #144]
ldr q4, [x0, #128]
ldr q1, [x1, #128]
ext v11.16b, v7.16b, v7.16b, #8
fmul v23.4s, v23.4s, v25.s[0]  // tail
smmla v26.4s, v10.16b, v17.16b
smmla v27.4s, v7.16b, v15.16b
shl v7.16b, v1.16b, #4
shl v5.16b, v30.16b, #4
ldr s25, [x0, #80]
and v14.16b, v30.16b, v31.16b
shl v10.16b, v29.16b, #4
ldr q0, [x1, #112]
ext v13.16b, v12.16b, v12.16b, #8
scvtf v21.4s, v21.4s  // tail
smmla v27.4s, v11.16b, v19.16b
movi d19, #0
movi d11, #0
ext v16.16b, v3.16b, v3.16b, #8
ext v6.16b, v4.16b, v4.16b, #8
shl v9.16b, v0.16b, #4
fmla v28.4s, v21.4s, v23.4s  // tail
ldr s24, [x0, #0]
smmla v19.4s, v2.16b, v10.16b
smmla v11.4s, v3.16b, v5.16b
ext v8.16b, v2.16b, v2.16b, #8
ldr d23, [x1, #72]
and v17.16b, v29.16b, v31.16b
add x0, x0, #160
smmla v19.4s, v8.16b, v9.16b
smmla v11.4s, v16.16b, v7.16b
ldr d22, [x1, #0]
and v18.16b, v0.16b, v31.16b
add v20.4s, v26.4s, v27.4s
and v15.16b, v1.16b, v31.16b
smmla v11.4s, v12.16b, v14.16b
smmla v19.4s, v4.16b, v17.16b
add x1, x1, #144
smmla v19.4s, v6.16b, v18.16b
smmla v11.4s, v13.16b, v15.16b
cmp x0, x11
add v21.4s, v19.4s, v11.4s
b.ne #-4
