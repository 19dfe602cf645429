"""ddp-rank0-io-barrier fix-its: the missing barriers are inserted around the block.

This file has no barrier of its own, so every barrier in the fixed file was
inserted by --fix; the CHECK-FIXES lines check their order around the block.
"""
# With RequireBarrierBefore (off by default) the barrier before is asked for too.
# CONFIG: options:
# CONFIG:   ddp-rank0-io-barrier.RequireBarrierBefore: true
import datetime

import torch
import torch.distributed as dist


def checkpoint_between_steps(model, grads, path):
    dist.all_reduce(grads)
    # CHECK-MESSAGES: :[[@LINE+1]]:5: warning: barrier [ddp-rank0-io-barrier]
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)
    dist.all_reduce(grads)


# CHECK-FIXES: def checkpoint_between_steps(model, grads, path):
# CHECK-FIXES:     dist.all_reduce(grads)
# CHECK-FIXES: {{(dist|torch\.distributed)}}.barrier()
# CHECK-FIXES:     if dist.get_rank() == 0:
# CHECK-FIXES:         torch.save(model.state_dict(), path)
# CHECK-FIXES: {{(dist|torch\.distributed)}}.barrier()
# CHECK-FIXES:     dist.all_reduce(grads)


def epoch_summary(rank, epochs, stats, out_path):
    for epoch in range(epochs):
        dist.all_reduce(stats)
        if rank == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: barrier [ddp-rank0-io-barrier]
            with open(out_path, "wb") as f:
                f.write(stats.numpy().tobytes())


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=5))
    rank = dist.get_rank()
    epoch_summary(rank, 3, torch.zeros(4), "stats.bin")
    dist.destroy_process_group()


# CHECK-FIXES: def epoch_summary(rank, epochs, stats, out_path):
# CHECK-FIXES:         dist.all_reduce(stats)
# CHECK-FIXES: {{(dist|torch\.distributed)}}.barrier()
# CHECK-FIXES:         if rank == 0:
# CHECK-FIXES:                 f.write(
# CHECK-FIXES: {{(dist|torch\.distributed)}}.barrier()
# CHECK-FIXES: def main():
