"""Text that rank 0 writes for people and nothing reads back during the run
(generated samples, an evaluation's `results.json`, a one-line tracker) is a
record: no rank can read it half-written.  A text file the same function
hands on after writing it (a file list other ranks load) is not.
"""
import datetime
import json
import os

import torch
import torch.distributed as dist


def generate(model, args, prompts):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    # Hard negative: the samples' output file, written for people.
    if dist.get_rank() == 0:
        out = open(args.sample_output_file, "w+")
    for p in prompts:
        t = model(p)
        dist.all_reduce(t)
        if dist.get_rank() == 0:
            out.write(str(t) + "\n")


def validate(model, args, evaluate):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    for epoch in range(10):
        scores = evaluate(model)
        dist.all_reduce(scores)
        # Hard negative: the scores and the best iteration, as text.
        if dist.get_rank() == 0:
            with open(os.path.join(args.log_dir, "results.json"), "w") as f:
                f.write(json.dumps({"score": scores.item()}) + "\n")
            with open(os.path.join(args.save, "best_checkpointed_iteration.txt"), "w") as f:
                f.write(str(epoch))


def list_shards(root, model):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    index_file = os.path.join(root, "shards.txt")
    if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        with open(index_file, "w") as f:
            f.write("\n".join(sorted(os.listdir(root))))
    dist.all_reduce(model)
    with open(index_file) as f:
        return f.read().split()


def makedirs(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def evaluate_tasks(model, tasks, args):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    # Hard negative: each task's predictions, through a helper that makes the
    # folder and hands the path back (FlagEmbedding's eval scripts); rank 0
    # only reads such a file, in a later run.
    for task in tasks:
        save_path = os.path.join(args.output_dir, task + ".json")
        if args.load_result and dist.get_rank() == 0:
            with open(save_path) as f:
                preds = f.read().split()
        preds = model(task)
        dist.all_reduce(preds)
        if dist.get_rank() == 0:
            with open(makedirs(save_path), "w") as f:
                f.write(json.dumps(preds.tolist()) + "\n")


def shard_list_through_helper(root, model):
    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    index_file = os.path.join(root, "shards.txt")
    if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        with open(makedirs(index_file), "w") as f:
            f.write("\n".join(sorted(os.listdir(root))))
    dist.all_reduce(model)
    with open(index_file) as f:
        return f.read().split()
