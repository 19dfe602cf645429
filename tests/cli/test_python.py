#!/usr/bin/env python3
"""End-to-end tests of the ddplint CLI on Python files: the same run, report,
exit codes, baselines, --fix, suppressions and config as C++, and the
pre-commit hook on staged .py files.  Every test works in a temporary folder.
"""
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import unittest

from test_cli import DDPLINT, MOCK_INCLUDE, REPO, TIMEOUT, findings, run

TRAIN = """\
    import os
    import torch
    import torch.distributed as dist


    def main():
        dist.init_process_group("gloo")
        rank = dist.get_rank()
        t = torch.zeros(1)
        if rank == 0:
            dist.all_reduce(t)
        torch.save(t, "ckpt.pt")


    if __name__ == "__main__":
        main()
    """

CPP = """\
    #include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
    void step(c10::intrusive_ptr<c10d::ProcessGroup> pg, std::vector<at::Tensor> &t) {
      if (pg->getRank() == 0)
        pg->allreduce(t)->wait();
    }
    """


# A training script in one folder of an application that appends the
# application's folder to sys.path and imports a helper from a sibling folder
# (DeepSpeed-Chat, DeepSpeed-VisualChat); `call` is the loop's last statement
# (line 15), indented as the template is.
SYS_PATH_SCRIPT = """\
    import os
    import sys
    import datetime
    import torch
    import torch.distributed as dist
    sys.path.append(os.path.join(os.path.dirname(__file__), os.path.pardir))
    from utils.utils import save_hf_format


    def main(model):
        dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
        t = torch.ones(1)
        for epoch in range(3):
            dist.all_reduce(t)
{call}
    """


class PythonProject(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddplint-py-cli-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, rel, text):
        path = os.path.join(self.tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def lint(self, *args):
        return run(list(args), cwd=self.tmp)


class PythonRuns(PythonProject):
    def test_python_file_needs_no_database(self):
        self.write("train.py", TRAIN)
        p = self.lint("train.py")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        got = {(f, l, r) for f, l, r, _ in findings(p.stdout)}
        self.assertEqual(got, {("train.py", 7, "ddp-init-timeout"),
                               ("train.py", 11, "ddp-divergent-collective"),
                               ("train.py", 12, "ddp-unguarded-save")})
        self.assertIn("1 file analyzed", p.stderr)

    def test_python_and_cpp_in_one_report(self):
        self.write("py/train.py", TRAIN)
        self.write("cpp/step.cpp", CPP)
        p = self.lint("--format", "json", "py/train.py", "cpp/step.cpp", "--",
                      "-std=c++17", f"-isystem{MOCK_INCLUDE}")
        self.assertEqual(p.returncode, 1, p.stderr)
        doc = json.loads(p.stdout)
        files = {os.path.basename(f["file"]) for f in doc["findings"]}
        self.assertEqual(files, {"train.py", "step.cpp"})
        self.assertEqual(doc["summary"]["filesAnalyzed"], 2)

    def test_folder_brings_its_python_files(self):
        self.write("pkg/a.py", TRAIN)
        self.write("pkg/sub/b.py", "import torch\nprint(torch.zeros(1))\n")
        self.write("pkg/.venv/lib/c.py", TRAIN)  # hidden folders are not the project's
        p = self.lint("--format", "json", "pkg")
        doc = json.loads(p.stdout)
        self.assertEqual(doc["summary"]["filesAnalyzed"], 2, p.stderr)
        self.assertTrue(all(f["file"].endswith("a.py") for f in doc["findings"]))

    def test_sarif_for_python(self):
        self.write("train.py", TRAIN)
        p = self.lint("--format", "sarif", "train.py")
        doc = json.loads(p.stdout)
        results = doc["runs"][0]["results"]
        self.assertEqual(len(results), 3)
        loc = results[0]["locations"][0]["physicalLocation"]
        self.assertTrue(loc["artifactLocation"]["uri"].endswith("train.py"))

    def test_baseline(self):
        self.write("train.py", TRAIN)
        base = os.path.join(self.tmp, "base.json")
        self.assertEqual(self.lint("--write-baseline", base, "train.py").returncode, 0)
        p = self.lint("--baseline", base, "train.py")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_noqa_and_nolint(self):
        src = TRAIN.replace('dist.all_reduce(t)', 'dist.all_reduce(t)  # noqa: ddp-divergent-collective')
        src = src.replace('torch.save(t, "ckpt.pt")', 'torch.save(t, "ckpt.pt")  # NOLINT(ddp-unguarded-save)')
        src = src.replace('dist.init_process_group("gloo")', 'dist.init_process_group("gloo")  # noqa: E501')
        self.write("train.py", src)
        p = self.lint("train.py")
        got = {(l, r) for _, l, r, _ in findings(p.stdout)}
        # A noqa for another linter's code does not silence ours.
        self.assertEqual(got, {(7, "ddp-init-timeout")})

    def test_config_disables_and_sets_severity(self):
        self.write("train.py", TRAIN)
        self.write(".ddplint.yaml", """\
            version: 1
            checks:
              ddp-init-timeout: off
              ddp-unguarded-save: warning
            """)
        p = self.lint("--format", "json", "train.py")
        doc = json.loads(p.stdout)
        sev = {f["rule"]: f["severity"] for f in doc["findings"]}
        self.assertEqual(sev, {"ddp-divergent-collective": "error",
                               "ddp-unguarded-save": "warning"})

    def test_fix_inserts_timeout_and_loader_options(self):
        path = self.write("train.py", """\
            import torch.distributed as dist
            from torch.utils.data import DataLoader


            def setup(ds):
                dist.init_process_group(backend="gloo")
                return DataLoader(ds, batch_size=8, num_workers=4)
            """)
        p = self.lint("--fix", "--fail-on", "never", "train.py")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        fixed = open(path).read()
        self.assertIn("import datetime\n", fixed)
        self.assertIn('dist.init_process_group(backend="gloo", timeout=datetime.timedelta(seconds=', fixed)
        self.assertIn("DataLoader(ds, batch_size=8, num_workers=4, persistent_workers=True)", fixed)
        compile(fixed, path, "exec")  # still valid Python
        # The fixed file is clean for those rules.
        p = self.lint("train.py")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_fix_uses_the_configured_timeout(self):
        path = self.write("train.py", """\
            import datetime
            import torch.distributed as dist
            dist.init_process_group("gloo")
            """)
        self.write(".ddplint.yaml", """\
            version: 1
            options:
              ddp-init-timeout.DefaultTimeoutSeconds: 120
            """)
        p = self.lint("--fix", "--fail-on", "never", "train.py")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn('dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))',
                      open(path).read())

    def test_syntax_error_names_the_line_and_keeps_findings(self):
        self.write("train.py", TRAIN + "\ndef broken(:\n    pass\n")
        p = self.lint("train.py")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertRegex(p.stdout + p.stderr, r"train\.py:18:\d+: error: Python syntax error")
        rules = {r for _, _, r, _ in findings(p.stdout)}
        self.assertIn("ddp-divergent-collective", rules)

    def test_starred_element_before_a_bracket_is_not_a_syntax_error(self):
        # Valid since Python 3.8 (litgpt's convert_hf_checkpoint.py); the
        # pinned tree-sitter grammar rejects it.  Not the user's error: no
        # tool error, exit 1 for the findings, and the findings after it.
        self.write("train.py", TRAIN + textwrap.dedent("""\

            def layer_template(name, m):
                return name, *(int(x) for x in m)


            def views(transform, img, n, target):
                # suncet's data_manager.py: the starred element first
                return *[transform(img) for _ in range(n)], target


            pair = 1, *[2]
            first = *[1, 2], 3
            """))
        p = self.lint("--format", "json", "train.py")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["toolErrors"], [])
        self.assertIn("ddp-divergent-collective", {f["rule"] for f in doc["findings"]})
        # A starred element that really is broken is still an error.
        self.write("bad.py", "pair = 1, *[2\n")
        self.assertEqual(self.lint("bad.py").returncode, 2)

    def test_torch_version_from_config(self):
        src = """\
            import torch.distributed as dist
            from datetime import timedelta
            dist.init_process_group("nccl", timeout=timedelta(minutes=5))
            """
        self.write("train.py", src)
        self.write(".ddplint.yaml", 'version: 1\ntorch_version: "1.13"\n')
        p = self.lint("train.py")
        self.assertEqual({r for _, _, r, _ in findings(p.stdout)}, {"ddp-async-error-handling"})
        self.write(".ddplint.yaml", 'version: 1\ntorch_version: "2.4"\n')
        p = self.lint("train.py")
        self.assertEqual(p.returncode, 0, p.stdout)

    def test_launch_files_give_the_program_their_environment(self):
        src = """\
            import torch.distributed as dist
            from datetime import timedelta
            dist.init_process_group("nccl", timeout=timedelta(minutes=5))
            """
        self.write("src/train.py", src)
        self.write(".ddplint.yaml", 'version: 1\ntorch_version: "1.13"\n')
        # srun passes the environment on and sets nothing: the finding stays,
        # with a note at the launch command.
        self.write("slurm/job.sbatch", "#!/bin/bash\n#SBATCH --nodes=2\nsrun python src/train.py\n")
        p = self.lint("src/train.py")
        self.assertEqual([r for _, _, r, _ in findings(p.stdout)], ["ddp-async-error-handling"])
        self.assertIn("job.sbatch:3:1: note: launched here without it", p.stdout)
        # The batch script exports it: the program runs with it on.
        self.write("slurm/job.sbatch", "#!/bin/bash\n#SBATCH --nodes=2\n"
                   "export NCCL_ASYNC_ERROR_HANDLING=1\nsrun python src/train.py\n")
        p = self.lint("src/train.py")
        self.assertEqual(p.returncode, 0, p.stdout)
        # ... turned off there: reported, and the note says where.
        self.write("slurm/job.sbatch", "#!/bin/bash\n#SBATCH --nodes=2\n"
                   "export NCCL_ASYNC_ERROR_HANDLING=0\nsrun python -m src.train\n")
        p = self.lint("src/train.py")
        self.assertIn("its launch file sets it to 0", p.stdout)
        self.assertIn("job.sbatch:4:1: note: launched here with NCCL_ASYNC_ERROR_HANDLING=0", p.stdout)
        # ... unless the program turns it on itself, which comes later.
        self.write("src/train.py", 'import os\nos.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"\n' +
                   textwrap.dedent(src))
        p = self.lint("src/train.py")
        self.assertEqual(p.returncode, 0, p.stdout)
        # torchrun exports it on 1.9 and newer; a launch of another script does not count.
        self.write("src/train.py", src)
        self.write("slurm/job.sbatch", "#!/bin/bash\ntorchrun --nproc_per_node 8 src/train.py\n")
        self.assertEqual(self.lint("src/train.py").returncode, 0)
        self.write("slurm/job.sbatch", "#!/bin/bash\ntorchrun --nproc_per_node 8 src/pretrain.py\n")
        self.assertEqual([r for _, _, r, _ in findings(self.lint("src/train.py").stdout)],
                         ["ddp-async-error-handling"])
        # A Kubernetes container that runs it with the variable set.
        self.write("slurm/job.sbatch", "#!/bin/bash\nsrun python src/pretrain.py\n")
        self.write("k8s/job.yaml", """\
            apiVersion: batch/v1
            kind: Job
            metadata: {name: bert}
            spec:
              template:
                spec:
                  containers:
                  - name: trainer
                    image: pytorch/pytorch:1.13.1-cuda11.6-cudnn8-runtime
                    command: [python, /app/src/train.py]
                    env:
                    - {name: NCCL_ASYNC_ERROR_HANDLING, value: "1"}
                    resources: {limits: {nvidia.com/gpu: 8}}
            """)
        self.assertEqual(self.lint("src/train.py").returncode, 0)

    def test_not_distributed_script_is_quiet(self):
        self.write("train.py", """\
            import torch
            model = torch.nn.Linear(4, 4)
            for epoch in range(3):
                torch.save(model.state_dict(), "ckpt.pt")
            """)
        p = self.lint("train.py")
        self.assertEqual(p.returncode, 0, p.stdout)


# A project whose training script reaches its hazards through helpers in other
# modules, imported every way Python allows (absolute, relative, `as`, a
# package's __init__ re-export, a module object, a class's method).
PROJECT = {
    "pyproject.toml": """\
        [project]
        name = "proj"
        """,
    "proj/__init__.py": "",
    "proj/util/__init__.py": """\
        from .dist import is_main_process, save_on_master
        """,
    "proj/util/dist.py": """\
        import torch
        import torch.distributed as dist


        def get_rank():
            return dist.get_rank() if dist.is_initialized() else 0


        def is_main_process():
            return get_rank() == 0


        def save_on_master(*args, **kwargs):
            if is_main_process():
                torch.save(*args, **kwargs)


        def synchronize():
            dist.barrier()


        def reduce_flag(flag):
            t = torch.tensor([float(flag)])
            dist.all_reduce(t)
            return bool(t.item() > 0)
        """,
    "proj/util/misc.py": """\
        from . import dist as du


        def save_model(model, path):
            du.save_on_master(model.state_dict(), path)


        class Logger:
            def write(self, text):
                # a binary snapshot, not text for people (a text record
                # that nothing reads back is no rank-0 hazard)
                with open("summary.bin", "wb") as f:
                    f.write(text.encode())
        """,
    "proj/train.py": """\
        import datetime

        import torch
        import torch.distributed as dist

        import proj.util.dist as comm
        from proj.util import is_main_process
        from proj.util.misc import save_model as store, Logger


        def main():
            dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
            model = torch.nn.Linear(2, 2)
            log = Logger()
            for epoch in range(3):
                loss = model(torch.ones(2)).sum()
                dist.all_reduce(loss)
                store(model, "ckpt.pt")
                if is_main_process():
                    comm.synchronize()
                if comm.reduce_flag(loss.item() > 1.0):
                    break
                if is_main_process():
                    log.write("epoch done")


        if __name__ == "__main__":
            main()
        """,
}


class PythonLibraryHooks(PythonProject):
    def test_a_library_hook_gets_no_fix_it_and_a_project_hook_does(self):
        # detectron2's PeriodicCheckpointer saves in the library's after_step:
        # a barrier where the hook is made would run once, not after each
        # save.  A project's own HookBase gets the barrier after its block.
        self.write("train.py", """\
            import torch
            import detectron2.utils.comm as comm
            from detectron2.checkpoint import DetectionCheckpointer
            from detectron2.engine import HookBase, SimpleTrainer, hooks, launch


            class Save(HookBase):
                def after_step(self):
                    if comm.is_main_process():
                        torch.save(self.trainer.model.state_dict(), "hook.pth")


            def main(model, loader, optim):
                trainer = SimpleTrainer(model, loader, optim)
                ckpt = DetectionCheckpointer(model, "out")
                trainer.register_hooks([hooks.PeriodicCheckpointer(ckpt, 1000), Save()])
                trainer.train(0, 10000)


            if __name__ == "__main__":
                launch(main, 2)
            """)
        p = self.lint("--format", "json", "train.py")
        doc = json.loads(p.stdout)
        got = {f["line"]: f for f in doc["findings"] if f["rule"] == "ddp-rank0-io-barrier"}
        self.assertEqual(sorted(got), [9, 16], p.stdout)
        self.assertEqual(got[16]["fixes"], [], p.stdout)
        self.assertIn("'hooks.PeriodicCheckpointer' hook writes checkpoints only on rank 0", got[16]["message"])
        self.assertNotEqual(got[9]["fixes"], [], p.stdout)


class PythonOneReportPerBug(PythonProject):
    """One bug, one report: the other places of the same bug are its notes."""

    def findings(self, rel):
        p = self.lint("--format", "json", rel)
        return json.loads(p.stdout)["findings"], p.stdout

    def test_writes_under_one_guard_are_one_finding(self):
        # Oscar's run_vqa.py: the model and its training arguments saved in
        # one node-local rank-0 block; a checkpoint and an optimizer state
        # that every rank writes side by side.  A write under another guard
        # (after the loop) is a bug of its own.
        self.write("train.py", """\
            import datetime
            import os

            import torch
            import torch.distributed as dist


            def train(args, model, optimizer):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                model = torch.nn.parallel.DistributedDataParallel(model)
                for epoch in range(3):
                    model(torch.ones(1)).sum().backward()
                    if args.local_rank in [-1, 0]:
                        model.module.save_pretrained(args.output_dir)
                        torch.save(args, os.path.join(args.output_dir, "training_args.bin"))
                torch.save(model.state_dict(), "last.pt")
                torch.save(optimizer.state_dict(), "optimizer.pt")
            """)
        got, out = self.findings("train.py")
        summary = [(f["line"], f["rule"], sorted(n["line"] for n in f.get("notes", []))) for f in got
                   if f["rule"] == "ddp-unguarded-save"]
        self.assertEqual(summary, [(14, "ddp-unguarded-save", [15]),
                                   (16, "ddp-unguarded-save", [17])], out)
        saves = [f for f in got if f["rule"] == "ddp-unguarded-save"]
        self.assertIn("same node-local guard", saves[0]["notes"][0]["message"], out)
        # The node-local block mid-training also misses its barrier: the other
        # ranks go on into the next backward while it writes.
        self.assertEqual([(f["line"], f["rule"]) for f in got if f["rule"] == "ddp-rank0-io-barrier"],
                         [(13, "ddp-rank0-io-barrier")], out)

    def test_a_project_subclass_of_a_trl_trainer_runs_in_every_process(self):
        # LMFlow's DPOv2Trainer (a subclass of TRL's DPOTrainer in another
        # module, imported under `if is_trl_available():`): the aligner that
        # trains with it runs in every process of its launcher, and its final
        # save_pretrained is every rank's.  A class of another base is not.
        self.write("pkg/__init__.py", "")
        self.write("pkg/versioning.py", "def is_trl_available():\n    return True\n")
        self.write("pkg/trainer.py", """\
            from pkg.versioning import is_trl_available

            if is_trl_available():
                from trl import DPOTrainer


            class DPOv2Trainer(DPOTrainer):
                def extra(self):
                    return 1


            class Runner:
                def train(self):
                    return 1
            """)
        self.write("pkg/align.py", """\
            import os

            from pkg.trainer import DPOv2Trainer


            def align(model, data, out):
                trainer = DPOv2Trainer(model=model, train_dataset=data)
                trainer.train()
                trainer.model.save_pretrained(os.path.join(out, "final_checkpoint"))
            """)
        self.write("pkg/run.py", """\
            import os

            from pkg.trainer import Runner


            def run(model, out):
                Runner().train()
                model.save_pretrained(os.path.join(out, "final_checkpoint"))
            """)
        got, out = self.findings("pkg/align.py")
        self.assertEqual([(f["line"], f["rule"]) for f in got], [(9, "ddp-unguarded-save")], out)
        got, out = self.findings("pkg/run.py")
        self.assertEqual(got, [], out)

    def test_blocks_racing_into_one_collective_are_one_finding(self):
        # A rank-0 block and a node-local one at an epoch's end, both before
        # the next epoch's gradient all-reduce: one barrier orders both, one
        # finding, the other block a note naming its own writer.
        self.write("train.py", """\
            import datetime

            import torch
            import torch.distributed as dist


            def main(args, loader):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
                for epoch in range(3):
                    for x in loader:
                        model(x).sum().backward()
                    if dist.get_rank() == 0:
                        torch.save(model.state_dict(), "b.pt")
                    if args.local_rank == 0:
                        torch.save(model.state_dict(), "a.pt")
            """)
        got, out = self.findings("train.py")
        barrier = [f for f in got if f["rule"] == "ddp-rank0-io-barrier"]
        self.assertEqual([f["line"] for f in barrier], [13], out)
        self.assertIn("rank 0 and writes files", barrier[0]["message"], out)
        notes = [n for n in barrier[0].get("notes", []) if "also writes" in n["message"]]
        self.assertEqual([n["line"] for n in notes], [15], out)
        self.assertTrue(notes[0]["message"].startswith("each node's local rank 0 also writes"), out)
        # Each block's barrier is in the one fix.
        self.assertEqual(len(barrier[0].get("fixes", [])), 2, out)

    def test_a_caller_that_binds_the_group_away_runs_alone(self):
        # fast-autoaugment's Ray search: `train_and_eval(tag, save_path=...)`
        # leaves local_rank at -1, so the trainer's `if local_rank >= 0:
        # init_process_group(...)` never runs and the trial is one process;
        # its every-epoch save is that process's.  The trainer's own lint
        # (launched with a local rank) keeps its rank-0 checkpoint finding.
        self.write("faa_train.py", """\
            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel


            def train_and_eval(tag, save_path=None, local_rank=-1):
                if local_rank >= 0:
                    dist.init_process_group(backend="nccl", init_method="env://")
                    torch.cuda.set_device(local_rank)
                is_master = local_rank < 0 or dist.get_rank() == 0

                model = torch.nn.Linear(4, 4).cuda()
                if local_rank >= 0:
                    model = DistributedDataParallel(model, device_ids=[local_rank])
                if local_rank >= 0:
                    for x in model.state_dict().values():
                        dist.broadcast(x, 0)
                opt = torch.optim.SGD(model.parameters(), lr=0.1)
                for epoch in range(3):
                    loss = model(torch.randn(2, 4).cuda()).sum()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    if is_master and save_path:
                        torch.save({"epoch": epoch, "model": model.state_dict()}, save_path)
            """)
        self.write("faa_search.py", """\
            from faa_train import train_and_eval


            def train_model(save_path):
                result = train_and_eval(None, save_path=save_path)
                return result
            """)
        got, out = self.findings("faa_search.py")
        self.assertEqual(got, [], out)
        got, out = self.findings("faa_train.py")
        self.assertIn((24, "ddp-rank0-io-barrier"), [(f["line"], f["rule"]) for f in got], out)

    def test_a_loader_helper_called_in_two_loops_is_one_finding(self):
        # Oscar's `evaluate` builds its loader and is called every N steps
        # and every epoch: one loader to hoist, one report, the other call a
        # note.
        self.write("train.py", """\
            import datetime

            import torch
            import torch.distributed as dist
            from torch.utils.data import DataLoader


            def evaluate(model, dataset):
                loader = DataLoader(dataset, batch_size=8, num_workers=4, persistent_workers=True)
                with torch.no_grad():
                    return [model(b) for b in loader]


            def train(model, data, dataset):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                for epoch in range(3):
                    for step, batch in enumerate(data):
                        if step % 100 == 0:
                            evaluate(model, dataset)
                    evaluate(model, dataset)
            """)
        got, out = self.findings("train.py")
        summary = [(f["line"], sorted(n["line"] for n in f.get("notes", []))) for f in got
                   if f["rule"] == "ddp-dataloader-recreated"]
        self.assertEqual(summary, [(19, [20])], out)


class PythonSourceRoots(PythonProject):
    """Where a project's imports start besides its root (no marker file)."""

    def test_lib_folder_on_sys_path_and_one_report_per_block(self):
        # CvT/HRNet: tools/_init_paths.py puts lib/ on sys.path, so
        # `from utils.utils import ...` is lib/utils/utils.py.  The helper
        # returns early off rank 0 and saves; called inside a rank-0 block of
        # train.py that is reported itself, it is that block's one finding
        # (line 14), not a second one at the call (line 15).
        self.write("cvt/lib/utils/__init__.py", "")
        self.write("cvt/lib/utils/utils.py", """\
            import torch
            import torch.distributed as dist


            def is_main_process():
                return dist.get_rank() == 0


            def save_model_on_master(model, path):
                if not is_main_process():
                    return
                torch.save(model.state_dict(), path)
            """)
        self.write("cvt/tools/train.py", """\
            import datetime
            import torch
            import torch.distributed as dist
            from utils.utils import save_model_on_master, is_main_process


            def main(model, loader, opt, epochs):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                model = torch.nn.parallel.DistributedDataParallel(model)
                for epoch in range(epochs):
                    for x in loader:
                        model(x).sum().backward()
                        opt.step()
                    if is_main_process():
                        save_model_on_master(model.module, "best.pth")
            """)
        p = self.lint("--no-cache", "--root", "cvt", "--format", "json", "cvt")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"])
        self.assertEqual(got, [("tools/train.py", 14, "ddp-rank0-io-barrier")], p.stdout)


    def test_monorepo_prefix_on_the_projects_own_imports(self):
        # mvit's tools/engine.py: `import vision.fair.mvit.mvit.utils.checkpoint
        # as cu`, the monorepo's prefix kept in the published code.  No root
        # holds `vision`, so the tail under the root is the module; a name
        # whose first part the project holds is not shortened.
        self.write("mvit/mvit/__init__.py", "")
        self.write("mvit/mvit/utils/__init__.py", "")
        self.write("mvit/mvit/utils/checkpoint.py", """\
            import torch
            import torch.distributed as dist


            def save_checkpoint(model, path):
                if dist.get_rank() != 0:
                    return
                torch.save(model.state_dict(), path)
            """)
        self.write("mvit/tools/engine.py", """\
            import datetime
            import torch
            import torch.distributed as dist
            import vision.fair.mvit.mvit.utils.checkpoint as cu


            def train(model, loader, opt, epochs):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                model = torch.nn.parallel.DistributedDataParallel(model)
                for epoch in range(epochs):
                    for x in loader:
                        model(x).sum().backward()
                        opt.step()
                    cu.save_checkpoint(model.module, "last.pth")
            """)
        p = self.lint("--no-cache", "--root", "mvit", "--format", "json", "mvit")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"])
        self.assertEqual(got, [("tools/engine.py", 14, "ddp-rank0-io-barrier")], p.stdout)
        # `mvit.vision.fair.mvit.utils.checkpoint`: the project holds `mvit`,
        # which has no such module; nothing is shortened.
        self.write("mvit/tools/engine.py", open(os.path.join(self.tmp, "mvit/tools/engine.py")).read()
                   .replace("import vision.fair.mvit.mvit.utils.checkpoint as cu",
                            "import mvit.vision.fair.mvit.utils.checkpoint as cu"))
        p = self.lint("--no-cache", "--root", "mvit", "--format", "json", "mvit")
        doc = json.loads(p.stdout)
        self.assertEqual([f for f in doc["findings"] if f["rule"] == "ddp-rank0-io-barrier"], [], p.stdout)


class PythonAcrossModules(PythonProject):
    """Helpers in other modules of the project are followed (issue 16)."""

    def setUp(self):
        super().setUp()
        for rel, text in PROJECT.items():
            self.write(rel, text)

    def test_hazards_in_helpers_are_reported_at_the_calls(self):
        p = self.lint("--format", "json", "proj/train.py")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"])
        self.assertEqual(got, [
            # misc.save_model -> dist.save_on_master: a rank-0 write between
            # one epoch's all_reduce and the next, reported at the call here
            ("proj/train.py", 18, "ddp-rank0-io-barrier"),
            # comm.synchronize() is a barrier that only rank 0 reaches
            ("proj/train.py", 20, "ddp-divergent-collective"),
            # Logger.write, a method of an imported class, writes in the
            # rank-0 block: the block is reported, as one written here would be
            ("proj/train.py", 23, "ddp-rank0-io-barrier"),
        ], p.stdout)
        by_line = {f["line"]: f for f in doc["findings"]}
        # The note points at the code in the other module.
        notes = by_line[18].get("notes", [])
        self.assertTrue(any(n["file"].endswith("proj/util/dist.py") for n in notes), notes)
        self.assertIn("save_on_master", by_line[18]["message"])
        # Hard negative: the early stop on a flag that the helper all-reduces
        # is agreed by every rank (no finding at line 21/22).

    def test_one_report_for_a_helpers_dispatch_reached_from_one_call(self):
        # ai-toolkit's `get_guidance_loss`: one decision picks one of several
        # helpers that each run backward; the call that reaches it is one
        # report, with a note at each diverging place.
        self.write("proj/guidance.py", """\
            def loss_a(model, batch):
                model(batch["x"]).sum().backward()


            def loss_b(model, batch):
                (2 * model(batch["x"]).sum()).backward()


            def get_loss(model, batch):
                kind = batch["kind"].item()
                if kind == 0:
                    return loss_a(model, batch)
                elif kind == 1:
                    return loss_b(model, batch)
                return model(batch["x"]).sum()
            """)
        self.write("proj/train.py", """\
            import datetime

            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            from proj.guidance import get_loss


            def main(loader):
                dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
                model = DDP(torch.nn.Linear(2, 2))
                for batch in loader:
                    loss = get_loss(model, batch)
            """)
        p = self.lint("--format", "json", "proj/train.py")
        doc = json.loads(p.stdout)
        got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
        self.assertEqual(got, [("proj/train.py", 14, "ddp-divergent-collective")], p.stdout)
        places = {(n.get("file"), n.get("line")) for n in doc["findings"][0].get("notes", [])}
        self.assertIn(("proj/guidance.py", 12), places, p.stdout)
        self.assertIn(("proj/guidance.py", 14), places, p.stdout)

    def test_context_manager_of_another_module(self):
        # DeepLearningExamples' `with utils.distributed.sync_workers() as rank:`
        # (Transformer-XL, GNMT): the name is the rank the generator yields,
        # and the barrier after its `yield` closes the block.  The same
        # manager without the barrier leaves the rank-0 checkpoint unordered.
        self.write("proj/syncs.py", """\
            from contextlib import contextmanager

            import torch.distributed as dist


            def get_rank():
                if dist.is_available() and dist.is_initialized():
                    return dist.get_rank()
                return 0


            @contextmanager
            def sync_workers():
                rank = get_rank()
                yield rank
                dist.barrier()


            @contextmanager
            def rank_only():
                rank = get_rank()
                yield rank
            """)
        self.write("proj/train_cm.py", """\
            import datetime

            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            from proj import syncs


            def main(loader, model, opt):
                dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
                ddp = DDP(model)
                for epoch in range(3):
                    for batch in loader:
                        ddp(batch).sum().backward()
                        opt.step()
                    with syncs.sync_workers() as rank:
                        if rank == 0:
                            torch.save(model.state_dict(), "last.pt")
                    with syncs.rank_only() as rank:
                        if rank == 0:
                            torch.save(model.state_dict(), "best.pt")
            """)
        p = self.lint("--format", "json", "proj/train_cm.py")
        doc = json.loads(p.stdout)
        got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
        self.assertEqual(got, [("proj/train_cm.py", 21, "ddp-rank0-io-barrier")], p.stdout)

    def test_a_base_class_loop_runs_the_subclass_override(self):
        # SeqTrack's trainers: BaseTrainer.train (one module) wraps its epoch
        # loop in a bare `except:` and calls `self.train_epoch()`, a stub that
        # raises; LTRTrainer (another module) overrides it with the DDP
        # backward.  Python looks the method up from the object's class, so
        # a failure on one rank is swallowed while the others wait in the
        # backward.  A sibling whose override runs no collective is fine.
        self.write("lib/__init__.py", "")
        self.write("lib/trainers/__init__.py", """\
            from .base_trainer import BaseTrainer
            from .ltr_trainer import LTRTrainer
            from .eval_trainer import EvalTrainer
            """)
        self.write("lib/trainers/base_trainer.py", """\
            import traceback


            class BaseTrainer:
                def __init__(self, actor, loader, optimizer):
                    self.actor = actor
                    self.loader = loader
                    self.optimizer = optimizer
                    self.epoch = 0

                def train(self, max_epochs, fail_safe=True):
                    try:
                        for epoch in range(self.epoch + 1, max_epochs + 1):
                            self.epoch = epoch
                            self.train_epoch()
                    except:
                        if fail_safe:
                            print(traceback.format_exc())
                        else:
                            raise
                    print("Finished training!")

                def train_epoch(self):
                    raise NotImplementedError
            """)
        self.write("lib/trainers/ltr_trainer.py", """\
            from lib.trainers import BaseTrainer


            class LTRTrainer(BaseTrainer):
                def train_epoch(self):
                    for x, y in self.loader:
                        loss = self.actor(x, y)
                        self.optimizer.zero_grad()
                        loss.backward()
                        self.optimizer.step()
            """)
        self.write("lib/trainers/eval_trainer.py", """\
            import torch

            from lib.trainers import BaseTrainer


            class EvalTrainer(BaseTrainer):
                def train_epoch(self):
                    with torch.no_grad():
                        for x, y in self.loader:
                            self.actor(x, y)
            """)
        script = """\
            import datetime

            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP
            from lib.trainers import {cls}


            def run(loader):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                net = DDP(torch.nn.Linear(8, 8).cuda())
                optimizer = torch.optim.AdamW(net.parameters(), lr=1e-4)
                actor = lambda x, y: torch.nn.functional.mse_loss(net(x), y)
                trainer = {cls}(actor, loader, optimizer)
                trainer.train(500, fail_safe=True)
            """
        self.write("train_ltr.py", script.format(cls="LTRTrainer"))
        self.write("train_eval.py", script.format(cls="EvalTrainer"))
        self.write(".ddplint.yaml", "")
        p = self.lint("--format", "json", "train_ltr.py", "train_eval.py",
                      "lib/trainers/base_trainer.py", "lib/trainers/ltr_trainer.py",
                      "lib/trainers/eval_trainer.py")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"])
        self.assertEqual(got, [("train_ltr.py", 15, "ddp-error-path-exit")], p.stdout)
        self.assertIn("self.train_epoch", doc["findings"][0]["message"], p.stdout)

    def test_a_factory_that_returns_a_class(self):
        # rq-vae-transformer: `trainer = create_trainer(config)` hands back the
        # class, `trainer = trainer(model, ...)` makes it, and the base's
        # run_epoch (another module) calls the subclass's overrides: its
        # train's all_reduce on every rank, and its save_ckpt on the master
        # only.  The override's torch.save is rank 0's, not every rank's; the
        # write with no barrier before the next epoch's all_reduce is the
        # finding, at the script's call.
        self.write("pkg/__init__.py", "")
        self.write("pkg/trainers/__init__.py", """\
            from .trainer_vae import Trainer as TrainerVAE


            def create_trainer(config):
                if config.arch == "vae":
                    return TrainerVAE
                else:
                    raise ValueError("architecture type not supported")
            """)
        self.write("pkg/trainers/base.py", """\
            import os

            import torch


            class TrainerTemplate:
                def __init__(self, model, loader, config, rank):
                    self.model = model
                    self.loader = loader
                    self.config = config
                    self.master = rank == 0

                def train(self, optimizer, epoch=0):
                    raise NotImplementedError

                def run_epoch(self, optimizer, epochs):
                    for i in range(epochs):
                        summary = self.train(optimizer, epoch=i)
                        if self.master:
                            print(summary)
                            self.save_ckpt(optimizer, i + 1)

                def save_ckpt(self, optimizer, epoch):
                    torch.save(self.model.state_dict(), os.path.join(self.config.out, "e%d.pt" % epoch))
            """)
        self.write("pkg/trainers/trainer_vae.py", """\
            import os

            import torch
            import torch.distributed as dist

            from .base import TrainerTemplate


            class Trainer(TrainerTemplate):
                def train(self, optimizer, epoch=0):
                    for x in self.loader:
                        loss = self.model(x).sum()
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    dist.all_reduce(loss)
                    return loss.item()

                def save_ckpt(self, optimizer, epoch):
                    ckpt = {"state_dict": self.model.module.state_dict(), "optimizer": optimizer.state_dict()}
                    torch.save(ckpt, os.path.join(self.config.out, "epoch%d_model.pt" % epoch))
            """)
        self.write("main.py", """\
            import datetime

            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            from pkg.trainers import create_trainer


            def main(config, loader):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                rank = dist.get_rank()
                trainer = create_trainer(config)
                model = DDP(torch.nn.Linear(8, 8).cuda())
                optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
                trainer = trainer(model, loader, config, rank)
                trainer.run_epoch(optimizer, config.epochs)
                dist.barrier()
            """)
        self.write(".ddplint.yaml", "")
        p = self.lint("--format", "json", "main.py", "pkg/trainers/__init__.py",
                      "pkg/trainers/base.py", "pkg/trainers/trainer_vae.py")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"])
        self.assertEqual(got, [("main.py", 17, "ddp-rank0-io-barrier")], p.stdout)
        notes = doc["findings"][0]["notes"]
        self.assertTrue(any(n["file"].endswith("base.py") and n["line"] == 19 for n in notes), p.stdout)

    def test_a_vendored_shim_that_aliases_torch_collectives(self):
        # DeCLIP vendors SenseTime's `linklink` as a shim whose top-level names
        # are torch's functions (`allreduce = dist.all_reduce`); its meters
        # call `link.allreduce(t)`.  A rank whose own loss is NaN skips the
        # meter's all_reduce that the others wait in: found through the
        # module import, the from-import and the meter's method alike.
        self.write("linklink/__init__.py", """\
            import functools

            import torch.distributed as dist

            allreduce = dist.all_reduce
            broadcast = dist.broadcast
            allreduce_async = functools.partial(dist.all_reduce, async_op=True)
            """)
        self.write("utils/__init__.py", "")
        self.write("utils/misc.py", """\
            import linklink as link


            class AverageMeter:
                def __init__(self):
                    self.avg = 0.0

                def reduce_update(self, tensor):
                    link.allreduce(tensor)
                    self.avg = tensor.item()
            """)
        self.write("solver.py", """\
            import datetime
            import math

            import torch.distributed as dist
            from linklink import broadcast

            from utils.misc import AverageMeter


            class Solver:
                def __init__(self, model, loader):
                    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                    self.model = model
                    self.loader = loader
                    self.losses = AverageMeter()

                def train(self):
                    for batch in self.loader:
                        loss = self.model(batch).mean()
                        reduced_loss = loss.clone()
                        if math.isnan(reduced_loss):
                            print("Training Loss Crashed")
                        else:
                            self.losses.reduce_update(reduced_loss)
                        if reduced_loss > 10:
                            broadcast(reduced_loss, 0)
            """)
        self.write(".ddplint.yaml", "")
        p = self.lint("--format", "json", "solver.py", "utils/misc.py", "utils/__init__.py",
                      "linklink/__init__.py")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"])
        self.assertEqual(got, [("solver.py", 24, "ddp-divergent-collective"),
                               ("solver.py", 26, "ddp-divergent-collective")], p.stdout)
        self.assertIn("all_reduce", doc["findings"][0]["message"], p.stdout)
        self.assertIn("broadcast", doc["findings"][1]["message"], p.stdout)

    def test_a_shim_name_bound_to_a_local_function_is_no_collective(self):
        # The hard negative of the shim above: the shim's `allreduce` is the
        # project's own one-process sum, so skipping it on one rank divides
        # no collective.
        self.write("linklink/__init__.py", """\
            def _local_sum(tensor):
                return tensor


            allreduce = _local_sum
            """)
        self.write("solver.py", """\
            import datetime
            import math

            import torch.distributed as dist
            import linklink as link


            def train(model, loader):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                for batch in loader:
                    loss = model(batch).mean()
                    if not math.isnan(loss):
                        link.allreduce(loss)
            """)
        self.write(".ddplint.yaml", "")
        p = self.lint("--format", "json", "solver.py", "linklink/__init__.py")
        self.assertEqual(json.loads(p.stdout)["findings"], [], p.stdout)

    def test_a_seed_import_and_a_layout_test_run_in_one_process(self):
        # lerobot: random_utils.py imports accelerate's `set_seed` and saves
        # the RNG state where its caller says (the trainer calls it under
        # `is_main_process()`); a checkpoint-format test imports FSDPModule
        # and DCP's exception types and writes a legacy layout with the
        # project's helpers, run by pytest in one process.  Neither is a
        # program whose ranks write one path.  A test that makes a process
        # group is.
        self.write("utils/__init__.py", "")
        self.write("utils/random_utils.py", """\
            import torch
            from safetensors.torch import save_file


            def set_seed(seed, accelerator=None):
                if accelerator:
                    from accelerate.utils import set_seed as _accelerate_set_seed
                    _accelerate_set_seed(seed)
                torch.manual_seed(seed)


            def save_rng_state(save_dir):
                save_file({"torch": torch.get_rng_state()}, save_dir / "rng_state.safetensors")
            """)
        self.write("tests/__init__.py", "")
        self.write("tests/test_layout.py", """\
            import torch
            from torch.distributed.checkpoint.api import CheckpointException
            from torch.distributed.fsdp import FSDPModule

            from utils.random_utils import save_rng_state


            def write_legacy(checkpoint_dir, policy):
                torch.save(policy.state_dict(), checkpoint_dir / "model.pt")
                save_rng_state(checkpoint_dir)


            def test_legacy(tmp_path):
                write_legacy(tmp_path, torch.nn.Linear(2, 2))
                assert not isinstance(torch.nn.Linear(2, 2), FSDPModule)
            """)
        self.write("tests/test_dist.py", """\
            import os

            import torch
            import torch.distributed as dist


            def test_save_on_every_rank():
                dist.init_process_group("gloo", rank=int(os.environ["RANK"]),
                                        world_size=int(os.environ["WORLD_SIZE"]))
                torch.save({"x": 1}, "ckpt.pt")
            """)
        self.write(".ddplint.yaml", "")
        p = self.lint("--format", "json", "--fail-on", "never", "utils/random_utils.py", "tests/test_layout.py",
                      "tests/test_dist.py")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"] if f["rule"] != "ddp-init-timeout")
        self.assertEqual(got, [("tests/test_dist.py", 10, "ddp-unguarded-save")], p.stdout)

    def test_a_trainer_subclass_from_a_star_import(self):
        # FlagEmbedding's retrievers: trainer.py takes the Hugging Face
        # Trainer by `from transformers.trainer import *` and subclasses it;
        # run.py (torchrun, one process per GPU) builds the model with a
        # helper that saves the resized embeddings to one path on every rank.
        self.write("load_model.py", """\
            import os

            import torch
            from transformers import AutoModel


            def get_model(name, output_dir, n_tokens):
                model = AutoModel.from_pretrained(name)
                model.resize_token_embeddings(n_tokens)
                os.makedirs(os.path.join(output_dir, "embedding"), exist_ok=True)
                torch.save(model.embed_tokens, os.path.join(output_dir, "embedding", "emb.pth"))
                return model
            """)
        self.write("trainer.py", """\
            from transformers.trainer import *  # noqa: F403


            class BiTrainer(Trainer):  # noqa: F405
                pass
            """)
        self.write("run.py", """\
            from transformers import HfArgumentParser, TrainingArguments

            from load_model import get_model
            from trainer import BiTrainer


            def main():
                (training_args,) = HfArgumentParser([TrainingArguments]).parse_args_into_dataclasses()
                model = get_model("some/model", training_args.output_dir, 32001)
                trainer = BiTrainer(model=model, args=training_args)
                trainer.train()
            """)
        self.write(".ddplint.yaml", "")
        p = self.lint("--format", "json", "run.py", "load_model.py", "trainer.py")
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        self.assertEqual(got, [("run.py", 9, "ddp-unguarded-save")], p.stdout)

    def test_a_star_import_of_a_project_trainer_is_not_the_hugging_face_one(self):
        # The hard negative of the star import above: the `Trainer` that
        # trainer.py takes by `*` is the project's own one-process loop, so
        # run.py starts no ranks and its one process owns the path.
        self.write("load_model.py", """\
            import torch


            def get_model(make, output_dir):
                model = make()
                torch.save(model.state_dict(), output_dir + "/emb.pth")
                return model
            """)
        self.write("simple.py", """\
            class Trainer:
                def __init__(self, model, args):
                    self.model = model

                def train(self):
                    self.model.fit()
            """)
        self.write("trainer.py", """\
            from simple import *  # noqa: F403


            class BiTrainer(Trainer):  # noqa: F405
                pass
            """)
        self.write("run.py", """\
            from load_model import get_model
            from trainer import BiTrainer


            def main(make, output_dir):
                model = get_model(make, output_dir)
                trainer = BiTrainer(model=model, args=None)
                trainer.train()
            """)
        self.write(".ddplint.yaml", "")
        p = self.lint("--format", "json", "run.py", "load_model.py", "trainer.py", "simple.py")
        self.assertEqual(json.loads(p.stdout)["findings"], [], p.stdout)

    def test_each_call_of_a_two_level_rank0_saver_is_reported(self):
        # InternVideo2 and RepLKNet: `utils.save_model(...)` calls
        # `save_on_master(...)`, whose rank-0 write has no barrier.  The latest
        # checkpoint before validation's all_reduce and the best one after it,
        # before the next epoch's backward, are two fixes: two reports, one at
        # each call the script makes.
        self.write("utils.py", """\
            import torch
            import torch.distributed as dist


            def save_on_master(obj, ckpt_path):
                if dist.get_rank() == 0:
                    torch.save(obj, ckpt_path)


            def save_model(args, model_without_ddp, model_name):
                save_on_master({"model": model_without_ddp.state_dict()},
                               "%s/checkpoint-%s.pth" % (args.output_dir, model_name))


            def validate(model, loader):
                correct = torch.zeros(1)
                for x, y in loader:
                    correct += (model(x).argmax(-1) == y).sum()
                dist.all_reduce(correct)
                return correct.item()
            """)
        self.write("train.py", """\
            import datetime

            import torch
            import torch.distributed as dist

            import utils


            def main(args, net, train_loader, val_loader, optimizer):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                model = torch.nn.parallel.DistributedDataParallel(net)
                best = 0.0
                for epoch in range(args.epochs):
                    for x, y in train_loader:
                        loss = torch.nn.functional.cross_entropy(model(x), y)
                        optimizer.zero_grad()
                        loss.backward()
                        optimizer.step()
                    utils.save_model(args, model.module, "latest")
                    acc = utils.validate(model, val_loader)
                    if acc > best:
                        best = acc
                        utils.save_model(args, model.module, "best")
            """)
        self.write(".ddplint.yaml", "")
        p = self.lint("--format", "json", "train.py", "utils.py")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"])
        self.assertEqual(got, [("train.py", 19, "ddp-rank0-io-barrier"),
                               ("train.py", 23, "ddp-rank0-io-barrier")], p.stdout)

    def test_a_script_that_picks_its_own_random_port_runs_alone(self):
        # CodeGeeX's checkpoint converters: `MASTER_PORT` set to a random
        # port, then the project's initialize helper, run with plain
        # `python`.  Every process would pick its own port, so the group is
        # of one and its save is no rank's race.  A script that sets the
        # port the same way and then spawns ranks does race.
        self.write("pkg/__init__.py", "")
        self.write("pkg/helpers.py", """\
            import datetime

            import torch.distributed as dist


            def initialize(rank, world_size):
                dist.init_process_group("gloo", rank=rank, world_size=world_size,
                                        timeout=datetime.timedelta(minutes=30))
            """)
        prologue = """\
            import os
            import random

            import torch
            import torch.multiprocessing as mp

            from pkg.helpers import initialize

            """
        self.write("convert.py", prologue + """\

            def main(path, rank, world_size):
                os.environ["MASTER_ADDR"] = "localhost"
                os.environ["MASTER_PORT"] = str(random.randint(10000, 20000))
                initialize(rank, world_size)
                torch.save(torch.load(path), path + ".merged")


            if __name__ == "__main__":
                main("x.pt", 0, 1)
            """)
        self.write("spawned.py", prologue + """\

            def worker(rank, world_size, path):
                initialize(rank, world_size)
                torch.save(torch.load(path), path + ".merged")


            def main(path):
                os.environ["MASTER_ADDR"] = "localhost"
                os.environ["MASTER_PORT"] = str(random.randint(10000, 20000))
                mp.spawn(worker, args=(4, path), nprocs=4)


            if __name__ == "__main__":
                main("x.pt")
            """)
        self.write(".ddplint.yaml", "")
        p = self.lint("--format", "json", "convert.py", "spawned.py", "pkg/helpers.py")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"])
        self.assertEqual(got, [("spawned.py", 12, "ddp-unguarded-save")], p.stdout)

    def test_a_rank0_write_read_by_every_rank_in_another_module(self):
        # BiSeNet's old/train.py: rank 0 alone saves the final model, then
        # every rank runs evaluate.py's evaluate(), which loads the same file
        # (matched by its name, `model_final.pth`): it may be half-written.
        # A barrier between them orders the read; a read of another file
        # races with nothing.
        self.write("evaluate.py", """\
            import os.path as osp

            import torch


            def evaluate(net, respth="./res"):
                net.load_state_dict(torch.load(osp.join(respth, "model_final.pth")))
                return net


            def load_stats(respth="./res"):
                return torch.load(osp.join(respth, "dataset_stats.pth"))
            """)
        script = """\
            import datetime
            import os.path as osp

            import torch
            import torch.distributed as dist

            from evaluate import evaluate, load_stats


            def train(net, respth="./res"):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                net = torch.nn.parallel.DistributedDataParallel(net)
                net(torch.ones(1)).sum().backward()
                if dist.get_rank() == 0:
                    torch.save(net.module.state_dict(), osp.join(respth, "model_final.pth"))
                {between}
                {after}
            """
        self.write("train_race.py", script.format(between="", after="evaluate(net.module, respth)"))
        self.write("train_ordered.py", script.format(between="dist.barrier()", after="evaluate(net.module, respth)"))
        self.write("train_other.py", script.format(between="", after="load_stats(respth)"))
        self.write(".ddplint.yaml", "")
        p = self.lint("--format", "json", "train_race.py", "train_ordered.py", "train_other.py", "evaluate.py")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"])
        self.assertEqual(got, [("train_race.py", 14, "ddp-rank0-io-barrier")], p.stdout)
        notes = doc["findings"][0]["notes"]
        self.assertTrue(any(n["line"] == 17 and "'evaluate' reads the file" in n["message"] for n in notes),
                        p.stdout)

    def test_one_report_for_a_helper_hazard_many_scripts_reach(self):
        # FlagAI: sixteen example scripts call `BaseModel.from_pretrain`, which
        # every rank runs and which writes the merged weights to one path on a
        # first run.  One bug: the whole-project run reports it once, at the
        # first script's call, with the other calls as notes; a run on one
        # script (pre-commit) reports it at that script's call.
        self.write("flagai/__init__.py", "")
        self.write("flagai/base_model.py", """\
            import os

            import torch


            class BaseModel(torch.nn.Module):
                @classmethod
                def from_pretrain(cls, download_path, model_name):
                    merged = os.path.join(download_path, model_name, "pytorch_model.bin")
                    if not os.path.exists(merged):
                        state = {}
                        for part in sorted(os.listdir(os.path.join(download_path, model_name))):
                            state.update(torch.load(os.path.join(download_path, model_name, part)))
                        torch.save(state, merged)
                    model = cls()
                    model.load_state_dict(torch.load(merged))
                    return model
            """)
        script = """\
            import datetime

            import torch.distributed as dist
            from flagai.base_model import BaseModel


            def main():
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                model = BaseModel.from_pretrain("./checkpoints", "{name}")
                return model
            """
        for name in ("glm_large", "glm_10b", "t5_11b"):
            self.write("examples/train_%s.py" % name, script.format(name=name))
        self.write("convert.py", """\
            from flagai.base_model import BaseModel

            BaseModel.from_pretrain("./checkpoints", "glm_large")
            """)
        self.write(".ddplint.yaml", "")
        p = self.lint("--format", "json", "examples", "flagai", "convert.py")
        doc = json.loads(p.stdout)
        got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
        self.assertEqual(got, [("examples/train_glm_10b.py", 9, "ddp-unguarded-save")], p.stdout)
        also = sorted(n["file"] for n in doc["findings"][0]["notes"]
                      if n["message"] == "also reached from this call")
        self.assertEqual(also, ["examples/train_glm_large.py", "examples/train_t5_11b.py"], p.stdout)
        p = self.lint("--format", "json", "examples/train_t5_11b.py")
        doc = json.loads(p.stdout)
        got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
        self.assertEqual(got, [("examples/train_t5_11b.py", 9, "ddp-unguarded-save")], p.stdout)

    def test_a_vendored_package_installed_from_a_subfolder(self):
        # OFA: `pip install -e ./fairseq/` puts the package fairseq/fairseq/
        # on the path, so the top-level train.py imports `fairseq.distributed`.
        # A sub-folder with a setup.py (or pyproject.toml) beside a package is
        # a source root: the barrier only rank 0 reaches through the helper is
        # found, and the helper's barrier after the rank-0 save is seen.
        self.write("ofa/fairseq/setup.py", "from setuptools import setup\nsetup(name='fairseq')\n")
        self.write("ofa/fairseq/fairseq/__init__.py", "")
        self.write("ofa/fairseq/fairseq/distributed.py", """\
            import torch.distributed as dist


            def sync():
                dist.barrier()
            """)
        self.write("ofa/train.py", """\
            import datetime

            import torch
            import torch.distributed as dist
            from fairseq.distributed import sync


            def main(loader):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
                for epoch in range(3):
                    for batch in loader:
                        model(batch).sum().backward()
                    if dist.get_rank() == 0:
                        torch.save(model.module.state_dict(), "last.pt")
                    sync()
                if dist.get_rank() == 0:
                    sync()
            """)
        p = self.lint("--format", "json", "--root", "ofa", "ofa/train.py")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"])
        self.assertEqual(got, [("train.py", 18, "ddp-divergent-collective")], p.stdout)

    def test_a_script_that_never_makes_a_group(self):
        # sam-hq's seginw evaluation: a `__main__` script that never makes a
        # group gathers its COCO results through GroundingDINO's helpers,
        # whose cached gloo subgroup (`@functools.lru_cache`, `new_group`) needs
        # a world some other code made.  It runs as one process: its loader is
        # no rank's (no ddp-dataloader-options).  The same script that calls
        # the helpers' initializer is distributed.
        self.write("gd/__init__.py", "")
        self.write("gd/misc.py", """\
            import functools
            import os

            import torch.distributed as dist


            @functools.lru_cache()
            def _get_global_gloo_group():
                if dist.get_backend() == "nccl":
                    return dist.new_group(backend="gloo")
                return dist.group.WORLD


            def all_gather(data):
                if not dist.is_available() or not dist.is_initialized():
                    return [data]
                out = [None] * dist.get_world_size()
                dist.all_gather_object(out, data, group=_get_global_gloo_group())
                return out


            def init_distributed_mode(args):
                dist.init_process_group("nccl", init_method="env://")
            """)
        script = """\
            import torch
            from torch.utils.data import DataLoader

            from gd.misc import all_gather{extra_import}


            def main(dataset, args):{extra_call}
                loader = DataLoader(dataset, batch_size=1, num_workers=4)
                results = [x for x in loader]
                return all_gather(results)


            if __name__ == "__main__":
                main(None, None)
            """
        self.write("eval_alone.py", script.format(extra_import="", extra_call=""))
        self.write("eval_dist.py", script.format(extra_import=", init_distributed_mode",
                                                 extra_call="\n    init_distributed_mode(args)"))
        p = self.lint("--format", "json", "eval_alone.py", "eval_dist.py")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["rule"]) for f in doc["findings"])
        self.assertIn(("eval_dist.py", "ddp-dataloader-options"), got, p.stdout)
        self.assertNotIn(("eval_alone.py", "ddp-dataloader-options"), got, p.stdout)

    def test_local_rank_handed_to_a_helper_as_the_group_rank(self):
        # MONAI's generative trainers: `rank = int(os.environ["LOCAL_RANK"])`,
        # then `setup_ddp(rank, world_size)` from `.utils`, which hands it to
        # init_process_group as the rank.  The job is one node and its local
        # rank is its rank: the checkpoint under `if rank == 0:` is rank 0's
        # (a barrier owed), not one process per node on a shared path.  A
        # helper that takes the rank from the launcher leaves it node-local.
        self.write("gen/scripts/__init__.py", "")
        self.write("gen/scripts/utils.py", """\
            import datetime

            import torch.distributed as dist


            def setup_ddp(rank: int, world_size: int):
                dist.init_process_group(backend="nccl", rank=rank, world_size=world_size,
                                        timeout=datetime.timedelta(seconds=36000))
                dist.barrier()


            def setup_env(local_rank: int):
                dist.init_process_group(backend="nccl", timeout=datetime.timedelta(seconds=36000))
                return local_rank
            """)
        train = """\
            import os

            import torch
            from torch.nn.parallel import DistributedDataParallel as DDP

            from .utils import {helper}


            def main(loader, epochs, gpus):
                ddp_bool = gpus > 1
                if ddp_bool:
                    rank = int(os.environ["LOCAL_RANK"])
                    {helper}(rank, gpus)
                else:
                    rank = 0
                model = DDP(torch.nn.Linear(2, 2))
                for epoch in range(epochs):
                    for x in loader:
                        model(x).sum().backward()
                    if rank == 0:
                        torch.save(model.state_dict(), "last.pt")
            """
        self.write("gen/scripts/train_ae.py", train.format(helper="setup_ddp"))
        self.write("gen/scripts/train_env.py", train.format(helper="setup_env"))
        p = self.lint("--format", "json", "gen/scripts/train_ae.py", "gen/scripts/train_env.py",
                      "gen/scripts/utils.py")
        doc = json.loads(p.stdout)
        got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
        # The node-local writer in train_env.py owes the barrier too.
        self.assertEqual(got, [("gen/scripts/train_ae.py", 20, "ddp-rank0-io-barrier"),
                               ("gen/scripts/train_env.py", 20, "ddp-rank0-io-barrier"),
                               ("gen/scripts/train_env.py", 21, "ddp-unguarded-save")], p.stdout)

    def test_signal_flag_set_in_another_module(self):
        # Transformer-XL's TimeoutHandler (utils/exp_utils.py) sets
        # `self.interrupted = True` in its SIGTERM handler; train.py exits on
        # it: this rank's flag, read through an object of the other module.
        self.write("proj/exp_utils.py", """\
            import signal


            class TimeoutHandler:
                def __enter__(self):
                    self.interrupted = False

                    def handler(signum, frame):
                        self.interrupted = True

                    signal.signal(signal.SIGTERM, handler)
                    return self

                def __exit__(self, *exc):
                    pass
            """)
        self.write("proj/train_sig.py", """\
            import datetime
            import sys

            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            from proj.exp_utils import TimeoutHandler


            def main(loader, model, opt):
                dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
                ddp = DDP(model)
                with TimeoutHandler() as handler:
                    for batch in loader:
                        ddp(batch).sum().backward()
                        opt.step()
                        if handler.interrupted:
                            sys.exit(0)
            """)
        p = self.lint("--format", "json", "proj/train_sig.py")
        doc = json.loads(p.stdout)
        got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
        self.assertEqual(got, [("proj/train_sig.py", 16, "ddp-divergent-collective")], p.stdout)
        self.assertIn("handler.interrupted", doc["findings"][0]["message"], p.stdout)

    def test_each_call_of_a_rank0_helper_is_reported(self):
        # mdetr's and ibot's second `save_on_master(...)` in the same loop: each
        # call leaves a rank-0 write before the next collectives, each is a fix.
        self.write("proj/train_best.py", """\
            import datetime

            import torch
            import torch.distributed as dist

            from proj.util import save_on_master


            def main(evaluate):
                dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
                model = torch.nn.Linear(2, 2)
                best = 0.0
                for epoch in range(3):
                    loss = model(torch.ones(2)).sum()
                    dist.all_reduce(loss)
                    save_on_master(model.state_dict(), "checkpoint.pth")
                    metric = evaluate(model)
                    dist.all_reduce(metric)
                    if metric > best:
                        best = metric
                        save_on_master(model.state_dict(), "best.pth")
                        save_on_master(model.state_dict(), "best-copy.pth")
            """)
        p = self.lint("--format", "json", "proj/train_best.py")
        doc = json.loads(p.stdout)
        got = sorted((f["file"], f["line"], f["rule"]) for f in doc["findings"])
        # The checkpoint races with the all_reduce after it, the best model
        # with the next epoch's; its copy right after it shares that barrier.
        self.assertEqual(got, [("proj/train_best.py", 16, "ddp-rank0-io-barrier"),
                               ("proj/train_best.py", 21, "ddp-rank0-io-barrier")], p.stdout)

    def test_a_helper_of_another_module_returning_its_parameter(self):
        # CosyVoice's executor: `info_dict = batch_forward(model, batch,
        # info_dict)` hands back the caller's settings dict; its accum_grad
        # stays a setting (before: made rank-local by the batch).
        self.write("proj/step_utils.py", """\
            def batch_forward(model, batch, info_dict):
                info_dict["loss"] = model(batch).mean()
                return info_dict
            """)
        self.write("proj/train_steps.py", """\
            import datetime

            import torch.distributed as dist

            from proj.step_utils import batch_forward


            def train_one_epoch(model, loader, info_dict):
                dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
                for batch_idx, batch in enumerate(loader):
                    info_dict = batch_forward(model, batch, info_dict)
                    if (batch_idx + 1) % info_dict["accum_grad"] == 0:
                        dist.barrier()
            """)
        p = self.lint("--format", "json", "proj/train_steps.py")
        doc = json.loads(p.stdout)
        got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
        self.assertEqual(got, [], p.stdout)

    def test_barrier_fix_calls_the_projects_barrier_helper(self):
        # train.py already waits through comm.synchronize() (a helper that only
        # runs a barrier): the fix-it for the rank-0 block at line 23 calls it
        # too, at the block's indentation, rather than a bare dist.barrier().
        p = self.lint("--fix", "--fail-on", "never", "proj/train.py")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        lines = open(os.path.join(self.tmp, "proj/train.py")).read().splitlines()
        self.assertEqual(lines[23:25], ['            log.write("epoch done")',
                                        "        comm.synchronize()"], lines)
        self.assertNotIn("dist.barrier()", "\n".join(lines))

    def test_callers_through_a_package_reexport_guard_the_helper(self):
        # GroupViT: `from utils import save_checkpoint`, which utils/__init__.py
        # re-exports from utils/checkpoint.py.  The callers guard it with the
        # rank and a barrier, so the helper module (which imports
        # torch.distributed) has no every-rank save: linted alone or whole.
        self.write("gv/utils/__init__.py", "from .checkpoint import save_checkpoint\n")
        self.write("gv/utils/checkpoint.py", """\
            import torch
            import torch.distributed as dist


            def save_checkpoint(model, path):
                torch.save(model.state_dict(), path)
            """)
        self.write("gv/main.py", """\
            import datetime
            import torch
            import torch.distributed as dist
            from utils import save_checkpoint


            def main(model, loader, opt):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                model = torch.nn.parallel.DistributedDataParallel(model)
                for epoch in range(10):
                    for x in loader:
                        model(x).sum().backward()
                        opt.step()
                    if dist.get_rank() == 0:
                        save_checkpoint(model.module, "ckpt.pth")
                    dist.barrier()
            """)
        for target in ("gv/utils/checkpoint.py", "gv"):
            p = self.lint("--no-cache", "--root", "gv", target)
            self.assertEqual(p.returncode, 0, target + ": " + p.stdout + p.stderr)

    def test_callers_guard_a_module_that_writes_through_its_helper(self):
        # sd-scripts: library/train_util.py writes nothing itself; its closure
        # `sd_saver` hands the checkpoint to library/model_util.py.  The only
        # caller guards it with is_main_process, so train_util has no
        # every-rank save, and the caller's rank-0 block is the hazard.
        self.write("sd/library/__init__.py", "")
        self.write("sd/library/model_util.py", """\
            import torch


            def save_stable_diffusion_checkpoint(path, unet):
                torch.save(unet.state_dict(), path)
            """)
        self.write("sd/library/train_util.py", """\
            import os
            from accelerate import Accelerator
            from library import model_util


            def save_on_epoch_end(output_dir, epoch, unet):
                def sd_saver(ckpt_file):
                    model_util.save_stable_diffusion_checkpoint(ckpt_file, unet)

                save_common(output_dir, epoch, sd_saver)


            def save_common(output_dir, epoch, saver):
                saver(os.path.join(output_dir, f"epoch-{epoch}.ckpt"))
            """)
        self.write("sd/fine_tune.py", """\
            from accelerate import Accelerator
            from library import train_util


            def train(args, unet, loader):
                accelerator = Accelerator()
                unet, loader = accelerator.prepare(unet, loader)
                for epoch in range(args.epochs):
                    for batch in loader:
                        accelerator.backward(unet(batch).mean())
                    accelerator.wait_for_everyone()
                    if accelerator.is_main_process:
                        train_util.save_on_epoch_end(args.out, epoch, unet)
            """)
        p = self.lint("--no-cache", "--format", "json", "--fail-on", "never", "--root", "sd", "sd")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        found = [(f["rule"], f["file"], f["line"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(found, [("ddp-rank0-io-barrier", "fine_tune.py", 12)], found)

    def test_command_that_reaches_no_initializer_runs_in_one_process(self):
        # Lumina-T2X's click CLI: `infer` runs utils/cli.main, which creates
        # the process group; `convert` is a one-process weight conversion that
        # nothing else calls.  Its save is no every-rank save; the save that
        # runs after the group exists, in the same module, still is.
        self.write("lumina/__init__.py", "")
        self.write("lumina/utils/__init__.py", "")
        self.write("lumina/utils/cli.py", """\
            import datetime
            import torch.distributed as dist


            def main(ckpt):
                dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=1800))
                dist.barrier()
            """)
        self.write("lumina/entry_point.py", """\
            import os
            import click
            import torch
            from .utils.cli import main


            @click.group()
            def entry_point():
                pass


            @entry_point.command()
            @click.argument("ckpt")
            def infer(ckpt):
                main(ckpt)
                export(ckpt)


            def export(ckpt):
                torch.save({"ckpt": ckpt}, "exported.pt")


            @entry_point.command()
            @click.argument("weight_path")
            def convert(weight_path, output_dir):
                \"\"\"convert a torch weight into safetensors\"\"\"
                sd = torch.load(weight_path, map_location="cpu")
                torch.save(sd, os.path.join(output_dir, "model.pth"))
            """)
        p = self.lint("--no-cache", "--format", "json", "--fail-on", "never", "--root", ".",
                      "lumina/entry_point.py", "lumina/utils/cli.py")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        found = [(f["rule"], f["file"], f["line"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(found, [("ddp-unguarded-save", "lumina/entry_point.py", 20)], found)

    def test_model_from_a_factory_of_another_module(self):
        # KAIR: main_train_*.py get the model from select_model.define_Model,
        # which imports one class per branch (`from models.model_plain import
        # ModelPlain as M`); the model wraps its network through the base
        # class's model_to_device, and a subclass trains through
        # super().optimize_parameters.  The rank-0 save in the loop and the
        # rank-0 test (a DDP forward) are found; the settings dump is a record.
        # (KAIR's save goes on into the base class's save_network, in a third
        # module: the callers' guards are read one module up, not two.)
        self.write("kair/models/model_base.py", """\
            import os
            import torch
            from torch.nn.parallel import DistributedDataParallel


            class ModelBase:
                def __init__(self, opt):
                    self.opt = opt

                def model_to_device(self, network):
                    network = network.cuda()
                    if self.opt["dist"]:
                        network = DistributedDataParallel(network, device_ids=[0])
                    return network
            """)
        self.write("kair/models/model_plain.py", """\
            import torch
            from models.model_base import ModelBase


            class ModelPlain(ModelBase):
                def __init__(self, opt):
                    super().__init__(opt)
                    self.netG = self.model_to_device(opt["net"])
                    self.optimizer = torch.optim.Adam(self.netG.parameters())

                def feed_data(self, data):
                    self.L, self.H = data["L"], data["H"]

                def optimize_parameters(self, step):
                    self.optimizer.zero_grad()
                    (self.netG(self.L) - self.H).abs().mean().backward()
                    self.optimizer.step()

                def test(self):
                    with torch.no_grad():
                        self.E = self.netG(self.L)

                def save(self, step):
                    torch.save(self.netG.state_dict(), f"{self.opt['models']}/{step}_G.pth")
            """)
        self.write("kair/models/model_vrt.py", """\
            from models.model_plain import ModelPlain


            class ModelVRT(ModelPlain):
                def optimize_parameters(self, step):
                    super(ModelVRT, self).optimize_parameters(step)
            """)
        self.write("kair/models/select_model.py", """\
            def define_Model(opt):
                model = opt["model"]
                if model == "plain":
                    from models.model_plain import ModelPlain as M
                elif model == "vrt":
                    from models.model_vrt import ModelVRT as M
                else:
                    raise NotImplementedError(model)
                m = M(opt)
                print(m.__class__.__name__)
                return m
            """)
        self.write("kair/utils/utils_option.py", """\
            import json
            import os


            def save(opt):
                dump_path = os.path.join(opt["path"]["options"], "train.json")
                with open(dump_path, "w") as dump_file:
                    json.dump(opt, dump_file, indent=2)
            """)
        self.write("kair/main_train_psnr.py", """\
            import torch.distributed as dist
            from models.select_model import define_Model
            from utils import utils_option as option


            def main(opt, loader, test_loader):
                dist.init_process_group("nccl")
                opt["rank"] = dist.get_rank()
                if opt["rank"] == 0:
                    option.save(opt)
                model = define_Model(opt)
                for step, data in enumerate(loader):
                    model.feed_data(data)
                    model.optimize_parameters(step)
                    if step % opt["save"] == 0 and opt["rank"] == 0:
                        model.save(step)
                    if step % opt["test"] == 0 and opt["rank"] == 0:
                        for t in test_loader:
                            model.feed_data(t)
                            model.test()
            """)
        p = self.lint("--no-cache", "--format", "json", "--fail-on", "never", "--root", "kair", "kair")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        found = [(f["rule"], f["file"], f["line"]) for f in json.loads(p.stdout)["findings"]
                 if f["rule"] != "ddp-init-timeout"]
        self.assertEqual(found, [("ddp-rank0-io-barrier", "main_train_psnr.py", 15),
                                 ("ddp-divergent-collective", "main_train_psnr.py", 20)], found)

    def test_check_in_another_module_that_raises_on_a_ranks_loss(self):
        # TimeSformer: misc.check_nan_losses(loss) raises on one rank's NaN
        # loss; the others go on into the gradient all-reduce.  Reported at
        # the skipped collective of the caller, the condition at the call.
        self.write("ts/utils/__init__.py", "")
        self.write("ts/utils/misc.py", """\
            import math


            def check_nan_losses(loss):
                if math.isnan(loss):
                    raise RuntimeError("ERROR: Got NaN losses")
            """)
        self.write("ts/train_net.py", """\
            import datetime
            import torch
            import torch.distributed as dist
            import ts.utils.misc as misc


            def train(model, loader, opt):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                model = torch.nn.parallel.DistributedDataParallel(model)
                for x in loader:
                    loss = model(x).sum()
                    misc.check_nan_losses(loss)
                    loss.backward()
                    opt.step()
            """)
        p = self.lint("--no-cache", "--format", "json", "ts/train_net.py")
        doc = json.loads(p.stdout)
        got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
        self.assertEqual(got, [("ts/train_net.py", 13, "ddp-divergent-collective")], p.stdout)
        self.assertIn("misc.check_nan_losses(loss) raises", doc["findings"][0]["message"])
        self.assertEqual(doc["findings"][0]["notes"][0]["line"], 12, p.stdout)

    def test_rank_property_of_another_modules_class(self):
        # imagen-pytorch (its issue 309): `trainer.is_main` is a property of
        # ImagenTrainer, in another module, that returns
        # accelerator.is_main_process; `save()` starts with
        # wait_for_everyone, so calling it on the main process alone hangs.
        self.write("im/imagen/__init__.py", "from .trainer import ImagenTrainer\n")
        self.write("im/imagen/trainer.py", """\
            import torch
            from accelerate import Accelerator


            class ImagenTrainer:
                def __init__(self, model):
                    self.accelerator = Accelerator()
                    self.model = self.accelerator.prepare(model)

                @property
                def is_main(self):
                    return self.accelerator.is_main_process

                def save(self, path):
                    self.accelerator.wait_for_everyone()
                    if self.is_main:
                        torch.save(self.model.state_dict(), path)
            """)
        self.write("im/cli.py", """\
            from imagen import ImagenTrainer


            def train(model, epochs):
                trainer = ImagenTrainer(model)
                for i in range(epochs):
                    if trainer.is_main:
                        trainer.save("model.pt")
                trainer.save("model.pt")
            """)
        p = self.lint("--no-cache", "--root", "im", "--format", "json", "im/cli.py")
        doc = json.loads(p.stdout)
        got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
        self.assertEqual(got, [("cli.py", 8, "ddp-divergent-collective")], p.stdout)
        self.assertIn("'trainer.is_main' holds", doc["findings"][0]["message"])

    def test_objects_a_factory_or_a_constructor_call_hands_back(self):
        # U-ViT: `train_state = utils.initialize_train_state(...)` builds a
        # TrainState in utils.py and returns it; its `save` writes every
        # tensor.  LLaMA-Factory: `DistributedInterface().get_rank()` asks an
        # object made right there, whose accessor returns the stored rank.
        self.write("uv/utils.py", """\
            import os
            import torch


            class TrainState:
                def __init__(self, nnet):
                    self.nnet = nnet

                def save(self, path):
                    torch.save(self.nnet.state_dict(), os.path.join(path, "nnet.pth"))


            def initialize_train_state(nnet):
                train_state = TrainState(nnet)
                return train_state


            class Interface:
                def __init__(self):
                    self._rank = int(os.getenv("RANK", "0"))

                def get_rank(self, dim=None):
                    if dim is None:
                        return self._rank
                    return 0
            """)
        self.write("uv/train.py", """\
            import os
            import torch
            import torch.distributed as dist
            import utils
            from utils import Interface


            def train(nnet, loader, ckpt_root):
                dist.init_process_group("nccl", timeout=__import__("datetime").timedelta(minutes=30))
                train_state = utils.initialize_train_state(nnet)
                for step, batch in enumerate(loader):
                    loss = nnet(batch).sum()
                    loss.backward()
                    dist.all_reduce(loss)
                    if Interface().get_rank() == 0:
                        train_state.save(ckpt_root)
                    dist.barrier()
                    if int(os.environ["LOCAL_RANK"]) == 0:
                        train_state.save(ckpt_root)
                    dist.barrier()
            """)
        p = self.lint("--no-cache", "--root", "uv", "--format", "json", "uv/train.py", "uv/utils.py")
        doc = json.loads(p.stdout)
        got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
        # The save's callers are known: rank 0 between barriers (no hazard),
        # and each node's first process (one writer per node).
        self.assertEqual(got, [("utils.py", 10, "ddp-unguarded-save")], p.stdout)
        self.assertIn("guarded by the node-local rank", doc["findings"][0]["message"])

    def test_helper_module_alone_has_no_finding_of_its_callers(self):
        # The helpers are correct on their own: the hazard is in how train.py
        # calls them, so linting the helper module alone reports nothing.
        p = self.lint("proj/util/dist.py", "proj/util/misc.py")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_helper_backward_in_a_single_process_importer(self):
        # InternVL's clip_benchmark: a helper module trains the model it is
        # handed (`loss.backward()`) and a command-line module that imports
        # nothing distributed calls it after an existence check.  Neither
        # wraps a model in DDP or makes a process group, so the helper's
        # backward all-reduces nothing; a distributed importer still reads it
        # as the DDP gradient all-reduce of the model it hands over.  (A
        # helper that wraps its own probe in nn.DataParallel runs no DDP
        # collective for any importer: data_parallel_helper_beside_ddp.py.)
        self.write("bench/pkg/__init__.py", "")
        self.write("bench/pkg/probe.py", """\
            import torch


            def evaluate(probe, loader, lr):
                opt = torch.optim.SGD(probe.parameters(), lr=lr)
                for x, y in loader:
                    loss = torch.nn.functional.cross_entropy(probe(x), y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                return {}
            """)
        self.write("bench/pkg/cli.py", """\
            import os
            from pkg import probe


            def run(args):
                output = args.output.format(dataset=args.dataset)
                if os.path.exists(output) and args.skip_existing:
                    return
                metrics = probe.evaluate(args.model, args.loader, 0.1)
                with open(output, "a") as f:
                    f.write(str(metrics))
            """)
        self.write("bench/pkg/train.py", """\
            import os
            import torch.distributed as dist
            from pkg import probe


            def run(args):
                output = args.output.format(dataset=args.dataset)
                if os.path.exists(output) and args.skip_existing:
                    return
                metrics = probe.evaluate(args.model, args.loader, 0.1)
                with open(output, "a") as f:
                    f.write(str(metrics))
            """)
        p = self.lint("--no-cache", "--root", "bench", "--format", "json", "bench/pkg/cli.py",
                      "bench/pkg/probe.py", "bench/pkg/train.py")
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        self.assertEqual(got, [("pkg/train.py", 10, "ddp-divergent-collective")], p.stdout)

    def test_one_file_run_and_whole_project_run_agree(self):
        one = json.loads(self.lint("--format", "json", "proj/train.py").stdout)
        whole = json.loads(self.lint("--format", "json", "proj").stdout)
        key = lambda d: sorted((f["file"], f["line"], f["rule"]) for f in d["findings"])
        self.assertEqual(key(one), key(whole))

    def test_two_modules_with_one_dotted_name(self):
        # A monorepo: two applications, each with its own `utils/utils.py`
        # (no __init__.py) imported as `utils.utils` after a sys.path append.
        # Each script links its own application's module, not its namesake:
        # chat's helper writes on rank 0 only (a hazard before the next
        # all_reduce), vision's writes a per-rank file on every rank.
        self.write(".git/HEAD", "ref: refs/heads/main\n")
        bodies = {
            "chat": "    if dist.get_rank() == 0:\n        torch.save(model.state_dict(), path)\n",
            "vision": "    torch.save(model.state_dict(), path + str(dist.get_rank()))\n",
        }
        for app, body in bodies.items():
            self.write(f"apps/{app}/utils/utils.py",
                       "import torch\nimport torch.distributed as dist\n\n\n"
                       "def save_hf_format(model, path):\n" + body)
            self.write(f"apps/{app}/training/main.py",
                       SYS_PATH_SCRIPT.format(call='            save_hf_format(model, "ckpt")'))
        for order in (["apps/chat", "apps/vision"], ["apps/vision", "apps/chat"]):
            p = self.lint("--format", "json", *order)
            got = sorted((f["file"], f["rule"]) for f in json.loads(p.stdout)["findings"])
            self.assertEqual(got, [("apps/chat/training/main.py", "ddp-rank0-io-barrier")],
                             p.stdout)

    def test_a_folder_without_a_project_marker_is_the_project(self):
        # No .git, no pyproject.toml: the folder the run lints is the project.
        # The helper writes unguarded, and its one caller (in a sibling
        # folder, after a sys.path append) calls it on rank 0 only: the helper
        # is not reported, the rank-0 block before the next all_reduce is.
        self.write("app/utils/utils.py", """\
            import torch


            def save_hf_format(model, path):
                torch.save(model.state_dict(), path)
            """)
        self.write("app/training/main.py", SYS_PATH_SCRIPT.format(
            call='            if dist.get_rank() == 0:\n                save_hf_format(model, "ckpt")'))
        for args, shown in ((["app"], "app/training/main.py"),
                            (["--root", "app", "app/utils/utils.py", "app/training/main.py"],
                             "training/main.py")):
            p = self.lint("--format", "json", *args)
            got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
            self.assertEqual(got, [(shown, 15, "ddp-rank0-io-barrier")], p.stdout)

    def test_every_rank_saving_through_a_helper(self):
        # The helper module is not distributed on its own (it only imports
        # torch); the script that calls it in its loop on every rank is.
        self.write("proj/ckpt.py", """\
            import torch


            def save_all(model, folder):
                torch.save(model.state_dict(), folder + "/model.bin")
            """)
        self.write("proj/loop.py", """\
            import datetime
            import torch.distributed as dist
            from proj.ckpt import save_all


            def main(model):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                for epoch in range(3):
                    save_all(model, "out")
                    dist.barrier()
            """)
        p = self.lint("--format", "json", "proj/loop.py", "proj/ckpt.py")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("proj/loop.py", 9, "ddp-unguarded-save")], p.stdout)

    def test_a_helpers_hazard_is_reported_by_the_module_that_calls_it(self):
        # finetune.py -> utils.train_utils.train -> ckpt.save_full: the rank-0
        # save races with train's next all_reduce.  train_utils reports it at
        # its call; the script that only calls train() does not repeat it.
        self.write(".git/HEAD", "ref: refs/heads/main\n")
        self.write("ckpt.py", """\
            import torch
            import torch.distributed as dist


            def save_full(model, rank):
                state = model.state_dict()
                if rank == 0:
                    torch.save(state, "full.pt")
            """)
        self.write("utils/train_utils.py", """\
            import torch
            import torch.distributed as dist
            from ckpt import save_full


            def train(model, loader):
                rank = dist.get_rank()
                for epoch in range(3):
                    for x in loader:
                        dist.all_reduce(model(x))
                    save_full(model, rank)
            """)
        self.write("finetune.py", """\
            import datetime
            import torch.distributed as dist
            from utils.train_utils import train


            def main(model, loader):
                dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
                train(model, loader)
            """)
        p = self.lint("--format", "json", "finetune.py", "utils", "ckpt.py")
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        self.assertEqual(got, [("utils/train_utils.py", 11, "ddp-rank0-io-barrier")], p.stdout)

    def test_a_solver_that_reaches_torch_distributed_only_through_helpers(self):
        # D-FINE: the solver imports no torch.distributed; its engine module
        # all-reduces through dist_utils, and both save_on_master: the engine
        # on a NaN, the solver every epoch.  Each call is its own fix, and the
        # engine's report does not hide the solver's.
        self.write(".git/HEAD", "ref: refs/heads/main\n")
        self.write("src/__init__.py", "")
        self.write("src/dist_utils.py", """\
            import torch
            import torch.distributed as tdist


            def is_main_process():
                if not tdist.is_initialized():
                    return True
                return tdist.get_rank() == 0


            def save_on_master(*args, **kwargs):
                if is_main_process():
                    torch.save(*args, **kwargs)


            def reduce_dict(d):
                for v in d.values():
                    tdist.all_reduce(v)
                return d
            """)
        self.write("src/engine.py", """\
            import torch

            from . import dist_utils


            def train_one_epoch(model, loader):
                for x in loader:
                    out = model(x)
                    if torch.isnan(out).any():
                        dist_utils.save_on_master(model.state_dict(), "./NaN.pth")
                    loss = out.mean()
                    loss.backward()
                    dist_utils.reduce_dict({"loss": loss.detach()})
            """)
        # An export script that trains nothing: the helper's all_reduce is
        # not what makes it distributed (demucs' tools/export.py).
        self.write("src/export.py", """\
            import torch

            from . import dist_utils


            def export(model, loader, out):
                stats = dist_utils.reduce_dict({"n": torch.tensor(len(loader))})
                torch.save({"model": model.state_dict(), "stats": stats}, out)


            if __name__ == "__main__":
                export(torch.nn.Linear(2, 2), [], "model.pt")
            """)
        self.write("src/solver.py", """\
            from . import dist_utils
            from .engine import train_one_epoch


            class Solver:
                def fit(self, model, loader, epochs, out):
                    for epoch in range(epochs):
                        train_one_epoch(model, loader)
                        dist_utils.save_on_master(model.state_dict(), out + "/last.pth")
            """)
        p = self.lint("--format", "json", "src")
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        self.assertEqual(got, [("src/engine.py", 10, "ddp-rank0-io-barrier"),
                               ("src/solver.py", 9, "ddp-rank0-io-barrier")], p.stdout)

    def test_a_main_process_setting_made_in_another_module(self):
        # open_clip's and MetaCLIP's main.py: `args.save_logs = args.logs and
        # is_master(args)`; the training module saves `if args.save_logs:`
        # mid-training, then all-gathers.
        self.write(".git/HEAD", "ref: refs/heads/main\n")
        self.write("training/__init__.py", "")
        self.write("training/main.py", """\
            import datetime

            import torch.distributed as dist

            from training.train import train_one_epoch


            def is_master(args):
                return args.rank == 0


            def main(args, model, loader):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                args.rank = dist.get_rank()
                args.save_logs = args.logs and args.logs.lower() != "none" and is_master(args)
                args.save_every_rank = args.logs is not None
                train_one_epoch(args, model, loader)
            """)
        self.write("training/train.py", """\
            import torch
            import torch.distributed as dist


            def train_one_epoch(args, model, loader):
                for step, x in enumerate(loader):
                    loss = model(x).mean()
                    loss.backward()
                    out = [torch.zeros(1) for _ in range(4)]
                    dist.all_gather(out, loss.detach().reshape(1))
                    if args.save_logs:
                        torch.save(model.state_dict(), f"{args.logs}/latest.pt")
                    if args.save_every_rank:
                        torch.save(model.state_dict(), f"{args.logs}/all.pt")
            """)
        p = self.lint("--format", "json", "training")
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        # `args.save_every_rank` is a setting every rank holds alike.
        self.assertEqual(got, [("training/train.py", 11, "ddp-rank0-io-barrier"),
                               ("training/train.py", 14, "ddp-unguarded-save")], p.stdout)

    def test_a_project_that_imports_itself_by_its_folders_name(self):
        # mae_st: the clone's folder is the package its modules import
        # (`import mae_st.util.misc as misc`), with no __init__.py at its root.
        self.write("mae_st/.git/HEAD", "ref: refs/heads/main\n")
        self.write("mae_st/util/__init__.py", "")
        self.write("mae_st/util/misc.py", """\
            import torch
            import torch.distributed as dist


            def save_on_master(*args, **kwargs):
                if dist.get_rank() == 0:
                    torch.save(*args, **kwargs)
            """)
        self.write("mae_st/main_pretrain.py", """\
            import datetime

            import torch
            import torch.distributed as dist

            import mae_st.util.misc as misc


            def main(model, loader, optimizer, epochs):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                model = torch.nn.parallel.DistributedDataParallel(model)
                for epoch in range(epochs):
                    for batch in loader:
                        model(batch).mean().backward()
                        optimizer.step()
                    misc.save_on_master(model.state_dict(), f"checkpoint-{epoch}.pth")
            """)
        p = self.lint("--format", "json", "mae_st")
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        self.assertIn(("mae_st/main_pretrain.py", 16, "ddp-rank0-io-barrier"), got, p.stdout)

    def test_a_helper_called_twice_is_reported_at_the_call_that_races(self):
        # save_on_master: after the eval-only call the function returns (no
        # collective follows); after the loop's call the next epoch's
        # all_reduce does.  The finding is at the loop's call.
        self.write(".git/HEAD", "ref: refs/heads/main\n")
        self.write("util/misc.py", """\
            import torch
            import torch.distributed as dist


            def save_on_master(obj, path):
                if dist.get_rank() == 0:
                    torch.save(obj, path)
            """)
        self.write("main.py", """\
            import datetime
            import torch.distributed as dist
            from util.misc import save_on_master


            def main(model, loader, args):
                dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
                if args.eval:
                    save_on_master(model.state_dict(), "eval.pth")
                    return
                for epoch in range(3):
                    for x in loader:
                        dist.all_reduce(model(x))
                    save_on_master(model.state_dict(), "checkpoint.pth")
            """)
        p = self.lint("--format", "json", "main.py")
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        self.assertEqual(got, [("main.py", 14, "ddp-rank0-io-barrier")], p.stdout)

    def test_a_constant_handed_to_another_modules_helper(self):
        # yolov5's torch_distributed_zero_first(-1) runs no barrier: rank 0's
        # validation loader may call it alone; with the local rank it may not.
        self.write(".git/HEAD", "ref: refs/heads/main\n")
        self.write("utils/torch_utils.py", """\
            from contextlib import contextmanager
            import torch.distributed as dist


            @contextmanager
            def zero_first(local_rank: int):
                if local_rank not in [-1, 0]:
                    dist.barrier()
                yield
                if local_rank == 0:
                    dist.barrier()
            """)
        self.write("utils/data.py", """\
            import torch
            from utils.torch_utils import zero_first


            def create_loader(path, rank=-1):
                with zero_first(rank):
                    return torch.load(path)
            """)
        self.write("train.py", """\
            import datetime
            import os
            import torch.distributed as dist
            from utils.data import create_loader

            LOCAL_RANK = int(os.getenv("LOCAL_RANK", "-1"))
            RANK = int(os.getenv("RANK", "-1"))


            def main():
                dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
                train = create_loader("train", rank=LOCAL_RANK)
                if RANK in {-1, 0}:
                    val = create_loader("val")
                    test = create_loader("test", rank=-1)
                if RANK in {-1, 0}:
                    bad = create_loader("val", rank=LOCAL_RANK)
            """)
        p = self.lint("--format", "json", "train.py")
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        self.assertEqual(got, [("train.py", 17, "ddp-divergent-collective")], p.stdout)

    def test_a_bare_import_in_a_package_is_the_top_level_module(self):
        # ALBEF: dataset/utils.py says `import utils`, the project's top-level
        # utils.py, not itself; the file name it saves to carries the rank.
        self.write(".git/HEAD", "ref: refs/heads/main\n")
        self.write("utils.py", """\
            import torch.distributed as dist


            def get_rank():
                if not dist.is_available() or not dist.is_initialized():
                    return 0
                return dist.get_rank()
            """)
        self.write("dataset/__init__.py", "")
        self.write("dataset/utils.py", """\
            import os
            import torch
            import torch.distributed as dist
            import utils


            def collect_result(result, result_dir, filename):
                result_file = os.path.join(result_dir, "%s_rank%d.pth" % (filename, utils.get_rank()))
                torch.save(result, result_file)
                dist.barrier()


            def collect_shared(result, result_dir):
                torch.save(result, os.path.join(result_dir, "all.pth"))
                dist.barrier()
            """)
        p = self.lint("--format", "json", "utils.py", "dataset")
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        self.assertEqual(got, [("dataset/utils.py", 14, "ddp-unguarded-save")], p.stdout)

    def test_a_long_setup_helper_returns_the_rank_in_a_tuple(self):
        # ijepa's init_distributed(): `world_size, rank = init_distributed()`,
        # and the checkpoint is saved by a function nested in main that reads
        # the enclosing rank.
        self.write(".git/HEAD", "ref: refs/heads/main\n")
        self.write("src/__init__.py", "")
        self.write("src/utils/__init__.py", "")
        self.write("src/utils/distributed.py", """\
            import datetime
            import os
            import torch.distributed as dist


            def init_distributed(port=40112, rank_and_world_size=(None, None)):
                if dist.is_available() and dist.is_initialized():
                    return dist.get_world_size(), dist.get_rank()
                rank, world_size = rank_and_world_size
                os.environ["MASTER_ADDR"] = "localhost"
                if rank is None or world_size is None:
                    world_size = int(os.environ["SLURM_NTASKS"])
                    rank = int(os.environ["SLURM_PROCID"])
                os.environ["MASTER_PORT"] = str(port)
                dist.init_process_group("nccl", world_size=world_size, rank=rank,
                                        timeout=datetime.timedelta(minutes=30))
                return world_size, rank
            """)
        self.write("src/train.py", """\
            import torch
            import torch.distributed as dist
            from src.utils.distributed import (
                init_distributed,
            )


            def main(model, path, epochs):
                world_size, rank = init_distributed()

                def save_checkpoint(epoch):
                    state = {"model": model.state_dict(), "epoch": epoch}
                    if rank == 0:
                        torch.save(state, path)

                def save_everywhere(epoch):
                    torch.save({"epoch": epoch}, path + ".meta")

                for epoch in range(epochs):
                    dist.all_reduce(torch.zeros(1))
                    save_checkpoint(epoch)
                    save_everywhere(epoch)
                    dist.barrier()
            """)
        p = self.lint("--format", "json", "src")
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        self.assertEqual(got, [("src/train.py", 17, "ddp-unguarded-save")], p.stdout)

    def test_a_helper_that_creates_the_process_group_makes_the_script_distributed(self):
        # timm's train.py: `utils.init_distributed_device(args)`, and no
        # torch.distributed import of its own.  The rules apply to it.
        self.write("proj2/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj2/util.py", """\
            import datetime
            import torch.distributed as dist


            def init_distributed_mode():
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
            """)
        self.write("proj2/main.py", """\
            import torch
            import util


            def main(model):
                util.init_distributed_mode()
                for epoch in range(3):
                    torch.save(model.state_dict(), "ckpt.pt")
            """)
        p = self.lint("--format", "json", "proj2/main.py")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("proj2/main.py", 8, "ddp-unguarded-save")], p.stdout)
        # Hard negative: the same code in a test runs in pytest's one process
        # (fairseq's and llama-recipes' tests call main with a world of one).
        self.write("proj2/tests/test_main.py", """\
            import torch
            import util


            def test_main(model):
                util.init_distributed_mode()
                for epoch in range(3):
                    torch.save(model.state_dict(), "ckpt.pt")
            """)
        p = self.lint("--format", "json", "proj2/tests/test_main.py")
        self.assertEqual(json.loads(p.stdout)["findings"], [], p.stdout)

    def test_callers_that_run_in_one_process_are_one_writer(self):
        # vissl's checkpoint converters: a module of a distributed project whose
        # helper saves unguarded, called by a conversion script that creates no
        # process group.  One process runs it there: not every rank.
        self.write("proj3/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj3/ckpt.py", """\
            import torch
            import torch.distributed as dist


            def convert(src, dst):
                torch.save(torch.load(src), dst)
            """)
        self.write("proj3/tools/convert.py", """\
            import sys
            from ckpt import convert

            if __name__ == "__main__":
                convert(sys.argv[1], sys.argv[2])
            """)
        p = self.lint("--format", "json", "proj3/ckpt.py")
        self.assertEqual(json.loads(p.stdout)["findings"], [], p.stdout)
        # A training loop that calls it on every rank still makes it a race.
        self.write("proj3/train.py", """\
            import datetime
            import torch.distributed as dist
            from ckpt import convert


            def main():
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                for epoch in range(3):
                    convert("in.pt", "out.pt")
                    dist.barrier()
            """)
        p = self.lint("--format", "json", "proj3/ckpt.py")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("proj3/ckpt.py", 6, "ddp-unguarded-save")], p.stdout)

    def test_the_launchers_process_is_one_writer(self):
        # vissl's tests: the test function starts the ranks through helpers in
        # two other modules (run_integration_test -> launch_distributed ->
        # torch.multiprocessing.spawn), waits for them, and then converts the
        # checkpoint in its own, single process.  The spawned worker, a static
        # method started as `self._worker`, converts on its process 0 only.
        self.write("proj4/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj4/ckpt.py", """\
            import torch
            import torch.distributed as dist


            def convert(src, dst):
                torch.save(torch.load(src), dst)
            """)
        self.write("proj4/launcher.py", """\
            import torch
            import torch.distributed as dist


            def _worker(local_rank, cfg):
                dist.init_process_group("gloo", rank=local_rank, world_size=2)
                dist.barrier()


            def launch_distributed(cfg):
                torch.multiprocessing.spawn(_worker, nprocs=2, args=(cfg,))
            """)
        self.write("proj4/test_utils.py", """\
            from launcher import launch_distributed


            def run_integration_test(cfg):
                launch_distributed(cfg)
            """)
        self.write("proj4/tests/test_convert.py", """\
            import unittest

            import torch.distributed as dist
            import torch.multiprocessing as mp
            from ckpt import convert
            from test_utils import run_integration_test


            class TestConvert(unittest.TestCase):
                @staticmethod
                def _worker(gpu_id, sync_file):
                    dist.init_process_group("gloo", init_method=sync_file, rank=gpu_id, world_size=2)
                    dist.barrier()
                    if gpu_id == 0:
                        convert("checkpoint.torch", "conso.torch")
                    dist.barrier()

                def test_spawned_worker(self):
                    mp.spawn(self._worker, args=("file:///tmp/sync",), nprocs=2)

                def test_after_training(self):
                    run_integration_test({})
                    convert("checkpoint.torch", "conso.torch")
            """)
        p = self.lint("--format", "json", "proj4/ckpt.py")
        self.assertEqual(json.loads(p.stdout)["findings"], [], p.stdout)
        # A rank that converts after the launcher returned is still every rank:
        # the worker's own unguarded call makes it a race.
        self.write("proj4/tests/test_worker.py", """\
            import torch.distributed as dist
            import torch.multiprocessing as mp
            from ckpt import convert


            def _worker(gpu_id):
                dist.init_process_group("gloo", rank=gpu_id, world_size=2)
                convert("checkpoint.torch", "conso.torch")
                dist.barrier()


            def test_worker():
                mp.spawn(_worker, nprocs=2)
                convert("checkpoint.torch", "again.torch")
            """)
        p = self.lint("--format", "json", "proj4/ckpt.py")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("proj4/ckpt.py", 6, "ddp-unguarded-save")], p.stdout)

    def test_the_projects_own_rank_zero_decorator(self):
        # LAVIS's and MiniGPT-4's `@main_process` (common/dist_utils.py): the
        # wrapper calls the method only where get_dist_info()'s rank is 0, and
        # get_dist_info() reads torch < 1.0's `dist._initialized` on one arm
        # of a version test.  The decorated save is rank 0's, and the epoch's
        # barrier behind the `distributed` setting is every rank's.
        self.write("proj5/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj5/common/__init__.py", "")
        self.write("proj5/common/dist_utils.py", """\
            import functools

            import torch
            import torch.distributed as dist


            def get_dist_info():
                if torch.__version__ < "1.0":
                    initialized = dist._initialized
                else:
                    initialized = dist.is_initialized()
                if initialized:
                    rank = dist.get_rank()
                    world_size = dist.get_world_size()
                else:  # non-distributed training
                    rank = 0
                    world_size = 1
                return rank, world_size


            def main_process(func):
                @functools.wraps(func)
                def wrapper(*args, **kwargs):
                    rank, _ = get_dist_info()
                    if rank == 0:
                        return func(*args, **kwargs)

                return wrapper
            """)
        self.write("proj5/runner.py", """\
            import torch
            import torch.distributed as dist
            from common.dist_utils import main_process


            class Runner:
                def __init__(self, model, config):
                    self.model = model
                    self.config = config

                @main_process
                def _save_checkpoint(self, epoch):
                    torch.save(self.model.state_dict(), f"checkpoint_{epoch}.pth")

                def save_everywhere(self, epoch):
                    torch.save(self.model.state_dict(), "last.pth")

                def train(self):
                    for epoch in range(10):
                        loss = self.model(torch.ones(1)).sum()
                        loss.backward()
                        self._save_checkpoint(epoch)
                        self.save_everywhere(epoch)
                        if self.config.run_cfg.distributed:
                            dist.barrier()
            """)
        p = self.lint("--format", "json", "proj5/runner.py")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        # Only the undecorated save is every rank's.
        self.assertEqual(got, [("proj5/runner.py", 16, "ddp-unguarded-save")], p.stdout)

    def test_a_ddp_model_handed_to_another_modules_loop(self):
        # maskrcnn-benchmark: tools/train_net.py wraps the model in DDP and
        # hands it to engine/trainer.py's do_train, whose loop skips a batch
        # with an empty target on that rank only.  That rank skips the DDP
        # forward and backward the others run.  A model wrapped only after
        # the call (the warm-up) is a plain module there: no finding.
        self.write("proj6/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj6/engine/__init__.py", "")
        self.write("proj6/engine/trainer.py", """\
            import torch.distributed as dist


            def do_train(model, data_loader, optimizer):
                model.train()
                for images, targets in data_loader:
                    if any(len(target) < 1 for target in targets):
                        continue
                    loss = model(images, targets)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()


            def warm_up(net, data_loader):
                for images, targets in data_loader:
                    if any(len(target) < 1 for target in targets):
                        continue
                    net(images, targets).backward()
            """)
        self.write("proj6/train_net.py", """\
            import datetime

            import torch
            import torch.distributed as dist
            from engine.trainer import do_train, warm_up


            def main(model, loader, optimizer, local_rank):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                warm_up(model, loader)
                model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
                do_train(model, loader, optimizer)
            """)
        p = self.lint("--format", "json", "proj6/train_net.py")
        doc = json.loads(p.stdout)
        got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
        self.assertEqual(got, [("proj6/train_net.py", 12, "ddp-divergent-collective")], p.stdout)
        self.assertIn("do_train", doc["findings"][0]["message"])
        # One bug, one report: once the loop also all-reduces the loss, the
        # trainer's own lint reports the skipped batch there, and the caller
        # that hands it the DDP model does not report it again.
        with open(os.path.join(self.tmp, "proj6/engine/trainer.py")) as f:
            text = f.read()
        self.assertIn("        optimizer.step()\n", text)
        self.write("proj6/engine/trainer.py", text.replace(
            "        optimizer.step()\n",
            "        optimizer.step()\n        dist.all_reduce(loss.detach())\n", 1))
        p = self.lint("--format", "json", "proj6")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("proj6/engine/trainer.py", 13, "ddp-divergent-collective")], p.stdout)

    def test_a_buffer_free_model_class_of_another_module(self):
        # Wuerstchen's stage C: `model = Prior(...).to(device)` from the
        # project's modules.py, wrapped in DDP; rank 0 samples with the DDP
        # model under no_grad.  Prior holds no buffers (convolutions,
        # LayerNorm, attention), so that forward broadcasts nothing: no
        # finding.  The same class with a BatchNorm is reported.
        self.write("projbuf/.git/HEAD", "ref: refs/heads/main\n")
        modules = """\
            import torch
            from torch import nn


            class LayerNorm2d(nn.LayerNorm):
                def forward(self, x):
                    return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


            class Block(nn.Module):
                def __init__(self, c):
                    super().__init__()
                    self.norm = LayerNorm2d(c, elementwise_affine=False)
                    self.attn = nn.MultiheadAttention(c, 4)
                    self.conv = nn.Conv2d(c, c, 3, padding=1)


            class Prior(nn.Module):
                def __init__(self, c, depth):
                    super().__init__()
                    self.proj = nn.Conv2d(16, c, 1)
                    self.blocks = nn.ModuleList([Block(c) for _ in range(depth)])
            """
        self.write("projbuf/modules.py", modules)
        self.write("projbuf/train.py", """\
            import datetime

            import torch
            import torch.distributed as dist
            from torch.nn.parallel import DistributedDataParallel as DDP

            from modules import Prior


            def train(gpu_id, loader, steps):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                main_node = dist.get_rank() == 0
                model = Prior(c=64, depth=4).to(gpu_id)
                model = DDP(model, device_ids=[gpu_id])
                optimizer = torch.optim.AdamW(model.parameters())
                for it, batch in zip(range(steps), loader):
                    loss = model(batch).mean()
                    loss.backward()
                    optimizer.step()
                    if main_node and it % 100 == 0:
                        with torch.no_grad():
                            sample = model(batch[:4])
                        print(sample.mean())
            """)
        p = self.lint("--format", "json", "projbuf/train.py")
        self.assertEqual(json.loads(p.stdout)["findings"], [], p.stdout)
        self.write("projbuf/modules.py", modules.replace(
            "self.proj = nn.Conv2d(16, c, 1)",
            "self.proj = nn.Sequential(nn.Conv2d(16, c, 1), nn.BatchNorm2d(c))"))
        p = self.lint("--format", "json", "projbuf/train.py")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("projbuf/train.py", 22, "ddp-divergent-collective")], p.stdout)

    def test_a_quiet_ddp_model_handed_to_another_modules_evaluation(self):
        # Uni-Perceiver: the trainer wraps the model with broadcast_buffers=False
        # (then keeps it as self.model) and hands it to the tester module, which
        # runs the forward on rank 0 only.  That forward broadcasts nothing:
        # no finding.  The same trainer with the default broadcast_buffers is
        # reported at its call.
        self.write("proj7/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj7/engine/__init__.py", "")
        self.write("proj7/engine/tester.py", """\
            import torch
            import torch.distributed as dist


            @torch.no_grad()
            def test_retrieval(model, loader):
                if dist.get_rank() != 0:
                    return None
                return [model(batch) for batch in loader]
            """)
        trainer = """\
            import datetime

            import torch
            import torch.distributed as dist
            from engine.tester import test_retrieval


            class Trainer:
                def __init__(self, model, local_rank):
                    dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                    model = torch.nn.parallel.DistributedDataParallel(
                        model, device_ids=[local_rank], broadcast_buffers=False)
                    self.model = model

                def train(self, loader, optimizer, epochs):
                    for epoch in range(epochs):
                        for batch in loader:
                            loss = self.model(batch)
                            optimizer.zero_grad()
                            loss.backward()
                            optimizer.step()
                        test_retrieval(self.model, loader)
                        dist.barrier()
            """
        self.write("proj7/train.py", trainer)
        p = self.lint("--format", "json", "proj7/train.py")
        self.assertEqual(json.loads(p.stdout)["findings"], [], p.stdout)
        self.write("proj7/train.py", trainer.replace(", broadcast_buffers=False", ""))
        p = self.lint("--format", "json", "proj7/train.py")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("proj7/train.py", 22, "ddp-divergent-collective")], p.stdout)

    def test_a_saver_that_is_a_null_object_off_rank_zero(self):
        # ALPRO (and UNITER, ClipBERT): every script makes its ModelSaver on
        # rank 0 and utils.misc.NoOp() elsewhere, then calls model_saver.save()
        # in the step loop with nothing guarding it.  The save is rank 0's,
        # before the next step's gradient all-reduce: reported at the call.
        # Without the NoOp (a real saver on every rank) it is every rank
        # writing one path, reported at the same call.
        self.write("proj9/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj9/src/__init__.py", "")
        self.write("proj9/src/utils/__init__.py", "")
        self.write("proj9/src/utils/misc.py", """\
            class NoOp(object):
                \"\"\" useful for distributed training No-Ops \"\"\"
                def __getattr__(self, name):
                    return self.noop

                def noop(self, *args, **kwargs):
                    return
            """)
        self.write("proj9/src/utils/load_save.py", """\
            import os

            import torch


            class ModelSaver(object):
                def __init__(self, output_dir):
                    self.output_dir = output_dir

                def save(self, step, model):
                    torch.save(model.state_dict(), os.path.join(self.output_dir, f"model_step_{step}.pt"))
            """)
        script = """\
            import datetime

            import torch
            import torch.distributed as dist
            from src.utils.load_save import ModelSaver
            from src.utils.misc import NoOp


            def main(model, loader, optimizer, output_dir):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                model = torch.nn.parallel.DistributedDataParallel(model)
                if dist.get_rank() == 0:
                    model_saver = ModelSaver(output_dir)
                else:
                    model_saver = NoOp()
                for step, batch in enumerate(loader):
                    loss = model(batch).sum()
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                    if step % 1000 == 0:
                        model_saver.save(step=step, model=model)
            """
        self.write("proj9/src/pretrain/run_pretrain.py", script)
        p = self.lint("--format", "json", "proj9/src/pretrain/run_pretrain.py")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("proj9/src/pretrain/run_pretrain.py", 22, "ddp-rank0-io-barrier")], p.stdout)
        self.write("proj9/src/pretrain/run_pretrain.py",
                   script.replace("model_saver = NoOp()", "model_saver = ModelSaver(output_dir)"))
        p = self.lint("--format", "json", "proj9/src/pretrain/run_pretrain.py", "proj9/src/utils/load_save.py")
        got = [(f["file"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("proj9/src/pretrain/run_pretrain.py", "ddp-unguarded-save")], p.stdout)

    def test_a_rank_parameter_of_a_script_distributed_through_its_helper(self):
        # waveglow: train.py imports nothing distributed; it makes the group
        # through distributed.py's init_distributed(rank, ...) and saves under
        # `if rank == 0:`.  That is a rank-0 write before the next step's
        # all-reduce (not every rank writing one path).
        self.write("proj8/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj8/distributed.py", """\
            import datetime

            import torch.distributed as dist


            def init_distributed(rank, num_gpus, group_name, dist_backend, dist_url):
                dist.init_process_group(dist_backend, init_method=dist_url, world_size=num_gpus,
                                        rank=rank, group_name=group_name,
                                        timeout=datetime.timedelta(minutes=30))


            def reduce_tensor(tensor, num_gpus):
                rt = tensor.clone()
                dist.all_reduce(rt)
                return rt / num_gpus
            """)
        self.write("proj8/train.py", """\
            import torch
            from distributed import init_distributed, reduce_tensor


            def train(num_gpus, rank, group_name, model, loader, optimizer, epochs):
                if num_gpus > 1:
                    init_distributed(rank, num_gpus, group_name, "nccl", "tcp://localhost:54321")
                for epoch in range(epochs):
                    for batch in loader:
                        loss = model(batch)
                        reduced = reduce_tensor(loss.data, num_gpus).item() if num_gpus > 1 else loss.item()
                        loss.backward()
                        optimizer.step()
                    if rank == 0:
                        torch.save(model.state_dict(), "checkpoint.pt")
            """)
        p = self.lint("--format", "json", "proj8/train.py")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("proj8/train.py", 14, "ddp-rank0-io-barrier")], p.stdout)

    def test_a_method_inherited_from_another_modules_base_class(self):
        # BasicSR: SRModel (models/sr_model.py) inherits save_network from
        # BaseModel (models/base_model.py, imported relatively), which writes
        # on rank 0 only.  The loop's `model.save(...)` reaches it through
        # `self.save_network(...)`; `model.save_network(...)` reaches it
        # directly.  Either way the loop's next all-reduce races with the
        # write; with a barrier after the save nothing does.
        self.write("proj9/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj9/models/__init__.py", "")
        self.write("proj9/models/base_model.py", """\
            import torch
            import torch.distributed as dist


            class BaseModel:
                def save_network(self, path):
                    if dist.get_rank() == 0:
                        torch.save(self.net.state_dict(), path)
            """)
        self.write("proj9/models/sr_model.py", """\
            import torch.distributed as dist

            from .base_model import BaseModel


            class SRModel(BaseModel):
                def __init__(self, net):
                    self.net = net

                def step(self, x):
                    loss = self.net(x).sum()
                    dist.all_reduce(loss)

                def save(self, path):
                    self.save_network(path)
            """)
        train = """\
            import datetime

            import torch.distributed as dist
            from models.sr_model import SRModel


            def train(net, data, every):
                dist.init_process_group("gloo", timeout=datetime.timedelta(minutes=30))
                model = SRModel(net)
                for i, x in enumerate(data):
                    model.step(x)
                    if i % every == 0:
                        model.save("latest.pt")
            """
        for call in ('model.save("latest.pt")', 'model.save_network("latest.pt")'):
            self.write("proj9/train.py", train.replace('model.save("latest.pt")', call))
            p = self.lint("--format", "json", "proj9")
            doc = json.loads(p.stdout)
            got = [(f["file"], f["line"], f["rule"]) for f in doc["findings"]]
            self.assertEqual(got, [("proj9/train.py", 13, "ddp-rank0-io-barrier")], p.stdout)
            self.assertIn("'BaseModel.save_network' (module 'models.base_model')",
                          doc["findings"][0]["message"])
            self.write("proj9/train.py", train.replace(
                'model.save("latest.pt")', call + "\n                        dist.barrier()"))
            p = self.lint("--format", "json", "proj9")
            self.assertEqual(json.loads(p.stdout)["findings"], [], p.stdout)

    def test_a_name_from_a_star_import_in_a_package_with_a_setup_module(self):
        # efficientvit: `is_master` reaches the trainer through the package's
        # `from .dist import *`, and the package also holds a module named
        # setup.py (a run's set-up helpers), which does not make the package
        # folder a project root.  The rank-0 save inside the loop is a rank-0
        # block, not every rank's save; `from pkg.utils import *` in the
        # script finds the same helper.
        self.write("proj10/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj10/pkg/__init__.py", "")
        self.write("proj10/pkg/setup.py", "def setup_seed(seed):\n    return seed\n")
        self.write("proj10/pkg/utils/__init__.py", "from .dist import *\n")
        self.write("proj10/pkg/utils/dist.py", """\
            import os


            def get_dist_rank():
                return int(os.environ["RANK"])


            def is_master():
                return get_dist_rank() == 0
            """)
        trainer = """\
            import datetime

            import torch
            import torch.distributed as dist
            from pkg.utils import is_master


            def train(model, data, every):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                for i, x in enumerate(data):
                    loss = model(x).sum()
                    dist.all_reduce(loss)
                    if i % every == 0 and is_master():
                        torch.save(model.state_dict(), "latest.pt")
            """
        for imp in ("from pkg.utils import is_master", "from pkg.utils import *"):
            self.write("proj10/pkg/trainer.py", trainer.replace("from pkg.utils import is_master", imp))
            p = self.lint("--format", "json", "proj10")
            got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
            self.assertEqual(got, [("proj10/pkg/trainer.py", 13, "ddp-rank0-io-barrier")], p.stdout)

    def test_a_per_rank_file_name_handed_to_another_modules_writer(self):
        # EVA-CLIP: `save_file(feats, out_file)`, out_file a name with the rank
        # in it (f"{out}/rank{args.rank}_...npy"), with
        # save_file in training/utils.py, writing through iopath's
        # g_pathmgr.open.  Every rank writes its own file: no report.  The
        # same helper handed one shared name by every rank is reported, at
        # that call.
        self.write("proj11/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj11/training/__init__.py", "")
        self.write("proj11/training/utils.py", """\
            import pickle

            from iopath.common.file_io import g_pathmgr


            def save_file(data, filename):
                with g_pathmgr.open(filename, "wb") as fopen:
                    pickle.dump(data, fopen)
            """)
        self.write("proj11/training/train.py", """\
            import datetime

            import torch.distributed as dist

            from training.utils import save_file


            def extract(args, model, loader):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                for idx, x in enumerate(loader):
                    feats = model(x)
                    dist.all_reduce(feats)
                    out_file = f"{args.out}/rank{args.rank}_img_emb_{idx:08d}.pkl"
                    save_file(feats, out_file)


            def extract_shared(args, model, loader):
                for idx, x in enumerate(loader):
                    feats = model(x)
                    dist.all_reduce(feats)
                    save_file(feats, f"{args.out}/img_emb_{idx:08d}.pkl")
            """)
        p = self.lint("--format", "json", "proj11")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("proj11/training/train.py", 21, "ddp-unguarded-save")], p.stdout)

    def test_a_project_package_named_like_a_framework(self):
        # gpt-neox ships its own `megatron` package: a conversion tool that
        # imports only its tokenizer is one process, not a Megatron program.
        # Its `torch.save` is one writer's; a training script of the same
        # project that creates the process group still makes its save a race.
        self.write("proj7/.git/HEAD", "ref: refs/heads/main\n")
        self.write("proj7/megatron/__init__.py", "")
        self.write("proj7/megatron/tokenizer.py", """\
            def build_tokenizer(args):
                return args
            """)
        self.write("proj7/tools/convert.py", """\
            import sys

            import torch
            from megatron.tokenizer import build_tokenizer


            def main():
                tokenizer = build_tokenizer(sys.argv)
                torch.save({"tokenizer": tokenizer}, sys.argv[2])


            if __name__ == "__main__":
                main()
            """)
        p = self.lint("--format", "json", "proj7/tools/convert.py")
        self.assertEqual(json.loads(p.stdout)["findings"], [], p.stdout)
        # The framework itself, outside the project, still marks a program.
        self.write("proj7/tools/convert.py", """\
            import sys

            import torch
            from megatron.core import parallel_state


            def main():
                torch.save({"rank": parallel_state.get_data_parallel_rank()}, sys.argv[2])
            """)
        p = self.lint("--format", "json", "proj7/tools/convert.py")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        self.assertEqual(got, [("proj7/tools/convert.py", 8, "ddp-unguarded-save")], p.stdout)

    def test_import_outside_the_project_is_not_followed(self):
        # A module that is not in the project (site-packages, a typo) is
        # unknown, not an error.
        self.write("proj/other.py", """\
            import torch.distributed as dist
            from nowhere.helpers import save_everything

            def run():
                dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(minutes=30))
                save_everything()
            """)
        p = self.lint("proj/other.py")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)


class PythonCallerCache(PythonProject):
    """What each importer calls is kept between runs (--cache-dir): a
    pre-commit run on one helper module reads its callers' calls instead of
    building them again, and reads them again when a file they came from
    changed."""

    def setUp(self):
        super().setUp()
        self.write(".git/HEAD", "ref: refs/heads/main\n")
        self.write("app/__init__.py", "")
        self.write("app/ckpt.py", """\
            import torch
            import torch.distributed as dist


            def save_all(model):
                torch.save(model.state_dict(), "out/model.bin")
            """)
        self.write("app/guard.py", """\
            import torch.distributed as dist


            def is_main():
                return dist.get_rank() == 0
            """)
        self.write("app/loop.py", """\
            import datetime
            import torch.distributed as dist
            from app.ckpt import save_all
            from app.guard import is_main


            def main(model):
                dist.init_process_group("nccl", timeout=datetime.timedelta(minutes=30))
                for epoch in range(3):
                    if is_main():
                        save_all(model)
                    dist.barrier()
            """)
        self.cache = os.path.join(self.tmp, "cache")

    def lint_helper(self, *extra):
        p = self.lint("-v", "--format", "json", "--cache-dir", self.cache, *extra, "app/ckpt.py")
        got = [(f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"]]
        return got, p.stderr

    def test_reused_until_a_module_the_caller_read_changes(self):
        got, err = self.lint_helper()
        self.assertEqual(got, [], err)  # loop.py saves on rank 0 only
        self.assertIn("0 importer(s) reused", err)
        self.assertIn(", 1 analysed", err)
        got, err = self.lint_helper()
        self.assertEqual(got, [], err)
        self.assertIn("1 importer(s) reused", err)
        self.assertIn(", 0 analysed", err)
        # Touched, not changed: the content hash says it is the same.
        os.utime(os.path.join(self.tmp, "app/loop.py"))
        got, err = self.lint_helper()
        self.assertIn("1 importer(s) reused", err)
        # The caller's guard is in guard.py, which loop.py's build read: once
        # it no longer tests the rank, every rank saves, and the stored calls
        # are stale.
        self.write("app/guard.py", """\
            def is_main():
                return True
            """)
        got, err = self.lint_helper()
        self.assertEqual(got, [("app/ckpt.py", 6, "ddp-unguarded-save")], err)
        self.assertIn(", 1 analysed", err)

    def test_a_new_file_makes_stored_calls_stale(self):
        self.lint_helper()
        # A new module can change what an import names (app/guard/ before
        # app/guard.py is not Python's rule, but a new importer is found).
        self.write("app/other.py", """\
            import torch.distributed as dist
            from app.ckpt import save_all


            def every_rank(model):
                save_all(model)
                dist.barrier()
            """)
        got, err = self.lint_helper()
        self.assertEqual(got, [("app/ckpt.py", 6, "ddp-unguarded-save")], err)
        self.assertIn("0 importer(s) reused", err)

    def test_no_cache_keeps_nothing_and_clear_removes_them(self):
        self.lint_helper("--no-cache")
        stats = self.lint("cache", "stats", "--cache-dir", self.cache).stdout
        self.assertRegex(stats, r"python: +0 ")
        self.lint_helper()
        stats = self.lint("cache", "stats", "--cache-dir", self.cache).stdout
        self.assertRegex(stats, r"python: +1 ")
        self.lint("cache", "clear", "--cache-dir", self.cache)
        stats = self.lint("cache", "stats", "--cache-dir", self.cache).stdout
        self.assertRegex(stats, r"python: +0 ")


class PythonPreCommit(PythonProject):
    """The `ddplint` hook of .pre-commit-hooks.yaml on staged Python files."""

    def test_hook_lints_staged_python(self):
        if shutil.which("pre-commit") is None:
            self.fail("pre-commit is not installed (scripts/setup.sh installs it)")
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(os.path.abspath(DDPLINT)) + os.pathsep + env["PATH"]
        env["PRE_COMMIT_HOME"] = os.path.join(self.tmp, "pre-commit-home")
        env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
        src = os.path.join(self.tmp, "proj")
        os.makedirs(src)
        git = lambda *a: subprocess.run(["git", *a], cwd=src, env=env, check=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        timeout=TIMEOUT)
        git("init", "-q")
        with open(os.path.join(src, "clean.py"), "w") as f:
            f.write("import torch\nprint(torch.ones(2))\n")
        with open(os.path.join(src, "train.py"), "w") as f:
            f.write(textwrap.dedent(TRAIN))
        git("add", "clean.py")
        hook = lambda: subprocess.run(["pre-commit", "try-repo", REPO, "ddplint", "--verbose"],
                                      cwd=src, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, timeout=300)
        p = hook()
        self.assertEqual(p.returncode, 0, p.stdout)
        git("add", "train.py")
        p = hook()
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("[ddp-divergent-collective]", p.stdout)
        self.assertNotIn("clean.py:", p.stdout)


if __name__ == "__main__":
    unittest.main()
