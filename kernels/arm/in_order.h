// What the in-order loops share (dotprod/matmul_q4_0.cpp, matmul_q8_0.cpp,
// matmul_q4_k_q5_k.cpp, i8mm/matmul_q4_0.cpp, matmul_q8_0.cpp,
// matmul_q4_k_q5_k.cpp, matmul_q6_k.cpp): the asm statement's operands
// and the registers it uses. Its lines come from bench/cycles/order_search.py --emit,
// which names the weights' pointer %[w], the activations' %[x], their end
// %[end] and the sum %[acc] (the one vector register left: v28), and uses the
// other vector registers and x9.
#pragma once

#define ENGINE_IN_ORDER_OPERANDS(w, x, end, acc)                                                                  \
  : [w] "+r"(w), [x] "+r"(x), [acc] "+w"(acc)                                                                      \
  : [end] "r"(end)                                                                                                 \
  : "cc", "memory", "x9", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",   \
    "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v29", "v30", \
    "v31"
