"""A model wrapped by deepspeed.initialize (or DDP, FSDP) is the same model on
every rank, whatever the values its wrapper or its parts were built from:
its configuration decides no trip count (hard negative, issue 16)."""
import deepspeed
import torch
from deepspeed.compression.compress import init_compression
from transformers import AutoConfig, BertForSequenceClassification


def layer_by_layer_distillation(args, train_dataloader):
    model = BertForSequenceClassification.from_pretrained(args.student)
    # DeepSpeedExamples' run_glue_lkd.py: the student is compressed with a
    # teacher built from values each rank read itself; the model
    # deepspeed.initialize returns is still the same model on every rank, and
    # so is its configuration.
    with open(args.labels_file) as f:
        num_labels = len(f.readlines())  # read by each rank: a rank-local value
    if args.distill_method != "zero_stage":
        teacher_config = AutoConfig.from_pretrained(args.teacher, num_labels=num_labels)
        teacher_model = BertForSequenceClassification.from_pretrained(args.teacher, config=teacher_config)
        if args.pretrained_dir_teacher is not None:
            teacher_model.load_state_dict(torch.load(args.pretrained_dir_teacher))
            model = init_compression(model, args.deepspeed_config, teacher_model=teacher_model)
    model, optimizer, _, _ = deepspeed.initialize(args=args, model=model, dist_init_required=True)
    for layer in range(model.module.config.num_hidden_layers):
        for _ in range(args.num_train_epochs):
            for batch in train_dataloader:
                with torch.no_grad():
                    teacher_out = teacher_model(**batch, output_hidden_states=True)
                loss = model(**batch).loss
                loss.backward()
