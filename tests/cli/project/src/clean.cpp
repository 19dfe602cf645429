// Fixture: correct code, nothing to report.
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <vector>

using PG = c10::intrusive_ptr<c10d::ProcessGroup>;

void step(PG pg, std::vector<at::Tensor> &grads) {
  pg->allreduce(grads)->wait();
  if (pg->getRank() != 0)
    pg->barrier()->wait(); // main process first: every rank reaches one barrier
  if (pg->getRank() == 0)
    pg->barrier()->wait();
}
