"""A script that trains with the Hugging Face Trainer (or TRL's) runs as one
process per GPU under torchrun, accelerate or deepspeed: the Trainer makes
the process group.  LMFlow's DPO aligners then save the final model on
every rank, into one folder.  `trainer.save_model(...)` and a save under
`trainer.is_world_process_zero()` are one process's.
"""
import os

from transformers import Trainer, TrainingArguments


def align(model, train_dataset, output_dir):
    args = TrainingArguments(output_dir=output_dir)
    trainer = Trainer(model=model, args=args, train_dataset=train_dataset)
    trainer.train()
    trainer.save_model(output_dir)
    if trainer.is_world_process_zero():
        trainer.model.config.save_pretrained(os.path.join(output_dir, "config_only"))
    if trainer.is_world_master():  # transformers 3's name for is_world_process_zero
        trainer.model.save_pretrained(os.path.join(output_dir, "master_copy"))
    # CHECK-MESSAGES: :[[@LINE+1]]:5: error: every rank runs 'trainer.model.save_pretrained' to the same path{{.*}} [ddp-unguarded-save]
    trainer.model.save_pretrained(os.path.join(output_dir, "final_checkpoint"))
