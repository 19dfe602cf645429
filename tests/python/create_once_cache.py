"""The create-once cache: `if not os.path.exists(cache): ... torch.save(data,
cache)` on every rank (MOSS's tokenised data, FlagAI's merged weights).  On
a first run every rank finds the file missing and writes it at once: a torn
file, or a rank that loads another's half-written one.  Built on rank 0
first, with a barrier before the others look, it is written once.  A
helper nothing in the program calls is left to its callers' ordering.  A
path some of whose ways name the rank (allennlp's sharded checkpoints) may
be each rank's own.
"""
import datetime
import os
import _pickle as cPickle

import torch
import torch.distributed as dist


def tokenized(data_dir, tokenizer):
    cache = os.path.join(data_dir, "train.tokens.pt")
    if os.path.exists(cache):
        return torch.load(cache)
    data = [tokenizer(line) for line in open(os.path.join(data_dir, "train.txt"))]
    torch.save(data, cache)
    # CHECK-MESSAGES: :[[@LINE-1]]:5: error: on a first run every rank finds the file missing and runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]
    return data


def tokenized_on_rank0_first(data_dir, tokenizer):
    # hard negative: rank 0 builds the cache, the others wait, then read it
    cache = os.path.join(data_dir, "val.tokens.pt")
    if dist.get_rank() == 0 and not os.path.exists(cache):
        data = [tokenizer(line) for line in open(os.path.join(data_dir, "val.txt"))]
        torch.save(data, cache)
    dist.barrier()
    return torch.load(cache)


def tokenized_test(data_dir, tokenizer):
    cache = os.path.join(data_dir, "test.tokens.pt")
    if not os.path.exists(cache):
        torch.save([tokenizer(line) for line in open(os.path.join(data_dir, "test.txt"))], cache)
    return torch.load(cache)


def cached_features(model, cache):
    # hard negative: nothing here calls it; its callers' ordering (main
    # process first) decides who finds the file missing
    if not os.path.exists(cache):
        torch.save(model.state_dict(), cache)


def main(data_dir, tokenizer):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    train = tokenized(data_dir, tokenizer)
    val = tokenized_on_rank0_first(data_dir, tokenizer)
    # hard negative: main process first, the others wait for rank 0's cache
    if dist.get_rank() != 0:
        dist.barrier()
    test = tokenized_test(data_dir, tokenizer)
    if dist.get_rank() == 0:
        dist.barrier()
    return train, val, test


def tokenized_with_accelerate(accelerator, data_dir, tokenizer):
    # hard negative: Accelerate's main_process_first orders the ranks
    with accelerator.main_process_first():
        return tokenized_dev(data_dir, tokenizer)


def tokenized_dev(data_dir, tokenizer):
    cache = os.path.join(data_dir, "dev.tokens.pt")
    if not os.path.exists(cache):
        torch.save([tokenizer(line) for line in open(os.path.join(data_dir, "dev.txt"))], cache)
    return torch.load(cache)


class Checkpointer:
    # hard negative (allennlp): the sharded state's path holds the rank
    def __init__(self, out_dir, sharded):
        self._out_dir = out_dir
        self.state_is_sharded = sharded
        self._rank = dist.get_rank()

    def _model_state_path(self, epoch):
        path = os.path.join(self._out_dir, f"model_state_e{epoch}")
        if self.state_is_sharded:
            return path + f"_w{self._rank}.th"
        else:
            return path + ".th"

    def save_checkpoint(self, state, epoch):
        model_state_path = self._model_state_path(epoch)
        if not os.path.isfile(model_state_path):
            torch.save(state, model_state_path)


def train(model, loader, out_dir):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    checkpointer = Checkpointer(out_dir, sharded=True)
    for epoch in range(3):
        for x in loader:
            model(x).sum().backward()
        checkpointer.save_checkpoint(model.state_dict(), epoch)


def narrate(args):
    # LaViLa's narrator: the probe asks for the trained checkpoint in the
    # output folder; the function writes only other files there (per-rank
    # caches, a merged file), so every rank answers alike (hard negative).
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    rank = dist.get_rank()
    if args.resume:
        ckpt_path = args.resume
    elif os.path.isfile(os.path.join(args.output_dir, "checkpoint_best.pt")):
        ckpt_path = os.path.join(args.output_dir, "checkpoint_best.pt")
    else:
        raise Exception("no checkpoint found")
    ckpt = torch.load(ckpt_path, map_location="cpu")
    torch.save(ckpt["state_dict"], os.path.join(args.output_dir, "cache.{}.pkl".format(rank)))
    dist.barrier()
    if rank == 0:
        torch.save(ckpt, os.path.join(args.output_dir, "total.pkl"))


class VQAClassificationDataset(torch.utils.data.Dataset):
    # vilbert-multi-task's datasets: every rank that makes the dataset finds
    # the cache missing on a first run and pickles it (pickle's C module,
    # `import _pickle as cPickle`) to one path.
    def __init__(self, cache_path, entries):
        if not os.path.exists(cache_path):
            self.entries = entries
            cPickle.dump(self.entries, open(cache_path, "wb"))  # CHECK-MESSAGES: :[[@LINE]]:13: error: on a first run every rank finds the file missing and runs '_pickle.dump' to the same path{{.*}} [ddp-unguarded-save]
        else:
            self.entries = cPickle.load(open(cache_path, "rb"))


def load_datasets(cache_path, entries):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    train = VQAClassificationDataset(cache_path, entries)
    dist.barrier()
    return train


class OutputFormat:
    # hard negative: a logger's output file, opened where the logger is
    # made; only datasets' constructors are read where they are made
    def __init__(self, path):
        if not os.path.exists(path):
            self.file = open(path, "wt")


def configure_logger(path):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    fmt = OutputFormat(path)
    dist.barrier()
    return fmt


class SyncedCorpus(torch.utils.data.Dataset):
    # Transformer-XL's corpus: its constructor waits in a barrier, so making
    # it on rank 0 alone hangs the others (named by the class made).
    def __init__(self, path):
        dist.barrier()
        self.data = torch.load(path)


def corpus_on_rank0(path):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    if dist.get_rank() == 0:
        return SyncedCorpus(path)  # CHECK-MESSAGES: :[[@LINE]]:16: error: call to 'SyncedCorpus', which runs barrier, runs only on ranks where 'dist.get_rank() == 0' holds{{.*}} [ddp-divergent-collective]
    return None
