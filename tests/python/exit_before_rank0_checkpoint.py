"""A rank-local exit before a collective is found whatever rank 0 does later
in the iteration: detectron2's plain_train_net asserts the rank's own losses
are finite before `reduce_dict` and saves a periodic checkpoint on rank 0 at
the end of the step.  The rank-0 block the staying ranks pass after the
exit is not why they went on.
"""
import datetime

import torch
import torch.distributed as dist


def reduce_dict(input_dict):
    values = torch.stack([input_dict[k] for k in sorted(input_dict)])
    dist.reduce(values, dst=0)
    return dict(zip(sorted(input_dict), values))


def do_train(model, data_loader, optimizer, path):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    for data in data_loader:
        loss_dict = model(data)
        losses = sum(loss_dict.values())
        assert torch.isfinite(losses).all(), loss_dict
        loss_dict_reduced = reduce_dict(loss_dict)
        # CHECK-MESSAGES: :[[@LINE-1]]:29: error: call to 'reduce_dict', which runs collective 'reduce', is skipped by ranks where 'torch.isfinite(losses).all()' does not hold{{.*}} [ddp-divergent-collective]
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()
        if dist.get_rank() == 0:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), path)


def skip_on_rank_zero_flag(model, data_loader, optimizer, path):
    # Hard negative: the rank decision before the test is why the others go
    # on (only rank 0 tests its loss; it then leaves every iteration alike
    # with the others, which all-reduce nothing in between).
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    for data in data_loader:
        loss = model(data).sum()
        stop = torch.zeros(1)
        if dist.get_rank() == 0 and not torch.isfinite(loss):
            stop += 1
        dist.all_reduce(stop)
        if stop.item() > 0:
            break
        loss.backward()
        optimizer.step()
