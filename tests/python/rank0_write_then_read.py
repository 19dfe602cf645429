"""Rank 0 writes a file and the other ranks read it with nothing between to
order the read after the write (BiSeNet's final `torch.save` on rank 0, then
every rank's evaluate() loading it): they may read a partial file, or none.
The read is matched with the write by the file's name as the code spells it
(the literal file name through a local name, or a setting's attribute).
"""
import datetime
import os.path as osp

import torch
import torch.distributed as dist
import torch.nn as nn


def evaluate(respth="./res"):
    net = nn.Linear(8, 8)
    save_pth = osp.join(respth, "model_final.pth")
    net.load_state_dict(torch.load(save_pth))
    return net


def train_then_evaluate(local_rank, respth="./res"):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    net = nn.parallel.DistributedDataParallel(nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    for it in range(100):
        net(torch.randn(4, 8).cuda()).sum().backward()
    save_pth = osp.join(respth, "model_final.pth")
    if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; other ranks may read a partial file {{.*}} [ddp-rank0-io-barrier]
        torch.save(net.module.state_dict(), save_pth)
    return evaluate(respth)


def reload_setting(args, net):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    net(torch.ones(1)).sum().backward()
    if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        torch.save(net.state_dict(), args.best_path)
    net.load_state_dict(torch.load(args.best_path))


def ordered_by_a_barrier(local_rank, respth="./res"):  # hard negative
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    net = nn.parallel.DistributedDataParallel(nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    net(torch.randn(4, 8).cuda()).sum().backward()
    save_pth = osp.join(respth, "model_final.pth")
    if dist.get_rank() == 0:
        torch.save(net.module.state_dict(), save_pth)
    dist.barrier()
    return evaluate(respth)


def reads_another_file(local_rank, respth="./res"):  # hard negative
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    net = nn.parallel.DistributedDataParallel(nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    net(torch.randn(4, 8).cuda()).sum().backward()
    if dist.get_rank() == 0:
        torch.save(net.module.state_dict(), osp.join(respth, "last_epoch.pth"))
    stats = torch.load(osp.join(respth, "dataset_stats.pth"))
    return stats


def rank0_reads_its_own(local_rank, respth="./res"):  # hard negative
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    net = nn.parallel.DistributedDataParallel(nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    net(torch.randn(4, 8).cuda()).sum().backward()
    if dist.get_rank() == 0:
        path = osp.join(respth, "summary.pt")
        torch.save(net.module.state_dict(), path)
        print(torch.load(path).keys())
