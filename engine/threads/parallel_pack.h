// Repacking a matrix into its kernel's layout on several threads, at load.
//
// The packed copy lives in fresh memory, and its first touch costs more than
// the packing: the OS zeroes each new page, and on a VM whose host takes freed
// memory back, the host backs each page again. TinyLlama Q4_0 (571 MiB
// repacked, 2 MiB pages) loaded in 4.5-9.7 s here with 91% of it in
// clear_page_erms (`perf record`), all on the loading thread; touching 572 MiB
// of fresh 2 MiB pages took 2.2-8.5 s from one thread and 1.0-1.7 s from two
// (alternating), and the load, packed this way, 3.4-4.1 s against 4.5-8.6 s
// (five pairs).
// Slices of whole n_steps (kernels/matmul.h: pack_rhs on slices writes the
// bytes of one call) go to up to `threads` threads from a shared counter, so a
// slow core takes fewer of them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/matmul.h"

namespace engine {

// Below this many packed bytes a matrix is packed on the calling thread:
// starting threads (tens of microseconds each) would cost more than they save.
inline constexpr uint64_t kParallelPackBytes = uint64_t{1} << 20;

// kernel.pack_rhs(n, k, rhs, packed) on up to `threads` threads (the caller
// included), each slice a multiple of n_step rows. rhs: the GGUF rows,
// row_bytes apart. A thread that cannot be started leaves its share to the
// others. Returns the threads that packed.
size_t parallel_pack_rhs(const kernels::MatmulKernel& kernel, uint64_t n, uint64_t k, const uint8_t* rhs,
                         uint64_t row_bytes, uint8_t* packed, size_t threads, uint64_t min_bytes = kParallelPackBytes);

// Threads for packing at load: the CPUs this process may run on (any cluster:
// the shared counter gives a little core fewer slices), at most 8.
size_t pack_threads();

}  // namespace engine
