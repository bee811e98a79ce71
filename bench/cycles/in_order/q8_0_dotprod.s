// The decode loop of Q8_0, dotprod tier: kernels/arm/dotprod/matmul_q8_0.cpp: two blocks an iteration
// (x1 weights, x0 activations, x11 their end, v28 the sum), ordered by bench/cycles/order_search.py.
ldr q18, [x0, #48]
ldr q14, [x1, #240]
fcvtl v22.4s, v22.4h  // tail
ldr q12, [x1, #208]
fcvtl v23.4s, v23.4h  // tail
ldr q5, [x1, #88]
add v25.4s, v25.4s, v24.4s  // tail
ldr q11, [x1, #192]
add v27.4s, v27.4s, v26.4s  // tail
ldr q9, [x1, #160]
ldr q16, [x0]
scvtf v25.4s, v25.4s  // tail
ldr q10, [x1, #176]
fmul v23.4s, v23.4s, v21.s[0]  // tail
ldr q0, [x1, #8]
movi d26, #0
ldr q1, [x1, #24]
fmul v22.4s, v22.4s, v20.s[0]  // tail
ldr q8, [x1, #144]
scvtf v27.4s, v27.4s  // tail
ldr q19, [x0, #64]
ldr s21, [x0, #80]
fmul v25.4s, v22.4s, v25.4s  // tail
ldr q6, [x1, #104]
ldr q17, [x0, #16]
fmul v27.4s, v23.4s, v27.4s  // tail
movi d24, #0
fadd v28.4s, v28.4s, v25.4s  // tail
ldr s20, [x0, #32]
movi d25, #0
ldr q4, [x1, #72]
ldr q3, [x1, #56]
fadd v28.4s, v28.4s, v27.4s  // tail
movi d27, #0
ldr q7, [x1, #120]
sdot v24.4s, v0.16b, v16.4b[0]
ldr q13, [x1, #224]
sdot v25.4s, v4.16b, v17.4b[0]
sdot v26.4s, v8.16b, v18.4b[0]
sdot v27.4s, v12.16b, v19.4b[0]
ldr q15, [x1, #256]
sdot v25.4s, v5.16b, v17.4b[1]
sdot v24.4s, v1.16b, v16.4b[1]
ldr q2, [x1, #40]
add x0, x0, #96
sdot v27.4s, v13.16b, v19.4b[1]
sdot v26.4s, v9.16b, v18.4b[1]
sdot v24.4s, v2.16b, v16.4b[2]
cmp x0, x11
ldr d23, [x1, #136]
sdot v25.4s, v6.16b, v17.4b[2]
sdot v26.4s, v10.16b, v18.4b[2]
sdot v27.4s, v14.16b, v19.4b[2]
ldr d22, [x1]
add x1, x1, #272
sdot v24.4s, v3.16b, v16.4b[3]
sdot v25.4s, v7.16b, v17.4b[3]
sdot v26.4s, v11.16b, v18.4b[3]
sdot v27.4s, v15.16b, v19.4b[3]
b.ne #-200
