"""The element of a returned tuple that a helper all-reduced is every rank's.

MLPerf's R-GAT evaluation returns `acc, global_acc`: this rank's accuracy
and the all-reduced mean.  A test of `global_acc` decides alike on every
rank (R-GAT stops its training there); a test of the rank's own accuracy
does not.
"""
import torch
import torch.distributed as dist


def evaluate(model, loader, device, rank, world_size, epoch_num):
    correct = []
    for batch in loader:
        correct.append((model(batch.to(device)).argmax(1) == batch.y).float().mean().item())
    acc = sum(correct) / len(correct)
    dist.barrier()
    acc_tensor = torch.tensor(acc).to(device)
    dist.all_reduce(acc_tensor, op=dist.ReduceOp.SUM)
    global_acc = acc_tensor.item() / world_size
    if rank == 0:
        print(epoch_num, global_acc)
    return acc, global_acc


def train(model, loader, optimizer, device, world_size, target):
    for idx, batch in enumerate(loader):
        loss = model(batch.to(device)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        batch_acc, global_acc = evaluate(model, [batch], device, 0, world_size, idx)
        if target is not None and global_acc >= target:
            dist.barrier()
        if batch_acc >= target:
            dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:13: error: barrier runs only on ranks where 'batch_acc >= target' holds{{.*}} [ddp-divergent-collective]
