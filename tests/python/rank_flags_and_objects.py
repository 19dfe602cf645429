"""Rank facts the path rules need from common idioms (issue 16):
a flag assigned on both arms of a uniform decision (`if ddp: master = rank == 0`
/ `else: master = True`), objects that exist on rank 0 only and their None
tests, and a counter zipped with the loader (the same on every rank).
"""
import datetime
import os
import torch
import torch.distributed as dist


class CheckpointSaver:
    def __init__(self, path):
        self.path = path

    def save_checkpoint(self, model, epoch):
        torch.save(model.state_dict(), self.path)


def flags(model, ddp):
    if ddp:
        dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
        master_process = dist.get_rank() == 0
    else:
        master_process = True
    for it in range(100):
        loss = model(torch.ones(2)).sum()
        dist.all_reduce(loss)
        if master_process:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier {{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), "ckpt.pt")


def none_object(model, args):
    saver = None
    if args.rank == 0:
        saver = CheckpointSaver("ckpt.pt")
    for epoch in range(10):
        loss = model(torch.ones(2)).sum()
        dist.all_reduce(loss)
        if saver is not None:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier {{.*}} [ddp-rank0-io-barrier]
            saver.save_checkpoint(model, epoch)


def none_object_ternary(model, args):
    saver = CheckpointSaver("ckpt.pt") if dist.get_rank() == 0 else None
    for epoch in range(10):
        loss = model(torch.ones(2)).sum()
        dist.all_reduce(loss)
        if saver:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier {{.*}} [ddp-rank0-io-barrier]
            saver.save_checkpoint(model, epoch)


def none_object_switched_off(model, args):
    # FasterViT's train.py: a setting every rank shares may switch the
    # rank-0 saver off; where it stays on, it is still rank 0's alone.
    saver = None
    if args.rank == 0:
        saver = CheckpointSaver("ckpt.pt")
    saver = saver if not args.no_saver else None
    for epoch in range(10):
        loss = model(torch.ones(2)).sum()
        dist.all_reduce(loss)
        if saver is not None:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier {{.*}} [ddp-rank0-io-barrier]
            saver.save_checkpoint(model, epoch)


def zipped(model, data_loader, start_iter, max_iter):
    for data, iteration in zip(data_loader, range(start_iter, max_iter)):
        loss = model(data).sum()
        loss.backward()
        if iteration % 100 == 0:
            dist.barrier()


def uniform_none(model, args):
    # hard negative: the object exists on every rank or none
    writer = None
    if args.log_dir:
        writer = open(args.log_dir + "/log.txt", "w")
    for epoch in range(10):
        dist.all_reduce(torch.ones(1))
        if writer is not None:
            dist.barrier()


def train_steps(model, steps, saver=None):
    # timm's train_one_epoch: the saver is handed in; every caller here hands
    # it one that exists on rank 0 only, so `saver is not None` is that test.
    for step in range(steps):
        loss = model(torch.ones(2)).sum()
        dist.all_reduce(loss)
        if saver is not None and step % 100 == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier {{.*}} [ddp-rank0-io-barrier]
            saver.save_checkpoint(model, step)


def run_with_saver(model, args):
    saver = CheckpointSaver("ckpt.pt") if dist.get_rank() == 0 else None
    train_steps(model, args.steps, saver=saver)
    dist.barrier()


def publish(model, path, is_master):
    # open_clip's checkpoint helper: the caller says who writes.
    if is_master:
        torch.save(model.state_dict(), path)


def save_from_main(model, args):
    publish(model, "final.pt", is_master=dist.get_rank() == 0)
    dist.barrier()


def is_master(args, local=False):
    # open_clip: the node's first process or the job's, by a parameter.
    return args.local_rank == 0 if local else args.rank == 0


def run_experiment(args, model, epochs):
    if is_master(args, local=args.log_local):
        args.log_path = os.path.join(args.logs, "out.log")
        if os.path.exists(args.log_path):
            return -1  # the node's (or job's) first process leaves; the others go on
    args.save_logs = args.logs and is_master(args)  # `local` left False: rank 0
    for epoch in range(epochs):
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: {{.*}}is_master(args, local=args.log_local){{.*}} [ddp-divergent-collective]
        dist.all_reduce(torch.zeros(1))
        if args.save_logs:
            torch.save(model.state_dict(), os.path.join(args.checkpoint_path, f"epoch_{epoch}.pt"))
        dist.barrier()


class PropertyTrainer:
    # fairseq's Trainer: the rank and the master test are @property methods,
    # read as attributes (`if self.is_data_parallel_master:`)
    def __init__(self, cfg):
        self.cfg = cfg

    @property
    def data_parallel_rank(self):
        if self.cfg.distributed_world_size == 1:
            return 0
        return dist.get_rank()

    @property
    def is_data_parallel_master(self):
        return self.data_parallel_rank == 0

    @property
    def checkpoint_suffix(self):
        return "-shard{}".format(self.data_parallel_rank)

    def save_on_master(self, state):
        # hard negative: rank 0 only
        if self.is_data_parallel_master:
            torch.save(state, "checkpoint_last.pt")

    def save_on_rank_zero(self, state):
        # hard negative: the same through the rank property
        if self.data_parallel_rank == 0:
            torch.save(state, "checkpoint_best.pt")

    def save_shard(self, state):
        # hard negative: a per-rank name
        torch.save(state, "checkpoint" + self.checkpoint_suffix + ".pt")

    def save_on_the_others(self, state):
        # every rank but rank 0: many writers
        if self.data_parallel_rank != 0:
            torch.save(state, "checkpoint_other.pt")
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: every rank runs 'torch.save' to the same path, {{.*}} [ddp-unguarded-save]


# A project's interface to the group (LLaMA-Factory's DistributedInterface, a
# singleton): the constructor stores the rank, accessors hand it back, and the
# callers make the object where they ask (`DistributedInterface().get_rank()`).
class GroupInterface:
    def __init__(self):
        self._is_distributed = os.getenv("RANK") is not None
        self._rank = int(os.getenv("RANK", "0"))

    def get_rank(self, dim=None):
        if not self._is_distributed:
            return 0
        elif dim is None:
            return self._rank
        else:
            return self.mesh(dim).get_local_rank()

    def is_main(self):
        return self._rank == 0

    def barrier(self):
        # hard negative: the launcher sets RANK on every rank or on none
        if self._is_distributed:
            dist.barrier()


def save_through_interface(model, optimizer, ckpt_dir):
    # hard negatives: each write is under a rank-0 test and a barrier follows
    rank = GroupInterface().get_rank()
    if rank == 0:
        torch.save(optimizer.state_dict(), os.path.join(ckpt_dir, "optimizer.pt"))
    if GroupInterface().is_main():
        torch.save(model.state_dict(), os.path.join(ckpt_dir, "model.pt"))
    GroupInterface().barrier()


def save_through_interface_mid_training(model, optimizer, loader, ckpt_dir):
    for step, batch in enumerate(loader):
        loss = model(batch).sum()
        dist.all_reduce(loss)
        if GroupInterface().get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier {{.*}} [ddp-rank0-io-barrier]
            torch.save(model.state_dict(), os.path.join(ckpt_dir, f"step{step}.pt"))


def save_under_should_save(model, trainer, training_args):
    # hard negative: the Hugging Face Trainer's arguments say which process
    # saves (LLaMA-Factory's value-head fix after `trainer.save_model()`)
    trainer.train()
    if training_args.should_save:
        torch.save(model.v_head.state_dict(), os.path.join(training_args.output_dir, "value_head.bin"))
    dist.barrier()


def save_under_own_should_save(model, loader, should_save):
    # a project's own `should_save` is a schedule, the same on every rank
    for batch in loader:
        model(batch).sum().backward()
        if should_save:
            torch.save(model.state_dict(), "last.pt")
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: every rank runs 'torch.save' to the same path, {{.*}} [ddp-unguarded-save]


class GatedCheckpointer:
    def __init__(self, save_dir, save_to_disk):
        self.save_dir = save_dir
        self.save_to_disk = save_to_disk

    def has_checkpoint(self):
        return os.path.exists(os.path.join(self.save_dir, "last_checkpoint"))


def resume_or_wait(save_dir):
    # Told by position who writes (fvcore's Checkpointer): the same object on
    # every rank, and a probe of the shared folder answers alike everywhere.
    checkpointer = GatedCheckpointer(save_dir, dist.get_rank() == 0)
    if checkpointer.has_checkpoint():
        return
    dist.barrier()


def resume_or_wait_by_rank(save_dir):
    # A helper handed the rank test may build anything from it.
    checkpointer = open_checkpointer(save_dir, dist.get_rank() == 0)
    if checkpointer.has_checkpoint():
        return  # CHECK-MESSAGES: :[[@LINE+1]]:5: error: barrier is never reached by ranks where {{.*}} [ddp-divergent-collective]
    dist.barrier()


def init_distributed_mode(params):
    # atlas and contriever: the set-up helper records who is the main process
    # on the options object, which other functions read under another name.
    params.local_rank = int(os.environ["LOCAL_RANK"])
    params.global_rank = int(os.environ["RANK"])
    params.is_main = params.global_rank == 0
    dist.init_process_group(backend="nccl", timeout=datetime.timedelta(minutes=30))


def save_atlas_model(model, opt, path):
    if not opt.is_main:  # CHECK-MESSAGES: :[[@LINE]]:5: warning: code after this early return runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
        return 0
    torch.save(model.state_dict(), os.path.join(path, "model.pth.tar"))


def train_atlas(model: torch.nn.parallel.DistributedDataParallel, opt, path):
    for step in range(opt.total_steps):
        model(torch.randn(4, 4)).sum().backward()
        if step % opt.save_freq == 0:
            save_atlas_model(model.module, opt, path)


class CascadeTrainer:
    # StableCascade: the set-up method reads the launcher's rank into a local
    # and records who is the main node from it; the constructor's default
    # (True) is the single-process run's.
    def __init__(self):
        self.is_main_node = True

    def setup_ddp(self):
        process_id = int(os.environ.get("SLURM_PROCID"))
        self.is_main_node = process_id == 0
        dist.init_process_group(backend="nccl", timeout=datetime.timedelta(minutes=30))

    def save_info(self, info):
        # hard negative: the main node writes between barriers
        dist.barrier()
        if self.is_main_node:
            torch.save(info, "ckpt/info.pt")
        dist.barrier()

    def sync(self, t):
        if self.is_main_node:
            dist.all_reduce(t)  # CHECK-MESSAGES: :[[@LINE]]:13: error: collective 'all_reduce' runs only on ranks where 'self.is_main_node' holds{{.*}} [ddp-divergent-collective]


def literal_flag(model, args):
    # vilbert-multi-task: a flag that starts False and that rank 0 alone sets
    # True, or every process in a run without ranks: rank 0's test.
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    default_gpu = False
    if args.local_rank != -1:
        if dist.get_rank() == 0:
            default_gpu = True
    else:
        default_gpu = True
    for epoch in range(3):
        if default_gpu:
            # hard negative: rank 0's write
            torch.save(model.state_dict(), "pytorch_model_" + str(epoch) + ".bin")


def literal_flag_rank_local(model, loader):
    # A flag set under a test of this rank's own loss: the rank that sets it
    # leaves, the others wait in the next all_reduce.
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    for x in loader:
        loss = model(x).sum()
        stop = False
        if loss.item() > 10:
            stop = True
        if stop:
            break
        dist.all_reduce(loss)  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'all_reduce' is skipped by ranks where 'loss.item() > 10' holds (a rank-local value): they break out of the loop {{.*}} [ddp-divergent-collective]


def literal_flag_agreed(model, loader):
    # hard negative: the flag is all-reduced before anyone acts on it.
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    for x in loader:
        loss = model(x).sum()
        stop = False
        if loss.item() > 10:
            stop = True
        flag = torch.tensor(float(stop))
        dist.all_reduce(flag)
        if flag.item() > 0:
            break
        dist.all_reduce(loss)


def retry_on_overflow(model, opt, scaler, data, state):
    # imaginaire's gen_update: after a skipped AMP step only the ranks whose
    # own loss is non-finite stop retrying; the others go back into the
    # backward's all-reduce.
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    model = torch.nn.parallel.DistributedDataParallel(model)
    update_finished = False
    while not update_finished:
        total_loss = model(data).mean()  # CHECK-MESSAGES: :[[@LINE]]:22: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast)` runs in a loop whose trip count depends on 'not update_finished'{{.*}} [ddp-divergent-collective]
        opt.zero_grad(set_to_none=True)
        scaler.scale(total_loss).backward()
        scaler.step(opt)
        scaler.update()
        if state.last_step_count == opt._step_count:
            if not torch.isfinite(total_loss):
                update_finished = True
        else:
            state.last_step_count = opt._step_count
            update_finished = True


def resume_on_rank0(model, loader, opt, cfg):
    # YOLOP's resume: rank 0 alone reads the checkpoint's epoch, so its
    # epoch loop is shorter than the others'.
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    begin_epoch = cfg.begin_epoch
    if dist.get_rank() == 0:
        checkpoint = torch.load(cfg.resume)
        begin_epoch = checkpoint["epoch"]
    for epoch in range(begin_epoch + 1, cfg.end_epoch + 1):
        for x in loader:
            loss = model(x).sum()  # CHECK-MESSAGES: :[[@LINE]]:20: error: collective `forward of the DistributedDataParallel model 'model' (buffer broadcast)` runs in a loop whose trip count depends on 'range(begin_epoch + 1, cfg.end_epoch + 1)', which depends on the rank{{.*}} [ddp-divergent-collective]
            dist.all_reduce(loss)


def resume_broadcast(model, loader, opt, cfg):
    # hard negative: rank 0 reads the epoch and broadcasts it
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    begin = [cfg.begin_epoch]
    if dist.get_rank() == 0:
        begin = [torch.load(cfg.resume)["epoch"]]
    dist.broadcast_object_list(begin, src=0)
    for epoch in range(begin[0] + 1, cfg.end_epoch + 1):
        for x in loader:
            loss = model(x).sum()
            dist.all_reduce(loss)
