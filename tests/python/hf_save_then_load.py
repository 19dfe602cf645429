"""The old Hugging Face examples (run_glue.py of transformers 2.x): after
training, rank 0 saves the model with `save_pretrained(args.output_dir)`,
then every rank loads it back with `from_pretrained(args.output_dir)` with no
barrier between: the other ranks may load a half-written model, or none.
The directory is matched by the setting that names it.
"""
import datetime

import torch
from transformers import BertForSequenceClassification


def main(args, train):
    torch.distributed.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = BertForSequenceClassification.from_pretrained(args.model_name_or_path)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
    train(args, model)
    model(torch.ones(1)).loss.backward()
    if args.do_train and torch.distributed.get_rank() == 0:
        # CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
        model_to_save = model.module if hasattr(model, "module") else model
        model_to_save.save_pretrained(args.output_dir)
    model = BertForSequenceClassification.from_pretrained(args.output_dir)


def ordered(args, train):  # hard negative: a barrier between
    torch.distributed.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = BertForSequenceClassification.from_pretrained(args.model_name_or_path)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
    train(args, model)
    model(torch.ones(1)).loss.backward()
    if args.do_train and torch.distributed.get_rank() == 0:
        model.module.save_pretrained(args.output_dir)
    torch.distributed.barrier()
    model = BertForSequenceClassification.from_pretrained(args.output_dir)


def loads_the_base(args, train):  # hard negative: another directory
    torch.distributed.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
    model = BertForSequenceClassification.from_pretrained(args.model_name_or_path)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])
    model(torch.ones(1)).loss.backward()
    if torch.distributed.get_rank() == 0:
        model.module.save_pretrained(args.output_dir)
    reference = BertForSequenceClassification.from_pretrained(args.model_name_or_path)
    return reference
