"""ddp-rank0-io-barrier with BarrierAroundEveryWrite: the seed's literal rule.

Every block that only rank 0 runs and that writes files needs a barrier on
entry and on exit.  Where the hazard analysis would report it anyway (a
collective follows) it stays a warning; where nothing can race with the write
(after the last collective) it is a note, so a gate on warnings is unchanged.
"""
# CONFIG: options:
# CONFIG:   ddp-rank0-io-barrier.BarrierAroundEveryWrite: true
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(minutes=30))
    rank = dist.get_rank()
    model = torch.nn.Linear(2, 2)
    for epoch in range(3):
        t = torch.ones(1)
        dist.all_reduce(t)
        # ---- hazard: the next epoch's all_reduce races with it (the barrier
        # after the loop does not help); the literal rule adds the one before
        if rank == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches before or after it; other ranks {{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), f"epoch{epoch}.pt")
    # ---- hard negative: bracketed by barriers, nothing to ask
    dist.barrier()
    if rank == 0:
        with open("done.txt", "w") as f:
            f.write("ok")
    dist.barrier()
    # ---- policy: after the last collective nothing races with it (a note)
    if rank == 0:
    # CHECK-MESSAGES: :[[@LINE-1]]:5: note: block runs only on rank 0 and writes files, with no barrier every rank reaches after it (BarrierAroundEveryWrite: {{.*}}); put a barrier after it [ddp-rank0-io-barrier]
        torch.save(model.state_dict(), "final.pt")


def log_line(rank, t, step):
    # ---- policy: a log line between collectives, no hazard (nobody reads it,
    # it takes no time), but the literal rule brackets every write
    dist.all_reduce(t)
    if rank == 0:
    # CHECK-MESSAGES: :[[@LINE-1]]:5: note: block runs only on rank 0 and writes files, with no barrier every rank reaches before or after it (BarrierAroundEveryWrite: {{.*}}); put a barrier before and after it [ddp-rank0-io-barrier]
        with open("train.log", "a") as f:
            f.write(f"{step}\n")
    dist.all_reduce(t)


def report(rank, text):
    # ---- policy: a helper nobody here calls between collectives
    if rank == 0:
    # CHECK-MESSAGES: :[[@LINE-1]]:5: note: block runs only on rank 0 and writes files, with no barrier every rank reaches before or after it (BarrierAroundEveryWrite: {{.*}}); put a barrier before and after it [ddp-rank0-io-barrier]
        with open("report.txt", "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
