// engine_sme_f32_panel: one group of up to 2R activation rows times one panel
// of up to 2R weight columns over a chunk of K, in float, on SME outer
// products (FEAT_SME: FMOPA into ZA). R = VL / 4 (VL: the streaming vector
// length in bytes, so R floats per vector); one code serves any VL.
//
// Both operands are k-major, 2R floats per k (one vector for rows or
// columns 0..R-1, the next for R..2R-1); each k is 4 FMOPA into the four
// 32-bit tiles: ZA0 = rows lo x cols lo, ZA1 = lo x hi, ZA2 = hi x lo,
// ZA3 = hi x hi. Accumulation is in float, in k order, one FMA per product
// (FMOPA is fused), so a row's results do not depend on the rows beside it.
//
// void engine_sme_f32_panel(const SmePanelArgs* a)
//   a->act   (x1) k-major activations of the chunk: act[k * 2R + row]
//   a->w     (x2) k-major weights of the chunk: w[k * 2R + col]
//   a->dst   (x3) row 0, column 0 of the output
//   a->dst_stride (x4) bytes between output rows
//   a->kc    (x5) k of the chunk, a multiple of 4, >= 4
//   a->rows  (x6) valid rows, 1..2R
//   a->cols  (x7) valid columns, 1..2R
//   a->accumulate (x8) 0: start from zero; else add to what dst holds
// SMSTART and SMSTOP clear the vector registers, so d8-d15 are saved here.
        .arch armv9-a+sme
        .text
        .p2align 4
// tile_rows op, ta, tb, pa, pb, count: `op` (ld1w or st1w) the first
// `count` rows of tiles ta (columns 0..R-1, predicate pa) and tb (columns
// R..2R-1, pb) to or from consecutive output rows from x13 on; x13 ends past
// the last row. Uses w12 (slice index) and x14.
        .macro  tile_rows op, ta, tb, pa, pb, count
        mov     w12, #0
        mov     x14, \count
1:
        \op    {\ta\()h.s[w12, 0]}, \pa, [x13]
        \op    {\tb\()h.s[w12, 0]}, \pb, [x13, x10, lsl #2]
        add     x13, x13, x4
        add     w12, w12, #1
        subs    x14, x14, #1
        b.ne    1b
        .endm

        .global engine_sme_f32_panel
        .type engine_sme_f32_panel, %function
engine_sme_f32_panel:
        stp     d8, d9, [sp, #-64]!
        stp     d10, d11, [sp, #16]
        stp     d12, d13, [sp, #32]
        stp     d14, d15, [sp, #48]
        ldp     x1, x2, [x0]
        ldp     x3, x4, [x0, #16]
        ldp     x5, x6, [x0, #32]
        ldp     x7, x8, [x0, #48]
        smstart
        ptrue   p0.s
        cntw    x9                      // R
        whilelt p2.s, xzr, x7           // columns 0..R-1 to load and store
        whilelt p3.s, x9, x7            // columns R..2R-1
        mov     x10, x9                 // column R, for the [x, x10, lsl #2] slice addresses
        cmp     x6, x9
        csel    x11, x6, x9, lt         // rows in ZA0 / ZA1: min(rows, R)
        sub     x15, x6, x11            // rows in ZA2 / ZA3 (w12 is the slice index)
        zero    {za}
        cbz     x8, .Lmultiply
        // Load the partial sums of earlier chunks.
        mov     x13, x3
        tile_rows ld1w, za0, za1, p2/z, p3/z, x11
        cbz     x15, .Lmultiply
        tile_rows ld1w, za2, za3, p2/z, p3/z, x15
.Lmultiply:
        .irp    k, 0, 1, 2, 3
        ld1w    {z0.s}, p0/z, [x1, #(2 * \k), mul vl]
        ld1w    {z1.s}, p0/z, [x1, #(2 * \k + 1), mul vl]
        ld1w    {z2.s}, p0/z, [x2, #(2 * \k), mul vl]
        ld1w    {z3.s}, p0/z, [x2, #(2 * \k + 1), mul vl]
        fmopa   za0.s, p0/m, p0/m, z0.s, z2.s
        fmopa   za1.s, p0/m, p0/m, z0.s, z3.s
        fmopa   za2.s, p0/m, p0/m, z1.s, z2.s
        fmopa   za3.s, p0/m, p0/m, z1.s, z3.s
        .endr
        addvl   x1, x1, #8
        addvl   x2, x2, #8
        subs    x5, x5, #4
        b.ne    .Lmultiply
        // Store the valid rows and columns.
        mov     x13, x3
        tile_rows st1w, za0, za1, p2, p3, x11
        cbz     x15, .Ldone
        tile_rows st1w, za2, za3, p2, p3, x15
.Ldone:
        smstop
        ldp     d14, d15, [sp, #48]
        ldp     d12, d13, [sp, #32]
        ldp     d10, d11, [sp, #16]
        ldp     d8, d9, [sp], #64
        ret
        .size engine_sme_f32_panel, . - engine_sme_f32_panel
        .section .note.GNU-stack, "", %progbits
