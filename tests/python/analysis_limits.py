"""Long functions: many uniform branches before a divergent collective.

Twenty argument flags that only write logs are one path each way, so the
analysis follows `main` whole and finds the rank-0 broadcast in the loop.
Twenty flags that each add a collective are 2^20 real combinations: the
analysis keeps a sample, still finds the divergence, and says where it
stopped (CHECK-LIMIT) instead of reading like clean code.
Ten settings checks that may each end the process leave 1,024 paths that go
on alike: they are folded before any is dropped.
"""
import argparse
import datetime
import sys

import torch
import torch.distributed as dist


def write_log(name, text):
    with open(name, "a") as f:
        f.write(text)


def main():
    args = argparse.ArgumentParser().parse_args()
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    rank = dist.get_rank()
    x = torch.zeros(1)
    if args.opt0:
        write_log("opt0.txt", "on")
    else:
        print("opt0 off")
    if args.opt1:
        write_log("opt1.txt", "on")
    else:
        print("opt1 off")
    if args.opt2:
        write_log("opt2.txt", "on")
    else:
        print("opt2 off")
    if args.opt3:
        write_log("opt3.txt", "on")
    else:
        print("opt3 off")
    if args.opt4:
        write_log("opt4.txt", "on")
    else:
        print("opt4 off")
    if args.opt5:
        write_log("opt5.txt", "on")
    else:
        print("opt5 off")
    if args.opt6:
        write_log("opt6.txt", "on")
    else:
        print("opt6 off")
    if args.opt7:
        write_log("opt7.txt", "on")
    else:
        print("opt7 off")
    if args.opt8:
        write_log("opt8.txt", "on")
    else:
        print("opt8 off")
    if args.opt9:
        write_log("opt9.txt", "on")
    else:
        print("opt9 off")
    if args.opt10:
        write_log("opt10.txt", "on")
    else:
        print("opt10 off")
    if args.opt11:
        write_log("opt11.txt", "on")
    else:
        print("opt11 off")
    if args.opt12:
        write_log("opt12.txt", "on")
    else:
        print("opt12 off")
    if args.opt13:
        write_log("opt13.txt", "on")
    else:
        print("opt13 off")
    if args.opt14:
        write_log("opt14.txt", "on")
    else:
        print("opt14 off")
    if args.opt15:
        write_log("opt15.txt", "on")
    else:
        print("opt15 off")
    if args.opt16:
        write_log("opt16.txt", "on")
    else:
        print("opt16 off")
    if args.opt17:
        write_log("opt17.txt", "on")
    else:
        print("opt17 off")
    if args.opt18:
        write_log("opt18.txt", "on")
    else:
        print("opt18 off")
    if args.opt19:
        write_log("opt19.txt", "on")
    else:
        print("opt19 off")
    for step in range(args.steps):
        dist.all_reduce(x)
        if rank == 0:
            # CHECK-MESSAGES: :[[@LINE+1]]:13: error: collective 'broadcast' runs only on ranks where 'rank == 0' holds [ddp-divergent-collective]
            dist.broadcast(x, 0)


def main_with_optional_collectives():  # CHECK-LIMIT: :[[@LINE]]:1: 'main_with_optional_collectives' has more than 512 paths
    args = argparse.ArgumentParser().parse_args()
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    rank = dist.get_rank()
    x = torch.zeros(1)
    if args.sync0:
        dist.all_reduce(x)
    if args.sync1:
        dist.all_reduce(x)
    if args.sync2:
        dist.all_reduce(x)
    if args.sync3:
        dist.all_reduce(x)
    if args.sync4:
        dist.all_reduce(x)
    if args.sync5:
        dist.all_reduce(x)
    if args.sync6:
        dist.all_reduce(x)
    if args.sync7:
        dist.all_reduce(x)
    if args.sync8:
        dist.all_reduce(x)
    if args.sync9:
        dist.all_reduce(x)
    if args.sync10:
        dist.all_reduce(x)
    if args.sync11:
        dist.all_reduce(x)
    if args.sync12:
        dist.all_reduce(x)
    if args.sync13:
        dist.all_reduce(x)
    if args.sync14:
        dist.all_reduce(x)
    if args.sync15:
        dist.all_reduce(x)
    if args.sync16:
        dist.all_reduce(x)
    if args.sync17:
        dist.all_reduce(x)
    if args.sync18:
        dist.all_reduce(x)
    if args.sync19:
        dist.all_reduce(x)
    if rank == 0:
        # CHECK-MESSAGES: :[[@LINE+1]]:9: error: barrier runs only on ranks where 'rank == 0' holds [ddp-divergent-collective]
        dist.barrier()


def main_with_config_exits():
    # dlrm's run(): ten settings checks, each ending the process on a bad
    # value, before the training loop.  Every rank leaves or goes on alike, so
    # the surviving paths are one, and the loop's hazards are found whole.
    args = argparse.ArgumentParser().parse_args()
    dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
    rank = dist.get_rank()
    if args.check0:
        if args.value0 < 0:
            sys.exit("bad value 0")
    if args.check1:
        if args.value1 < 0:
            sys.exit("bad value 1")
    if args.check2:
        if args.value2 < 0:
            sys.exit("bad value 2")
    if args.check3:
        if args.value3 < 0:
            sys.exit("bad value 3")
    if args.check4:
        if args.value4 < 0:
            sys.exit("bad value 4")
    if args.check5:
        if args.value5 < 0:
            sys.exit("bad value 5")
    if args.check6:
        if args.value6 < 0:
            sys.exit("bad value 6")
    if args.check7:
        if args.value7 < 0:
            sys.exit("bad value 7")
    if args.check8:
        if args.value8 < 0:
            sys.exit("bad value 8")
    if args.check9:
        if args.value9 < 0:
            sys.exit("bad value 9")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
    for step in range(10):
        model(torch.randn(8, 4)).sum().backward()
        if rank == 0 and step == 5:
            # CHECK-MESSAGES: :[[@LINE+1]]:13: error: barrier runs only on ranks where{{.*}} [ddp-divergent-collective]
            dist.barrier()
    # CHECK-MESSAGES: :[[@LINE+1]]:5: error: every rank runs 'torch.save' to the same path{{.*}} [ddp-unguarded-save]
    torch.save(model.state_dict(), args.save_model)


if __name__ == "__main__":
    main()
