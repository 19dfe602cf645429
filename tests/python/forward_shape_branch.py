"""ddp-forward-shape-branch: forward() branches on the input's shape (or values,
or the rank) and the arms run different submodules or parameters.

Under DDP the last batch of an epoch is smaller on some ranks; a rank that
skips a submodule produces no gradient for it and the gradient allreduce hangs
("Expected to have finished reduction in the prior iteration").
Reported at the `if` (or at the start of a conditional expression).
"""
import math

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from megatron.core import mpu


# ---- true positives ---------------------------------------------------------


class Classifier(nn.Module):
    def __init__(self, dim, num_classes):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.bn = nn.BatchNorm1d(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        # BatchNorm fails on a batch of one, so it is skipped there.
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: bn [ddp-forward-shape-branch]
        if x.size(0) > 1:
            x = self.bn(x)
        return self.head(x)


class TwoHeads(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.single_head = nn.Linear(dim, 1)
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        if x.shape[0] == 1:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: {{.*}} [ddp-forward-shape-branch]
            return self.single_head(x)
        return self.head(x)


class ChunkedEncoder(nn.Module):
    def __init__(self, dim, chunk):
        super().__init__()
        self.chunk = chunk
        self.long_path = nn.TransformerEncoderLayer(dim, nhead=4, batch_first=True)
        self.short_path = nn.Linear(dim, dim)

    def forward(self, tokens):
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: {{.*}} [ddp-forward-shape-branch]
        if len(tokens) > self.chunk:
            out = self.long_path(tokens)
        else:
            out = self.short_path(tokens)
        return out


class SignRouter(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.head_a = nn.Linear(dim, dim)
        self.head_b = nn.Linear(dim, dim)

    def forward(self, x):
        # CHECK-MESSAGES: :[[@LINE+1]]:16: warning: {{.*}} [ddp-forward-shape-branch]
        return self.head_a(x) if x.sum().item() > 0 else self.head_b(x)


class LongSequenceDownsampler(nn.Module):
    def __init__(self, dim, max_len=512):
        super().__init__()
        self.max_len = max_len
        self.downsample = nn.Conv1d(dim, dim, kernel_size=2, stride=2)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):  # x: (batch, seq, dim), padded per batch
        if x.size(1) > self.max_len:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: downsample [ddp-forward-shape-branch]
            x = self.downsample(x.transpose(1, 2)).transpose(1, 2)
        return self.proj(x)


class ScaledResidual(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        y = self.lin(x)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: scale [ddp-forward-shape-branch]
        if x.numel() > 4096:
            y = y * self.scale
        return x + y


class RankAuxHead(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.body = nn.Linear(dim, dim)
        self.aux = nn.Linear(dim, dim)

    def forward(self, x):
        x = self.body(x)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: aux [ddp-forward-shape-branch]
        if dist.get_rank() == 0:
            x = x + self.aux(x)
        return x


class BaseBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)


class GatedBlock(BaseBlock):
    def __init__(self, dim):
        super().__init__(dim)
        self.gate = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.norm(x)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: gate [ddp-forward-shape-branch]
        if h.size(0) % 2 == 0:
            h = h * torch.sigmoid(self.gate(h))
        return x + h


# ---- hard negatives -----------------------------------------------------------


class Regularized(nn.Module):
    def __init__(self, dim, use_aux=False):
        super().__init__()
        self.use_aux = use_aux
        self.fc = nn.Linear(dim, dim)
        self.aux = nn.Linear(dim, dim)
        self.drop = nn.Dropout(0.1)
        self.act = nn.GELU()

    def forward(self, x, return_features: bool = False):
        if x.dim() == 1:  # normalise the input: every rank ends with the same rank-2 shape
            x = x.unsqueeze(0)
        if x.size(-1) != self.fc.in_features:  # input validation
            raise ValueError(f"expected {self.fc.in_features} features, got {x.size(-1)}")
        assert x.dim() == 2, "batch, features"
        if self.training:
            x = self.drop(x)
        if x.size(0) > 1:  # only a parameterless Dropout differs
            x = self.drop(x)
        h = self.fc(x)
        if self.use_aux:  # fixed at construction
            h = h + self.aux(x)
        if return_features:  # a flag chosen by the caller
            return h
        if x.is_cuda and x.dtype == torch.float16:  # metadata, the same everywhere
            h = h.float()
        scale = 2.0 if x.size(0) > 8 else 0.5  # same parameters, element-wise only
        return self.act(h) * scale


class SameSubmoduleBothArms(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, mask=None):
        if x.size(0) > 16:
            y = self.fc(x) * 2
        else:
            y = self.fc(x) * 0.5
        if mask is not None:
            y = y.masked_fill(~mask, 0.0)
        return y


class LoRALinear(nn.Module):
    # `rank` here is the LoRA rank r, a constructor argument: not the process rank.
    def __init__(self, in_features, out_features, rank=8, alpha=16):
        super().__init__()
        self.base = nn.Linear(in_features, out_features)
        self.rank = rank
        self.scaling = alpha / rank if rank > 0 else 0.0
        self.lora_A = nn.Linear(in_features, rank, bias=False) if rank > 0 else None
        self.lora_B = nn.Linear(rank, out_features, bias=False) if rank > 0 else None
        if rank > 0:
            nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
            nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        out = self.base(x)
        if self.rank > 0:
            out = out + self.lora_B(self.lora_A(x)) * self.scaling
        return out


class ClampGradient(torch.autograd.Function):
    # Not a module: its forward is an autograd function's.
    @staticmethod
    def forward(ctx, x, head):
        if x.size(0) > 1:
            return head(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-1, 1), None


class PaddingHelper(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.pad_proj = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, dim)

    def _maybe_pad(self, x):  # not forward, and forward does not branch around it
        if x.size(1) < 8:
            return self.pad_proj(F.pad(x, (0, 0, 0, 8 - x.size(1))))
        return x

    def forward(self, x):
        return self.out(x)


class WorldSizeAware(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.extra = nn.Linear(dim, dim)

    def forward(self, x):
        x = self.fc(x)
        if dist.is_initialized() and dist.get_world_size() > 1:  # uniform
            x = x + self.extra(x)
        return x


class MaskedLMHead(nn.Module):
    """DeepSpeedExamples' BertLMPredictionHead: the branch only selects rows;
    the bias parameter is used after it on every path (hard negative)."""

    def __init__(self, dim, vocab):
        super().__init__()
        self.decoder = nn.Linear(dim, vocab, bias=False)
        self.bias = nn.Parameter(torch.zeros(vocab))

    def forward(self, hidden_states, masked_token_indexes):
        if masked_token_indexes is not None:
            hidden_states = torch.index_select(
                hidden_states.view(-1, hidden_states.shape[-1]), 0, masked_token_indexes)
        return self.decoder(hidden_states) + self.bias


class DeformConvLike(nn.Module):
    """detectron2's DeformConv: an empty input returns an empty output early
    (degenerate input, not a branch on the batch's shape), and `activation`
    is a callable handed in, not a submodule with parameters (hard negative)."""

    def __init__(self, cin, cout, norm=None, activation=None):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(cout, cin, 3, 3))
        self.norm = norm
        self.activation = activation

    def forward(self, x):
        if x.numel() == 0:
            return x.new_empty(x.shape)  # no weight used: the arms differ but for a degenerate input
        x = F.conv2d(x, self.weight, padding=1)
        if self.activation is not None:
            x = self.activation(x)
        return x


class ScaleMaskSoftmax(nn.Module):
    """Megatron's FusedScaleMaskSoftmax: a masking function, no parameters."""

    def __init__(self, mask_func, scale=None):
        super().__init__()
        self.mask_func = mask_func
        self.scale = scale

    def forward(self, scores, mask):
        if scores.size(-1) <= 4096:
            return torch.softmax(scores, dim=-1)
        return torch.softmax(self.mask_func(scores, mask), dim=-1)


class EmptyBatchSkipsHead(nn.Module):
    """An early return on a NON-empty condition is still a shape branch."""

    def __init__(self, dim):
        super().__init__()
        self.head = nn.Linear(dim, dim)

    def forward(self, x):
        if x.size(0) < 2:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: {{.*}}'head'{{.*}} [ddp-forward-shape-branch]
            return x
        return self.head(x)


class FeatureExtractor(nn.Module):
    """BLIP's BLIP_Base: a mode string the caller picks, not the data."""

    def __init__(self, dim):
        super().__init__()
        self.visual_encoder = nn.Linear(dim, dim)
        self.text_encoder = nn.Linear(dim, dim)

    def forward(self, image, caption, mode):
        if mode == "image":
            return self.visual_encoder(image)
        elif mode == "text":
            return self.text_encoder(caption)
        return self.visual_encoder(image) + self.text_encoder(caption)


class TwinLayer(nn.Module):
    """BLIP's NLVR layer: a type test is the layer's structure, fixed per layer."""

    def __init__(self, dim):
        super().__init__()
        self.dense0 = nn.Linear(dim, dim)
        self.dense1 = nn.Linear(dim, dim)
        self.dense = nn.Linear(dim, dim)

    def forward(self, hidden_states):
        if type(hidden_states) == list:
            return self.dense0(hidden_states[0]) + self.dense1(hidden_states[1])
        return self.dense(hidden_states)


class AutoShapeLike(nn.Module):
    """yolov5's AutoShape: an inference wrapper, no gradient to reduce."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    @torch.inference_mode()
    def forward(self, ims):
        if ims.shape[0] == 0:
            return []
        if isinstance(ims, torch.Tensor) and ims.sum() > 0:
            return self.model(ims)
        return ims


class ModeByValue(nn.Module):
    """A string compared with the data's own value is still the data."""

    def __init__(self, dim):
        super().__init__()
        self.a = nn.Linear(dim, dim)
        self.b = nn.Linear(dim, dim)

    def forward(self, x):
        if x.sum() > 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: {{.*}}[ddp-forward-shape-branch]
            return self.a(x)
        return self.b(x)


class ExpertRouter(nn.Module):
    """gpt-neox's router: the expert-parallel rank owns its layer by design;
    the data-parallel replicas that reduce its gradients share that rank."""

    def __init__(self, dim, expert_parallel_rank):
        super().__init__()
        self.layer = nn.Linear(dim, dim)
        self.expert_parallel_rank = expert_parallel_rank

    def forward(self, x):
        if self.expert_parallel_rank == 0:
            return self.layer(x)
        return x


class PipelineBlock(nn.Module):
    """nanotron's PipelineBlock: the rank within the pipeline group computes."""

    def __init__(self, dim, pg, rank):
        super().__init__()
        self.pp_block = nn.Linear(dim, dim)
        self.pg = pg
        self.rank = rank

    def forward(self, x):
        if dist.get_rank(self.pg) != self.rank:
            return x
        return self.pp_block(x)


class RankZeroExtraHead(nn.Module):
    """The global rank: rank 0 runs a head the other replicas skip."""

    def __init__(self, dim):
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.extra = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.base(x)
        if dist.get_rank() == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: branch on the rank in forward() runs submodule 'extra'{{.*}} [ddp-forward-shape-branch]
            h = self.extra(h)
        return h


class DataParallelRankHead(nn.Module):
    """The data-parallel rank is the replicas' own: a branch on it is one."""

    def __init__(self, dim):
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.extra = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.base(x)
        if mpu.get_data_parallel_rank() == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: branch on the rank in forward() runs submodule 'extra'{{.*}} [ddp-forward-shape-branch]
            h = self.extra(h)
        return h


class MaskedRefine(nn.Module):
    """The data's contents through a torch function: one rank's batch has no
    masked token, and that rank skips the refiner."""

    def __init__(self, dim):
        super().__init__()
        self.refine = nn.Linear(dim, dim)

    def forward(self, x, mask):
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: branch on the input's values in forward() runs submodule 'refine'{{.*}} [ddp-forward-shape-branch]
        if torch.any(mask):
            x = x + self.refine(x) * mask.unsqueeze(-1)
        return x


def hinge_d_loss(real, fake):
    return F.relu(1.0 - real).mean() + F.relu(1.0 + fake).mean()


def vanilla_d_loss(real, fake):
    return F.softplus(-real).mean() + F.softplus(fake).mean()


class TimestepResBlock(nn.Module):
    """latent-diffusion's ResnetBlock: whether a time embedding is passed is
    the architecture's (the encoder passes None, the UNet a tensor), the same
    on every rank."""

    def __init__(self, dim, temb_channels):
        super().__init__()
        self.conv = nn.Linear(dim, dim)
        if temb_channels > 0:
            self.temb_proj = nn.Linear(temb_channels, dim)

    def forward(self, x, temb):
        h = self.conv(x)
        if temb is not None:
            h = h + self.temb_proj(temb)
        return h


class GanLoss(nn.Module):
    """latent-diffusion's LPIPSWithDiscriminator: Lightning's optimizer index
    is the same on every rank in a step, and the discriminator loss is a plain
    function, with no parameters."""

    def __init__(self, disc, hinge=True):
        super().__init__()
        self.discriminator = disc
        self.disc_loss = hinge_d_loss if hinge else vanilla_d_loss

    def forward(self, inputs, reconstructions, optimizer_idx):
        if optimizer_idx == 0:
            return -self.discriminator(reconstructions).mean()
        if optimizer_idx == 1:
            return self.disc_loss(self.discriminator(inputs), self.discriminator(reconstructions))


class ViewHead(nn.Module):
    """VISSL's iBOT head: the number of dimensions tells the class-token view
    from the patch view, and every rank runs both views in every step."""

    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.patch_norm = nn.LayerNorm(dim)

    def forward(self, x):
        if len(x.shape) == 2:
            return self.norm(x)
        if x.ndim == 3 and x.dim() == 3:
            return self.patch_norm(x)
        return x


class MaskedCriterion(nn.Module):
    # Hard negative (LLaMA-Adapter): the skipped submodule is a loss of
    # torch.nn, with no parameters; the other arm keeps the body in the graph.
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 10)
        self.criterion = nn.CrossEntropyLoss(ignore_index=0)

    def forward(self, x, labels):
        out = self.body(x)
        if labels.sum() == 0:
            loss = out.mean() * 0
        else:
            loss = self.criterion(out, labels)
        return loss


class LearnedLossHead(nn.Module):
    # A loss module with parameters still counts.
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 10)
        self.criterion = nn.AdaptiveLogSoftmaxWithLoss(10, 100, cutoffs=[10, 50])

    def forward(self, x, labels):
        out = self.body(x)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: criterion [ddp-forward-shape-branch]
        if labels.sum() == 0:
            loss = out.mean() * 0
        else:
            loss = self.criterion(out, labels).loss
        return loss


class RecursiveCaster(nn.Module):
    # A method that calls itself (DeepSpeed's engine casts nested inputs this
    # way; Open-Sora-Plan vendors it): read once per chain, not forever.
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def _cast(self, inputs):
        if isinstance(inputs, (list, tuple)):
            return type(inputs)(self._cast(v) for v in inputs)
        return self.proj(inputs.half())

    def forward(self, x):
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: proj [ddp-forward-shape-branch]
        if x.size(0) > 1:
            x = self._cast(x)
        return x


class FlowWithTeacher(nn.Module):
    # hard negative (RIFE's IFNet, vendored in CogVideo): whether a
    # ground-truth frame is stacked on the channels is the caller's layout,
    # the same for every batch
    def __init__(self):
        super().__init__()
        self.block0 = nn.Conv2d(6, 4, 3, padding=1)
        self.block_tea = nn.Conv2d(9, 4, 3, padding=1)

    def forward(self, x):
        img0 = x[:, :3]
        img1 = x[:, 3:6]
        gt = x[:, 6:]  # empty at inference
        flow = self.block0(torch.cat((img0, img1), 1))
        if gt.shape[1] == 3:
            flow = flow + self.block_tea(torch.cat((img0, img1, gt), 1))
        return flow


class LastBatchOfThree(nn.Module):
    # ...the batch axis against the same count is the data's
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 2)
        self.extra = nn.Linear(8, 2)

    def forward(self, x):
        out = self.head(x)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: {{.*}} [ddp-forward-shape-branch]
        if x.shape[0] == 3:
            out = out + self.extra(x)
        return out


class KernelAttention(nn.Module):
    # FastVideo: a wrapper of the attention kernel, with no parameters.
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


class ProjectedAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, q, k, v):
        return self.proj(F.scaled_dot_product_attention(q, k, v))


class CrossAttentionBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.to_q = nn.Linear(dim, dim)
        self.to_k = nn.Linear(dim, dim)
        self.attn = KernelAttention()
        self.projected = ProjectedAttention(dim)

    def forward(self, x, context):
        q = self.to_q(x)
        k = self.to_k(context)
        # hard negative: only the parameter-free kernel is skipped
        x = self.attn(q, k, k) if k.size(1) > 0 else torch.zeros_like(q)
        # the projection's parameters are skipped on some ranks
        y = self.projected(q, k, k) if k.size(1) > 0 else torch.zeros_like(q)  # CHECK-MESSAGES: :[[@LINE]]:13: warning: branch on the input's shape in forward() runs submodule 'projected' on some ranks only{{.*}} [ddp-forward-shape-branch]
        return x + y


class Residual(nn.Module):
    # A module handed in: its parameters are this wrapper's too.
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return x + self.fn(x)


class ResidualGate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.res = Residual(nn.Linear(dim, dim))

    def forward(self, x):
        return self.res(x) if x.size(1) > 0 else x  # CHECK-MESSAGES: :[[@LINE]]:16: warning: branch on the input's shape in forward() runs submodule 'res' on some ranks only{{.*}} [ddp-forward-shape-branch]


class PositionalEncoder(nn.Module):
    # Amphion's FastSpeech encoder: an arm only evaluation takes (no gradient
    # is all-reduced there), then the same test in training.
    def __init__(self, dim, max_len):
        super().__init__()
        self.emb = nn.Embedding(100, dim)
        self.proj = nn.Linear(dim, dim)
        self.max_len = max_len

    def forward(self, x):
        if not self.training and x.shape[1] > self.max_len:
            return self.emb(x)
        if self.training and x.shape[1] > self.max_len:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: branch on the input's shape in forward() runs submodule 'proj' on some ranks only{{.*}} [ddp-forward-shape-branch]
            return self.emb(x)
        return self.proj(self.emb(x))


class SlicedAttention(nn.Module):
    # diffusers' CrossAttention (SEINE's copy): the sliced path is a method of
    # the base class, the same projections either way.
    def __init__(self, dim, slice_size=None):
        super().__init__()
        self.to_q = nn.Linear(dim, dim)
        self.to_out = nn.Linear(dim, dim)
        self._slice_size = slice_size

    def _sliced_attention(self, q):
        return torch.cat([q[i:i + self._slice_size].softmax(-1) for i in range(0, q.shape[0], self._slice_size)])


class TemporalAttention(SlicedAttention):
    def _attention(self, q):
        return q.softmax(-1)

    def forward(self, x):
        # hard negative: both arms are methods of the class and its base
        q = self.to_q(x)
        if self._slice_size is None or q.shape[0] // self._slice_size == 1:
            h = self._attention(q)
        else:
            h = self._sliced_attention(q)
        return self.to_out(h)


class TemporalAttentionWithGate(SlicedAttention):
    def __init__(self, dim):
        super().__init__(dim)
        self.gate = nn.Linear(dim, dim)

    def forward(self, x):
        q = self.to_q(x)
        # CHECK-MESSAGES: :[[@LINE+1]]:9: warning: gate [ddp-forward-shape-branch]
        if q.shape[0] > 1:
            h = self.gate(self._sliced_attention(q))
        else:
            h = q
        return self.to_out(h)


class SpatialRegressionLoss(nn.Module):
    """ST-P3's loss: `self.loss_fn` is torch.nn.functional's l1_loss or
    mse_loss, a function with no parameters: the early return on an empty
    mask skips no submodule."""

    def __init__(self, norm, ignore_index=255):
        super().__init__()
        self.ignore_index = ignore_index
        if norm == 1:
            self.loss_fn = F.l1_loss
        else:
            self.loss_fn = F.mse_loss

    def forward(self, prediction, target):
        mask = target[:, :, :1] != self.ignore_index
        if mask.sum() == 0:
            return prediction.new_zeros(1)[0].float()
        loss = self.loss_fn(prediction, target, reduction="none")
        return loss[mask].mean()


class SpatialRegressionHead(nn.Module):
    """The same early return before a layer with parameters: skipped on the
    ranks whose mask is empty."""

    def __init__(self, dim, ignore_index=255):
        super().__init__()
        self.ignore_index = ignore_index
        self.head = nn.Linear(dim, dim)

    def forward(self, prediction, target):
        mask = target[:, :, :1] != self.ignore_index
        if mask.sum() == 0:  # CHECK-MESSAGES: :[[@LINE]]:9: warning: {{.*}}'head'{{.*}} [ddp-forward-shape-branch]
            return prediction.new_zeros(1)[0].float()
        loss = F.l1_loss(self.head(prediction), target, reduction="none")
        return loss[mask].mean()
