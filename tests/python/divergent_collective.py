"""ddp-divergent-collective on explicit torch.distributed collectives.

True positives first, then hard negatives.  Each function holds one
rank-dependent decision (one finding per decision), and the process group is
created by the launcher script that imports these helpers.
"""
import math
import os
import shutil
import sys
import datetime

import time
import torch
import torch.distributed as dist
from tqdm import tqdm


# ---- true positives ---------------------------------------------------------


def reduce_metrics_on_main(metrics):
    # Only rank 0 enters the all_reduce: the others never join it.
    rank = dist.get_rank()
    if rank == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_reduce [ddp-divergent-collective]
        dist.all_reduce(metrics, op=dist.ReduceOp.SUM)
        metrics /= dist.get_world_size()
    return metrics


def share_vocab(vocab_ids):
    # Rank 0 (the source) never joins its own broadcast.
    if dist.get_rank() == 0:
        print("rank 0 built the vocabulary")
    else:
        dist.broadcast(vocab_ids, src=0)  # CHECK-MESSAGES: :[[@LINE]]:9: error: broadcast [ddp-divergent-collective]
    return vocab_ids


def evaluate(model, batches, device):
    correct = torch.zeros(2, device=device)
    with torch.no_grad():
        for x, y in batches:
            pred = model(x).argmax(dim=-1)
            correct[0] += (pred == y).sum()
            correct[1] += y.numel()
    dist.all_reduce(correct)
    return (correct[0] / correct[1]).item()


def validate_on_main_only(model, val_batches, device, epoch):
    is_main = dist.get_rank() == 0
    if is_main:
        # evaluate() all_reduces: rank 0 waits there for ranks that never come.
        # CHECK-MESSAGES: :[[@LINE+1]]:15: error: evaluate [ddp-divergent-collective]
        acc = evaluate(model, val_batches, device)
        print(f"epoch {epoch}: val acc {acc:.3f}")


def log_then_sync(step, loss_value):
    if dist.get_rank() != 0:
        return
    print(f"step {step} loss {loss_value:.4f}")
    dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:5: error: barrier [ddp-divergent-collective]


def finish_run(summary):
    # Workers leave early; rank 0 waits in the barrier forever.
    if int(os.environ["RANK"]) > 0:
        sys.exit(0)
    print(summary)
    # CHECK-MESSAGES: :[[@LINE+1]]:5: error: barrier [ddp-divergent-collective]
    dist.barrier()


def load_resume_state(path, state):
    rank = int(os.environ.get("RANK", "0"))
    if rank == 0 and not os.path.isfile(path):
        raise FileNotFoundError(f"no checkpoint at {path}")
    # CHECK-MESSAGES: :[[@LINE+1]]:5: error: broadcast [ddp-divergent-collective]
    dist.broadcast(state, src=0)
    return state


def exchange_in_rank_order(grads, stats, gathered):
    # Even ranks all_reduce first, odd ranks all_gather first.
    if dist.get_rank() % 2 == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: {{.*}} [ddp-divergent-collective]
        dist.all_reduce(grads)
        dist.all_gather_into_tensor(gathered, stats)
    else:
        dist.all_gather_into_tensor(gathered, stats)
        dist.all_reduce(grads)


def train_until_local_convergence(model, batches, optimizer, loss_fn):
    flat = torch.zeros(1)
    for x, y in batches:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        flat = torch.cat([p.grad.flatten() for p in model.parameters()])
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_reduce [ddp-divergent-collective]
        dist.all_reduce(flat)
        optimizer.step()
        if loss.item() < 1e-3:  # this rank's loss: the others keep reducing
            break
    return flat


def skip_non_finite(model, batches, loss_fn):
    for x, y in batches:
        loss = loss_fn(model(x), y)
        if not torch.isfinite(loss):
            continue
        loss.backward()
        grads = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(grads)  # CHECK-MESSAGES: :[[@LINE]]:9: error: all_reduce [ddp-divergent-collective]


def fit_to_target(model, x, y, loss_fn, target):
    loss = loss_fn(model(x), y)
    while loss.item() > target:  # a per-rank trip count
        loss.backward()
        for p in model.parameters():
            # CHECK-MESSAGES: :[[@LINE+1]]:13: error: all_reduce [ddp-divergent-collective]
            dist.all_reduce(p.grad)
        loss = loss_fn(model(x), y)


def reduce_over_my_shards(all_files, acc, load_fn):
    rank, world = dist.get_rank(), dist.get_world_size()
    # 10 files on 4 ranks: ranks 0 and 1 get 3 files, ranks 2 and 3 get 2.
    for path in all_files[rank::world]:
        acc += load_fn(path)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_reduce [ddp-divergent-collective]
        dist.all_reduce(acc)
    return acc


def build_cache_once(cache_dir, data, t):
    # The probe races the write it guards: a rank that asks after rank 0 has
    # written the cache skips the barrier rank 0 and the slower ranks are in.
    cache = os.path.join(cache_dir, "cache.pt")
    if not os.path.exists(cache):
        if dist.get_rank() == 0:
            torch.save(data, cache)
        dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:9: error: barrier [ddp-divergent-collective]
    dist.all_reduce(t)
    return t


def async_reduce_on_main(t):
    is_main = dist.get_rank() == 0
    # CHECK-MESSAGES: :[[@LINE+1]]:12: error: all_reduce [ddp-divergent-collective]
    work = dist.all_reduce(t, async_op=True) if is_main else None
    if work is not None:
        work.wait()
    return t


def make_pair_group():
    # new_group must be called by every rank, members or not.
    rank = dist.get_rank()
    if rank in (0, 1):
        # CHECK-MESSAGES: :[[@LINE+1]]:16: error: new_group [ddp-divergent-collective]
        return dist.new_group(ranks=[0, 1], timeout=datetime.timedelta(minutes=5))
    return None


def share_config_from_main(config):
    objects = [config]
    if dist.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: broadcast_object_list [ddp-divergent-collective]
        dist.broadcast_object_list(objects, src=0)
    return objects[0]


def stop_check_before_agreement(loss, best):
    # The flag is tested before the all_reduce agrees it: rank-local.
    flag = torch.tensor([1.0 if loss.item() > best else 0.0])
    if flag.item() > 0:
        return True
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)  # CHECK-MESSAGES: :[[@LINE]]:5: error: all_reduce [ddp-divergent-collective]
    return bool(flag.item())


def branch_on_reduced_value(total):
    # reduce() leaves the sum on dst only: the other ranks still hold their own value.
    dist.reduce(total, dst=0)
    if total.item() > 1000.0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: barrier [ddp-divergent-collective]
        dist.barrier()
    return total


def gather_predictions_on_main(preds, world_size):
    local_rank = int(os.environ["LOCAL_RANK"])
    if local_rank == 0:
        out = [None] * world_size
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: all_gather_object [ddp-divergent-collective]
        dist.all_gather_object(out, preds)
        return out
    return None


# ---- hard negatives -----------------------------------------------------------


def main_process_first(build_dataset):
    # Every rank runs exactly one barrier: rank 0 after preparing, the others before.
    rank = dist.get_rank()
    if rank != 0:
        dist.barrier()
    dataset = build_dataset()
    if rank == 0:
        dist.barrier()
    return dataset


def legacy_main_process_first(args, load_and_cache_examples, tokenizer):
    # The transformers examples' old idiom (torch.distributed.launch --local_rank).
    if args.local_rank not in [-1, 0]:
        torch.distributed.barrier()
    dataset = load_and_cache_examples(args, tokenizer)
    if args.local_rank == 0:
        torch.distributed.barrier()
    return dataset


def identical_arms(t):
    if dist.get_rank() == 0:
        dist.all_reduce(t)
    else:
        dist.all_reduce(t)
    return t


def world_size_guard(t):
    if dist.get_world_size() > 1:
        dist.all_reduce(t)
        t /= dist.get_world_size()
    return t


def initialized_guard():
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def pipeline_handoff(activations):
    # Point-to-point calls pair by rank; they are not collectives.
    rank = dist.get_rank()
    if rank == 0:
        dist.send(activations, dst=1)
    else:
        dist.recv(activations, src=0)
    return activations


def ring_exchange(send_buf, recv_buf):
    rank, world = dist.get_rank(), dist.get_world_size()
    reqs = []
    if rank % 2 == 0:
        reqs.append(dist.isend(send_buf, (rank + 1) % world))
        reqs.append(dist.irecv(recv_buf, (rank - 1) % world))
    else:
        reqs.append(dist.irecv(recv_buf, (rank - 1) % world))
        reqs.append(dist.isend(send_buf, (rank + 1) % world))
    for r in reqs:
        r.wait()
    return recv_buf


def agreed_early_stop(model, batches, loss_fn, optimizer, device, patience_loss):
    for x, y in batches:
        loss = loss_fn(model(x), y)
        loss.backward()
        grads = torch.cat([p.grad.flatten() for p in model.parameters()])
        dist.all_reduce(grads)
        optimizer.step()
        stop = torch.tensor([1.0 if loss.item() < patience_loss else 0.0], device=device)
        dist.all_reduce(stop, op=dist.ReduceOp.MAX)
        if stop.item() > 0:  # agreed: every rank breaks together
            break


def restore_if_present(model, ckpt_path):
    # A resume path on the storage every rank reads, and nothing here writes
    # it: every rank finds the same file (edm's --resume, torchtune's DCP
    # metadata).
    if os.path.exists(ckpt_path):
        state = torch.load(ckpt_path, map_location="cpu")
        model.load_state_dict(state["model"])
        dist.barrier()
    return model


def agreed_decision_by_broadcast(ckpt_path, t):
    decision = [os.path.exists(ckpt_path)]
    dist.broadcast_object_list(decision, src=0)
    if not decision[0]:
        return None
    dist.broadcast(t, src=0)
    return t


def agreed_flag_tensor(ckpt_path, device):
    flag = torch.zeros(1, device=device)
    if dist.get_rank() == 0:
        flag.fill_(1.0 if os.path.exists(ckpt_path) else 0.0)
    dist.broadcast(flag, src=0)
    if flag.item() > 0:
        dist.barrier()
    return flag


def agreed_while_loop(step_fn, tol, device):
    done = torch.zeros(1, device=device)
    while done.item() == 0:
        loss = step_fn()
        done.fill_(1.0 if loss.item() < tol else 0.0)
        dist.all_reduce(done, op=dist.ReduceOp.MAX)
    return done


def rank0_logging(step, loss, t):
    rank = dist.get_rank()
    dist.all_reduce(loss)
    if rank == 0:
        print(f"step {step}: mean loss {loss.item() / dist.get_world_size():.4f}")
        tqdm.write("logged")
    dist.all_reduce(t)
    return t


def uniform_epoch_loop(args, t):
    for epoch in range(args.epochs):
        dist.all_reduce(t)
        if epoch % args.eval_every == 0:
            dist.barrier()
    if args.do_eval:
        dist.all_reduce(t)
    return t


def rank0_fills_then_everyone_broadcasts(t):
    if dist.get_rank() == 0:
        t.copy_(torch.arange(t.numel(), dtype=t.dtype).view_as(t))
    dist.broadcast(t, src=0)
    return t


def gather_with_rank_dependent_arguments(t, world_size):
    rank = dist.get_rank()
    buckets = [torch.zeros_like(t) for _ in range(world_size)] if rank == 0 else None
    dist.gather(t, gather_list=buckets, dst=0)
    chunks = list(torch.arange(world_size * 4.0).chunk(world_size)) if rank == 0 else None
    out = torch.zeros(4)
    dist.scatter(out, scatter_list=chunks, src=0)
    return buckets, out


def broadcast_objects_from_main(build_config):
    if dist.get_rank() == 0:
        objs = [build_config()]
    else:
        objs = [None]
    dist.broadcast_object_list(objs, src=0)
    return objs[0]


def branch_on_all_gathered(local_count, world_size):
    counts = [None] * world_size
    dist.all_gather_object(counts, local_count)
    if sum(counts) == 0:
        return 0
    dist.barrier()
    return sum(counts)


def serialised_print(msg):
    # Every rank takes its turn; every rank runs world_size barriers.
    rank, world = dist.get_rank(), dist.get_world_size()
    for r in range(world):
        if r == rank:
            print(f"[rank {rank}] {msg}")
        dist.barrier()


def lora_rank_is_not_the_process_rank(args, t):
    rank = args.lora_rank  # the LoRA rank (r), the same on every process
    if rank > 8:
        dist.all_reduce(t)
    return t


def stop_on_non_finite_loss(model, loader):
    # MAE's engine: one rank's NaN loss ends that process; the others wait in
    # the all_reduce.  Worded as an exit, not a throw.
    for batch in loader:
        loss = model(batch).sum()
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            sys.exit(1)
        loss.backward()
        dist.all_reduce(loss)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' is skipped by ranks where 'math.isfinite(loss_value)' does not hold (a rank-local value): they exit ('sys.exit') while the other ranks run it; {{.*}} [ddp-divergent-collective]


def evaluate_agreed(model, loader):
    total = torch.zeros(2)
    for batch in loader:
        total[0] += model(batch).item()
        total[1] += 1
    dist.all_reduce(total)
    mean = total[0] / total[1]
    return mean


def early_stop_on_agreed_loss(model, loader):
    # Hard negative: the helper returns what it all-reduced, so every rank
    # sees the same loss and stops together (the helper is defined above).
    best = float("inf")
    for epoch in range(100):
        loss = evaluate_agreed(model, loader)
        if loss > best:
            break
        best = loss
        dist.barrier()


def evaluation_end(outputs, world_size):
    # trlx's validation_epoch_end: the shards' metrics gathered, then averaged.
    gathered = torch.empty(outputs.shape[0] * world_size)
    dist.all_gather_into_tensor(gathered, outputs)
    return {"val/reward": gathered.mean()}


def save_on_gathered_reward(model, loader, world_size):
    # Hard negative: the helper's mean is over every rank's gathered values.
    for batch in loader:
        metrics = evaluation_end(model(batch), world_size)
        if metrics["val/reward"] > 0:
            dist.barrier()


def save_on_new_best(model, loader, args):
    # Hard negative: `best_val_loss = float("inf")` is a constant, not this
    # rank's loss (pytorch/examples' FSDP T5 trainer).
    best_val_loss = float("inf")
    curr_val_loss = float("inf")
    for epoch in range(args.epochs):
        if args.run_validation:
            curr_val_loss = evaluate_agreed(model, loader)
        if args.save_model and curr_val_loss < best_val_loss:
            dist.barrier()
        if curr_val_loss < best_val_loss:
            best_val_loss = curr_val_loss


def load_data(dataset, batch_size):
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, drop_last=True)
    while True:
        yield from loader


class MicrobatchTrainLoop:
    """guided-diffusion's TrainLoop: batches come from next() on a generator
    over a loader; every rank draws as many samples per batch, so the running
    count and the micro-batch loop agree (hard negatives)."""

    def __init__(self, dataset, microbatch):
        self.data = load_data(dataset, 16)
        self.microbatch = microbatch

    def run_loop(self, grads, num_samples):
        num_complete = 0
        while num_complete < num_samples:
            batch, cond = next(self.data)
            self.forward_backward(batch, cond, grads)
            num_complete += dist.get_world_size() * batch.shape[0]

    def forward_backward(self, batch, cond, grads):
        for i in range(0, batch.shape[0], self.microbatch):
            micro = batch[i:i + self.microbatch]
            if micro.requires_grad:  # tensor metadata: the same on every rank
                dist.all_reduce(grads)


def per_token_chunks(batch, chunk, grads):
    # The padded length (dimension 1) is this rank's batch's: it differs.
    for i in range(0, batch.shape[1], chunk):
        dist.all_reduce(grads)  # CHECK-MESSAGES: :[[@LINE]]:9: error: {{.*}}trip count{{.*}} [ddp-divergent-collective]


def accumulate_then_step(loader, total_updates, accumulation_steps, grads):
    # Accelerate's gradient accumulation for causal LMs: the step's batches are
    # drawn first; a list of batches is as long on every rank.
    training_iterator = iter(loader)
    for update_step in range(total_updates):
        batch_samples = []
        for _ in range(accumulation_steps):
            batch_samples += [next(training_iterator)]
        for i, batch in enumerate(batch_samples):
            dist.all_reduce(grads)


def log_reduced_losses(loss_dict):
    # dinov2's train loop: with more than one rank (the only case where ranks
    # can disagree) every value is all-reduced, so the NaN test agrees.
    if dist.get_world_size() > 1:
        for v in loss_dict.values():
            dist.all_reduce(v)
    loss_dict_reduced = {k: v.item() / dist.get_world_size() for k, v in loss_dict.items()}
    if math.isnan(sum(loss_dict_reduced.values())):
        raise AssertionError("NaN detected")
    dist.barrier()


def reduce_logged_losses(losses, args):
    # open_clip: a dict of this rank's losses has the same keys on every rank.
    reduce_loss = args.distributed and args.world_size > 1
    reduced = {key: val.detach().float().clone() for key, val in losses.items()}
    if reduce_loss:
        for v in reduced.values():
            dist.all_reduce(v)
            v /= args.world_size
    return reduced


def nan_check_before_reduction(loss_dict):
    # The same NaN test on this rank's own losses: one rank raises alone.
    if math.isnan(sum(v.item() for v in loss_dict.values())):
        raise AssertionError("NaN detected")
    dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:5: error: {{.*}} [ddp-divergent-collective]


def gather_features(image_features, gather_with_grad=False, world_size=1):
    # open_clip: a flag named after the data (`..._grad`, `reduce_loss`) is a
    # setting every rank shares, not this rank's gradient.
    if gather_with_grad:
        return torch.cat(torch.distributed.nn.all_gather(image_features), dim=0)
    gathered = [torch.zeros_like(image_features) for _ in range(world_size)]
    dist.all_gather(gathered, image_features)
    return torch.cat(gathered, dim=0)


def cached_stats(opts, cache_file, compute):
    # stylegan2-ada's metric cache: rank 0 probes the file and broadcasts the
    # answer (the buffer passed as `tensor=`), so every rank takes one branch.
    flag = os.path.isfile(cache_file) if opts.rank == 0 else False
    if opts.num_gpus > 1:
        flag = torch.as_tensor(flag, dtype=torch.float32, device=opts.device)
        torch.distributed.broadcast(tensor=flag, src=0)
        flag = (float(flag.cpu()) != 0)
    if flag:
        return torch.load(cache_file)
    stats = compute()
    dist.barrier()
    return stats


def parse_losses(losses):
    # mmseg's parse_losses (dinov2's depther): a type check is the code's, the
    # same on every rank; the raise is not one rank's alone.
    log_vars = {}
    for loss_name, loss_value in losses.items():
        if isinstance(loss_value, torch.Tensor):
            log_vars[loss_name] = loss_value.mean()
        else:
            raise TypeError(f"{loss_name} is not a tensor")
    for loss_name, loss_value in log_vars.items():
        loss_value = loss_value.data.clone()
        dist.all_reduce(loss_value.div_(dist.get_world_size()))
        log_vars[loss_name] = loss_value.item()
    return log_vars


def auto_resume(config, model, create_logger, find_checkpoint, reduce_tensor):
    # Swin-Transformer: the logger (made with the rank) chooses where messages
    # go; the checkpoint every rank finds in the shared folder is the same.
    logger = create_logger(output_dir=config.OUTPUT, dist_rank=dist.get_rank())
    resume_file = find_checkpoint(config.OUTPUT, logger)
    if resume_file:
        model.load_state_dict(torch.load(resume_file))
        acc = reduce_tensor(torch.ones(1))
        dist.all_reduce(acc)


def broadcast_file_in_chunks(path, chunk):
    # guided-diffusion's dist_util.load_state_dict: rank 0 alone loops over its
    # bytes; the others loop over the count it broadcast first. One rank runs
    # each loop, so neither trip count has another rank to differ from.
    if dist.get_rank() == 0:
        with open(path, "rb") as f:
            data = f.read()
        n = torch.tensor([(len(data) + chunk - 1) // chunk])
        dist.broadcast(n, src=0)
        for i in range(0, len(data), chunk):
            dist.broadcast(torch.frombuffer(data[i:i + chunk], dtype=torch.uint8), src=0)
    else:
        n = torch.zeros(1, dtype=torch.long)
        dist.broadcast(n, src=0)
        for _ in range(int(n.item())):
            dist.broadcast(torch.empty(chunk, dtype=torch.uint8), src=0)


def inception_stats(image_path, num_expected, load):
    # edm's calculate_inception_stats: rank 0 goes first, the others follow;
    # a raise between the two barriers is every rank's (a setting they share).
    if dist.get_rank() != 0:
        torch.distributed.barrier()
    dataset = load(image_path)
    if num_expected is not None and len(dataset) < num_expected:
        raise ValueError(f"found {len(dataset)} images, expected {num_expected}")
    if dist.get_rank() == 0:
        torch.distributed.barrier()
    return dataset


def inception_stats_rank0_raises(image_path, num_expected, load):
    # The raise is rank 0's alone: the others wait in the first barrier.
    if dist.get_rank() != 0:
        torch.distributed.barrier()  # CHECK-MESSAGES: :[[@LINE]]:9: error: {{.*}} [ddp-divergent-collective]
    dataset = load(image_path)
    if dist.get_rank() == 0 and len(dataset) < num_expected:
        raise ValueError("too few images")
    if dist.get_rank() == 0:
        torch.distributed.barrier()
    return dataset


def preprocess_first_asserted(path, data_path):
    # hard negative: FastChat's train_flant5.py.  Rank 0 goes first; the others
    # wait, then find the file.  The assert says only rank 0 builds it: a rank
    # that failed it would crash the job, never reach the second barrier.
    if dist.get_rank() != 0:
        dist.barrier()
    if os.path.exists(path):
        with open(path, "r") as f:
            data = f.read()
        if dist.get_rank() == 0:
            dist.barrier()
    else:
        assert dist.get_rank() == 0, "Only the first process should process"
        data = open(data_path, "r").read()
        with open(path, "w") as f:
            f.write(data)
        dist.barrier()
    return data


def preprocess_first_unasserted(path, data_path):
    # Without the assert, a rank that does not see rank 0's file (storage that
    # is not shared) builds it too and waits in a second barrier.
    if dist.get_rank() != 0:
        dist.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier runs only on ranks where 'dist.get_rank() != 0' holds; {{.*}} [ddp-divergent-collective]
    if os.path.exists(path):
        with open(path, "r") as f:
            data = f.read()
        if dist.get_rank() == 0:
            dist.barrier()
    else:
        data = open(data_path, "r").read()
        with open(path, "w") as f:
            f.write(data)
        dist.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier runs only on ranks where 'os.path.exists(path)' does not hold (a rank-local value); {{.*}} [ddp-divergent-collective]
    return data


class ShardedAdam:
    # hard negative: modded-nanogpt's gradient hook.  Whether a parameter has
    # a gradient is the model's, the same on every rank; only its values are
    # the rank's.
    def __init__(self, world_size):
        self.world_size = world_size

    def hook(self, param):
        grad = param.grad
        rank_size = grad.shape[0] // self.world_size
        if grad is not None:
            dist.reduce_scatter_tensor(torch.empty_like(grad[:rank_size]), grad)


class ZLossCriterion(torch.nn.CrossEntropyLoss):
    def __init__(self, coefficient):
        super().__init__()
        self.coefficient = coefficient


def train_with_criterion_named_loss(model, data, t, args):
    # hard negative: open_lm's `loss = CrossEntropyLossWithZLoss(args.z)` is
    # the criterion, an object a constructor made, not the rank's loss: what
    # it is set to is every rank's
    loss = ZLossCriterion(args.z_loss_coefficient)
    for x, y in data:
        loss(model(x), y).backward()
    if loss.coefficient > 0:
        dist.all_reduce(t)


def config_check_after_rank0_dump(args, cfg):
    # hard negative: DINO's start-up.  Rank 0 dumps the config, then every
    # rank checks the same keys and raises on the same one: the raise in the
    # loop is every rank's.
    if args.rank == 0:
        with open(os.path.join(args.output_dir, "config.json"), "w") as f:
            f.write(str(vars(args)))
    args_vars = vars(args)
    for k, v in cfg.items():
        if k not in args_vars:
            setattr(args, k, v)
        else:
            raise ValueError(f"key {k} is set by args")
    dist.barrier()


def raise_on_rank_local_value_in_loop(batches, model):
    # The same loop with a rank-local test: the rank that raises leaves the
    # others in the barrier.
    for x in batches:
        loss = model(x).sum()
        if not math.isfinite(loss.item()):
            raise RuntimeError("non-finite loss")
    dist.barrier()
    # CHECK-MESSAGES: :[[@LINE-1]]:5: error: barrier is never reached by ranks where 'math.isfinite(loss.item())' does not hold (a rank-local value): they throw early {{.*}} [ddp-divergent-collective]


class AllReduceGrad(torch.autograd.Function):
    # jepa's AllReduce: the collective is in the Function's forward, which
    # `AllReduceGrad.apply(x)` runs
    @staticmethod
    def forward(ctx, x):
        x = x.clone()
        dist.all_reduce(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


def reduce_through_autograd_function_on_main(z):
    if dist.get_rank() == 0:
        z = AllReduceGrad.apply(z)
        # CHECK-MESSAGES: :[[@LINE-1]]:13: error: call to 'AllReduceGrad.apply', which runs collective 'all_reduce', runs only on ranks where 'dist.get_rank() == 0' holds; {{.*}} [ddp-divergent-collective]
    return z


def rank0_nan_check_returns(model, batches, meter, args):
    # open_lm's train_one_epoch: only the master checks the (all-reduced) loss
    # it logs, every 10 steps, and returns on NaN while the others go on into
    # the next step's all_reduce
    for i, x in enumerate(batches):
        loss = model(x).sum().detach()
        dist.all_reduce(loss)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' is skipped by ranks where 'dist.get_rank() == 0' holds: they return while the other ranks run further iterations; {{.*}} [ddp-divergent-collective]
        if dist.get_rank() == 0:
            meter.update(loss.item())
            if i % 10 == 0:
                if math.isnan(meter.val):
                    return False
    return True


def reduce_through_autograd_function_everywhere(z):
    # hard negative: every rank runs the Function's forward
    return AllReduceGrad.apply(z)


def rank0_logs_then_stops_on_shared_flag(model, batches, meter, stop):
    # hard negative: the rank-0 block closed before the exit; the exit's own
    # decision (an all-reduced flag) is every rank's, and every rank makes it
    for x in batches:
        loss = model(x).sum().detach()
        dist.all_reduce(loss)
        if dist.get_rank() == 0:
            meter.update(loss.item())
        flag = torch.tensor([float(stop(loss))])
        dist.all_reduce(flag)
        if flag.item() > 0:
            return False
    return True


def gather_norm_set_on_sync_steps(accelerator, model, loss, clip):
    # hard negative (PixArt-alpha's train loop): the norm is None or a tensor
    # by `sync_gradients`, which every rank shares; only its value is the rank's
    grad_norm = None
    accelerator.backward(loss)
    if accelerator.sync_gradients:
        grad_norm = accelerator.clip_grad_norm_(model.parameters(), clip)
    if grad_norm is not None:
        return accelerator.gather(grad_norm).mean().item()
    return 0.0


def gather_norm_set_on_local_loss(accelerator, model, loss, clip):
    # ...but set under a test of this rank's loss, its presence is the rank's
    grad_norm = None
    accelerator.backward(loss)
    if loss.item() > 1.0:
        grad_norm = accelerator.clip_grad_norm_(model.parameters(), clip)
    if grad_norm is not None:
        return accelerator.gather(grad_norm).mean().item()
        # CHECK-MESSAGES: :[[@LINE-1]]:16: error: collective 'accelerator.gather' runs only on ranks where 'grad_norm is not None' holds (a rank-local value); {{.*}} [ddp-divergent-collective]
    return 0.0


def resume_step_from_shared_file(resume_dir, grads):
    # hard negative (LlamaGen's FSDP resume): a file at a path every rank
    # names holds the same step for every rank, as a torch.load'ed one does
    with open(os.path.join(resume_dir, "resume_step.txt")) as f:
        step = int(f.read().strip())
    if step % 100 == 0:
        dist.all_reduce(grads)


def resume_step_from_rank_file(resume_dir, grads):
    # ...each rank's own file may hold its own step
    with open(os.path.join(resume_dir, f"step_{dist.get_rank()}.txt")) as f:
        step = int(f.read().strip())
    if step % 100 == 0:
        dist.all_reduce(grads)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where 'step % 100 == 0' holds (a rank-local value); {{.*}} [ddp-divergent-collective]


def checkpoint_on_local_step(model, loader, ckpt_every, global_rank):
    # LlamaGen's FSDP checkpoint on a step count this rank alone knows: the
    # barrier after the rank-0 save runs where the step test holds; the closed
    # `if global_rank == 0` does not decide whether a rank reaches it
    train_steps = int(time.time())
    for x in loader:
        model(x).sum().backward()
        train_steps += 1
        if train_steps % ckpt_every == 0:
            state = model.state_dict()
            if global_rank == 0:
                torch.save(state, "consolidated.pth")
            dist.barrier()
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: barrier runs only on ranks where 'train_steps % ckpt_every == 0' holds (a rank-local value); {{.*}} [ddp-divergent-collective]


def progress_bar_on_rank0_only(n, iterations, rank, model):
    # hard negative (SiT's and DiT's sample_ddp.py): a progress bar on rank 0
    # goes over the same range as the bare one on the others
    pbar = range(iterations)
    pbar = tqdm(pbar) if rank == 0 else pbar
    for _ in pbar:
        model(torch.randn(n))
        dist.barrier()



def exit_on_nan_then_clip_setting(model, loader, max_norm):
    # VideoMAEv2's engine: after one rank's exit on a non-finite loss, the
    # others take a setting's branch (the same on every rank), one arm of
    # which all-reduces: the exiting rank never makes that decision
    for batch in loader:
        loss = model(batch).mean()
        if not math.isfinite(loss.item()):
            sys.exit(2)
        if max_norm > 0:
            print("clip", max_norm)
        else:
            dist.all_reduce(loss)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: collective 'all_reduce' is skipped by ranks where 'math.isfinite(loss.item())' does not hold (a rank-local value): they exit ('sys.exit') {{.*}} [ddp-divergent-collective]


def exit_on_agreed_nan_then_clip_setting(model, loader, max_norm):
    # hard negative: the same shape, but the loss every rank tests was
    # all-reduced first, so every rank exits or none does
    for batch in loader:
        loss = model(batch).mean()
        dist.all_reduce(loss)
        if not math.isfinite(loss.item()):
            sys.exit(2)
        if max_norm > 0:
            print("clip", max_norm)
        else:
            dist.all_reduce(loss)


def progress_reported_by_the_main_process(trainer, itr, cfg, progress_bar):
    # hard negative (fairseq's train): the progress bar over the epoch's
    # batches reports to wandb on the main process only; the batches, and so
    # the trip count, are every rank's alike
    progress = progress_bar(
        itr,
        wandb_project=cfg.wandb_project if dist.get_rank() == 0 else None,
        tensorboard_logdir=cfg.tensorboard_logdir if dist.get_rank() == 0 else None,
        azureml_logging=cfg.azureml_logging if dist.get_rank() == 0 else False,
    )
    for i, samples in enumerate(progress):
        loss = trainer.train_step(samples)
        dist.all_reduce(loss)


def progress_over_the_main_process_batches(itr, progress_bar):
    # the same call, but the main process alone gets batches: the trip count
    # is rank-dependent
    progress = progress_bar(itr if dist.get_rank() == 0 else [])
    for samples in progress:
        dist.all_reduce(samples)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs in a loop whose trip count depends on {{.*}} [ddp-divergent-collective]


def stop_on_non_finite_pair(model, loader, log_every):
    # LLaMA-Adapter: the model returns two losses, unpacked; a batch drawn
    # through the logger's generator.
    for step, (examples, labels) in enumerate(log_every(loader, 10)):
        c_loss, m_loss = model(examples, labels)
        loss = c_loss + m_loss * 0
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            sys.exit(1)
        loss.backward()
        dist.all_reduce(loss)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' is skipped by ranks where 'math.isfinite(loss_value)' does not hold (a rank-local value){{.*}} [ddp-divergent-collective]


def run_task_unless_done(model, infer_file):
    # hard negative: every rank asks whether the task's result exists, then
    # waits in the barrier before rank 0 writes it (LLaMA2-Accessory's
    # light-eval scripts): no rank asks after the write
    if os.path.exists(infer_file):
        return
    out = model.generate()
    dist.barrier()
    if dist.get_rank() == 0:
        with open(infer_file, "w") as f:
            f.write(str(out))


def evaluate_unless_logged(model, names, log_path):
    # hard negative: the same per dataset, the log read back each round and
    # appended by rank 0 between two barriers
    for ds in names:
        if os.path.exists(log_path):
            with open(log_path) as f:
                if ds in f.read():
                    continue
        out = model(ds)
        dist.barrier()
        if dist.get_rank() == 0:
            with open(log_path, "a") as f:
                f.write(f"{ds}: {out}\n")
        dist.barrier()


def evaluate_unless_logged_racing(model, names, log_path):
    # ...without the second barrier, rank 0 may append before another rank
    # asks about the next dataset
    for ds in names:
        if os.path.exists(log_path):
            with open(log_path) as f:
                if ds in f.read():
                    continue
        dist.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier {{.*}}'os.path.exists(log_path)'{{.*}} [ddp-divergent-collective]
        out = model(ds)
        if dist.get_rank() == 0:
            with open(log_path, "a") as f:
                f.write(f"{ds}: {out}\n")


def broadcast_each_image(loader, group):
    # LLaMA2-Accessory's Large-DiT: a batch moved image by image is as long
    # on every rank, so is the loop over it.
    for step, x in enumerate(loader):
        x = [img.cuda() for img in x]
        for img in x:
            dist.broadcast(img, 0, group)


def broadcast_each_kept_target(loader):
    for step, (images, targets) in enumerate(loader):
        kept = [t.cuda() for t in targets if len(t) > 0]
        for t in kept:
            dist.broadcast(t, 0)  # CHECK-MESSAGES: :[[@LINE]]:13: error: {{.*}}trip count{{.*}} [ddp-divergent-collective]


def generate(prompt):
    # Called by the UI on rank 0, once per request: the workers' loop takes
    # each request's barrier and broadcast.
    dist.barrier()
    dist.broadcast_object_list([prompt])


def worker_loop():
    while True:
        dist.barrier()
        request = [None]
        dist.broadcast_object_list(request)


def make_demo(ui):
    ui.button.click(fn=generate)


def serve_requests(ui):
    if dist.get_rank() == 0:
        make_demo(ui)
        ui.launch()
    else:
        worker_loop()


def serve_once(ui):
    if dist.get_rank() == 0:
        generate("hello")  # CHECK-MESSAGES: :[[@LINE]]:9: error: call to 'generate', which runs barrier, runs only on ranks where{{.*}} [ddp-divergent-collective]


def last_step(folder):
    if not os.path.exists(folder):
        os.makedirs(folder, exist_ok=True)
        return 0
    steps = [int(p.split("-")[1]) for p in os.listdir(folder) if p.startswith("checkpoint-")]
    return max(steps) if steps else 0


def encode_splits(raw_datasets, folder, grads):
    # hard negatives (parler-tts): the first split's columns, the splits'
    # names, and a resume step read from a folder every rank may create
    columns = next(iter(raw_datasets.values())).column_names
    for split in raw_datasets:
        total_steps = len(columns)
        start_step = last_step(os.path.join(folder, split))
        dist.barrier()
        if start_step < total_steps:
            dist.all_reduce(grads)


def first_batch_decides(train_loader, grads):
    first = next(iter(train_loader))
    if first[0].sum() > 3:
        dist.all_reduce(grads)  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'all_reduce' runs only on ranks where{{.*}} [ddp-divergent-collective]


def check_prediction_type(outputs, targets):
    # hard negative: whether the model gave a tensor is the code's, alike on every rank
    if not torch.is_tensor(outputs) or not torch.is_tensor(targets):
        raise ValueError("need tensors")
    per_sample = (outputs - targets).square().mean()
    dist.all_reduce(per_sample)
    return per_sample


def check_prediction_values(outputs, targets):
    # the same shape of code testing the tensors' values: those differ by rank
    if not torch.isfinite(outputs).all() or not torch.is_tensor(targets):
        raise ValueError("need finite outputs")
    per_sample = (outputs - targets).square().mean()
    dist.all_reduce(per_sample)  # CHECK-MESSAGES: :[[@LINE]]:5: error: collective 'all_reduce' is never reached by ranks where{{.*}} [ddp-divergent-collective]
    return per_sample


def run_evaluation(model, reduce_fn):
    reduce_fn(model(torch.ones(1)))


def evaluate_on_rank0(model):
    def reduce_metric(t):
        dist.all_reduce(t)

    # The project's helper calls what it is handed, here, on rank 0 alone.
    if dist.get_rank() == 0:
        run_evaluation(model, reduce_metric)  # CHECK-MESSAGES: :[[@LINE]]:31: error: call to 'reduce_metric', which runs collective 'all_reduce', runs only on ranks where{{.*}} [ddp-divergent-collective]


class SyncBase:
    def sync(self, t):
        dist.all_reduce(t)


class SyncChild(SyncBase):
    def sync(self, t):
        if dist.get_rank() == 0:
            # the base class's method, through super(): its collective
            super().sync(t)  # CHECK-MESSAGES: :[[@LINE]]:13: error: call to 'sync', which runs collective 'all_reduce', runs only on ranks where{{.*}} [ddp-divergent-collective]

    def sync_all(self, t):
        # hard negative: every rank
        super(SyncChild, self).sync(t)


def copy_settings_then_check_inputs(args, model, loader):
    # hard negative (Open-Sora-Plan): rank 0 copies a settings file into the
    # output folder; every rank then checks a different file, an input, whose
    # answer is the same everywhere.  Both paths are os.path.join(...): the
    # module names no file.
    if dist.get_rank() == 0:
        shutil.copy(args.mask_config, os.path.join(args.output_dir, "mask_config.yaml"))
    if not os.path.exists(os.path.join(args.pretrained, "config.json")):
        raise ValueError("no pretrained weights")
    for batch in loader:
        dist.all_reduce(model(batch))


class Progress:
    global_step = 0


def train_until_max_steps(model, loader, args):
    # hard negative (Open-Sora-Plan): the step function answers True once the
    # step counter every rank advances alike reaches the settings' maximum
    progress = Progress()

    def train_one_step(batch):
        dist.all_reduce(model(batch))
        progress.global_step += 1
        if progress.global_step >= args.max_train_steps:
            return True
        return False

    for batch in loader:
        if train_one_step(batch):
            break


def train_until_nan(model, loader):
    # ...but a step function that answers from its own loss answers per rank
    def train_step(batch):
        loss = model(batch)
        if torch.isnan(loss):
            return True
        dist.all_reduce(loss)  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'all_reduce' is never reached by ranks where 'torch.isnan(loss)' holds{{.*}} [ddp-divergent-collective]
        return False

    for batch in loader:
        # (the same bug seen again at the call: the loop's exit on that rank)
        if train_step(batch):  # CHECK-MESSAGES: :[[@LINE]]:12: error: call to 'train_step'{{.*}} [ddp-divergent-collective]
            break


def train_until_rank_says(model, loader):
    # ...and one that answers from the rank answers per rank
    def train_step(batch):
        dist.all_reduce(model(batch))
        if dist.get_rank() == 0:
            return True
        return False

    for batch in loader:
        if train_step(batch):  # CHECK-MESSAGES: :[[@LINE]]:12: error: {{.*}} [ddp-divergent-collective]
            break


def gather_losses(model, loader):
    # 1d-tokenizer: the loss dict's keys are the names the code wrote; only
    # its values are this rank's.  A test of the key is every rank's.
    for batch in loader:
        loss = model(batch)
        loss_dict = {"total_loss": loss.detach(), "d_weight": 1.0}
        for k, v in loss_dict.items():
            if k in ["d_weight"]:
                print(k, v)
            else:
                dist.all_reduce(v)
        for k in loss_dict.keys():
            if k == "total_loss":
                dist.all_reduce(loss_dict[k])


def count_tokens(model, loader, grads):
    # HF Trainer's token count (copied into LLaVA-NeXT's trainer): whether the
    # batch has the model's input key is the collator's, alike on every rank.
    for step, inputs in enumerate(loader):
        main_input_name = getattr(model, "main_input_name", "input_ids")
        if main_input_name not in inputs:
            print("cannot count tokens")
        else:
            dist.all_reduce(torch.tensor(inputs[main_input_name].numel()))
        # A value of the dict is the rank's: a test of it is not a key test.
        for k, v in inputs.items():
            if v.sum() > 0:
                dist.all_reduce(grads)  # CHECK-MESSAGES: :[[@LINE]]:17: error: collective 'all_reduce' runs only on ranks where{{.*}} [ddp-divergent-collective]


def pick_step(num_steps, device):
    idx = torch.randint(0, num_steps, (1,), device=device)
    dist.broadcast(idx, src=0)
    return int(idx.item())


def rollout(batch, num_steps):
    # FastVideo: whether the pipeline filled a field of the batch is the
    # pipeline's, alike on every rank.
    latents = batch.latents
    if latents is None:
        raise RuntimeError("TrainingBatch.latents is required")
    if batch["noise"] is None:
        raise RuntimeError("noise is required")
    return latents * pick_step(num_steps, latents.device)


def odd_local_ranks_wait(local_rank):
    # The extra barrier runs where the test holds (the message said "does not
    # hold": the test was read as "not local rank 0" and spelled as itself).
    if local_rank % 2 == 1:
        dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:9: error: barrier runs only on ranks where 'local_rank % 2 == 1' holds; {{.*}} [ddp-divergent-collective]
    dist.barrier()


def inner_training_loop(model, loader, tr_loss):
    # HF Trainer (copied into LLaVA-NeXT's): the loss of a step is checked to
    # sit on the device of the running total: the code's placement, every rank's.
    for inputs in loader:
        tr_loss_step = model(inputs)
        if tr_loss.device != tr_loss_step.device:
            raise ValueError("Calculated loss must be on the original device")
        dist.all_reduce(tr_loss_step)


def evaluate_clap(model, loader, args):
    # CLAP (Amphion): the early return and the gather sit under opposite
    # values of one setting; no rank returns where the others gather.
    metrics = {}
    if not args.parallel_eval:
        if dist.get_rank() != 0:
            return metrics
    for x in loader:
        out = model(x)
        if args.parallel_eval:
            dist.all_gather([torch.zeros_like(out)], out)
    return metrics


def batch_forward(model, batch, info_dict):
    info_dict["loss"] = model(batch).mean()
    return info_dict


def train_one_epoch(model, loader, info_dict):
    # CosyVoice's executor: the settings dict handed through a helper that
    # also takes the batch comes back the caller's; its accum_grad is a setting.
    for batch_idx, batch in enumerate(loader):
        info_dict = batch_forward(model, batch, info_dict)
        if (batch_idx + 1) % info_dict["accum_grad"] == 0:
            dist.barrier()


def settings_of(info_dict, batch):
    # Binds the name again: what it returns is no longer the caller's dict.
    info_dict = batch["settings"]
    return info_dict


def train_batch_settings(loader, info_dict):
    for batch_idx, batch in enumerate(loader):
        info_dict = settings_of(info_dict, batch)
        if (batch_idx + 1) % info_dict["accum_grad"] == 0:
            dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:13: error: barrier runs only on ranks where{{.*}} [ddp-divergent-collective]


class Tracker:
    def log(self, data, step):
        print(step, data)


def sft_fit(model, loader, total_steps):
    # Hard negative (verl's SFT trainer): every rank leaves at the last step;
    # the rank-0 log closed before the return is not why they leave.
    tracking = Tracker()
    rank = dist.get_rank()
    global_step = 0
    for epoch in range(3):
        for batch in loader:
            global_step += 1
            loss = model(batch).mean()
            loss.backward()
            dist.all_reduce(loss)
            if rank == 0:
                tracking.log(loss.item(), global_step)
            is_last_step = global_step >= total_steps
            if is_last_step:
                losses = [model(b).mean() for b in loader]
                if rank == 0:
                    tracking.log(torch.stack(losses).mean().item(), global_step)
                dist.barrier()
            if is_last_step:
                if rank == 0:
                    tracking.log("done", global_step)
                return


def sft_fit_rank0_stop(model, loader, total_steps):
    tracking = Tracker()
    rank = dist.get_rank()
    for step, batch in enumerate(loader):
        dist.all_reduce(model(batch).mean())  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'all_reduce' is skipped by ranks where 'rank == 0' holds: they return{{.*}} [ddp-divergent-collective]
        if step >= total_steps:
            if rank == 0:
                tracking.log("done", step)
                return



def multi_line_condition(model, batch):
    # A condition written over several lines is spelled on one in the message.
    loss = model(batch).mean()
    if torch.isfinite(
        loss,
    ).all():
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: barrier runs only on ranks where 'torch.isfinite(loss).all()' holds{{.*}} [ddp-divergent-collective]
        dist.barrier()


def nan_check_of_gathered_losses(model, loader, opt):
    # dinov3's trainer: every rank tests the tensor all ranks gathered, so
    # every rank raises together (a hard negative); a rank's own loss is not.
    for it, batch in enumerate(loader):
        loss = model(batch).mean()
        loss.backward()
        all_losses = loss.new_empty(dist.get_world_size())
        dist.all_gather_into_tensor(all_losses, loss.detach())
        if all_losses.isnan().any():
            raise RuntimeError("nan on some rank")
        opt.step()
        dist.barrier()
    for batch in loader:
        loss = model(batch).mean()
        if loss.isnan():
            raise RuntimeError("nan on this rank")
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: barrier is skipped by ranks where 'loss.isnan()' holds{{.*}} [ddp-divergent-collective]
        dist.barrier()


def broadcast_on_a_group_then_decide(ckpt_dir, group, overwrite):
    # dinov3's checkpointer: rank 0's answer broadcast on the group, then
    # every member raises or goes on alike (a hard negative).
    rank = dist.get_rank(group=group)
    exists = [os.path.exists(ckpt_dir) if rank == 0 else None]
    dist.broadcast_object_list(exists, src=0, group=group)
    if exists[0]:
        if overwrite:
            if rank == 0:
                shutil.rmtree(ckpt_dir)
            dist.barrier(group=group)
        else:
            raise RuntimeError(f"Checkpoint already exists: {ckpt_dir}")
    dist.barrier()


def resume_with_backup_copy(ckpt_path, steps, t):
    # hard negative (Wuerstchen): the handler that restores the backup runs
    # after a load of the file failed on that rank, when every rank has asked.
    try:
        ckpt = torch.load(ckpt_path) if os.path.exists(ckpt_path) else None
    except RuntimeError:
        # a torn checkpoint fails to load on every rank alike: every rank then
        # copies the backup onto the one path (a write hazard, not a skip)
        shutil.copyfile(ckpt_path + ".bak", ckpt_path)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: every rank runs 'shutil.copyfile' to the same path{{.*}} [ddp-unguarded-save]
        ckpt = torch.load(ckpt_path)
    start = ckpt["step"] if ckpt is not None else 0
    for step in range(start, steps):
        dist.all_reduce(t)


def shard_rounds_with_periodic_barrier(paths, every):
    # The index of `enumerate` over this rank's share counts alike on every
    # rank; the shares' lengths differ (by one), which is the loop's trip
    # count, not a rank-local `i % every == 0`.
    mine = paths[dist.get_rank()::dist.get_world_size()]
    for i, p in enumerate(mine):
        if i % every == 0:
            dist.barrier()  # CHECK-MESSAGES: :[[@LINE]]:13: error: barrier runs in a loop whose trip count depends on 'enumerate(mine)', which depends on the rank; {{.*}} [ddp-divergent-collective]


def rounds_with_periodic_barrier(paths, every):
    # hard negative: the same list on every rank, so the same rounds.
    for i, p in enumerate(paths):
        if i % every == 0:
            dist.barrier()


def rounds_through_named_enumerate(loader, model, opt, handler):
    # hard negative: `data_iter = enumerate(train_loader)` then `for i, b in
    # data_iter` (DeepLearningExamples' ConvNets): `i` is the step index,
    # alike on every rank, as with `enumerate` written in the loop.
    data_iter = enumerate(loader)
    for i, (inp, target) in data_iter:
        loss = model(inp).sum()
        dist.all_reduce(loss)
        if (i + 1) % 20 == 0 and handler.agreed_stop:
            break


def skip_short_last_batch(loader, batchsize, grads):
    # hard negative: Person_reID's train_DDP.py.  The batch dimension of an
    # unpacked shape is as many samples on every rank.
    for it, data in enumerate(loader):
        inputs, labels = data
        now_batch_size, c, h, w = inputs.shape
        if now_batch_size < batchsize:
            continue
        dist.all_reduce(grads)


def skip_long_sequences(loader, grads):
    for it, data in enumerate(loader):
        inputs, labels = data
        n, seq_len = inputs.shape
        if seq_len > 512:
            continue
        dist.all_reduce(grads)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' is never reached by ranks where 'seq_len > 512' holds (a rank-local value): {{.*}} [ddp-divergent-collective]

