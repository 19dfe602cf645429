"""Rank sources beyond dist.get_rank(): environment variables, helper functions,
attributes set from the rank, accelerate / Lightning / torch_xla predicates.
One divergent collective per source; the negatives use look-alike names that
are not process ranks.
"""
import datetime
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch_xla.core.xla_model as xm
from accelerate import Accelerator


def get_rank():
    if not dist.is_available() or not dist.is_initialized():
        return 0
    return dist.get_rank()


def is_main_process():
    return get_rank() == 0


def is_dist_avail_and_initialized():
    return dist.is_available() and dist.is_initialized()


def get_data_parallel_rank(group=None):
    """Megatron's parallel_state: the rank where the process group is up."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(group=group)
    else:
        return 0


# ---- true positives ---------------------------------------------------------


def helper_predicate(t):
    if is_main_process():
        dist.all_reduce(t)  # CHECK-MESSAGES: :[[@LINE]]:9: error: all_reduce [ddp-divergent-collective]
    return t


def env_get_with_default(t):
    if int(os.environ.get("LOCAL_RANK", 0)) == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: barrier [ddp-divergent-collective]
        dist.barrier()
    return t


def local_rank_from_group(t):
    local_rank = dist.get_rank() % torch.cuda.device_count()
    if local_rank == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: broadcast [ddp-divergent-collective]
        dist.broadcast(t, src=0)
    return t


def not_initialized_or_rank0(t):
    # The common logging guard; a collective inside it runs on rank 0 only.
    if not dist.is_initialized() or dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_reduce [ddp-divergent-collective]
        dist.all_reduce(t)
    return t


def data_parallel_rank_helper(t):
    if get_data_parallel_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_reduce [ddp-divergent-collective]
        dist.all_reduce(t)
    return t


class Worker:
    def __init__(self):
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()

    def sync(self, t):
        if self.rank == self.world_size - 1:  # the last rank only
            # CHECK-MESSAGES: :[[@LINE+1]]:13: error: all_gather [ddp-divergent-collective]
            dist.all_gather(list(t.chunk(self.world_size)), t)
        return t


def accelerate_index(accelerator: Accelerator, t):
    if accelerator.is_local_main_process:
        # CHECK-MESSAGES: :[[@LINE+1]]:13: error: reduce [ddp-divergent-collective]
        t = accelerator.reduce(t, reduction="mean")
    return t


def xla_master(t):
    if xm.is_master_ordinal():
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_reduce [ddp-divergent-collective]
        dist.all_reduce(t)
    return t


def rank_parameter(rank, t):
    if rank == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: reduce_scatter [ddp-divergent-collective]
        dist.reduce_scatter(t[0], list(t))
    return t


def spawned_worker(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(minutes=1))
    t = torch.ones(4, 4)
    rank_parameter(rank, t)
    dist.destroy_process_group()


def spawned_node_worker(gpu, ngpus_per_node, node_rank):
    # MedSAM's: the global rank from the node's offset and mp.spawn's index,
    # so rank 0 is one process of the job, not one per node.
    rank = node_rank * ngpus_per_node + gpu
    is_main_host = rank == 0
    dist.init_process_group("gloo", rank=rank, world_size=ngpus_per_node,
                            timeout=datetime.timedelta(minutes=1))
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))
    for step in range(10):
        model(torch.ones(4, 4)).sum().backward()
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: block runs only on rank 0 {{.*}} [ddp-rank0-io-barrier]
        if is_main_host:
            torch.save(model.state_dict(), "latest.pth")
        first = gpu + 1 == 1  # not a global rank: a count from the process's index
        if first:
            print("first process on this node")
    dist.destroy_process_group()


# ---- hard negatives -----------------------------------------------------------


def helper_guarded_print(t):
    dist.all_reduce(t)
    if is_main_process():
        print(t)
    if is_dist_avail_and_initialized():  # uniform: the same answer on every rank
        dist.barrier()
    return t


def matrix_rank_named_rank(weight, t):
    rank = torch.linalg.matrix_rank(weight).item()  # identical weights on every rank (DDP)
    if rank < weight.shape[0]:
        print("weight matrix is rank-deficient")
    dist.all_reduce(t)
    return t


def node_count_is_uniform(t):
    nnodes = int(os.environ.get("WORLD_SIZE", "1")) // max(torch.cuda.device_count(), 1)
    if nnodes > 1:
        dist.all_reduce(t)
    return t


def ranked_list_is_not_a_rank(scores, t):
    ranks = sorted(range(len(scores)), key=lambda i: -scores[i])
    top = ranks[0]
    if top == 0:
        dist.barrier()
    return t


if __name__ == "__main__":
    world = int(os.environ.get("NPROC", "2"))
    mp.spawn(spawned_worker, args=(world,), nprocs=world)
    mp.spawn(spawned_node_worker, args=(world, 0), nprocs=world)


def get_dist_info():
    # mmengine's: the rank is the first of two returned values (read after
    # get_rank, whichever order the file defines them in).
    world_size = dist.get_world_size()
    rank = get_rank()
    return rank, world_size


def tuple_world_size(t):
    # hard negative: the other element is the world size, the same everywhere
    rank, world_size = get_dist_info()
    if world_size > 1:
        dist.all_reduce(t)
    return rank


def tuple_rank(t):
    rank, world_size = get_dist_info()
    if rank == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_reduce [ddp-divergent-collective]
        dist.all_reduce(t)
    return world_size


def tuple_rank_by_index(t):
    # `get_dist_info()[0]`: the tuple's rank element
    if get_dist_info()[0] == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_reduce [ddp-divergent-collective]
        dist.all_reduce(t)
    if get_dist_info()[1] > 1:
        dist.all_reduce(t)


def settings_dict_rank(opt, t):
    # BasicSR keeps the rank in its options dict: `opt['rank']`
    opt['rank'], opt['world_size'] = get_dist_info()
    if opt['rank'] == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_reduce [ddp-divergent-collective]
        dist.all_reduce(t)
    if opt['world_size'] > 1:
        dist.all_reduce(t)


def settings_dict_rank_handed_in(opt, t):
    if opt["local_rank"] == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_reduce [ddp-divergent-collective]
        dist.all_reduce(t)


def yacs_config_rank(cfg, t):
    # OpenPCDet keeps the launcher's rank in a yacs config key: `cfg.LOCAL_RANK`
    if cfg.LOCAL_RANK == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_reduce [ddp-divergent-collective]
        dist.all_reduce(t)
    if cfg.MODEL.TOP_RANK == 0:
        dist.all_reduce(t)


def seed_with_optional_rank(seed, dp_rank=None):
    # OpenDiT's set_seed: whether a rank was handed in is the caller's, alike
    # on every rank; only its value differs.
    if dp_rank is not None:
        t = torch.tensor(seed)
        dist.broadcast(t, 0)
        seed = int(t) + dp_rank
    return seed


def machine_local_and_dist_rank():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    distributed_rank = int(os.environ.get("RANK", 0))
    return local_rank, distributed_rank


class TupleRankTrainer:
    # sam2's trainer: both ranks unpacked into attributes from one helper.
    def __init__(self):
        self.local_rank, self.distributed_rank = machine_local_and_dist_rank()

    def step(self, t):
        if self.distributed_rank == 0:
            dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:13: error: barrier [ddp-divergent-collective]


def save_shards(model, loader, dp_rank, tp_rank, out):
    # picotron: data-parallel rank 0 of each tensor-parallel group writes that
    # group's own shard (one writer per path), then the next step's
    # all-reduce follows with no barrier
    for step, batch in enumerate(loader):
        dist.all_reduce(model(batch))
        if dp_rank == 0 and step % 100 == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), f"{out}/weights_tp_rank={tp_rank}.pth")


class MeshTrainer:
    # verl's SFT trainer: a DeviceMesh's rank without an argument is the
    # global rank, and rank 0 writes between barriers (hard negative).
    def __init__(self, mesh):
        self.device_mesh = mesh

    def save_checkpoint(self, model, path):
        if self.device_mesh.get_rank() == 0:
            torch.save(model.state_dict(), path)
        dist.barrier()

    def step(self, t):
        if self.device_mesh.get_local_rank(mesh_dim="dp") == 0:
            dist.all_reduce(t)  # CHECK-MESSAGES: :[[@LINE]]:13: error: all_reduce [ddp-divergent-collective]


class MeshNamedLookAlike:
    # hard negative: `get_rank()` of an object that is not a mesh (a ranking
    # table) is not the process rank
    def __init__(self, table):
        self.table = table

    def step(self, t, player):
        if self.table.get_rank(player) == 0:
            dist.all_reduce(t)


class SaveHooks:
    # SimpleTuner's save hook: the main-process flag read with getattr and a
    # default for a run without an accelerator.
    def __init__(self, accelerator, network):
        self.accelerator = accelerator
        self.network = network

    def _save_adapter(self, output_dir):
        # hard negative: its only caller returns first on the other ranks
        torch.save(self.network.state_dict(), output_dir + "/adapter.pt")

    def save_model_hook(self, models, weights, output_dir):
        is_main_process = True
        if self.accelerator is not None:
            is_main_process = getattr(self.accelerator, "is_main_process", True)
        if not is_main_process:
            return
        self._save_adapter(output_dir)

    def sync(self, t):
        if getattr(self.accelerator, "is_local_main_process", True):
            dist.all_reduce(t)  # CHECK-MESSAGES: :[[@LINE]]:13: error: all_reduce [ddp-divergent-collective]
