"""A helper's list is as long as the arguments it walks, not as its values.

LSGM's `kl_per_group_vada(all_log_q, all_neg_log_p)` appends one KL term per
latent group, walking the model's per-group outputs in step; the caller then
all-reduces each term.  The terms hold this rank's noise, but there are as
many on every rank: the loop is no divergence.  A helper that filters what
it walks, or appends under a test, makes a list as long as this rank's data
allows: a loop over it with a collective inside stays a divergence.
"""
import torch
import torch.distributed as dist


def average_tensor(t):
    dist.all_reduce(t, op=dist.ReduceOp.SUM)


def kl_per_group(all_log_q, all_neg_log_p):
    kl_all = []
    kl_diag = []
    for log_q, neg_log_p in zip(all_log_q, all_neg_log_p):
        kl_diag.append(torch.mean(torch.sum(neg_log_p + log_q, dim=[2, 3]), dim=0))
        kl_all.append(torch.sum(neg_log_p + log_q, dim=[1, 2, 3]))
    kl_vals = torch.mean(torch.stack(kl_all, dim=1), dim=0)
    return kl_all, kl_vals, kl_diag


def per_group(all_log_q, all_neg_log_p):
    return [torch.mean(q + p, dim=0) for q, p in zip(all_log_q, all_neg_log_p)]


def active_groups(all_log_q):
    return [q for q in all_log_q if q.abs().sum() > 0.1]


def spiky_groups(all_log_q):
    out = []
    for q in all_log_q:
        if q.max() > 10:
            out.append(q)
    return out


def train(train_queue, vae):
    for step, x in enumerate(train_queue):
        logits, all_log_q, eps = vae(x)
        noise = torch.randn(size=eps.size(), device="cuda")
        all_neg_log_p = vae.decompose_eps(torch.square(eps - noise))
        kl_all, kl_vals, kl_diag = kl_per_group(all_log_q, all_neg_log_p)
        for i, kl_diag_i in enumerate(kl_diag):
            average_tensor(kl_diag_i)
        for term in per_group(all_log_q, all_neg_log_p):
            average_tensor(term)


def train_filtered(train_queue, vae):
    for step, x in enumerate(train_queue):
        logits, all_log_q, eps = vae(x)
        noise = torch.randn(size=eps.size(), device="cuda")
        noisy = [q + noise for q in all_log_q]
        for term in active_groups(noisy):
            average_tensor(term)  # CHECK-MESSAGES: :[[@LINE]]:13: error: call to 'average_tensor', which runs collective 'all_reduce', runs in a loop whose trip count depends on 'active_groups(noisy)'{{.*}} [ddp-divergent-collective]
        for term in spiky_groups(noisy):
            average_tensor(term)  # CHECK-MESSAGES: :[[@LINE]]:13: error: call to 'average_tensor', which runs collective 'all_reduce', runs in a loop whose trip count depends on 'spiky_groups(noisy)'{{.*}} [ddp-divergent-collective]
