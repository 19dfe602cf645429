"""A probe through a path helper asks about the helper's file, not the folder's.

projected-gan probes `os.path.isfile(misc.get_ckpt_path(run_dir))` once at
start-up to resume, and rank 0 opens `run_dir/stats.jsonl` for writing
before the loop, with no collective in between.  The helper's literal
(`network-snapshot.pkl`) and the write's (`stats.jsonl`) share nothing: no
rank can see the other's file half-written, so the probe answers alike and
the restart broadcast in the loop is every rank's (rank 0's snapshot with
no barrier after it is its own report).  A probe of the very
file that a rank writes without waiting stays rank-local.
"""
import datetime
import os
import pickle
import time

import torch
import torch.distributed as dist


def ckpt_path(run_dir):
    return os.path.join(run_dir, "network-snapshot.pkl")


def training_loop(rank, run_dir, restart_every, num_gpus, snapshot_ticks, state):
    dist.init_process_group("nccl", rank=rank, world_size=num_gpus, timeout=datetime.timedelta(seconds=1800))
    start_time = time.time()
    restart = torch.tensor(0.0, device="cuda")
    resume_pkl = None
    if restart_every > 0 and os.path.isfile(ckpt_path(run_dir)):
        resume_pkl = ckpt_path(run_dir)
    stats_jsonl = None
    if rank == 0:
        stats_jsonl = open(os.path.join(run_dir, "stats.jsonl"), "wt")
    cur_tick = 0
    while True:
        done = False
        if rank == 0 and restart_every > 0 and time.time() - start_time > restart_every:
            restart = torch.tensor(1.0, device="cuda")
        dist.broadcast(restart, 0)
        if restart:
            done = True
            dist.barrier()
        if rank == 0 and restart_every > 0 and (done or cur_tick % snapshot_ticks == 0):  # CHECK-MESSAGES: :[[@LINE]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
            with open(ckpt_path(run_dir), "wb") as f:
                pickle.dump(state, f)
        cur_tick += 1
        if done:
            break
    return resume_pkl, stats_jsonl


def cache_once(rank, run_dir, state):
    if os.path.isfile(ckpt_path(run_dir)):
        state = torch.load(ckpt_path(run_dir))
        dist.broadcast(state, 0)  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'broadcast' runs only on ranks where 'os.path.isfile(ckpt_path(run_dir))' holds{{.*}} [ddp-divergent-collective]
    if rank == 0:
        with open(ckpt_path(run_dir), "wb") as f:
            pickle.dump(state, f)
