// The file the LSP test opens in ddplint-clangd.  `// EXPECT <check>` marks
// the line of each diagnostic the test requires, `// NOTE` the line of the
// rank-dependent condition reported with it; nothing else may be reported.
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>

namespace dist {
int my_rank(); // a user wrapper, declared to the checks in .clangd's CheckOptions
} // namespace dist

c10::intrusive_ptr<c10d::Store> makeStore();

c10::intrusive_ptr<c10d::ProcessGroupGloo> makeGroup(int rank, int size) {
  return c10::make_intrusive<c10d::ProcessGroupGloo>(makeStore(), rank, size); // EXPECT ddp-init-timeout
}

void step(c10::intrusive_ptr<c10d::ProcessGroup> pg, std::vector<at::Tensor> &grads) {
  if (pg->getRank() == 0) { // NOTE
    pg->allreduce(grads)->wait(); // EXPECT ddp-divergent-collective
  }
  pg->barrier()->wait();
}

void sync(c10::intrusive_ptr<c10d::ProcessGroup> pg, std::vector<at::Tensor> &grads) {
  if (dist::my_rank() == 1) // NOTE
    pg->broadcast(grads)->wait(); // EXPECT ddp-divergent-collective
  pg->barrier()->wait();
}
