"""ddp-init-timeout's fix-it in a module where `datetime` names the class
(`from datetime import datetime`, as PoolFormer's and timm's train.py do): an
added `import datetime` would be shadowed by it, and `datetime.timedelta`
would raise AttributeError, so the fix-it imports `timedelta` itself."""
# CONFIG: launch:
# CONFIG:   torch_version: "2.4"
import os
from datetime import datetime

import torch.distributed as dist


def setup():
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    dist.init_process_group(backend="nccl")  # CHECK-MESSAGES: :[[@LINE]]:5: warning: {{.*}} [ddp-init-timeout]
    return stamp


# CHECK-FIXES: from datetime import timedelta
# CHECK-FIXES: dist.init_process_group(backend="nccl", timeout=timedelta(seconds=1800))
