"""ddp-rank0-io-barrier fix-its that wait only when rank 0 writes.

A rank-0 block in the step loop that writes only under a setting every rank
shares (vits' `if global_step % eval_interval == 0:` inside `if rank == 0:`,
MambaVision's `saver is not None and args.recovery_interval and ...`) gets
its barrier under that setting, not one global sync per step.  When the block
assigns a name the setting reads, the setting would differ on rank 0 after
the block: the barrier is then unconditional.
"""
import datetime

import torch
import torch.distributed as dist


def eval_and_save_every(args, model, loader, rank):
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        if rank == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: {{.*}} no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            if step % args.log_every == 0:
                print(step, loss.item())
            if step % args.eval_every == 0:
                torch.save(model.state_dict(), f"{args.out}/G_{step}.pth")


# CHECK-FIXES:                 torch.save(model.state_dict(), f"{args.out}/G_{step}.pth")
# CHECK-FIXES: {{^}}        if step % args.eval_every == 0:{{$}}
# CHECK-FIXES: {{^}}            dist.barrier(){{$}}


def recovery_every(args, model, loader, saver):
    for batch_idx, batch in enumerate(loader):
        last_batch = batch_idx == len(loader) - 1
        model(batch).sum().backward()
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: {{.*}} no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
        if dist.get_rank() == 0 and args.recovery_interval and (
                last_batch or (batch_idx + 1) % args.recovery_interval == 0):
            torch.save(model.state_dict(), f"{args.out}/recovery.pth")


# CHECK-FIXES:             torch.save(model.state_dict(), f"{args.out}/recovery.pth")
# CHECK-FIXES: {{^}}        if args.recovery_interval and (last_batch or (batch_idx + 1) % args.recovery_interval == 0):{{$}}
# CHECK-FIXES: {{^}}            dist.barrier(){{$}}


def save_when_due(args, model, loader, rank):
    due = args.save_every
    for step, batch in enumerate(loader):
        model(batch).sum().backward()
        if rank == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: {{.*}} no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            if step >= due:
                due = step + args.save_every
                torch.save(model.state_dict(), f"{args.out}/last.pth")


# CHECK-FIXES:                 torch.save(model.state_dict(), f"{args.out}/last.pth")
# CHECK-FIXES: {{^}}        dist.barrier(){{$}}


def main(args, model, loader):
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    model = torch.nn.parallel.DistributedDataParallel(model)
    eval_and_save_every(args, model, loader, dist.get_rank())
    recovery_every(args, model, loader, None)
    save_when_due(args, model, loader, dist.get_rank())
