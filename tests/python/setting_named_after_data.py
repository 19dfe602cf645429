"""A setting named after the data it acts on is not that data: AlgoPerf's
workloads take `update_batch_norm`, a flag their callers pass as a literal,
and raise on a combination that makes no sense before the DDP forward.
The batch norm's own statistics would be this rank's.
"""
import datetime

import torch
import torch.distributed as dist


def model_fn(params, inputs, train, update_batch_norm):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = torch.nn.parallel.DistributedDataParallel(params)
    if not train:
        # hard negative: a setting every rank is handed alike
        if update_batch_norm:
            raise ValueError("Batch norm statistics cannot be updated during evaluation.")
        model.eval()
    return model(inputs)


def check_norm(model, inputs, running_norm):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = torch.nn.parallel.DistributedDataParallel(model)
    if running_norm > 10:
        raise ValueError("diverged")
    dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:5: error: barrier is never reached by ranks where 'running_norm > 10' holds (a rank-local value){{.*}} [ddp-divergent-collective]
    return model(inputs)
