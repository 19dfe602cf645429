"""ddp-error-path-exit in Python: an exception caught on one rank (an OOM, a
corrupt sample, an exhausted iterator) whose handler returns, breaks or
continues while a collective is still ahead of the other ranks.  At most one
report per function, at the exit.  A handler that re-raises is fine: the
exception ends the process, and torchrun / mp.spawn stop every worker.
"""
import datetime
import os
import random
import sys

import torch
import torch.distributed as dist
import deepspeed


def step_skips_on_oom(model, batch, t):
    try:
        out = model(batch)
    except torch.cuda.OutOfMemoryError:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: an exception is caught on one rank, that rank returns here{{.*}}all_reduce{{.*}} [ddp-error-path-exit]
        return None
    t += out.sum()
    dist.all_reduce(t)
    return t


def loop_leaves_on_exhausted_iterator(it, t, steps):
    for _ in range(steps):
        try:
            batch = next(it)
        except StopIteration:
            # CHECK-MESSAGES: :[[@LINE+1]]:13: warning: {{.*}}leaves the loop{{.*}} [ddp-error-path-exit]
            break
        t += batch.sum()
        dist.all_reduce(t)
    return t


# ---- hard negatives ---------------------------------------------------------


def handler_reraises(model, batch, t):
    try:
        out = model(batch)
    except RuntimeError:
        print("step failed")
        raise  # the process ends; the launcher stops the others
    dist.all_reduce(out)
    return out


def agreed_failure(model, batch, t):
    failed = torch.zeros(1)
    try:
        model(batch)
    except RuntimeError:
        failed.fill_(1.0)
    dist.all_reduce(failed)  # every rank learns whether any rank failed
    if failed.item() > 0:
        return None
    dist.all_reduce(t)
    return t


def no_collective_after(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def own_shard_cleanup(path, data):
    try:
        torch.save(data, f"{path}.rank{dist.get_rank()}")  # each rank its own file
    except OSError:
        return False  # no collective follows
    return True


def resume_rng(state_dict, t):
    # A key missing from the checkpoint every rank loads: every rank exits alike.
    try:
        torch.set_rng_state(state_dict["torch_rng_state"])
    except KeyError:
        print("no rng state in the checkpoint, exiting")
        return
    dist.all_reduce(t)


def resume_shared_checkpoint(path, t):
    # Wuerstchen's resume: a truncated checkpoint at the path every rank
    # names is the same bytes for every rank, so every rank fails alike.
    try:
        ckpt = torch.load(path) if os.path.exists(path) else None
    except RuntimeError:
        print("unreadable checkpoint, starting over")
        return None
    dist.all_reduce(t)
    return ckpt


def resume_own_shard(path, t):
    # A rank's own shard may be the one that is truncated.
    try:
        shard = torch.load(f"{path}.rank{dist.get_rank()}")
    except RuntimeError:
        return None
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: error-path exit: when an exception is caught on one rank, that rank returns here while the other ranks wait in collective 'all_reduce' and hang; {{.*}} [ddp-error-path-exit]
    dist.all_reduce(t)
    return shard


def optional_async_writer(cfg, t):
    # A module that is not installed is missing on every rank (gpt-neox's
    # autoresume, fairseq's iopath check).
    if cfg.write_async:
        try:
            import iopath  # noqa: F401
        except BaseException:
            print("iopath is not installed")
            return
    dist.all_reduce(t)


def resume_file(path, t):
    # A file error can strike one rank alone (a node's disk, a stale mount).
    try:
        state = torch.load(path)
    except (KeyError, OSError):
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: an exception is caught on one rank, that rank returns here{{.*}}all_reduce{{.*}} [ddp-error-path-exit]
        return
    dist.all_reduce(t)


def oom_reraised_on_request(model, batch, t, raise_oom):
    # fairseq's train_step: the failure is handed on from inside the handler's
    # branches; every way out of it raises.
    try:
        out = model(batch)
    except RuntimeError as e:
        if "out of memory" in str(e):
            print("OOM")
            if raise_oom:
                raise e
            raise RuntimeError("OOM in forward") from e
        else:
            raise e
    dist.all_reduce(out)
    return out


def oom_skips_step_unless_asked(model, batch, t, raise_oom):
    # A raise in one branch of the handler does not excuse the other: on an
    # OOM without raise_oom this rank skips the all_reduce the others are in.
    try:
        out = model(batch)
    except RuntimeError as e:
        if raise_oom:
            raise e
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: an exception is caught on one rank, that rank returns here{{.*}}all_reduce{{.*}} [ddp-error-path-exit]
        return None
    dist.all_reduce(out)
    return out


class Recipe:
    def train_epoch(self, steps):
        # torchtune's recipes: the loader's batches run out at the same step
        # on every rank (a DistributedSampler pads every rank to as many).
        dataloader_iter = iter(self._dataloader)
        step = 0
        while step < steps:
            try:
                batch = next(dataloader_iter)
            except StopIteration:
                break
            loss = self._model(batch)
            dist.all_reduce(loss)
            step += 1


def recover_from_oom(model, batch, cfg):
    # fairseq's train_step: the early return is the one-process run's
    # (`distributed_world_size == 1`); with more ranks the step goes on.
    has_oom = False
    try:
        loss = model(batch)
    except RuntimeError:
        has_oom = True
        if cfg.distributed_training.distributed_world_size == 1:
            return None
    dist.all_reduce(loss)
    return loss


def metaseq_step_loop(progress, trainer, t):
    # Hard negative: the whole step inside the try (metaseq's train loop);
    # the only StopIteration is the loader's iterator running out, at the same
    # step on every rank.
    progress_iter = iter(progress)
    while True:
        try:
            with torch.no_grad():
                samples = next(progress_iter)
            t += trainer.step(samples)
            dist.all_reduce(t)
        except StopIteration:
            break
    return t


def evaluate_each_dataset(cls, cfg, model, names, t):
    # Hard negative: a hook the trainer class does not implement (fast-reid's
    # and detectron2's `build_evaluator`) fails alike on every rank, with the
    # same class and config, and every rank skips the dataset together.
    for name in names:
        try:
            evaluator = cls.build_evaluator(cfg, name)
        except NotImplementedError:
            continue
        evaluator.process(model(t))
        dist.all_reduce(t)


def sample_on_main(config, model, loader, t):
    # Hard negative: `else: raise NotImplementedError` closing a chain of tests
    # on the configuration (U-ViT's sampling block) is a setting the code does
    # not support, on every rank alike: not rank 0 leaving alone.
    for step, batch in enumerate(loader):
        dist.all_reduce(model(batch))
        if dist.get_rank() == 0 and step % config.sample_every == 0:
            if config.mode == "uncond":
                samples = model.sample(None)
            elif config.mode == "cond":
                samples = model.sample(batch)
            else:
                raise NotImplementedError(config.mode)
            print(samples)
        dist.barrier()


def unsupported_head(model, loader, t):
    # Hard negative: `else: raise NotImplementedError` on a size of the
    # model's output (ALPRO's retrieval head, one logit or two) is a model the
    # code does not support, though the test reads this rank's tensor.
    for batch in loader:
        logits = model(batch)
        if logits.shape[1] == 2:
            probs = logits.softmax(dim=1)[:, 1]
        else:
            raise NotImplementedError("Not supported (unclear purposes)!")
        dist.all_reduce(probs)


def mixed_multipliers(model, loader, t):
    # ...but a test of the values in this rank's batch is this rank's
    # (HunyuanDiT's sd-scripts: mixed network multipliers in one batch).
    for batch in loader:
        multipliers = batch["network_multipliers"]
        if torch.all(multipliers == multipliers[0]):
            scale = multipliers[0].item()
        else:
            raise NotImplementedError("mixed multipliers in one batch")
        dist.all_reduce(model(batch) * scale)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: all_reduce{{.*}}they throw {{.*}} [ddp-divergent-collective]


def sample_on_main_rank_arm(model, loader, t):
    # ...but the arm a rank test picks is that rank's
    for step, batch in enumerate(loader):
        dist.all_reduce(model(batch))
        if dist.get_rank() == 0:
            print(step)
        else:
            raise NotImplementedError("only rank 0 samples")
        dist.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier is skipped by ranks where {{.*}} they throw {{.*}} [ddp-divergent-collective]


def _unwrap(model):
    return model.module if hasattr(model, "module") else model


def sampled_mask_then_setting_error(args, scheduler, model, loader, bsc):
    # Hard negative: EasyAnimate's trainers.  A mask sampled on each rank
    # (the arms call a helper, so the choice is a branch of its own) is left
    # before the `raise` on a setting every rank reads alike: all ranks throw
    # there, or none does.
    for batch in loader:
        if args.train_mode != "normal":
            mask = torch.ones([bsc, _unwrap(model).n_query]) if random.random() < 0.5 else torch.zeros([bsc, _unwrap(model).n_query])
        if scheduler.config.prediction_type == "epsilon":
            target = batch
        else:
            raise ValueError(f"Unknown prediction type {scheduler.config.prediction_type}")
        dist.all_reduce(model(batch, mask) - target)
    dist.barrier()


def sampled_mask_then_setting_error_in_step(args, config, accelerator, scheduler, model, loader, bsc):
    # ...and inside the step, before the backward's all-reduce
    for epoch in range(args.num_train_epochs):
        for batch in loader:
            with accelerator.accumulate(model):
                with torch.no_grad():
                    if args.train_mode != "normal":
                        if config["text_encoder_kwargs"].get("enable_multi_text_encoder", False):
                            mask = torch.ones([bsc, _unwrap(model).n_query]) if random.random() < 0.5 else torch.zeros([bsc, _unwrap(model).n_query])
                if args.loss_type == "ddpm":
                    if scheduler.config.prediction_type == "epsilon":
                        target = batch
                    else:
                        raise ValueError(f"Unknown prediction type {scheduler.config.prediction_type}")
                accelerator.backward(model(batch) - target)


def sampled_mask_then_sampled_error(model, loader, bsc):
    # ...but a `raise` under the sampled value itself is that rank's
    for batch in loader:
        keep = random.random() < 0.5
        mask = torch.ones([bsc, _unwrap(model).n_query]) if keep else torch.zeros([bsc, _unwrap(model).n_query])
        if keep:
            raise ValueError("this rank drew the mask")
        dist.all_reduce(model(batch, mask))
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' is skipped by ranks where 'random.random() < 0.5' holds {{.*}} they throw {{.*}} [ddp-divergent-collective]
    dist.barrier()


def oom_flag_raises_after_three(model, loader, accelerator, state):
    # ai-toolkit's trainer: the handler only sets a flag; the rank that
    # caught the OOM skips the step after the try, under the flag, while the
    # others are in the backward's all-reduce (one report per function).
    for batch in loader:
        did_oom = False
        try:
            loss = model(batch)
        except RuntimeError as e:
            if "CUDA out of memory" in str(e):
                did_oom = True
            else:
                raise
        if did_oom:
            state.num_consecutive_oom += 1
            if state.num_consecutive_oom > 3:
                raise RuntimeError("OOM during training step 3 times in a row")
            continue
            # CHECK-MESSAGES: :[[@LINE-1]]:13: warning: error-path exit: when an exception is caught on one rank, that rank skips to the next iteration here while the other ranks wait in collective 'backward (DDP gradient allreduce)' {{.*}} [ddp-error-path-exit]
        accelerator.backward(loss)
    accelerator.wait_for_everyone()


def train_epoch(ddp_model, loader, optimizer):
    for batch in loader:
        optimizer.zero_grad()
        ddp_model(batch).mean().backward()
        optimizer.step()


def epochs_swallow_errors(model, loader, optimizer, epochs, local_rank):
    # MeloTTS's train.py: each epoch in `try` / `except Exception: print(e)`.
    # A rank that fails mid-epoch starts the next one while the others are
    # still in this epoch's all-reduces.
    ddp_model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    for epoch in range(epochs):
        try:
            train_epoch(ddp_model, loader, optimizer)
        except Exception as e:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: error-path exit: when an exception is caught on one rank, that rank goes on past call to 'train_epoch', which runs collective `forward of the DistributedDataParallel model 'ddp_model' (buffer broadcast)`, and carries on while the other ranks wait in it and hang; {{.*}} [ddp-error-path-exit]
            print(e)


def step_skips_batch_on_oom(model, loader, optimizer, local_rank):
    # The classic OOM handler: the backward is inside the try, and the
    # handler skips the batch before its `raise` for other errors.
    ddp_net = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], broadcast_buffers=False)
    for batch in loader:
        try:
            ddp_net(batch).mean().backward()
        except RuntimeError as e:
            if "out of memory" in str(e):
                torch.cuda.empty_cache()
                continue
                # CHECK-MESSAGES: :[[@LINE-1]]:17: warning: error-path exit: when an exception is caught on one rank, that rank skips to the next iteration here while the other ranks wait in collective 'backward (DDP gradient allreduce)' {{.*}} [ddp-error-path-exit]
            raise
        optimizer.step()


def save_engine_checkpoint(model, ds_config, ckpt_dir, tag):
    # HunyuanDiT: DeepSpeed's save_checkpoint waits for every rank; the rank
    # whose save failed returns while the others wait in it.
    engine, _, _, _ = deepspeed.initialize(model=model, config=ds_config)
    try:
        engine.save_checkpoint(ckpt_dir, tag=tag)
    except Exception as e:
        print(f"save failed: {e}")
        return False
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: error-path exit: when an exception is caught on one rank, that rank returns here while the other ranks wait in {{.*}}save_checkpoint{{.*}} [ddp-error-path-exit]
    return True


def validate_halving_the_batch(model, make_loader, validate, batch_size):
    # VMamba's analyze/eval.py: the rank that ran out of memory halves its
    # batch and validates again; the others have left the loop.
    while batch_size > 0:
        try:
            validate(model, make_loader(batch_size))
            dist.barrier()
            break
            # CHECK-MESSAGES: :[[@LINE-1]]:13: warning: error-path exit: when an exception is caught on one rank, the other ranks leave the loop here while that rank goes on into barrier alone and hangs; {{.*}} [ddp-error-path-exit]
        except RuntimeError:
            batch_size //= 2


def prepare_then_agree(tokenizer, dataset_dir, t):
    # hard negative (llm-foundry's data prep): the raise inside the try is
    # caught by its own handler, which keeps the error; every rank meets at
    # the barrier, then raises it together.
    error = None
    try:
        if not os.path.isdir(dataset_dir):
            raise FileNotFoundError(dataset_dir)
        dataset = tokenizer(dataset_dir)
    except Exception as e:
        error = e
    dist.barrier()
    if error is not None:
        raise error
    return dataset


def epochs_until_interrupted(model, loader, optimizer, epochs):
    # hard negative (timm's train.py): Ctrl-C reaches every rank.
    try:
        for epoch in range(epochs):
            train_epoch(model, loader, optimizer)
    except KeyboardInterrupt:
        pass


def maybe_distributed(backend):
    # hard negative (D-FINE's setup): a rank that fails to create the group
    # leaves none for the others to wait in.
    try:
        dist.init_process_group(backend, timeout=datetime.timedelta(minutes=30))
        dist.barrier()
        distributed = True
    except Exception:
        distributed = False
    return distributed


def load_rng_or_exit(state_dict, t):
    # hard negative (Megatron's load_checkpoint): the `raise KeyError` is
    # caught by the try's own handler, a missing key every rank meets alike;
    # it is no throw past the barrier.
    try:
        rng_state = state_dict["rng_state"][dist.get_rank()]
        if not rng_state["rng_tracker_states"]:
            raise KeyError
        torch.set_rng_state(rng_state["torch_rng_state"])
    except KeyError:
        print("Unable to load rng state from the checkpoint, exiting ...")
        sys.exit()
    dist.all_reduce(t)


def run_each_config(configs, launch):
    # hard negative (axolotl's CLI): a command run in a subprocess fails
    # alike wherever the same command runs.
    import subprocess
    for cfg in configs:
        try:
            launch(cfg)
            dist.barrier()
        except subprocess.CalledProcessError as exc:
            print(f"failed: {exc}")


def oom_retry_with_agreed_flag(model, batches, mb_size):
    # composer's auto-microbatching, reduced: the OOM flag is all-reduced
    # before `if oom: continue`, so every rank retries together and the
    # `continue` is no failure's exit.  What a swallowed OOM does skip is the
    # rest of the try (the backward's all-reduce the others are in): that is
    # reported once, at the handler.
    while True:
        found_oom = 0
        try:
            for mb in batches.split(mb_size):
                model(mb).sum().backward()
                dist.all_reduce(mb)
        except RuntimeError as e:
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: error-path exit: when an exception is caught on one rank, that rank goes on past collective 'backward (DDP gradient allreduce)' and carries on while the other ranks wait in it and hang; {{.*}} [ddp-error-path-exit]
            if "out of memory" in str(e):
                found_oom = 1
            else:
                raise
        flag = torch.tensor([found_oom])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        found_oom = flag.item()
        if found_oom == 1:
            mb_size = max(1, mb_size // 2)
            continue
        return mb_size


def fp16_step_skips_on_overflow(model, batch, scaler, t):
    # hard negative (fairseq's train_step): the loss scaler raises
    # OverflowError on gradients DDP has already all-reduced, the same on
    # every rank, so every rank skips the step together.
    overflow = False
    try:
        loss = model(batch).sum()
        loss.backward()
        scaler.clip_grad_norm(1.0)
        scaler.step()
    except OverflowError:
        overflow = True
    dist.all_reduce(t)
    return overflow


def exit_when_the_barrier_fails(path, t):
    # AlgoPerf's logger_utils: the try holds the barrier alone, so what it
    # catches is the barrier's own failure, which every rank in it meets
    # (hard negative).
    try:
        dist.barrier()
    except RuntimeError:
        sys.exit()
    dist.all_reduce(t)


def exit_when_the_step_fails(model, batch, t):
    try:
        dist.barrier()
        loss = model(batch).sum()
    except RuntimeError:
        sys.exit()  # CHECK-MESSAGES: :[[@LINE]]:9: warning: error-path exit: when an exception is caught on one rank, that rank exits ('sys.exit') here while the other ranks wait in barrier{{.*}} [ddp-error-path-exit]
    dist.all_reduce(t)
