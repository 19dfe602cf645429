"""Library knowledge (rules/api.yaml, python section): what DeepSpeed,
detectron2, Horovod, icefall, Megatron core, timm, flashy, Composer, BMTrain and Hugging Face Transformers calls
mean, for a program that imports them (their own source is not in the
project).  One function per catalog entry, each a true positive (the call
under a rank test), and hard negatives where every rank makes the call.
tests/consistency checks that every library name of the catalog is used here.
"""
import datetime
import random

import deepspeed
import flashy
import deepspeed.comm as ds_comm
import horovod.torch as hvd
import jax
import torch
import torch.distributed as dist
from mpi4py import MPI
from detectron2.utils import comm
from detectron2.checkpoint import DetectionCheckpointer, PeriodicCheckpointer
from detectron2.checkpoint import detection_checkpoint
from fvcore.common.checkpoint import PeriodicCheckpointer as FvPeriodicCheckpointer
from fvcore.common.checkpoint import Checkpointer as FvCheckpointer
from icefall.checkpoint import save_checkpoint as icefall_save_checkpoint
from icefall.checkpoint import save_checkpoint_with_global_batch_idx
from composer.utils import dist as composer_dist
from accelerate import Accelerator
from accelerate.utils import broadcast_object_list as acc_broadcast_object_list
from apex.transformer import parallel_state as apex_ps
from fairscale.nn.model_parallel import initialize as fs_init
from megatron.core import mpu as legacy_mpu
from megatron.core import parallel_state as mpu
from megatron.core.utils import barrier as mbarrier
from megatron.training.utils import is_rank_0
from timm.utils import CheckpointSaver, distribute_bn, is_primary, reduce_tensor
from timm.utils import checkpoint_saver
from timm.utils.distributed import distribute_bn as distribute_bn2, is_primary as is_primary2
from timm.utils.distributed import reduce_tensor as reduce_tensor2
from timm.models.vision_transformer import Attention, Block, Mlp, PatchEmbed
from timm.models.layers import DropPath
from detectron2.engine import launch
from detectron2.engine.hooks import HookBase
import bmtrain as bmt
from transformers.trainer_utils import is_main_process as hf_is_main_process
from transformers import Seq2SeqTrainer, Trainer


def deepspeed_engine(args, model, data):
    deepspeed.init_distributed(timeout=datetime.timedelta(minutes=30))
    engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model)
    for batch in data:
        loss = engine(batch)
        engine.backward(loss)
        engine.step()
    # hard negative: every rank saves and loads (each its own shard)
    engine.save_checkpoint("ckpt")
    engine.load_checkpoint("ckpt")
    return engine


def ds_reference_then_engine_save(engine, ref_model, data):
    # open-instruct's GRPO learner, a hard negative for ddp-rank0-io-barrier:
    # rank 0 writes the reference policy, and every rank then enters the
    # engine's save_checkpoint, whose barrier orders that write before anyone
    # goes on.
    for batch in data:
        engine.backward(engine(batch))
        engine.step()
        if ds_comm.get_rank() == 0:
            torch.save(ref_model.state_dict(), "ref_policy.pt")
        engine.save_checkpoint("ckpt")


def ds_save(engine):
    if ds_comm.get_rank() == 0:
        engine.save_checkpoint("ckpt")
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'engine.save_checkpoint() (DeepSpeed: every rank)' runs only on ranks where {{.*}} [ddp-divergent-collective]


def accelerate_save_state_sharded(accelerator, model, data, output_dir):
    # Under DeepSpeed (this module uses it) the state is every rank's shard:
    # kohya-ss/sd-scripts' `if accelerator.is_main_process: save_state(...)`.
    for step, batch in enumerate(data):
        accelerator.backward(model(batch).mean())
        if accelerator.is_main_process and step % 100 == 0:
            accelerator.save_state(f"{output_dir}/checkpoint-{step}")
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: barrier 'accelerator.save_state() (DeepSpeed and FSDP: every rank)' runs only on ranks where {{.*}} [ddp-divergent-collective]
    # hard negative: every rank saves
    accelerator.save_state(f"{output_dir}/final")


def ds_load(engine):
    if ds_comm.get_rank() == 0:
        engine.load_checkpoint("ckpt")
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'engine.load_checkpoint() (DeepSpeed: every rank)' runs only on ranks where {{.*}} [ddp-divergent-collective]


def ds_backward(engine, loss):
    if ds_comm.get_local_rank() == 0:
        engine.backward(loss)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'engine.backward() (DeepSpeed gradient all_reduce)' runs only on ranks where {{.*}} [ddp-divergent-collective]


def ds_all_reduce(t):
    if ds_comm.get_rank() == 0:
        ds_comm.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'deepspeed.comm.all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def ds_all_gather(t):
    if ds_comm.get_rank() == 0:
        ds_comm.all_gather([t], t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'deepspeed.comm.all_gather' runs only on ranks where {{.*}} [ddp-divergent-collective]


def ds_broadcast(t):
    if ds_comm.get_rank() == 0:
        ds_comm.broadcast(t, 0)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'deepspeed.comm.broadcast' runs only on ranks where {{.*}} [ddp-divergent-collective]


def ds_reduce(t):
    if ds_comm.get_rank() == 0:
        ds_comm.reduce(t, 0)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'deepspeed.comm.reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def ds_all_gather_into_tensor(t):
    if ds_comm.get_rank() == 0:
        ds_comm.all_gather_into_tensor(t, t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'deepspeed.comm.all_gather_into_tensor' runs only on ranks where {{.*}} [ddp-divergent-collective]


def ds_reduce_scatter_tensor(t):
    if ds_comm.get_rank() == 0:
        ds_comm.reduce_scatter_tensor(t, t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'deepspeed.comm.reduce_scatter_tensor' runs only on ranks where {{.*}} [ddp-divergent-collective]


def ds_barrier(t):
    if ds_comm.get_rank() == 0:
        ds_comm.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'deepspeed.comm.barrier' runs only on ranks where {{.*}} [ddp-divergent-collective]


def ds_gathered_parameters(model, args):
    # DeepSpeed-Chat's save_zero_three_model: entering GatheredParameters
    # all-gathers a ZeRO-3 partitioned parameter, so only rank 0 entering it hangs.
    if args.global_rank == 0:
        for name, p in model.named_parameters():
            with deepspeed.zero.GatheredParameters([p]):
                # CHECK-MESSAGES: :[[@LINE-1]]:18: error: collective 'deepspeed.zero.GatheredParameters' runs only on ranks where {{.*}} [ddp-divergent-collective]
                torch.save(p.data.cpu(), name + ".pt")


def mpi_load_on_main(path):
    # guided-diffusion's dist_util.load_state_dict: rank 0 reads, every rank
    # takes the broadcast; the bytes are the same everywhere after it.
    world_comm = MPI.COMM_WORLD
    if world_comm.Get_rank() == 0:
        with open(path, "rb") as f:
            data = f.read()
    else:
        data = None
    data = world_comm.bcast(data)
    if data is None:  # agreed by the broadcast: a hard negative
        return None
    MPI.COMM_WORLD.Barrier()
    return data


def mpi_resume_on_main(path):
    if MPI.COMM_WORLD.Get_rank() == 0:
        return mpi_load_on_main(path)
        # CHECK-MESSAGES: :[[@LINE-1]]:16: error: call to 'mpi_load_on_main', which runs collective 'mpi4py.MPI.COMM_WORLD.bcast', runs only on ranks where {{.*}} [ddp-divergent-collective]
    return None


def mpi_collectives(x, world):
    if world.rank == 0:
        MPI.COMM_WORLD.allreduce(x)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'mpi4py.MPI.COMM_WORLD.allreduce' runs only on ranks where {{.*}} [ddp-divergent-collective]
    if MPI.COMM_WORLD.Get_size() > 1:  # every rank with others to talk to
        MPI.COMM_WORLD.Allreduce(x, x)
        MPI.COMM_WORLD.allgather(x)
        MPI.COMM_WORLD.Allgather(x, x)
        MPI.COMM_WORLD.Bcast(x)
        MPI.COMM_WORLD.gather(x)
        MPI.COMM_WORLD.scatter(x)
        MPI.COMM_WORLD.reduce(x)
        MPI.COMM_WORLD.alltoall(x)
        MPI.COMM_WORLD.barrier()


def d2_synchronize(r):
    if comm.is_main_process():
        comm.synchronize()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'detectron2.utils.comm.synchronize' runs only on ranks where {{.*}} [ddp-divergent-collective]


def d2_all_gather(r):
    if comm.get_rank() == 0:
        comm.all_gather(r)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'detectron2.utils.comm.all_gather' runs only on ranks where {{.*}} [ddp-divergent-collective]


def d2_gather(r):
    if comm.get_local_rank() == 0:
        comm.gather(r)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'detectron2.utils.comm.gather' runs only on ranks where {{.*}} [ddp-divergent-collective]


def d2_reduce_dict(r):
    if comm.is_main_process():
        comm.reduce_dict(r)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'detectron2.utils.comm.reduce_dict' runs only on ranks where {{.*}} [ddp-divergent-collective]


def d2_shared_random_seed(r):
    if comm.is_main_process():
        comm.shared_random_seed()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'detectron2.utils.comm.shared_random_seed' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_allreduce(t):
    if hvd.rank() == 0:
        hvd.allreduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'horovod.torch.allreduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_allreduce_(t):
    if hvd.rank() == 0:
        hvd.allreduce_(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'horovod.torch.allreduce_' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_allgather(t):
    if hvd.rank() == 0:
        hvd.allgather(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'horovod.torch.allgather' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_broadcast(t):
    if hvd.rank() == 0:
        hvd.broadcast(t, 0)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'horovod.torch.broadcast' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_broadcast_(t):
    if hvd.rank() == 0:
        hvd.broadcast_(t, 0)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'horovod.torch.broadcast_' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_broadcast_parameters(model):
    if hvd.local_rank() == 0:
        hvd.broadcast_parameters(model.state_dict(), root_rank=0)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'horovod.torch.broadcast_parameters' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_broadcast_optimizer_state(optimizer):
    if hvd.rank() == 0:
        hvd.broadcast_optimizer_state(optimizer, root_rank=0)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'horovod.torch.broadcast_optimizer_state' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_broadcast_object(t):
    if hvd.rank() == 0:
        hvd.broadcast_object(t, 0)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'horovod.torch.broadcast_object' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_allgather_object(t):
    if hvd.rank() == 0:
        hvd.allgather_object(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'horovod.torch.allgather_object' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_barrier(t):
    if hvd.rank() == 0:
        hvd.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'horovod.torch.barrier' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_join(t):
    if hvd.rank() == 0:
        hvd.join()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'horovod.torch.join' runs only on ranks where {{.*}} [ddp-divergent-collective]


def mpu_dp_rank(t):
    if mpu.get_data_parallel_rank() == 0:
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def mpu_tp_rank(t):
    if mpu.get_tensor_model_parallel_rank() == 0:
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def mpu_pp_rank(t):
    if mpu.get_pipeline_model_parallel_rank() == 0:
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def mpu_cp_rank(t):
    if mpu.get_context_parallel_rank() == 0:
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def mpu_ep_rank(t):
    if mpu.get_expert_model_parallel_rank() == 0:
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def legacy_mpu_save(state, path):
    # Megatron's checkpoint: one writer per model-parallel rank, each to its
    # own mp_rank_XX file (hard negative, not every rank to one path).
    if not dist.is_initialized() or legacy_mpu.get_data_parallel_rank() == 0:
        torch.save(state, path)
    dist.barrier()


def legacy_mpu_tp_rank(t):
    if legacy_mpu.get_tensor_model_parallel_rank() == 0:
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def legacy_mpu_pp_rank(t):
    if legacy_mpu.get_pipeline_model_parallel_rank() == 0:
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def megatron_barrier(t):
    if is_rank_0():
        mbarrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'megatron.core.utils.barrier' runs only on ranks where {{.*}} [ddp-divergent-collective]


def mpu_initialize(t):
    if dist.get_rank() == 0:
        mpu.initialize_model_parallel(2, 1)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'megatron.core.parallel_state.initialize_model_parallel' runs only on ranks where {{.*}} [ddp-divergent-collective]


def timm_distribute_bn(args, model):
    if is_primary(args):
        distribute_bn(model, args.world_size, True)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'timm.utils.distribute_bn' runs only on ranks where {{.*}} [ddp-divergent-collective]


def timm_distributed_distribute_bn(args, model):
    if is_primary2(args):
        distribute_bn2(model, args.world_size, True)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'timm.utils.distributed.distribute_bn' runs only on ranks where {{.*}} [ddp-divergent-collective]


def timm_reduce_tensor(args, t):
    if dist.get_rank() == 0:
        reduce_tensor(t, args.world_size)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'timm.utils.reduce_tensor' runs only on ranks where {{.*}} [ddp-divergent-collective]


def timm_distributed_reduce_tensor(args, t):
    if dist.get_rank() == 0:
        reduce_tensor2(t, args.world_size)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'timm.utils.distributed.reduce_tensor' runs only on ranks where {{.*}} [ddp-divergent-collective]


def timm_agreed_loss_skip(args, model, loader, optimizer):
    for x in loader:
        loss = model(x).sum()
        # Hard negative: the reduced loss is every rank's, so the skip is too.
        reduced = reduce_tensor(loss.detach(), args.world_size)
        if not torch.isfinite(reduced):
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def bmt_sum_loss_rank0(loss):
    if dist.get_rank() == 0:
        bmt.sum_loss(loss)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'bmtrain.sum_loss' runs only on ranks where {{.*}} [ddp-divergent-collective]


def bmt_agreed_loss_skip(model, loader, optimizer, accumulation_steps):
    for x in loader:
        loss = model(x).sum()
        # Hard negative: FlagAI's BMTrain step tests the summed loss, scaled
        # and reshaped.
        lm_loss = bmt.sum_loss(loss)
        lm_loss /= accumulation_steps
        reduced_loss = lm_loss.detach().clone().view(1)
        if not torch.isfinite(reduced_loss):
            continue
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def hf_local_main(args):
    if hf_is_main_process(args.local_rank):
        dist.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier runs only on ranks where {{.*}} [ddp-divergent-collective]


def ds_initialized(t):
    if ds_comm.is_initialized() and ds_comm.get_rank() == 0:
        ds_comm.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'deepspeed.comm.barrier' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hvd_initialized(t):
    if hvd.is_initialized() and hvd.rank() == 0:
        hvd.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'horovod.torch.barrier' runs only on ranks where {{.*}} [ddp-divergent-collective]


def hard_negatives(args, model, optimizer, t, r):
    # every rank makes each call
    ds_comm.all_reduce(t)
    comm.synchronize()
    hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    distribute_bn(model, args.world_size, True)
    for p in model.parameters():
        with deepspeed.zero.GatheredParameters([p]):  # every rank gathers
            print(p.data.norm())
    # rank-valued helpers that do not decide who communicates
    print(mpu.get_data_parallel_rank(), comm.get_rank(), hvd.rank())


def timm_saver_on_rank0(args, model, optimizer, loader, epochs):
    # timm's train.py: the saver exists on rank 0 only; its checkpoint, every
    # epoch, is written while the others go on into the next epoch's all-reduce
    saver = None
    if args.rank == 0:
        saver = CheckpointSaver(model=model, optimizer=optimizer, args=args, checkpoint_dir="out")
    for epoch in range(epochs):
        for x in loader:
            model(x).sum().backward()
        if saver is not None:
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
            saver.save_checkpoint(epoch, metric=0.0)


def timm_saver_module_path(args, model, optimizer, loader, epochs):
    saver = checkpoint_saver.CheckpointSaver(model=model, optimizer=optimizer) if args.rank == 0 else None
    for epoch in range(epochs):
        for x in loader:
            model(x).sum().backward()
            if saver is not None:
            # CHECK-MESSAGES: :[[@LINE-1]]:13: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
                saver.save_recovery(epoch)


def icefall_checkpoint_mid_epoch(params, model, optimizer, loader, rank):
    # vall-e's trainer: icefall's checkpoint every save_every_n batches on
    # rank 0, while the others go on into the next batch's all-reduce
    for batch_idx, x in enumerate(loader):
        model(x).sum().backward()
        optimizer.step()
        if batch_idx % params.save_every_n == 0:
            if rank == 0:
            # CHECK-MESSAGES: :[[@LINE-1]]:13: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
                save_checkpoint_with_global_batch_idx(out_dir=params.exp_dir, global_batch_idx=batch_idx,
                                                      model=model, optimizer=optimizer)
    if rank == 0:
        icefall_save_checkpoint(filename=f"{params.exp_dir}/epoch-1.pt", model=model)
    dist.barrier()  # hard negative: every rank waits for the final checkpoint


def icefall_checkpoint_rank_argument(params, model, optimizer, loader, rank):
    # icefall's recipes: the helper is handed the rank and returns at once
    # unless it is 0, so every rank calls it and rank 0 alone writes; the
    # others go on into the next batch's all-reduce
    for batch_idx, x in enumerate(loader):
        model(x).sum().backward()
        optimizer.step()
        if batch_idx % params.save_every_n == 0:
            save_checkpoint_with_global_batch_idx(out_dir=params.exp_dir, global_batch_idx=batch_idx,
            # CHECK-MESSAGES: :[[@LINE-1]]:13: warning: 'icefall.checkpoint.save_checkpoint_with_global_batch_idx' writes files only on rank 0 (its own main-process guard), with no barrier every rank reaches after it; {{.*}} [ddp-rank0-io-barrier]
                                                  model=model, optimizer=optimizer, rank=rank)


def icefall_epoch_checkpoint_helper(params, model, rank):
    # icefall's own `save_checkpoint` wrapper: after `if rank != 0: return`
    # the library's rank-argument save is the same rank-0 block, one report
    if rank != 0:
    # CHECK-MESSAGES: :[[@LINE-1]]:5: warning: code after this early return runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        return
    icefall_save_checkpoint(filename=f"{params.exp_dir}/epoch-{params.cur_epoch}.pt", model=model, rank=rank)


def icefall_train(params, model, optimizer, loader, rank, world_size):
    for epoch in range(params.num_epochs):
        for x in loader:
            model(x).sum().backward()
            optimizer.step()
        icefall_epoch_checkpoint_helper(params, model, rank)


def icefall_bad_model_per_rank(params, model, rank):
    # hard negative: every rank writes its own file (the rank in the name)
    icefall_save_checkpoint(filename=f"{params.exp_dir}/bad-model-{rank}.pt", model=model, rank=0)


def icefall_checkpoint_without_rank(params, model, loader):
    # every rank leaves `rank` at its default 0: every rank writes one path
    for x in loader:
        model(x).sum().backward()
    icefall_save_checkpoint(filename=f"{params.exp_dir}/final.pt", model=model)
    # CHECK-MESSAGES: :[[@LINE-1]]:5: error: every rank runs 'icefall.checkpoint.save_checkpoint' to the same path{{.*}} [ddp-unguarded-save]


def flax_params_on_process_zero(state, out_dir):
    # hard negative (diffusers' Flax examples): JAX's process 0 alone writes
    if jax.process_index() == 0:
        torch.save(state, f"{out_dir}/flax_params.pt")


def accelerate_save_state_hooks(loader, out_dir):
    # hard negative (diffusers' training examples): the hook runs inside
    # save_state, on the main process that calls it, not on every rank
    accelerator = Accelerator()
    model = torch.nn.Linear(2, 2)

    def save_model_hook(models, weights, output_dir):
        for m in models:
            torch.save(m.state_dict(), f"{output_dir}/model.pt")
            weights.pop()

    def load_model_hook(models, input_dir):
        for m in models:
            m.load_state_dict(torch.load(f"{input_dir}/model.pt"))
            torch.save(m.state_dict(), f"{input_dir}/model.loaded.pt")

    accelerator.register_save_state_pre_hook(save_model_hook)
    accelerator.register_load_state_pre_hook(load_model_hook)
    model = accelerator.prepare(model)
    for step, x in enumerate(loader):
        accelerator.backward(model(x).sum())
        if step % 100 == 0:
            if accelerator.is_main_process:
                # (this module runs DeepSpeed, whose save needs every rank)
                accelerator.save_state(f"{out_dir}/checkpoint-{step}")
                # CHECK-MESSAGES: :[[@LINE-1]]:17: error: barrier 'accelerator.save_state() (DeepSpeed and FSDP: every rank)' runs only on ranks where 'accelerator.is_main_process' holds{{.*}} [ddp-divergent-collective]
            accelerator.wait_for_everyone()


def timm_saver_then_barrier(args, model, optimizer, loader, epochs):
    # hard negative: the save is followed by a barrier every rank reaches
    saver = CheckpointSaver(model=model, optimizer=optimizer) if args.rank == 0 else None
    for epoch in range(epochs):
        for x in loader:
            model(x).sum().backward()
        if saver is not None:
            saver.save_checkpoint(epoch, metric=0.0)
        dist.barrier()


def apex_dp_rank(t):
    if apex_ps.get_data_parallel_rank() == 0:
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def apex_tp_rank(t):
    if apex_ps.get_tensor_model_parallel_rank() == 0:
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def apex_pp_rank(t):
    if apex_ps.get_pipeline_model_parallel_rank() == 0:
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def fairscale_consolidated_save(model, save_dir):
    # LLaMA's checkpoint: data-parallel rank 0 of each model-parallel group
    # writes its own shard (hard negative, not every rank to one path).
    mp_rank = fs_init.get_model_parallel_rank()
    if fs_init.get_data_parallel_rank() == 0:
        torch.save(model.state_dict(), f"{save_dir}/consolidated.{mp_rank:02d}.pth")
    dist.barrier()


def fairscale_dp_rank(t):
    if fs_init.get_data_parallel_rank() == 0:
        dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def accelerate_broadcast_flags(accelerator, model, n):
    # Hard negative (trl's GOLD trainer): rank 0 draws, accelerate.utils
    # hands every rank its list, and every rank then takes the same arms.
    flags = [random.random() < 0.5 for _ in range(n)] if accelerator.is_main_process else [False] * n
    flags = acc_broadcast_object_list(flags, from_process=0)
    chosen = [i for i, f in enumerate(flags) if f]
    if chosen:
        accelerator.wait_for_everyone()


# flashy (audiocraft's solvers, `import flashy`): its distrib module.
def flashy_rank0_sync(model, t):
    if flashy.distrib.is_rank_zero():
        flashy.distrib.sync_model(model)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'flashy.distrib.sync_model' runs only on ranks where {{.*}} [ddp-divergent-collective]


def flashy_all_reduce(model, t, metrics):
    if flashy.distrib.rank() == 0:
        flashy.distrib.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'flashy.distrib.all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]


def flashy_average_metrics(model, t, metrics):
    if flashy.distrib.rank() == 0:
        flashy.distrib.average_metrics(metrics)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'flashy.distrib.average_metrics' runs only on ranks where {{.*}} [ddp-divergent-collective]


def flashy_average_tensors(model, t, metrics):
    if flashy.distrib.rank() == 0:
        flashy.distrib.average_tensors([t])
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'flashy.distrib.average_tensors' runs only on ranks where {{.*}} [ddp-divergent-collective]


def flashy_sync_buffer(model, t, metrics):
    if flashy.distrib.rank() == 0:
        flashy.distrib.sync_buffer(model.buffers())
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'flashy.distrib.sync_buffer' runs only on ranks where {{.*}} [ddp-divergent-collective]


def flashy_sync_grad(model, t, metrics):
    if flashy.distrib.rank() == 0:
        flashy.distrib.sync_grad(model.parameters())
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'flashy.distrib.sync_grad' runs only on ranks where {{.*}} [ddp-divergent-collective]


def flashy_broadcast_tensors(model, t, metrics):
    if flashy.distrib.rank() == 0:
        flashy.distrib.broadcast_tensors([t])
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'flashy.distrib.broadcast_tensors' runs only on ranks where {{.*}} [ddp-divergent-collective]


def flashy_broadcast_model(model, t, metrics):
    if flashy.distrib.rank() == 0:
        flashy.distrib.broadcast_model(model)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'flashy.distrib.broadcast_model' runs only on ranks where {{.*}} [ddp-divergent-collective]


def flashy_broadcast_object(model, t, metrics):
    if flashy.distrib.rank() == 0:
        flashy.distrib.broadcast_object(metrics)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'flashy.distrib.broadcast_object' runs only on ranks where {{.*}} [ddp-divergent-collective]


def flashy_barrier(model, t, metrics):
    if flashy.distrib.rank() == 0:
        flashy.distrib.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'flashy.distrib.barrier' runs only on ranks where {{.*}} [ddp-divergent-collective]


def flashy_nonfinite_raise(model, optimizer, loader):
    # audiocraft's `run_step`: one rank's diverged loss raises while the
    # others go on into the gradient sync
    for batch in loader:
        loss = model(batch).mean()
        if not loss.isfinite().all():
            raise RuntimeError("Model probably diverged.")
        loss.backward()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'backward (DDP gradient allreduce)' is skipped by ranks where 'loss.isfinite().all()' does not hold {{.*}} they throw {{.*}} [ddp-divergent-collective]
        flashy.distrib.sync_model(model)
        optimizer.step()


def flashy_world_size_is_uniform(model, t):
    # hard negative: the world size is the same on every rank
    if flashy.distrib.world_size() > 1:
        flashy.distrib.all_reduce(t)
    flashy.distrib.barrier()


# Composer (llm-foundry's callbacks): `from composer.utils import dist`.
def composer_rank0_save(model, path):
    # hard negative: rank 0 writes between barriers
    state = model.state_dict()
    composer_dist.barrier()
    if composer_dist.get_global_rank() == 0:
        torch.save(state, path)
    composer_dist.barrier()


def composer_rank0_save_no_barrier(model, loader, path):
    for batch in loader:
        model(batch).sum().backward()
        if composer_dist.get_global_rank() == 0:
            torch.save(model.state_dict(), path)
            # CHECK-MESSAGES: :[[@LINE-2]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]


def composer_local_rank_barrier(model, path):
    if composer_dist.get_local_rank() == 0:
        composer_dist.barrier()
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: barrier 'composer.utils.dist.barrier' runs only on ranks where {{.*}} [ddp-divergent-collective]


def composer_collectives(t, objs):
    if composer_dist.get_global_rank() == 0:
        composer_dist.all_reduce(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'composer.utils.dist.all_reduce' runs only on ranks where {{.*}} [ddp-divergent-collective]
    if composer_dist.get_global_rank() == 1:
        composer_dist.all_gather(t)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'composer.utils.dist.all_gather' runs only on ranks where {{.*}} [ddp-divergent-collective]
    if composer_dist.get_global_rank() == 2:
        composer_dist.all_gather_object(objs)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'composer.utils.dist.all_gather_object' runs only on ranks where {{.*}} [ddp-divergent-collective]
    if composer_dist.get_global_rank() == 3:
        composer_dist.broadcast(t, src=0)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'composer.utils.dist.broadcast' runs only on ranks where {{.*}} [ddp-divergent-collective]
    if composer_dist.get_global_rank() == 4:
        composer_dist.broadcast_object_list(objs, src=0)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: collective 'composer.utils.dist.broadcast_object_list' runs only on ranks where {{.*}} [ddp-divergent-collective]


def composer_uniform(t):
    # hard negative: the world size and initialisation are the same on every rank
    if composer_dist.is_initialized() and composer_dist.get_world_size() > 1:
        composer_dist.all_reduce(t)
    composer_dist.barrier()


class RetrieverTrainer(Trainer):
    # hard negative: Trainer.save_model calls `_save` on process zero alone
    def _save(self, output_dir=None, state_dict=None):
        torch.save(self.model.state_dict(), f"{output_dir}/pytorch_model.bin")


class SummaryTrainer(Seq2SeqTrainer):
    # hard negative: the same through the sequence-to-sequence trainer
    def _save(self, output_dir=None, state_dict=None):
        torch.save(self.args, f"{output_dir}/training_args.bin")


def hf_trainers(model, args, data):
    RetrieverTrainer(model=model, args=args, train_dataset=data).train()
    SummaryTrainer(model=model, args=args, train_dataset=data).train()
    Trainer(model=model, args=args, train_dataset=data).save_model()
    Seq2SeqTrainer(model=model, args=args, train_dataset=data).save_model()


def detectron2_checkpointers(cfg, model, optimizer, loader):
    # detectron2's checkpointers save on the main process only: a rank-0 write
    # between this step's all_reduce and the next one's
    checkpointer = DetectionCheckpointer(model, cfg.OUTPUT_DIR, optimizer=optimizer)
    periodic = PeriodicCheckpointer(checkpointer, cfg.SOLVER.CHECKPOINT_PERIOD)
    for it, data in enumerate(loader):
        dist.all_reduce(data)
        periodic.step(it)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: 'periodic.step' writes files only on rank 0 (its own main-process guard){{.*}} [ddp-rank0-io-barrier]
    final = detection_checkpoint.DetectionCheckpointer(model, cfg.OUTPUT_DIR)
    fv_periodic = FvPeriodicCheckpointer(final, 1000)
    for it, data in enumerate(loader):
        dist.all_reduce(data)
        fv_periodic.step(it)
        comm.synchronize()  # hard negative: every rank waits for the write


def fvcore_checkpointers(model, out_dir, loader):
    # fvcore's own Checkpointer saves on every rank (`save_to_disk=True` by
    # default), and so does a PeriodicCheckpointer of it (dinov2's linear
    # evaluation); handed a main-process test, it is rank 0's.
    every = FvCheckpointer(model, out_dir)
    every_periodic = FvPeriodicCheckpointer(every, 1000)
    for it, data in enumerate(loader):
        dist.all_reduce(data)
        every_periodic.step(it)
        # CHECK-MESSAGES: :[[@LINE-1]]:9: error: every rank runs 'every_periodic.step' to the same path{{.*}} [ddp-unguarded-save]
    main_only = FvCheckpointer(model, out_dir, save_to_disk=comm.is_main_process())
    for it, data in enumerate(loader):
        dist.all_reduce(data)
        main_only.save(f"model_{it}")
        comm.synchronize()  # hard negative: rank 0 writes, then every rank waits


# detectron2's step hooks and launcher, timm's buffer-free ViT pieces (stop 50).
class EveryStepSave(HookBase):
    def after_step(self):
        if comm.is_main_process():
            # CHECK-MESSAGES: :[[@LINE-1]]:9: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches after it{{.*}} [ddp-rank0-io-barrier]
            torch.save(self.trainer.model.state_dict(), "hook.pth")


class TimmViT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = PatchEmbed(224, 16, 3, 64)
        self.blocks = torch.nn.ModuleList([Block(64, 4)])
        self.attn = Attention(64)
        self.mlp = Mlp(64)
        self.drop_path = DropPath(0.1)


def evaluate_timm_vit(rank):
    # hard negative: timm's ViT pieces hold no buffers, so rank 0's forward
    # broadcasts nothing
    model = torch.nn.parallel.DistributedDataParallel(TimmViT())
    if rank == 0:
        model(torch.ones(1, 3, 224, 224))
    dist.barrier()


def start_detectron2_job(main):
    launch(main, 2)
