"""A rank's own early stop behind a setting: `setting and local_value`.

cleanrl's ppo_atari_multigpu stops an update's epochs with `if
args.target_kl is not None and approx_kl > args.target_kl: break`, where
approx_kl is this rank's minibatch statistic and the epoch loop all-reduces
the gradients.  With the setting on, a rank whose KL passes the target
leaves while the others wait in the next all_reduce.  The setting is every
rank's; the stop is not.  Spelled with `and`, it is the nested test it
short-circuits to.  A stop agreed first (the KL all-reduced) is every rank's.
loader: a DataLoader over this rank's own environment steps.
"""
import torch
import torch.distributed as dist


def update(args, agent, optimizer, loader):
    for epoch in range(args.update_epochs):
        for mb in loader:
            loss, approx_kl = agent.loss(mb)
            optimizer.zero_grad()
            loss.backward()
            for p in agent.parameters():
                dist.all_reduce(p.grad)  # CHECK-MESSAGES: :[[@LINE]]:17: error: collective 'all_reduce' is skipped by ranks where 'approx_kl > args.target_kl' holds (a rank-local value): they break out of the loop{{.*}} [ddp-divergent-collective]
            optimizer.step()
        if args.target_kl is not None and approx_kl > args.target_kl:
            break


def update_nested(args, agent, optimizer, loader):
    for epoch in range(args.update_epochs):
        for mb in loader:
            loss, approx_kl = agent.loss(mb)
            loss.backward()
        dist.all_reduce(loss)  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'all_reduce' is skipped by ranks where 'approx_kl > args.target_kl' holds (a rank-local value): they break out of the loop{{.*}} [ddp-divergent-collective]
        if args.target_kl is not None:
            if approx_kl > args.target_kl:
                break


def update_agreed(args, agent, optimizer, loader):
    for epoch in range(args.update_epochs):
        for mb in loader:
            loss, approx_kl = agent.loss(mb)
            loss.backward()
        dist.all_reduce(loss)
        dist.all_reduce(approx_kl)
        if args.target_kl is not None and approx_kl > args.target_kl:
            break


def update_setting_first_or(args, agent, optimizer, loader):
    for epoch in range(args.update_epochs):
        for mb in loader:
            loss, approx_kl = agent.loss(mb)
            loss.backward()
        dist.all_reduce(loss)  # CHECK-MESSAGES: :[[@LINE]]:9: error: collective 'all_reduce' is skipped by ranks where 'approx_kl > args.max_kl' holds (a rank-local value): they break out of the loop{{.*}} [ddp-divergent-collective]
        if args.single_epoch or approx_kl > args.max_kl:
            break
