// The decode loop of Q8_0, i8mm tier: kernels/arm/i8mm/matmul_q8_0.cpp: two blocks of one tile of 4 rows an
// iteration (x1 weights, x0 activations, x11 their end, v28 the sum), ordered by bench/cycles/order_search.py
// --cpu cortex-a510.
ldr q10, [x0, #48]
ldr q8, [x0, #16]
movi d16, #0
ldr q9, [x0, #32]
ldr q0, [x1, #8]
ldr q2, [x1, #40]
ldr q29, [x1, #208]
fcvtl v23.4s, v23.4h  // tail
movi d17, #0
smmla v16.4s, v8.16b, v0.16b
scvtf v20.4s, v20.4s  // tail
ext v12.16b, v8.16b, v8.16b, #8
ldr q11, [x0, #64]
ldr q0, [x1, #240]
ldr q4, [x1, #72]
ldr q6, [x1, #104]
ldr q18, [x1, #144]
ldr q1, [x1, #24]
fcvtl v22.4s, v22.4h  // tail
smmla v16.4s, v12.16b, v4.16b
ext v14.16b, v10.16b, v10.16b, #8
ldr q30, [x1, #224]
ldr q27, [x1, #192]
ldr q5, [x1, #88]
ext v15.16b, v11.16b, v11.16b, #8
ext v13.16b, v9.16b, v9.16b, #8
smmla v16.4s, v10.16b, v2.16b
smmla v17.4s, v9.16b, v1.16b
ldr q4, [x0, #96]
ldr q12, [x0, #112]
fmul v22.4s, v22.4s, v24.s[0]  // tail
ldr q19, [x1, #160]
smmla v17.4s, v13.16b, v5.16b
smmla v16.4s, v14.16b, v6.16b
movi d13, #0
fmul v23.4s, v23.4s, v25.s[0]  // tail
movi d5, #0
ldr q2, [x0, #128]
ext v6.16b, v4.16b, v4.16b, #8
scvtf v21.4s, v21.4s  // tail
ext v14.16b, v12.16b, v12.16b, #8
smmla v13.4s, v4.16b, v18.16b
fmla v28.4s, v20.4s, v22.4s  // tail
ldr q10, [x0, #144]
ldr q26, [x1, #176]
ldr q3, [x1, #56]
smmla v5.4s, v12.16b, v19.16b
smmla v13.4s, v6.16b, v29.16b
fmla v28.4s, v21.4s, v23.4s  // tail
ext v1.16b, v2.16b, v2.16b, #8
ldr s24, [x0, #0]
ldr d22, [x1, #0]
smmla v17.4s, v11.16b, v3.16b
ext v9.16b, v10.16b, v10.16b, #8
smmla v5.4s, v14.16b, v30.16b
ldr q7, [x1, #120]
smmla v13.4s, v2.16b, v26.16b
ldr q8, [x1, #256]
smmla v5.4s, v10.16b, v27.16b
smmla v17.4s, v15.16b, v7.16b
smmla v13.4s, v1.16b, v0.16b
add v20.4s, v16.4s, v17.4s
smmla v5.4s, v9.16b, v8.16b
ldr s25, [x0, #80]
ldr d23, [x1, #136]
add x0, x0, #160
cmp x0, x11
add v21.4s, v13.4s, v5.4s
add x1, x1, #272
b.ne #-4
