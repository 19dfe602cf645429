// Fixture: a helper that returns the rank, known to ddplint only through the
// `wrappers: rank_sources` entry of .ddplint.yaml.
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <vector>

namespace dist {
int get_rank();
}

using PG = c10::intrusive_ptr<c10d::ProcessGroup>;

void evaluate(PG pg, std::vector<at::Tensor> &t) {
  if (dist::get_rank() == 0)
    pg->allreduce(t)->wait();
  pg->barrier()->wait();
}
