// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- \
// RUN:   -config="{CheckOptions: {ddp-divergent-collective.MainProcessFunctions: 'util::is_main_process', ddp-divergent-collective.RankFunctions: 'my_rank', ddp-divergent-collective.BarrierFunctions: 'sync_all', ddp-divergent-collective.CollectiveFunctions: 'util::all_reduce_grads'}}" \
// RUN:   -- %mock_flags
// Without the options the wrappers are opaque calls, so nothing is reported:
// RUN: %check_ddp_tidy --prefix NOOPT %s ddp-divergent-collective %t -- -- %mock_flags
// User wrappers declared through options, without a rebuild.
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <vector>

namespace util {
bool is_main_process();
int my_rank();
void sync_all();
void all_reduce_grads(std::vector<at::Tensor> &g);
} // namespace util

void train(std::vector<at::Tensor> &grads) {
  if (util::is_main_process())
    util::all_reduce_grads(grads);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'all_reduce_grads' runs only on ranks where 'util::is_main_process()' holds; th{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
  if (util::my_rank() == 3)
    return;
  util::sync_all();
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: barrier 'sync_all' is never reached by ranks where 'util::my_rank() == 3' holds: they retu{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-4]]:7: note: rank-dependent condition here
}

void main_first() {
  if (!util::is_main_process())
    util::sync_all();
  if (util::is_main_process())
    util::sync_all();
}

