// Fixture for the ddplint CLI tests: three findings (one of them under a NOLINT
// for another check) and three suppressed ones (NOLINT, NOLINTNEXTLINE, a
// block between begin and end markers).
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/FileStore.hpp>

#include <vector>

using PG = c10::intrusive_ptr<c10d::ProcessGroup>;

c10::intrusive_ptr<c10d::ProcessGroupGloo> makeGroup(int rank, int size) {
  auto store = c10::make_intrusive<c10d::FileStore>("/tmp/ddplint-store", size);
  auto opts = c10d::ProcessGroupGloo::Options::create();
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
}

void logMetrics(PG pg, std::vector<at::Tensor> &metrics) {
  if (pg->getRank() == 0) {
    pg->allreduce(metrics)->wait();
  }
}

void suppressedSameLine(PG pg, std::vector<at::Tensor> &t) {
  if (pg->getRank() == 0)
    pg->allreduce(t)->wait(); // NOLINT(ddp-divergent-collective)
}

void suppressedNextLine(PG pg, std::vector<at::Tensor> &t) {
  if (pg->getRank() == 0)
    // NOLINTNEXTLINE(ddp-divergent-collective)
    pg->broadcast(t)->wait();
}

void wrongNolint(PG pg, std::vector<at::Tensor> &t) {
  if (pg->getRank() == 1)
    pg->broadcast(t)->wait(); // NOLINT(ddp-init-timeout)
}

// NOLINTBEGIN(ddp-divergent-collective)
void suppressedBlock(PG pg, std::vector<at::Tensor> &t) {
  if (pg->getRank() == 0)
    pg->allreduce(t)->wait();
}
// NOLINTEND(ddp-divergent-collective)
