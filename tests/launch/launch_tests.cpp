// ddp-launch-env on launch files: true positives at exact line:col, the hard
// negatives (the variable set in a way that is easy to miss, or maybe set
// somewhere the file does not show), the target-version cases and bad input.
#include "ddplint/launch/LaunchCheck.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace ddplint::launch;

namespace {

const std::string kCurrent = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
const std::string kLegacy = "NCCL_ASYNC_ERROR_HANDLING";
const std::string kFault = "PYTHONFAULTHANDLER";

std::string fixture(const std::string &name) { return std::string(DDPLINT_LAUNCH_FIXTURES) + "/" + name; }

Options version(const std::string &v) {
  Options o;
  if (!v.empty())
    REQUIRE(parseTorchVersion(v, o));
  return o;
}

Result check(const std::string &name, const std::string &torch = "") {
  Result r = checkLaunchFile(fixture(name), version(torch));
  for (const auto &e : r.errors)
    UNSCOPED_INFO("error " << e.line << ":" << e.column << " " << e.message);
  for (const auto &f : r.findings)
    UNSCOPED_INFO("finding " << f.line << ":" << f.column << " " << f.message);
  return r;
}

Result text(const std::string &file, const std::string &body, const std::string &torch = "") {
  Result r = checkLaunchText(file, body, version(torch));
  for (const auto &e : r.errors)
    UNSCOPED_INFO("error " << e.line << ":" << e.column << " " << e.message);
  for (const auto &f : r.findings)
    UNSCOPED_INFO("finding " << f.line << ":" << f.column << " " << f.message);
  return r;
}

std::vector<std::string> locs(const Result &r) {
  std::vector<std::string> out;
  for (const auto &f : r.findings)
    out.push_back(std::to_string(f.line) + ":" + std::to_string(f.column));
  return out;
}

using Locs = std::vector<std::string>;

// The finding at line:col whose message contains every one of `parts`.
bool has(const Result &r, unsigned line, unsigned col, std::initializer_list<std::string> parts) {
  for (const auto &f : r.findings) {
    if (f.line != line || f.column != col)
      continue;
    bool all = true;
    for (const auto &p : parts)
      all &= f.message.find(p) != std::string::npos;
    if (all)
      return true;
  }
  return false;
}

} // namespace

// ===========================================================================
// Kubernetes manifests
// ===========================================================================

TEST_CASE("PyTorchJob with value 3 and a sidecar: nothing", "[k8s]") {
  Result r = check("pytorchjob-good.yaml");
  CHECK(r.kind == FileKind::KubernetesManifest);
  CHECK(r.errors.empty());
  CHECK(r.findings.empty());
}

TEST_CASE("RayJob: runtimeEnvYAML env_vars count for every group, positions map into the block",
          "[k8s][ray]") {
  Result r = check("rayjob.yaml");
  CHECK(r.errors.empty());
  // Line 12 of the file, column 7: PYTHONFAULTHANDLER inside the literal block.
  CHECK(locs(r) == Locs{"12:7"});
  CHECK(has(r, 12, 7, {kFault + " is empty in the runtimeEnvYAML of RayJob 'tune'"}));
}

TEST_CASE("RayJob: a malformed runtimeEnvYAML is an error and hides missing", "[k8s][ray]") {
  Result r = text("job.yaml", "apiVersion: ray.io/v1\n"
                              "kind: RayJob\n"
                              "metadata: {name: t}\n"
                              "spec:\n"
                              "  runtimeEnvYAML: |\n"
                              "    env_vars: {A: 1\n"
                              "  rayClusterSpec:\n"
                              "    headGroupSpec:\n"
                              "      template:\n"
                              "        spec:\n"
                              "          containers:\n"
                              "            - name: head\n");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].line >= 6);
  CHECK(r.errors[0].message.find("runtimeEnvYAML of RayJob 't' is malformed YAML") != std::string::npos);
  CHECK(r.findings.empty());
}

// ===========================================================================
// Slurm and shell scripts
// ===========================================================================

TEST_CASE("Slurm: export with a continuation, srun --export=ALL,VAR=1, a here-document", "[slurm]") {
  Result r = check("train-good.slurm");
  CHECK(r.kind == FileKind::SlurmScript);
  CHECK(r.errors.empty());
  // The srun inside the here-document (line 8) is data, not a command.
  CHECK(r.findings.empty());
}

TEST_CASE("Slurm: #SBATCH --export sets the batch environment", "[slurm]") {
  Result r = check("sbatch-export.slurm");
  CHECK(locs(r) == Locs{"3:56"});
  CHECK(has(r, 3, 56, {kFault + " is empty for the srun at line 4"}));
}

TEST_CASE("Slurm: an srun'd bash -c that sets them itself", "[slurm]") {
  Result r = check("inline.slurm");
  CHECK(r.errors.empty());
  CHECK(r.findings.empty());
}

TEST_CASE("Shell: env VAR=val, exec, quoted export, prefix across a continuation", "[shell]") {
  Result r = check("launch-good.sh");
  CHECK(r.errors.empty());
  CHECK(r.findings.empty());
}

TEST_CASE("Shell: no launch command, no findings (wrong values included)", "[shell]") {
  Result r = check("no-launch.sh");
  CHECK(r.kind == FileKind::ShellScript);
  CHECK(r.findings.empty());
}

TEST_CASE("Shell: mpirun -x sets them for mpirun only; deepspeed later lacks one", "[shell]") {
  Result r = check("mpirun.sh");
  CHECK(locs(r) == Locs{"3:8", "4:1"});
  CHECK(has(r, 3, 8, {kLegacy + " for the deepspeed at line 4 is deprecated"}));
  CHECK(has(r, 4, 1, {"the deepspeed at line 4 runs without " + kFault}));
}

TEST_CASE("Shell: unset, export -n, env -i and srun --export lists", "[shell]") {
  const std::string both = "export TORCH_NCCL_ASYNC_ERROR_HANDLING=1 PYTHONFAULTHANDLER=1\n";
  CHECK(locs(text("a.sh", "#!/bin/bash\n" + both + "unset PYTHONFAULTHANDLER\ntorchrun t.py\n")) ==
        Locs{"4:1"});
  CHECK(locs(text("a.sh", "#!/bin/bash\n" + both + "export -n PYTHONFAULTHANDLER\ntorchrun t.py\n")) ==
        Locs{"4:1"});
  CHECK(locs(text("a.sh", "#!/bin/bash\n" + both + "env -i PATH=/usr/bin torchrun t.py\n")) ==
        Locs{"3:22", "3:22"}); // at the launcher, after env(1)
  // A list without ALL passes only the names in it.
  CHECK(locs(text("a.sh", "#!/bin/bash\n" + both +
                              "srun --export=PYTHONFAULTHANDLER,NCCL_DEBUG=INFO python t.py\n")) ==
        Locs{"3:1"});
  CHECK(locs(text("a.sh", "#!/bin/bash\n" + both + "export SLURM_EXPORT_ENV=NONE\nsrun python t.py\n")) ==
        Locs{"4:1", "4:1"});
  CHECK(text("a.sh", "#!/bin/bash\nsrun --export \"ALL,TORCH_NCCL_ASYNC_ERROR_HANDLING=1,PYTHONFAULTHANDLER=1\" "
                     "python t.py\n")
            .findings.empty());
  // The value's position inside --export: column of the name.
  Result off = text("a.sh", "#!/bin/bash\nexport PYTHONFAULTHANDLER=1\n"
                            "srun --export=ALL,TORCH_NCCL_ASYNC_ERROR_HANDLING=0 python t.py\n");
  CHECK(locs(off) == Locs{"3:19"});
}

TEST_CASE("Shell: comments, quotes and run-time values", "[shell]") {
  // A # inside quotes is not a comment; a # after a word starts one.
  CHECK(text("a.sh", "#!/bin/bash\nexport PYTHONFAULTHANDLER=\"#1\" TORCH_NCCL_ASYNC_ERROR_HANDLING=1\n"
                     "torchrun t.py\n")
            .findings.empty());
  CHECK(locs(text("a.sh", "#!/bin/bash\nexport PYTHONFAULTHANDLER=1 # TORCH_NCCL_ASYNC_ERROR_HANDLING=1\n"
                          "torchrun t.py\n")) == Locs{"3:1"});
  // A value computed at run time is never called wrong.
  CHECK(text("a.sh", "#!/bin/bash\nexport PYTHONFAULTHANDLER=$FH TORCH_NCCL_ASYNC_ERROR_HANDLING=${MODE:-0}\n"
                     "torchrun t.py\n")
            .findings.empty());
  // `export NAME` passes a value from the environment the script runs in.
  CHECK(text("a.sh", "#!/bin/bash\nexport PYTHONFAULTHANDLER TORCH_NCCL_ASYNC_ERROR_HANDLING\ntorchrun t.py\n")
            .findings.empty());
  // A here-document with <<- and a quoted delimiter; the command after it is real.
  CHECK(locs(text("a.sh", "#!/bin/bash\ncat <<-'EOF' > x\n\texport PYTHONFAULTHANDLER=1\n\tEOF\n"
                          "export TORCH_NCCL_ASYNC_ERROR_HANDLING=1\ntorchrun t.py\n")) == Locs{"6:1"});
  // `python train.py` alone is one process, not a distributed launch.
  CHECK(text("a.sh", "#!/bin/bash\npython train.py\n").findings.empty());
}

TEST_CASE("Shell: an unterminated quote is an error", "[shell][errors]") {
  Result r = text("a.sh", "#!/bin/bash\nexport PYTHONFAULTHANDLER=\"1\ntorchrun t.py\n");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].line == 2);
  CHECK(r.errors[0].column == 27);
  CHECK(r.errors[0].message.find("unterminated quote") != std::string::npos);
}

// ===========================================================================
// Target PyTorch version
// ===========================================================================

TEST_CASE("parseTorchVersion", "[version]") {
  Options o;
  CHECK(parseTorchVersion("2.3", o));
  CHECK((o.torchMajor == 2 && o.torchMinor == 3));
  CHECK(parseTorchVersion("1.13.1", o));
  CHECK((o.torchMajor == 1 && o.torchMinor == 13));
  CHECK(parseTorchVersion("2.2.0+cu121", o));
  CHECK((o.torchMajor == 2 && o.torchMinor == 2));
  CHECK(parseTorchVersion(" v2.4.0a0 ", o));
  CHECK((o.torchMajor == 2 && o.torchMinor == 4));
  CHECK(parseTorchVersion("2.5.0.dev20240801", o));
  CHECK(parseTorchVersion("2.1rc1", o));
  CHECK((o.torchMajor == 2 && o.torchMinor == 1));
  Options untouched;
  for (const char *bad : {"", "2", "2.", ".3", "two.three", "2.x", "2.3x", "0.0", "-1.2", "2,3", "12345.1"}) {
    INFO(bad);
    CHECK_FALSE(parseTorchVersion(bad, untouched));
  }
  CHECK((untouched.torchMajor == 0 && untouched.torchMinor == 0));
}

// ===========================================================================
// File kinds and bad input
// ===========================================================================

TEST_CASE("File kind: content first, the extension as a hint", "[kind]") {
  CHECK(detectFileKind("job.txt", "apiVersion: v1\nkind: Pod\n") == FileKind::KubernetesManifest);
  CHECK(detectFileKind("run", "#!/bin/bash\n#SBATCH -N 2\nsrun x\n") == FileKind::SlurmScript);
  CHECK(detectFileKind("run", "#!/usr/bin/env bash\ntorchrun t.py\n") == FileKind::ShellScript);
  CHECK(detectFileKind("job.yaml", "#!/bin/sh\ntorchrun t.py\n") == FileKind::ShellScript);
  CHECK(detectFileKind("x.sh", "torchrun t.py\n") == FileKind::ShellScript);
  CHECK(detectFileKind("x.sbatch", "srun t.py\n") == FileKind::SlurmScript);
  CHECK(detectFileKind("train.py", "#!/usr/bin/env python3\nimport torch\n") == FileKind::Unknown);
  CHECK(detectFileKind("x.sh", "#!/usr/bin/env python3\n") == FileKind::Unknown);
  CHECK(detectFileKind("README", "torchrun t.py\n") == FileKind::Unknown);
  CHECK(std::string(fileKindName(FileKind::SlurmScript)) == "slurm");
}

TEST_CASE("Unknown file type: an error naming the file", "[errors]") {
  Result r = check("notes.txt");
  CHECK(r.kind == FileKind::Unknown);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].file == fixture("notes.txt"));
  CHECK(r.errors[0].message.find("cannot tell what kind of launch file") != std::string::npos);
  CHECK(r.findings.empty());
}

TEST_CASE("Binary file: an error, no crash", "[errors]") {
  const std::string path = "launch_tests_binary.bin";
  {
    std::ofstream out(path, std::ios::binary);
    const char bytes[] = {'\x7f', 'E', 'L', 'F', '\n', '\0', '\x01', 'a', 'p', 'i', '\n'};
    out.write(bytes, sizeof bytes);
  }
  Result r = checkLaunchFile(path, Options{});
  std::remove(path.c_str());
  CHECK(r.kind == FileKind::Unknown);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].file == path);
  CHECK(r.errors[0].message.find("binary file") != std::string::npos);
  CHECK(r.errors[0].line == 2);
  // Even a .yaml name with manifest text after the NUL.
  Result t = checkLaunchText("x.yaml", std::string("apiVersion: v1\nkind: Pod\0", 26), Options{});
  REQUIRE(t.errors.size() == 1);
  CHECK(t.errors[0].message.find("binary file") != std::string::npos);
}

TEST_CASE("Missing file and directory: an error naming the file", "[errors]") {
  Result r = checkLaunchFile(fixture("does-not-exist.yaml"), Options{});
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].file == fixture("does-not-exist.yaml"));
  CHECK(r.errors[0].message.find("cannot open") != std::string::npos);
  Result d = checkLaunchFile(fixture(""), Options{});
  REQUIRE(d.errors.size() == 1);
  CHECK(d.errors[0].message.find("directory") != std::string::npos);
}

TEST_CASE("Deeply nested YAML does not crash", "[errors]") {
  std::string deep = "apiVersion: v1\nkind: Pod\nspec: ";
  for (int i = 0; i < 100000; ++i)
    deep += "[";
  Result r = text("deep.yaml", deep);
  CHECK(r.kind == FileKind::KubernetesManifest);
  CHECK_FALSE(r.errors.empty());
}

// Not run by default: prints what the checker reports for DDPLINT_DUMP (a file)
// with DDPLINT_DUMP_TORCH (a version), for writing expectations.
TEST_CASE("dump", "[.dump]") {
  const char *file = std::getenv("DDPLINT_DUMP");
  const char *torch = std::getenv("DDPLINT_DUMP_TORCH");
  REQUIRE(file);
  Result r = checkLaunchFile(file, version(torch ? torch : ""));
  for (const auto &e : r.errors)
    std::printf("error %u:%u %s\n", e.line, e.column, e.message.c_str());
  for (const auto &f : r.findings)
    std::printf("%s %u:%u %s\n", f.level == Level::Hazard ? "HAZARD" : "policy", f.line, f.column,
                f.message.c_str());
  for (const auto &s : r.skipped)
    std::printf("skipped %u:%u %s: %s\n", s.line, s.column, s.what.c_str(), s.reason.c_str());
}

// ===========================================================================
// Issue 11: facts from rules/nccl-async-error.yaml, two levels, torch jobs only
// ===========================================================================

namespace {

size_t count(const Result &r, Level level) {
  size_t n = 0;
  for (const auto &f : r.findings)
    n += f.level == level;
  return n;
}

bool skippedWith(const Result &r, const std::string &part) {
  for (const auto &s : r.skipped)
    if ((s.what + ": " + s.reason).find(part) != std::string::npos)
      return true;
  return false;
}

bool hasLevel(const Result &r, unsigned line, unsigned col, Level level,
              std::initializer_list<std::string> parts) {
  for (const auto &f : r.findings) {
    if (f.line != line || f.column != col || f.level != level)
      continue;
    bool all = true;
    for (const auto &p : parts)
      all &= f.message.find(p) != std::string::npos;
    if (all)
      return true;
  }
  return false;
}

} // namespace

TEST_CASE("Kubernetes: only torch distributed containers; the image tag gives the version", "[k8s][issue11]") {
  Result r = check("k8s-workloads.yaml");
  CHECK(r.errors.empty());
  // etcd and sleep: skipped, with the reason.
  CHECK(skippedWith(r, "container 'etcd' in Pod 'etcd': no torch distributed workload"));
  CHECK(skippedWith(r, "container 'sleep' in Pod 'sleeper': no torch distributed workload"));
  // A GPU python job on pytorch/pytorch:1.13.1: the default is off and no launcher sets it.
  CHECK(hasLevel(r, 30, 11, Level::Hazard,
                 {"does not set " + kLegacy, "PyTorch 1.13 (from the image pytorch/pytorch:1.13.1",
                  "default 0 (NoHandling), off", "no launcher sets it", "add env " + kLegacy + "=1"}));
  // torchrun exports it on 1.13: only the policy note, naming torchrun.
  CHECK(hasLevel(r, 48, 11, Level::Policy,
                 {"does not set " + kLegacy + " explicitly", "torchrun sets " + kLegacy + "=1"}));
  CHECK(count(r, Level::Hazard) == 1);
  CHECK(r.findings.size() == 2);
}

TEST_CASE("Gloo-only, MPI and CPU-only PyTorchJobs get no NCCL finding", "[k8s][issue11]") {
  Result r = check("pytorchjob-backends.yaml");
  CHECK(r.errors.empty());
  CHECK(r.findings.empty());
  CHECK(skippedWith(r, "PyTorchJob 'gloo-mnist' (Master): selects the gloo backend"));
  CHECK(skippedWith(r, "PyTorchJob 'mpi-job' (Worker): selects the mpi backend"));
  CHECK(skippedWith(r, "PyTorchJob 'cpu-only' (Worker): requests no GPU"));
}

TEST_CASE("Kubeflow Trainer: TrainJob trainer and torch ClusterTrainingRuntime; MPI runtime skipped",
          "[k8s][issue11]") {
  Result r = check("trainjob.yaml");
  CHECK(r.errors.empty());
  // Unknown version: 2.2 or newer assumed, default 3: policy, and the message says so.
  CHECK(hasLevel(r, 11, 5, Level::Policy,
                 {"the trainer of TrainJob 'llm'", "assumed: no --torch-version given",
                  "defaults " + kCurrent + " to 3 (SkipCleanUp)"}));
  // The torch runtime on a 2.1 image sets the legacy name to 0: a hazard.
  CHECK(hasLevel(r, 40, 28, Level::Hazard, {kLegacy + "=0", "PyTorch 2.1 (from the image"}));
  CHECK(skippedWith(r, "ClusterTrainingRuntime 'mpi-distributed': mlPolicy is not torch (mpi)"));
  // With 1.13 the TrainJob's python entrypoint is a hazard.
  Result old = check("trainjob.yaml", "1.13");
  CHECK(hasLevel(old, 11, 5, Level::Hazard, {"PyTorch 1.13 (--torch-version)", "no launcher sets it"}));
}

TEST_CASE("Policy notes can be turned off; hazards stay", "[k8s][issue11]") {
  Options o;
  o.requireExplicit = false;
  Result r = checkLaunchFile(fixture("trainjob.yaml"), o);
  CHECK(count(r, Level::Policy) == 0);
  CHECK(count(r, Level::Hazard) == 1);
}

TEST_CASE("Non-manifest YAML is skipped, not an error; Helm templates are masked", "[k8s][issue11]") {
  Result hydra = check("hydra-config.yaml");
  CHECK(hydra.errors.empty());
  CHECK(hydra.findings.empty());
  CHECK(skippedWith(hydra, "not a Kubernetes manifest"));
  Result notManifest = check("not-a-manifest.yaml");
  CHECK(notManifest.errors.empty());
  Result helm = check("helm-deployment.yaml");
  CHECK(helm.errors.empty());
  CHECK(skippedWith(helm, "Helm template: checked with its {{ ... }} directives masked"));
  CHECK(hasLevel(helm, 17, 15, Level::Hazard, {kCurrent + "=0", "turns NCCL async error handling off"}));
  // A real manifest that does not parse is still an error (exit 2).
  Result broken = check("malformed.yaml");
  CHECK(!broken.errors.empty());
}

TEST_CASE("Sourced files of the repository are followed; others give a note", "[slurm][issue11]") {
  Result repo = check("sourced-repo.slurm", "1.13");
  // env/common.sh sets neither variable: srun python train.py on 1.13 is a hazard.
  CHECK(hasLevel(repo, 4, 1, Level::Hazard, {"runs without " + kLegacy, "PyTorch 1.13"}));
  CHECK(skippedWith(repo, "followed:"));
  Result sets = check("sourced-sets.slurm", "1.13");
  // env/nccl.sh sets only TORCH_NCCL_ASYNC_ERROR_HANDLING, which 1.13 does not read.
  CHECK(hasLevel(sets, 4, 1, Level::Hazard, {kCurrent + " is set, but PyTorch 1.13", "does not read it"}));
  Result sets22 = check("sourced-sets.slurm");
  CHECK(sets22.findings.empty()); // 2.2+: env/nccl.sh sets both explicitly
  Result missing = check("sourced-missing.slurm", "1.13");
  CHECK(count(missing, Level::Hazard) == 0);
  CHECK(hasLevel(missing, 3, 8, Level::Policy, {"not checked: sources /opt/cluster/env.sh"}));
}

TEST_CASE("Launchers behind variables, uv run, \"$PYTHON_BIN\" -m, accelerate module, sbatch heredoc",
          "[shell][issue11]") {
  Result var = check("launcher-var.sh", "1.13");
  CHECK(hasLevel(var, 6, 1, Level::Policy, {"python -m torch.distributed.run at line 6", "torchrun sets"}));
  Result var12 = check("launcher-var.sh", "1.8"); // torchrun exports nothing before 1.9
  CHECK(hasLevel(var12, 6, 1, Level::Hazard, {"runs without " + kLegacy}));
  Result ind = check("indirect-python.sh");
  CHECK(hasLevel(ind, 3, 8, Level::Hazard, {kLegacy + "=0", "uv run"} ) ==
        false); // the label is the python launcher, not uv
  CHECK(hasLevel(ind, 3, 8, Level::Hazard, {kLegacy + "=0", "python -m torch.distributed.run at line 4"}));
  Result ind13 = check("indirect-python.sh", "1.13");
  CHECK(count(ind13, Level::Hazard) == 1); // the one setting, reported once for three launches
  Result heredoc = check("sbatch-heredoc.sh", "1.13");
  CHECK(hasLevel(heredoc, 6, 1, Level::Hazard, {"the srun at line 6", "runs without " + kLegacy}));
}

TEST_CASE("Version facts: 2.0/2.1 default on, 2.2 renamed, before 1.7 nothing to set", "[version][issue11]") {
  const std::string job = "#!/bin/bash\nsrun python train.py\n";
  Result v21 = text("t.sh", job, "2.1");
  CHECK(hasLevel(v21, 2, 1, Level::Policy, {"PyTorch 2.1 (--torch-version) defaults " + kLegacy + " to 1 (TearDown)"}));
  Result v113 = text("t.sh", job, "1.13");
  CHECK(hasLevel(v113, 2, 1, Level::Hazard, {"default 0 (NoHandling)", "srun does not set it"}));
  Result v16 = text("t.sh", job, "1.6");
  CHECK(hasLevel(v16, 2, 1, Level::Hazard, {"has no NCCL async error handling"}));
  Result dep = text("t.sh", "#!/bin/bash\nexport NCCL_ASYNC_ERROR_HANDLING=1\nexport PYTHONFAULTHANDLER=1\nsrun python t.py\n");
  CHECK(hasLevel(dep, 2, 8, Level::Policy, {"deprecated since PyTorch 2.2", "rename it to " + kCurrent}));
  CHECK(count(dep, Level::Hazard) == 0);
  // The new name alone on 2.1 is not read, but 2.1's default is on: a note, not a hang.
  Result unread = text("t.sh", "#!/bin/bash\nexport TORCH_NCCL_ASYNC_ERROR_HANDLING=1\nsrun python t.py\n", "2.1");
  CHECK(hasLevel(unread, 3, 1, Level::Policy, {"does not read it"}));
  CHECK(count(unread, Level::Hazard) == 0);
  // Invalid values are hazards on every version.
  Result bad = text("t.sh", "#!/bin/bash\nexport TORCH_NCCL_ASYNC_ERROR_HANDLING=yes\nsrun python t.py\n");
  CHECK(hasLevel(bad, 2, 8, Level::Hazard, {"is not a valid value"}));
}

TEST_CASE("A script without a launch command says so when asked", "[shell][issue11]") {
  Result r = check("no-launch.sh");
  CHECK(r.findings.empty());
  CHECK(skippedWith(r, "no launch command"));
}
// ===========================================================================
// Behaviours tested before issue 11, adapted: hazard warning vs policy note,
// only torch distributed containers (a launcher, or python with a GPU).
// ===========================================================================

TEST_CASE("PyTorchJob without the variables: per replica type, at the container", "[k8s]") {
  Result r = check("pytorchjob-missing.yaml");
  CHECK(r.kind == FileKind::KubernetesManifest);
  CHECK(r.errors.empty());
  // The Service document beside the job contributes nothing.  2.2+ assumed:
  // torchrun (Master) and the default 3 (Worker) turn it on, so notes only.
  CHECK(locs(r) == Locs{"22:15", "22:15", "31:15", "31:15"});
  CHECK(count(r, Level::Hazard) == 0);
  CHECK(hasLevel(r, 22, 15, Level::Policy,
                 {"container 'trainer' in PyTorchJob 'bert' (Master) does not set " + kCurrent + " explicitly",
                  "torchrun sets " + kCurrent + "=1", "add env " + kCurrent + "=1"}));
  CHECK(hasLevel(r, 22, 15, Level::Policy, {"(Master) does not set " + kFault, "add env " + kFault + "=1"}));
  // Reported at the `name:` key even when it is not the container's first key.
  CHECK(hasLevel(r, 31, 15, Level::Policy,
                 {"'trainer' in PyTorchJob 'bert' (Worker) does not set " + kCurrent + " explicitly",
                  "defaults " + kCurrent + " to 3 (SkipCleanUp)"}));
  CHECK(hasLevel(r, 31, 15, Level::Policy, {"(Worker) does not set " + kFault}));
  for (const auto &f : r.findings) {
    CHECK(f.ruleId == "ddp-launch-env");
    CHECK(f.file == fixture("pytorchjob-missing.yaml"));
  }
  // On 1.13 the Worker's plain python (no launcher, default 0) is the hazard;
  // the Master's torchrun exports the variable, a note.
  Result old = check("pytorchjob-missing.yaml", "1.13");
  CHECK(locs(old) == Locs{"22:15", "22:15", "31:15", "31:15"});
  CHECK(hasLevel(old, 31, 15, Level::Hazard,
                 {"(Worker) does not set " + kLegacy + ":", "default 0 (NoHandling), off", "no launcher sets it",
                  "hangs the other ranks", "add env " + kLegacy + "=1"}));
  CHECK(hasLevel(old, 22, 15, Level::Policy, {"(Master) does not set " + kLegacy + " explicitly"}));
  CHECK(count(old, Level::Hazard) == 1);
}

TEST_CASE("Job: value 0, empty faulthandler, deprecated name, invalid value; envFrom", "[k8s]") {
  Result r = check("job-values.yaml");
  CHECK(r.errors.empty());
  CHECK(locs(r) == Locs{"13:15", "15:15", "21:15", "38:15"});
  // Value 0 beats torchrun's export (an existing value is kept since 1.12): a hazard.
  CHECK(hasLevel(r, 13, 15, Level::Hazard,
                 {kCurrent + "=0 in container 'off' in Job 'finetune' turns NCCL async error handling off",
                  "hangs the other ranks", "set " + kCurrent + "=1"}));
  CHECK(hasLevel(r, 15, 15, Level::Policy, {kFault + " is empty in container 'off'", "set it to 1"}));
  // PYTHONFAULTHANDLER=0 enables faulthandler (any non-empty value does): no finding at 23.
  CHECK(hasLevel(r, 21, 15, Level::Policy,
                 {kLegacy + " in container 'legacy'", "deprecated since PyTorch 2.2", "rename it to " + kCurrent}));
  // envFrom hides "missing" but not a wrong value written in env.
  CHECK(hasLevel(r, 38, 15, Level::Hazard,
                 {kCurrent + "=yes in container 'from-configmap-but-off'", "not a valid value"}));
  CHECK(count(r, Level::Hazard) == 2);
  // 'from-configmap' (envFrom), 'computed' (valueFrom, $(VAR)) and 'in-script'
  // (the command sets both) have no finding; the ConfigMap's "0" is not a container.
  for (const auto &f : r.findings) {
    CHECK(f.message.find("'from-configmap'") == std::string::npos);
    CHECK(f.message.find("'computed'") == std::string::npos);
    CHECK(f.message.find("'in-script'") == std::string::npos);
    CHECK(f.line < 54);
  }
  // All six containers run torchrun: none is skipped.
  CHECK(r.skipped.empty());
}

TEST_CASE("A Pod inside a List; value 2 enables; init containers are not ranks", "[k8s]") {
  Result r = check("pod-and-list.yaml");
  CHECK(r.errors.empty());
  // TORCH_NCCL_ASYNC_ERROR_HANDLING=2 (CleanUpOnly) is on: only the faulthandler note.
  CHECK(locs(r) == Locs{"16:11"});
  CHECK(hasLevel(r, 16, 11, Level::Policy, {"container 'main' in Pod 'probe-' does not set " + kFault}));
  // fetch-data (python + GPU, nothing set) is an init container: not judged, not even skipped.
  for (const auto &f : r.findings)
    CHECK(f.message.find("fetch-data") == std::string::npos);
  CHECK_FALSE(skippedWith(r, "fetch-data"));
}

TEST_CASE("RayCluster: the head sets both, the worker group sets neither", "[k8s][ray]") {
  Result r = check("raycluster.yaml");
  CHECK(r.errors.empty());
  CHECK(locs(r) == Locs{"24:15", "24:15"});
  CHECK(hasLevel(r, 24, 15, Level::Policy,
                 {"container 'ray-worker' in RayCluster 'train-cluster' (worker group 'gpu') does not set " +
                      kCurrent + " explicitly",
                  "torchrun sets " + kCurrent + "=1"}));
  CHECK(hasLevel(r, 24, 15, Level::Policy, {"(worker group 'gpu') does not set " + kFault}));
  // The CPU group runs no torch: skipped with the reason, no finding.
  CHECK(skippedWith(r, "container 'ray-cpu-worker' in RayCluster 'train-cluster' (worker group 'cpu'): "
                       "no torch distributed workload"));
  // The head, which sets both, is checked (not skipped) and has nothing.
  CHECK_FALSE(skippedWith(r, "ray-head"));
  // A value of 0 in the head would be a hazard at its env entry.
  std::string text0;
  {
    std::ifstream in(fixture("raycluster.yaml"));
    text0.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string one = "{name: TORCH_NCCL_ASYNC_ERROR_HANDLING, value: \"1\"}";
  REQUIRE(text0.find(one) != std::string::npos);
  text0.replace(text0.find(one), one.size(), "{name: TORCH_NCCL_ASYNC_ERROR_HANDLING, value: \"0\"}");
  Result off = text("raycluster.yaml", text0);
  CHECK(locs(off) == Locs{"15:18", "24:15", "24:15"});
  CHECK(hasLevel(off, 15, 18, Level::Hazard, {kCurrent + "=0 in container 'ray-head'"}));
}

TEST_CASE("Malformed YAML: an error at its line:col, the other documents still checked", "[k8s][errors]") {
  Result r = check("malformed.yaml");
  CHECK(r.kind == FileKind::KubernetesManifest);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].file == fixture("malformed.yaml"));
  // The flow map opened on line 17 is never closed; yaml-cpp notices on line 18.
  CHECK(r.errors[0].line == 18);
  CHECK(r.errors[0].column == 5);
  CHECK(r.errors[0].message.find("malformed YAML") != std::string::npos);
  // The documents before and after the broken one are checked.
  CHECK(locs(r) == Locs{"9:11", "9:11", "26:7"});
  CHECK(hasLevel(r, 9, 11, Level::Policy, {"container 'a' in Job 'first' does not set " + kCurrent}));
  CHECK(hasLevel(r, 26, 7, Level::Policy, {"container 'c' in Pod 'third' does not set " + kCurrent}));
}

TEST_CASE("A stray non-Kubernetes document beside real objects is skipped, the others checked",
          "[k8s][errors]") {
  Result mixed = text("m.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                                "  containers:\n  - name: c\n    command: [torchrun, t.py]\n---\nfoo: bar\n");
  CHECK(mixed.kind == FileKind::KubernetesManifest);
  CHECK(mixed.errors.empty());
  CHECK(locs(mixed) == Locs{"6:5", "6:5"});
  CHECK(hasLevel(mixed, 6, 5, Level::Policy, {"container 'c' in Pod 'p' does not set " + kCurrent}));
}

TEST_CASE("JSON manifests, CRLF line ends and a byte order mark", "[k8s]") {
  Result json = text("pod.json", "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"},\n"
                                 " \"spec\": {\"containers\": [{\"name\": \"c\", \"command\": [\"torchrun\", \"t.py\"],\n"
                                 "   \"env\": [{\"name\": \"PYTHONFAULTHANDLER\", \"value\": \"1\"}]}]}}\n",
                     "1.13");
  CHECK(json.kind == FileKind::KubernetesManifest);
  CHECK(json.errors.empty());
  CHECK(locs(json) == Locs{"2:27"}); // the key's opening quote
  CHECK(hasLevel(json, 2, 27, Level::Policy, {"does not set " + kLegacy + " explicitly", "torchrun sets"}));
  Result crlf = text("p.yaml", "\xEF\xBB\xBF" "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: p\r\n"
                               "spec:\r\n  containers:\r\n    - name: c\r\n      command: [torchrun, t.py]\r\n"
                               "      env:\r\n"
                               "        - name: TORCH_NCCL_ASYNC_ERROR_HANDLING\r\n          value: \"0\"\r\n");
  CHECK(crlf.kind == FileKind::KubernetesManifest);
  CHECK(crlf.errors.empty());
  CHECK(locs(crlf) == Locs{"7:7", "10:11"});
  CHECK(hasLevel(crlf, 10, 11, Level::Hazard, {kCurrent + "=0 in container 'c' in Pod 'p'"}));
  CHECK(hasLevel(crlf, 7, 7, Level::Policy, {"does not set " + kFault}));
  // No carriage return leaks into a message.
  for (const auto &f : crlf.findings)
    CHECK(f.message.find('\r') == std::string::npos);
}

TEST_CASE("Slurm: missing at the first launch command only; srun hostname and one-task srun are not launches",
          "[slurm]") {
  Result r = check("train-missing.slurm");
  CHECK(r.kind == FileKind::SlurmScript);
  CHECK(r.errors.empty());
  // The commented-out export on line 7 does not count; PYTHONFAULTHANDLER is
  // exported.  Lines 9 (hostname) and 10 (--ntasks=1) are not launches; 12 and
  // 13 repeat the note of 11.
  CHECK(locs(r) == Locs{"11:1"});
  CHECK(hasLevel(r, 11, 1, Level::Policy,
                 {"the srun at line 11 does not set " + kCurrent + " explicitly", "torchrun sets",
                  "export " + kCurrent + "=1 before it"}));
  // Before torchrun exported it (1.8): a hazard, again only at the first launch.
  Result old = check("train-missing.slurm", "1.8");
  CHECK(locs(old) == Locs{"11:1"});
  CHECK(hasLevel(old, 11, 1, Level::Hazard,
                 {"the srun at line 11 runs without " + kLegacy, "torchrun does not set it",
                  "export " + kLegacy + "=1 before it"}));
}

TEST_CASE("Slurm: a note at one launch does not hide a later launch's hazard", "[slurm]") {
  // 1.13: torchrun (line 11) exports the variable, a note; the plain python of
  // line 13 gets nothing from a launcher, the hazard.  (This once reported the
  // note and swallowed the hazard: exit 0 for a job that hangs.)
  Result r = check("train-missing.slurm", "1.13");
  CHECK(locs(r) == Locs{"11:1", "13:1"});
  CHECK(hasLevel(r, 11, 1, Level::Policy, {"does not set " + kLegacy + " explicitly", "torchrun sets"}));
  CHECK(hasLevel(r, 13, 1, Level::Hazard,
                 {"the srun at line 13 runs without " + kLegacy, "srun does not set it"}));
  // Without the policy level the hazard is the same.
  Options o;
  REQUIRE(parseTorchVersion("1.13", o));
  o.requireExplicit = false;
  Result hazards = checkLaunchFile(fixture("train-missing.slurm"), o);
  CHECK(locs(hazards) == Locs{"13:1"});
}

TEST_CASE("Slurm: srun --export=NONE drops what the script exported", "[slurm]") {
  Result r = check("export-none.slurm", "1.13");
  // Line 6 (--export=ALL) gets both exports: nothing there.
  CHECK(locs(r) == Locs{"5:1", "5:1"});
  CHECK(hasLevel(r, 5, 1, Level::Hazard,
                 {"runs without " + kLegacy, "--export=ALL," + kLegacy + "=1", "srun does not set it"}));
  CHECK(hasLevel(r, 5, 1, Level::Policy, {"runs without " + kFault, "--export=ALL," + kFault + "=1"}));
  // 2.2+ (default 3): the variable dropped is only a note.
  Result now = check("export-none.slurm");
  CHECK(locs(now) == Locs{"5:1", "5:1"});
  CHECK(count(now, Level::Hazard) == 0);
  CHECK(hasLevel(now, 5, 1, Level::Policy, {"does not set " + kCurrent + " explicitly", "--export=ALL," + kCurrent}));
}

TEST_CASE("Slurm: a sourced file may set them, but a wrong value written here is still wrong", "[slurm]") {
  Result r = check("sourced.slurm");
  CHECK(locs(r) == Locs{"3:8", "4:8"});
  // /shared/cluster-env.sh is not in the repository: nothing missing, a note says so.
  CHECK(hasLevel(r, 3, 8, Level::Policy, {"not checked: sources /shared/cluster-env.sh"}));
  CHECK(hasLevel(r, 4, 8, Level::Hazard,
                 {kCurrent + "=0 for the srun at line 5 turns NCCL async error handling off"}));
  CHECK(count(r, Level::Hazard) == 1);
  for (const auto &f : r.findings)
    CHECK(f.message.find(kFault) == std::string::npos);
}

TEST_CASE("Shell: a VAR=val prefix applies to its own command only", "[shell]") {
  Result r = check("launch-prefix.sh");
  CHECK(r.kind == FileKind::ShellScript);
  CHECK(locs(r) == Locs{"4:35", "5:1"});
  CHECK(hasLevel(r, 4, 35, Level::Policy, {"the torchrun at line 4 runs without " + kFault}));
  // Line 4's prefix does not reach line 5.
  CHECK(hasLevel(r, 5, 1, Level::Policy,
                 {"the python -m torch.distributed.run at line 5 does not set " + kCurrent + " explicitly"}));
  // A prefix 0 is a hazard at the prefix, for that command.
  Result off = text("p.sh", "#!/bin/bash\nexport PYTHONFAULTHANDLER=1\n"
                            "TORCH_NCCL_ASYNC_ERROR_HANDLING=0 torchrun t.py\ntorchrun t.py\n");
  CHECK(locs(off) == Locs{"3:1", "4:1"});
  CHECK(hasLevel(off, 3, 1, Level::Hazard, {kCurrent + "=0 for the torchrun at line 3"}));
  CHECK(hasLevel(off, 4, 1, Level::Policy, {"the torchrun at line 4 does not set " + kCurrent}));
}

TEST_CASE("Shell: .sh without a shebang, ${VAR:=1} defaults, accelerate launch", "[shell]") {
  Result r = check("accelerate.sh");
  CHECK(r.kind == FileKind::ShellScript);
  // `: "${PYTHONFAULTHANDLER:=1}"` sets it: no faulthandler finding.
  CHECK(locs(r) == Locs{"2:1"});
  CHECK(hasLevel(r, 2, 1, Level::Policy,
                 {"the accelerate launch at line 2 does not set " + kCurrent + " explicitly",
                  "accelerate launch sets " + kCurrent + "=1"}));
  // Before accelerate's torchrun exported it (1.8): a hazard.
  Result old = check("accelerate.sh", "1.8");
  CHECK(locs(old) == Locs{"2:1"});
  CHECK(hasLevel(old, 2, 1, Level::Hazard,
                 {"the accelerate launch at line 2 runs without " + kLegacy, "accelerate launch does not set it"}));
}

TEST_CASE("Before 2.2 the legacy name is right and the new name alone is not read", "[version]") {
  Result old = check("versions.yaml", "1.13.1");
  CHECK(locs(old) == Locs{"16:7", "41:11", "45:7"});
  CHECK(hasLevel(old, 16, 7, Level::Hazard,
                 {"container 'current-only' in Pod 'versions' does not set " + kLegacy,
                  kCurrent + " is set, but PyTorch 1.13 (--torch-version) does not read it", "add env " + kLegacy + "=1"}));
  CHECK(hasLevel(old, 41, 11, Level::Hazard,
                 {kLegacy + "=0 in container 'legacy-off' in Pod 'versions' turns NCCL async error handling off"}));
  CHECK(hasLevel(old, 45, 7, Level::Hazard,
                 {"container 'neither' in Pod 'versions' does not set " + kLegacy,
                  "PyTorch 1.13 (--torch-version) reads " + kLegacy + " with default 0 (NoHandling), off",
                  "add env " + kLegacy + "=1"}));
  // 'legacy-only' and 'both' are right for 1.13: no deprecation there.
  for (const auto &f : old.findings)
    CHECK(f.message.find("deprecated") == std::string::npos);

  // 2.1 still reads only the legacy name, but its default is 1 (TearDown):
  // the unread new name and the missing one are notes; 0 stays a hazard.
  Result v21 = check("versions.yaml", "2.1");
  CHECK(locs(v21) == Locs{"16:7", "41:11", "45:7"});
  CHECK(hasLevel(v21, 16, 7, Level::Policy, {kCurrent + " is set, but PyTorch 2.1 (--torch-version) does not read it"}));
  CHECK(hasLevel(v21, 41, 11, Level::Hazard, {kLegacy + "=0", "set " + kLegacy + "=1"}));
  CHECK(hasLevel(v21, 45, 7, Level::Policy, {"defaults " + kLegacy + " to 1 (TearDown)"}));
  CHECK(count(v21, Level::Hazard) == 1);
}

TEST_CASE("From 2.2, and when the version is unknown, the legacy name is deprecated", "[version]") {
  for (const std::string v : {"", "2.2", "2.3.0+cu121"}) {
    INFO("torch version '" << v << "'");
    Result r = check("versions.yaml", v);
    CHECK(locs(r) == Locs{"12:11", "32:11", "41:11", "45:7"});
    CHECK(hasLevel(r, 12, 11, Level::Policy,
                   {kLegacy + " in container 'legacy-only'", "deprecated since PyTorch 2.2", "rename it to " + kCurrent}));
    CHECK(hasLevel(r, 32, 11, Level::Policy, {kLegacy + " in container 'both'", "already set; remove it"}));
    CHECK(hasLevel(r, 41, 11, Level::Hazard, {kLegacy + "=0", "set " + kCurrent + "=1 instead"}));
    CHECK(hasLevel(r, 45, 7, Level::Policy,
                   {"does not set " + kCurrent + " explicitly", "to 3 (SkipCleanUp)", "add env " + kCurrent + "=1"}));
    CHECK(count(r, Level::Hazard) == 1);
    // A message that states a version fact says when 2.2+ is only assumed, and
    // only then.
    const std::string assumed = "PyTorch 2.2 or newer (assumed: no --torch-version given)";
    if (v.empty()) {
      CHECK(hasLevel(r, 12, 11, Level::Policy, {assumed}));
      CHECK(hasLevel(r, 41, 11, Level::Hazard, {assumed}));
      CHECK(hasLevel(r, 45, 7, Level::Policy, {assumed}));
    }
    for (const auto &f : r.findings)
      if (!v.empty())
        CHECK(f.message.find("assum") == std::string::npos);
  }
}

TEST_CASE("The version of a shell target", "[version]") {
  Result r = check("train-missing.slurm", "1.13");
  CHECK(hasLevel(r, 11, 1, Level::Policy, {"export " + kLegacy + "=1 before it"}));
  CHECK(hasLevel(r, 13, 1, Level::Hazard, {"PyTorch 1.13 (--torch-version)", "export " + kLegacy + "=1 before it"}));
  // launch-good.sh sets only the new name: right from 2.2, unread before.
  CHECK(check("launch-good.sh").findings.empty());
  Result v113 = check("launch-good.sh", "1.13");
  CHECK(locs(v113) == Locs{"3:39"});
  CHECK(hasLevel(v113, 3, 39, Level::Policy,
                 {"the python -m torch.distributed.launch at line 3 does not set " + kLegacy,
                  kCurrent + " is set, but PyTorch 1.13 (--torch-version) does not read it", "torchrun sets"}));
  Result v18 = check("launch-good.sh", "1.8");
  CHECK(locs(v18) == Locs{"3:39"});
  CHECK(hasLevel(v18, 3, 39, Level::Hazard, {"runs without " + kLegacy, "does not read it"}));
}
