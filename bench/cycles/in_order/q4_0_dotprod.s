// The decode loop of Q4_0, dotprod tier: kernels/arm/dotprod/matmul_q4_0.cpp: two blocks an iteration
// (x1 weights, x0 activations, x11 their end, v28 the sum), ordered by bench/cycles/order_search.py.
ldr q6, [x1, #112]
fcvtl v22.4s, v22.4h  // tail
ldr q18, [x0, #48]
fcvtl v23.4s, v23.4h  // tail
ssra v25.4s, v24.4s, #4  // tail
ldr q3, [x1, #56]
ssra v27.4s, v26.4s, #4  // tail
ldr q0, [x1, #8]
ldr q7, [x1, #128]
movi d24, #0
ldr q16, [x0]
fmul v23.4s, v23.4s, v21.s[0]  // tail
ldr q4, [x1, #80]
scvtf v25.4s, v25.4s  // tail
scvtf v27.4s, v27.4s  // tail
fmul v22.4s, v22.4s, v20.s[0]  // tail
ldr q2, [x1, #40]
shl v14.16b, v6.16b, #4
ldr q1, [x1, #24]
shl v12.16b, v4.16b, #4
shl v8.16b, v0.16b, #4
fmul v25.4s, v22.4s, v25.4s  // tail
movi d26, #0
sdot v24.4s, v8.16b, v16.4b[0]
fmul v27.4s, v23.4s, v27.4s  // tail
ldr s20, [x0, #32]
shl v15.16b, v7.16b, #4
ldr q17, [x0, #16]
shl v10.16b, v2.16b, #4
sshr v0.16b, v0.16b, #4
fadd v28.4s, v28.4s, v25.4s  // tail
movi d25, #0
sdot v26.4s, v12.16b, v18.4b[0]
ldr q5, [x1, #96]
shl v9.16b, v1.16b, #4
sshr v4.16b, v4.16b, #4
fadd v28.4s, v28.4s, v27.4s  // tail
ldr q19, [x0, #64]
shl v13.16b, v5.16b, #4
shl v11.16b, v3.16b, #4
sdot v25.4s, v0.16b, v17.4b[0]
movi d27, #0
sdot v26.4s, v13.16b, v18.4b[1]
ldr s21, [x0, #80]
add x0, x0, #96
sshr v6.16b, v6.16b, #4
sshr v2.16b, v2.16b, #4
sshr v1.16b, v1.16b, #4
sshr v5.16b, v5.16b, #4
sdot v27.4s, v4.16b, v19.4b[0]
sdot v24.4s, v9.16b, v16.4b[1]
sdot v25.4s, v1.16b, v17.4b[1]
ldr d23, [x1, #72]
cmp x0, x11
sdot v27.4s, v5.16b, v19.4b[1]
sdot v24.4s, v10.16b, v16.4b[2]
sdot v25.4s, v2.16b, v17.4b[2]
sdot v26.4s, v14.16b, v18.4b[2]
ldr d22, [x1]
add x1, x1, #144
sshr v3.16b, v3.16b, #4
sshr v7.16b, v7.16b, #4
sdot v27.4s, v6.16b, v19.4b[2]
sdot v24.4s, v11.16b, v16.4b[3]
sdot v26.4s, v15.16b, v18.4b[3]
sdot v25.4s, v3.16b, v17.4b[3]
sdot v27.4s, v7.16b, v19.4b[3]
b.ne #-200
