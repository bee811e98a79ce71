#include "engine/runtime/compute.h"

#include "engine/threads/parallel_matmul.h"

namespace engine {

void Compute::set_profile(Profile* profile) {
  profile_ = profile;
  if (pool_ != nullptr) pool_->set_task_timing(profile != nullptr);
}

void Compute::account(double& op_class, double wall, double busy_before) {
  double share = 1.0;
  if (pool_ != nullptr && pool_->size() > 1 && wall > 0) {
    share = std::clamp((pool_->task_seconds() - busy_before) / (wall * static_cast<double>(pool_->size())), 0.0, 1.0);
  }
  op_class += wall * share;
  profile_->pool_wait += wall * (1.0 - share);
}

void Compute::linear(const Linear& l, const float* x, uint32_t m, float* y) { linear_same_input(x, m, {{&l, y}}); }

void Compute::linear_same_input(const float* x, uint32_t m,
                                std::initializer_list<std::pair<const Linear*, float*>> outs) {
  const kernels::MatmulKernel* packed_for = nullptr;
  // Consecutive matrices with the same kernel run in one round of the pool.
  for (auto first = outs.begin(); first != outs.end();) {
    const kernels::MatmulKernel& kernel = *first->first->kernel;
    const uint32_t k = first->first->in;
    auto last = first;
    MatmulOutput batch[kMaxMatmulOutputs];
    size_t n_batch = 0;
    for (; last != outs.end() && last->first->kernel == &kernel && n_batch < kMaxMatmulOutputs; ++last) {
      batch[n_batch++] = MatmulOutput{last->first->out, last->first->rhs, last->second};
    }
    if (packed_for == nullptr || packed_for->pack_lhs != kernel.pack_lhs || packed_for->lhs_type != kernel.lhs_type) {
      const auto t0 = profile_ != nullptr ? Clock::now() : Clock::time_point{};
      packed_.resize(kernel.lhs_packed_size(m, k));
      // A batch's rows are quantized across the pool, in slices of m_step rows
      // (kernels/matmul.h; each slice writes the bytes one call would).
      parallel_range(m, std::max<size_t>(kernel.m_step, 1), [&](size_t row0, size_t row1) {
        kernel.pack_lhs(row1 - row0, k, x + row0 * k, k, packed_.data() + kernel.lhs_packed_offset(row0, k));
      });
      packed_for = &kernel;
      if (profile_ != nullptr) profile_->activation_quant += seconds_since(t0);
    }
    profiled(&kernel, [&] {
      if (pool_ != nullptr) {
        parallel_matmuls(*pool_, kernel, m, k, packed_.data(), batch, n_batch);
      } else {
        for (size_t i = 0; i < n_batch; ++i) {
          kernel.run(m, batch[i].n, k, packed_.data(), batch[i].rhs_packed, batch[i].dst, batch[i].n);
        }
      }
    });
    first = last;
  }
}

}  // namespace engine
