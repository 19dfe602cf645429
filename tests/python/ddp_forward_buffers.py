"""ddp-forward-buffer-broadcast needs buffers (issue 16): the forward of a
DDP model broadcasts rank 0's buffers (BatchNorm running stats), so a model
built only from buffer-free layers, or wrapped with broadcast_buffers=False,
runs no collective in its forward, and a rank-0-only evaluation of it is safe.
"""
import datetime
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, x):
        return self.net(x)


class WithNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)

    def forward(self, x):
        return self.bn(self.fc(x))


def evaluate_mlp(rank):
    # hard negative: Linear and ReLU hold no buffers
    model = DDP(Mlp().to(rank))
    if rank == 0:
        model(torch.ones(1, 4))
    dist.barrier()


def evaluate_moved_instance(rank):
    # hard negative: the instance is moved before the wrap (`Mlp().to(rank)`
    # named first, Wuerstchen's `model = Prior(...).to(device)`)
    mlp = Mlp().to(rank).train()
    mlp = DDP(mlp)
    if rank == 0:
        mlp(torch.ones(1, 4))
    dist.barrier()


def evaluate_moved_norm(rank):
    normed = WithNorm().cuda(rank)
    normed = DDP(normed)
    if rank == 0:
        normed(torch.ones(1, 4))
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective `forward of the DistributedDataParallel model 'normed' (buffer broadcast)` runs only on ranks where 'rank == 0' holds; {{.*}} [ddp-divergent-collective]
    dist.barrier()


def evaluate_norm(rank):
    model = DDP(WithNorm().to(rank))
    if rank == 0:
        model(torch.ones(1, 4))
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast)` runs only on ranks where 'rank == 0' holds; {{.*}} [ddp-divergent-collective]
    dist.barrier()


def evaluate_no_broadcast(rank):
    # hard negative: the buffers are not broadcast
    net = WithNorm()
    model = DDP(net, broadcast_buffers=False)
    if rank == 0:
        model(torch.ones(1, 4))
    dist.barrier()


def evaluate_apex(rank):
    # hard negative: apex's DistributedDataParallel syncs parameters when it is
    # built and gradients in backward; its forward runs no collective
    from apex.parallel import DistributedDataParallel as ApexDDP
    model = ApexDDP(WithNorm().to(rank))
    if rank == 0:
        model(torch.ones(1, 4))
    dist.barrier()


# A forward under no_grad broadcasts the buffers and clears the flag that makes
# the next forward broadcast them (torch/nn/parallel/distributed.py, forward:
# require_forward_param_sync): rank 0's evaluation takes the place of its next
# training forward's broadcast, so every rank issues the same broadcasts.
@torch.no_grad()
def estimate_loss(model):
    out = 0
    for k in range(10):
        out += model(torch.zeros(2, 4)).sum()
    return out


def train_eval_on_master(rank, opt):
    # hard negative: nanoGPT / llama2.c, evaluation on the master process
    # between training steps
    model = DDP(WithNorm().to(rank))
    for it in range(100):
        if it % 10 == 0 and rank == 0:
            print(estimate_loss(model))
        loss = model(torch.randn(2, 4)).sum()
        loss.backward()
        opt.step()


def train_eval_block_on_master(rank, opt):
    # hard negative: the same with a `with torch.no_grad():` block
    model = DDP(WithNorm().to(rank))
    for it in range(100):
        if rank == 0:
            with torch.no_grad():
                model(torch.zeros(2, 4))
        model(torch.randn(2, 4)).sum().backward()
        opt.step()


def train_eval_then_all_reduce(rank, opt):
    # an all_reduce between rank 0's evaluation and the next training forward:
    # rank 0's early broadcast meets the others' all_reduce
    model = DDP(WithNorm().to(rank))
    for it in range(100):
        if rank == 0:
            with torch.no_grad():
                model(torch.zeros(2, 4))
                # CHECK-MESSAGES: :[[@LINE-1]]:17: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast) under no_grad` runs only on ranks where 'rank == 0' holds; {{.*}} [ddp-divergent-collective]
        t = torch.ones(1)
        dist.all_reduce(t)
        model(torch.randn(2, 4)).sum().backward()
        opt.step()


def final_eval_on_master(rank, opt):
    # rank 0 evaluates after the last step: no training forward follows, its
    # broadcast has no partner
    model = DDP(WithNorm().to(rank))
    for it in range(100):
        model(torch.randn(2, 4)).sum().backward()
        opt.step()
    if rank == 0:
        with torch.no_grad():
            print(model(torch.zeros(2, 4)))
            # CHECK-MESSAGES: :[[@LINE-1]]:19: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast) under no_grad` runs only on ranks where 'rank == 0' holds; {{.*}} [ddp-divergent-collective]
    dist.barrier()


# Containers hold their modules in literals: ModuleDict(dict(...)),
# ModuleList([Block(c) for ...]), Sequential(*[...]).  nanoGPT's GPT is built
# only from buffer-free layers that way.
class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ln = nn.LayerNorm(n)
        self.fc = nn.Linear(n, n)


class Gpt(nn.Module):
    def __init__(self, n, layers):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(10, n),
            h=nn.ModuleList([Block(n) for _ in range(layers)]),
            ln_f=nn.LayerNorm(n),
        ))
        self.head = nn.Sequential(*[nn.Linear(n, n) for _ in range(2)])


class NormedStack(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.blocks = nn.ModuleDict({"a": Block(n), "b": WithNorm()})


def sharded_eval_gpt(rank, world):
    # hard negative: build-nanogpt's HellaSwag loop, each rank takes every
    # world-th example; the model has no buffers, its forward runs no collective
    model = DDP(Gpt(8, 2))
    for i in range(100):
        if i % world != rank:
            continue
        with torch.no_grad():
            model(torch.zeros(1, 8))
    dist.barrier()


def sharded_eval_normed(rank, world):
    # the same with a BatchNorm inside the ModuleDict: the ranks broadcast a
    # different number of times
    model = DDP(NormedStack(8))
    for i in range(100):
        if i % world != rank:
            continue
        with torch.no_grad():
            model(torch.zeros(1, 8))
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast) under no_grad` is never reached by ranks where 'i % world != rank' holds: {{.*}} [ddp-divergent-collective]
    dist.barrier()


from timm.models.vision_transformer import Block, PatchEmbed
from timm.models.layers import DropPath


class TimmEncoder(nn.Module):
    # timm's ViT pieces hold parameters only (MAE's family, MCC's encoder)
    def __init__(self):
        super().__init__()
        self.patch_embed = PatchEmbed(224, 16, 3, 64)
        self.blocks = nn.ModuleList([Block(64, 4) for _ in range(2)])
        self.drop_path = DropPath(0.1)
        self.pos_embed = nn.Parameter(torch.zeros(1, 197, 64), requires_grad=False)

    def forward(self, x):
        x = self.patch_embed(x) + self.pos_embed[:, 1:]
        for blk in self.blocks:
            x = x + self.drop_path(blk(x))
        return x


class TimmWithNorm(TimmEncoder):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(64)


def evaluate_timm_blocks(rank):
    # hard negative: timm's Block, PatchEmbed and DropPath register no buffers
    model = DDP(TimmEncoder().to(rank))
    if rank == 0:
        model(torch.ones(1, 3, 224, 224))
    dist.barrier()


def evaluate_timm_with_norm(rank):
    model = DDP(TimmWithNorm().to(rank))
    if rank == 0:
        model(torch.ones(1, 3, 224, 224))
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast)` runs only on ranks where 'rank == 0' holds; {{.*}} [ddp-divergent-collective]
    dist.barrier()


def evaluate_in_chunks(rank, loader):
    # hard negative: the forwards of a no_grad loop (MCC's chunked queries):
    # the first issues the next training forward's buffer broadcast and the
    # rest none, however many chunks this rank's batch makes
    model = DDP(WithNorm().to(rank))
    for x in loader:
        for p in range(int(x.shape[1] / 5000) + 1):
            with torch.no_grad():
                model(x[:, p * 5000:(p + 1) * 5000])


def evaluate_in_chunks_reduced(rank, loader):
    model = DDP(WithNorm().to(rank))
    for x in loader:
        for p in range(int(x.shape[1] / 5000) + 1):
            with torch.no_grad():
                # the all_reduce makes the trip count matter; the loop's first collective is named
                out = model(x[:, p * 5000:(p + 1) * 5000])
                # CHECK-MESSAGES: :[[@LINE-1]]:23: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast) under no_grad` runs in a loop whose trip count depends on {{.*}} [ddp-divergent-collective]
            dist.all_reduce(out)


def evaluate_tiles(rank, loader, max_tiles):
    # hard negative: MONAI's MIL validation, the tiles of a big bag in chunks
    # and a small bag at once; under no_grad either way issues one broadcast
    model = DDP(WithNorm().to(rank))
    with torch.no_grad():
        for x in loader:
            if x.shape[1] > max_tiles:
                logits = []
                for i in range(int(x.shape[1] / max_tiles) + 1):
                    logits.append(model(x[:, i * max_tiles:(i + 1) * max_tiles]))
            else:
                logits = [model(x)]
