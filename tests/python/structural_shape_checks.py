"""Shape checks that every rank answers alike.

allennlp's metrics raise when `gold_labels.dim() != predictions.dim() - 1` or
`gold_labels.size() != predictions.size()`, then all-reduce their counts.  How
many dimensions a tensor has, and whether two tensors of one batch have the
same shape, is fixed by the code that made them, not by a rank's samples: the
raise is not a rank-local exit.  Before, five such metrics were reported as a
rank-local skip of the all-reduce; so was `mask is not None` of an optional
argument that defaults to None (the caller's code hands it over or not).  A
test of the data itself (a label out of range) still is.
"""
from typing import Optional

import torch
import torch.distributed as dist


class CategoricalAccuracy:
    def __call__(self, predictions, gold_labels):
        if gold_labels.dim() != predictions.dim() - 1:
            raise ValueError("gold_labels must have one dimension fewer than predictions")
        correct = (predictions.argmax(-1) == gold_labels).sum()
        if dist.is_initialized():
            dist.all_reduce(correct)
        return correct


class BooleanAccuracy:
    def __call__(self, predictions, gold_labels, mask=None):
        if gold_labels.size() != predictions.size():
            raise ValueError("gold_labels and predictions differ in shape")
        if mask is not None and mask.shape != predictions.shape:
            raise ValueError("mask and predictions differ in shape")
        correct = predictions.eq(gold_labels).sum()
        if dist.is_initialized():
            dist.all_reduce(correct)
        return correct


class SequenceAccuracy:
    # allennlp's: an optional mask, detached with the rest; whether it was
    # handed over is the caller's code, alike on every rank
    def __call__(self, predictions: torch.Tensor, gold_labels: torch.Tensor,
                 mask: Optional[torch.BoolTensor] = None):
        predictions, gold_labels, mask = self.detach_tensors(predictions, gold_labels, mask)
        if mask is not None and mask.size() != gold_labels.size():
            raise ValueError("mask and gold_labels differ in shape")
        correct = predictions.eq(gold_labels).sum()
        if dist.is_initialized():
            dist.all_reduce(correct)
        return correct

    @staticmethod
    def detach_tensors(*tensors):
        return (x.detach() if isinstance(x, torch.Tensor) else x for x in tensors)


class FBetaMeasure:
    def __call__(self, predictions, gold_labels, num_classes):
        # a label out of range is this rank's data: it throws alone
        if (gold_labels >= num_classes).any():
            raise ValueError("label out of range")
        tp = (predictions.argmax(-1) == gold_labels).sum()
        if dist.is_initialized():
            dist.all_reduce(tp)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: collective 'all_reduce' is never reached by ranks where '(gold_labels >= num_classes).any()' holds (a rank-local value): they throw early {{.*}} [ddp-divergent-collective]
        return tp


class PaddedLength:
    def __call__(self, inputs, max_len):
        # one dimension of this rank's batch (its padded length) is its own
        if inputs.size(1) > max_len:
            raise ValueError("too long")
        n = inputs.ne(0).sum()
        if dist.is_initialized():
            dist.all_reduce(n)
            # CHECK-MESSAGES: :[[@LINE-1]]:13: error: collective 'all_reduce' is never reached by ranks where 'inputs.size(1) > max_len' holds (a rank-local value): they throw early {{.*}} [ddp-divergent-collective]
        return n
