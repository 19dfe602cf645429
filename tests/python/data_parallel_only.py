"""A script whose parallelism is DataParallel's (one process driving the
GPUs) and whose `--local_rank` path only starts a process group (CodeT5's
run_gen.py): its ranks never exchange anything, so it is no job whose ranks
the path rules can compare.  Each check here is a hard negative; the policy
rules still apply.  (The test is by the file's words: a comment naming a
wrapper or a collective makes the file a distributed one again.)
"""
import os

import torch
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler


def main(args, model, train_data, eval_data, evaluate):
    if args.local_rank == -1:
        device = torch.device("cuda")
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        torch.distributed.init_process_group(backend="nccl")
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: process group created by 'init_process_group' without an explicit timeout{{.*}} [ddp-init-timeout]
    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)
    sampler = RandomSampler(train_data) if args.local_rank == -1 else DistributedSampler(train_data)
    loader = DataLoader(train_data, sampler=sampler, batch_size=args.batch_size)
    for epoch in range(args.epochs):
        for batch in loader:
            loss = model(batch.to(device)).mean()
            loss.backward()
        eval_loader = DataLoader(eval_data, batch_size=args.batch_size)
        evaluate(model, eval_loader)
        torch.save(model.state_dict(), os.path.join(args.output_dir, "checkpoint-last.bin"))
