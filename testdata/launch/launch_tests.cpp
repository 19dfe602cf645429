// ddp-launch-env on launch files: true positives at exact line:col, the hard
// negatives (the variable set in a way that is easy to miss, or maybe set
// somewhere the file does not show), the target-version cases and bad input.
#include "ddplint/launch/LaunchCheck.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
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

TEST_CASE("PyTorchJob without the variables: both, per replica type, at the container", "[k8s]") {
  Result r = check("pytorchjob-missing.yaml");
  CHECK(r.kind == FileKind::KubernetesManifest);
  CHECK(r.errors.empty());
  // The Service document beside the job contributes nothing.
  CHECK(locs(r) == Locs{"22:15", "22:15", "31:15", "31:15"});
  CHECK(has(r, 22, 15,
            {"container 'trainer' in PyTorchJob 'bert' (Master) does not set " + kCurrent,
             "hangs the other ranks", "add env " + kCurrent + "=1"}));
  CHECK(has(r, 22, 15, {"(Master) does not set " + kFault, "add env " + kFault + "=1"}));
  // Reported at the `name:` key even when it is not the container's first key.
  CHECK(has(r, 31, 15, {"'trainer' in PyTorchJob 'bert' (Worker) does not set " + kCurrent}));
  CHECK(has(r, 31, 15, {"(Worker) does not set " + kFault}));
  for (const auto &f : r.findings) {
    CHECK(f.ruleId == "ddp-launch-env");
    CHECK(f.file == fixture("pytorchjob-missing.yaml"));
  }
}

TEST_CASE("PyTorchJob with value 3 and a sidecar: nothing", "[k8s]") {
  Result r = check("pytorchjob-good.yaml");
  CHECK(r.kind == FileKind::KubernetesManifest);
  CHECK(r.errors.empty());
  CHECK(r.findings.empty());
}

TEST_CASE("Job: value 0, empty faulthandler, deprecated name, invalid value; envFrom", "[k8s]") {
  Result r = check("job-values.yaml");
  CHECK(r.errors.empty());
  CHECK(locs(r) == Locs{"12:15", "14:15", "19:15", "34:15"});
  CHECK(has(r, 12, 15, {kCurrent + "=0 in container 'off' in Job 'finetune' turns", "set it to 1"}));
  CHECK(has(r, 14, 15, {kFault + " is empty in container 'off'", "set it to 1"}));
  // PYTHONFAULTHANDLER=0 enables faulthandler (any non-empty value does): no finding at 21.
  CHECK(has(r, 19, 15, {kLegacy + " in container 'legacy'", "deprecated since PyTorch 2.2",
                        "rename it to " + kCurrent}));
  // envFrom hides "missing" but not a wrong value written in env.
  CHECK(has(r, 34, 15, {kCurrent + "=yes in container 'from-configmap-but-off'", "not a valid value"}));
  // 'from-configmap' (envFrom), 'computed' (valueFrom, $(VAR)) and 'in-script'
  // (the command sets both) have no finding; the ConfigMap's "0" is not a container.
  for (const auto &f : r.findings) {
    CHECK(f.message.find("'from-configmap'") == std::string::npos);
    CHECK(f.message.find("'computed'") == std::string::npos);
    CHECK(f.message.find("'in-script'") == std::string::npos);
  }
}

TEST_CASE("A Pod inside a List; value 2 enables; init containers are not ranks", "[k8s]") {
  Result r = check("pod-and-list.yaml");
  CHECK(r.errors.empty());
  CHECK(locs(r) == Locs{"13:11"});
  CHECK(has(r, 13, 11, {"container 'main' in Pod 'probe-' does not set " + kFault}));
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

TEST_CASE("RayCluster: the head sets both, the worker group sets neither", "[k8s][ray]") {
  Result r = check("raycluster.yaml");
  CHECK(r.errors.empty());
  CHECK(locs(r) == Locs{"23:15", "23:15"});
  CHECK(has(r, 23, 15,
            {"container 'ray-worker' in RayCluster 'train-cluster' (worker group 'gpu') does not set " +
             kCurrent}));
}

TEST_CASE("Malformed YAML: an error at its line:col, the other documents still checked", "[k8s][errors]") {
  Result r = check("malformed.yaml");
  CHECK(r.kind == FileKind::KubernetesManifest);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].file == fixture("malformed.yaml"));
  // The flow map opened on line 16 is never closed; yaml-cpp notices on line 17.
  CHECK(r.errors[0].line == 17);
  CHECK(r.errors[0].column == 5);
  CHECK(r.errors[0].message.find("malformed YAML") != std::string::npos);
  CHECK(locs(r) == Locs{"9:11", "9:11", "25:7"});
  CHECK(has(r, 25, 7, {"container 'c' in Pod 'third' does not set " + kCurrent}));
}

TEST_CASE("YAML that is not a Kubernetes object is not a manifest", "[k8s][errors]") {
  Result r = check("not-a-manifest.yaml");
  CHECK(r.kind == FileKind::Unknown);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].message.find("not a Kubernetes manifest") != std::string::npos);
  CHECK(r.findings.empty());

  // Beside real objects, a stray document is named but does not stop the others.
  Result mixed = text("m.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                                "  containers:\n  - name: c\n---\nfoo: bar\n");
  CHECK(mixed.kind == FileKind::KubernetesManifest);
  REQUIRE(mixed.errors.size() == 1);
  CHECK(mixed.errors[0].line == 8);
  CHECK(mixed.errors[0].message.find("not a Kubernetes object") != std::string::npos);
  CHECK(locs(mixed) == Locs{"6:5", "6:5"});
}

TEST_CASE("JSON manifests, CRLF line ends and a byte order mark", "[k8s]") {
  Result json = text("pod.json", "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"},\n"
                                 " \"spec\": {\"containers\": [{\"name\": \"c\", \"env\": [\n"
                                 "   {\"name\": \"PYTHONFAULTHANDLER\", \"value\": \"1\"}]}]}}\n");
  CHECK(json.kind == FileKind::KubernetesManifest);
  CHECK(locs(json) == Locs{"2:27"}); // the key's opening quote
  Result crlf = text("p.yaml", "\xEF\xBB\xBF" "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: p\r\n"
                               "spec:\r\n  containers:\r\n    - name: c\r\n      env:\r\n"
                               "        - name: TORCH_NCCL_ASYNC_ERROR_HANDLING\r\n          value: \"0\"\r\n");
  CHECK(locs(crlf) == Locs{"7:7", "9:11"});
}

// ===========================================================================
// Slurm and shell scripts
// ===========================================================================

TEST_CASE("Slurm: missing at the first launch command only; srun hostname and one-task srun are not launches",
          "[slurm]") {
  Result r = check("train-missing.slurm");
  CHECK(r.kind == FileKind::SlurmScript);
  CHECK(r.errors.empty());
  // The commented-out export on line 7 does not count; PYTHONFAULTHANDLER is exported.
  CHECK(locs(r) == Locs{"11:1"});
  CHECK(has(r, 11, 1,
            {"the srun at line 11 runs without " + kCurrent, "export " + kCurrent + "=1 before it"}));
}

TEST_CASE("Slurm: export with a continuation, srun --export=ALL,VAR=1, a here-document", "[slurm]") {
  Result r = check("train-good.slurm");
  CHECK(r.kind == FileKind::SlurmScript);
  CHECK(r.errors.empty());
  // The srun inside the here-document (line 8) is data, not a command.
  CHECK(r.findings.empty());
}

TEST_CASE("Slurm: srun --export=NONE drops what the script exported", "[slurm]") {
  Result r = check("export-none.slurm");
  CHECK(locs(r) == Locs{"5:1", "5:1"});
  CHECK(has(r, 5, 1, {"runs without " + kCurrent, "--export=ALL," + kCurrent + "=1"}));
  CHECK(has(r, 5, 1, {"runs without " + kFault}));
}

TEST_CASE("Slurm: a sourced file may set them, but a wrong value written here is still wrong", "[slurm]") {
  Result r = check("sourced.slurm");
  CHECK(locs(r) == Locs{"4:8"});
  CHECK(has(r, 4, 8, {kCurrent + "=0 for the srun at line 5 turns NCCL async error handling off"}));
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

TEST_CASE("Shell: a VAR=val prefix applies to its own command only", "[shell]") {
  Result r = check("launch-prefix.sh");
  CHECK(r.kind == FileKind::ShellScript);
  CHECK(locs(r) == Locs{"4:35", "5:1"});
  CHECK(has(r, 4, 35, {"the torchrun at line 4 runs without " + kFault}));
  CHECK(has(r, 5, 1, {"the python -m torch.distributed.run at line 5 runs without " + kCurrent}));
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

TEST_CASE("Shell: .sh without a shebang, ${VAR:=1} defaults, accelerate launch", "[shell]") {
  Result r = check("accelerate.sh");
  CHECK(r.kind == FileKind::ShellScript);
  CHECK(locs(r) == Locs{"2:1"});
  CHECK(has(r, 2, 1, {"the accelerate launch at line 2 runs without " + kCurrent}));
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

TEST_CASE("Before 2.2 the legacy name is right and the new name alone is not read", "[version]") {
  Result old = check("versions.yaml", "1.13.1");
  CHECK(locs(old) == Locs{"17:11", "33:11", "37:7"});
  CHECK(has(old, 17, 11, {kCurrent + " in container 'current-only'", "not read by PyTorch 1.13",
                          "set " + kLegacy + "=1"}));
  CHECK(has(old, 33, 11, {kLegacy + "=0 in container 'legacy-off' in Pod 'versions' turns NCCL async error handling off"}));
  CHECK(has(old, 37, 7, {"container 'neither' in Pod 'versions' does not set " + kLegacy,
                         "PyTorch 1.13 leaves NCCL async error handling off", "add env " + kLegacy + "=1"}));
  // 'legacy-only' and 'both' are right for 1.13.

  Result v21 = check("versions.yaml", "2.1");
  CHECK(locs(v21) == Locs{"17:11", "33:11", "37:7"});
}

TEST_CASE("From 2.2, and when the version is unknown, the legacy name is deprecated", "[version]") {
  for (const std::string v : {"", "2.2", "2.3.0+cu121"}) {
    INFO("torch version '" << v << "'");
    Result r = check("versions.yaml", v);
    CHECK(locs(r) == Locs{"10:11", "26:11", "33:11", "37:7"});
    CHECK(has(r, 10, 11, {kLegacy + " in container 'legacy-only'", "rename it to " + kCurrent}));
    CHECK(has(r, 26, 11, {kLegacy + " in container 'both'", "already set; remove it"}));
    CHECK(has(r, 33, 11, {kLegacy + "=0", "set " + kCurrent + "=1 instead"}));
    CHECK(has(r, 37, 7, {"does not set " + kCurrent, "add env " + kCurrent + "=1"}));
    // An unknown version is not mentioned.
    for (const auto &f : r.findings)
      CHECK(f.message.find("assum") == std::string::npos);
  }
}

TEST_CASE("The version of a shell target", "[version]") {
  Result r = check("train-missing.slurm", "1.13");
  CHECK(locs(r) == Locs{"11:1"});
  CHECK(has(r, 11, 1, {"runs without " + kLegacy, "export " + kLegacy + "=1 before it"}));
  Result prefix = check("launch-good.sh", "1.13");
  CHECK(locs(prefix) == Locs{"3:5", "4:17"});
}

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
