// RUN: %check_ddp_tidy %s ddp-unguarded-save %t -- -config="{CheckOptions: {ddp-unguarded-save.CheckpointWriters: 'ckpt::write_checkpoint', ddp-unguarded-save.MainProcessFunctions: 'is_main_process'}}" -- %mock_flags
#include <torch/torch.h>
#include <string>

namespace ckpt {
void write_checkpoint(const std::string &path, const torch::nn::Linear &model);
bool is_main_process();
} // namespace ckpt

void user_writer(torch::nn::Linear model) {
  ckpt::write_checkpoint("last.ckpt", model);
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: every rank runs 'ckpt::write_checkpoint' to the same path, so the ranks overwrite one file{{.*}} [ddp-unguarded-save]
}

void user_writer_guarded(torch::nn::Linear model) {
  if (ckpt::is_main_process())
    ckpt::write_checkpoint("last.ckpt", model);
}

