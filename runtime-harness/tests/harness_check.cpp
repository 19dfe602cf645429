// Runs ddp-harness as a user would and checks its JSON report from the
// outside: the culprit, the collective, the rule, identical sequences for a
// fixed variant, and that no rank process or temporary file outlives it.
//
//   harness-check --harness BIN --out DIR [expectations] -- run SCENARIO ...
//
// Expectations:
//   --variant bad|fixed          what kind of result to demand
//   --culprits 0,3               exact culprit set
//   --outcome hang|crash         accepted outcomes ('|'-separated)
//   --field a.b.c=TEXT           the report value at a.b.c contains TEXT
//   --max-latency S              detection latency bound
//   --kill-rank R --kill-after S SIGKILL rank R S seconds after it started
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

int failures = 0;
void fail(const std::string& m) {
  std::fprintf(stderr, "FAIL: %s\n", m.c_str());
  ++failures;
}

std::vector<std::string> split(const std::string& s, char d) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, d)) out.push_back(x);
  return out;
}

// yaml-cpp nodes are references: `n = n[k]` would overwrite the tree, and a
// non-const operator[] inserts missing keys.  reset() and const lookups.
YAML::Node at(const YAML::Node& root, const std::string& path) {
  YAML::Node cur;
  cur.reset(root);
  for (auto& part : split(path, '.')) {
    if (!cur) return cur;
    const YAML::Node& c = cur;
    YAML::Node next = c.IsSequence() ? c[size_t(std::stoul(part))] : c[part];
    cur.reset(next);
  }
  return cur;
}

std::string scalar(const YAML::Node& n) { return n && n.IsScalar() ? n.as<std::string>() : std::string(); }

// Processes whose command line mentions `needle` (forked ranks keep the
// supervisor's argv, which holds the unique output directory).
std::vector<int> processesMentioning(const std::string& needle) {
  std::vector<int> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    std::string c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::replace(c.begin(), c.end(), '\0', ' ');
    if (c.find(needle) != std::string::npos) out.push_back(pid);
  }
  closedir(d);
  return out;
}

bool dirEmpty(const std::string& p) {
  DIR* d = opendir(p.c_str());
  if (!d) return true;
  bool empty = true;
  while (dirent* e = readdir(d))
    if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) empty = false;
  closedir(d);
  return empty;
}

void rmTree(const std::string& p) {
  std::string cmd = "rm -rf '" + p + "'";
  if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "warning: could not remove %s\n", p.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string harness, out, variant = "bad", culprits, outcomes;
  std::vector<std::string> fields;
  double maxLatency = -1, killAfter = -1, wall = 120;
  int killRank = -1;
  std::vector<std::string> runArgs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--harness") harness = next();
    else if (a == "--out") out = next();
    else if (a == "--variant") variant = next();
    else if (a == "--culprits") culprits = next();
    else if (a == "--outcome") outcomes = next();
    else if (a == "--field") fields.push_back(next());
    else if (a == "--max-latency") maxLatency = std::atof(next().c_str());
    else if (a == "--kill-rank") killRank = std::atoi(next().c_str());
    else if (a == "--kill-after") killAfter = std::atof(next().c_str());
    else if (a == "--wall") wall = std::atof(next().c_str());
    else if (a == "--") { for (++i; i < argc; ++i) runArgs.push_back(argv[i]); }
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  if (harness.empty() || out.empty() || runArgs.size() < 2) {
    std::fprintf(stderr, "usage: harness-check --harness BIN --out DIR [expectations] -- run SCENARIO ...\n");
    return 2;
  }
  rmTree(out);
  std::string tmp = out + "/tmp";
  if (std::system(("mkdir -p '" + tmp + "'").c_str()) != 0) return 2;

  std::vector<std::string> args{harness};
  args.insert(args.end(), runArgs.begin(), runArgs.end());
  args.push_back("--out");
  args.push_back(out);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(const_cast<char*>(a.c_str()));
  cargs.push_back(nullptr);

  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    setenv("TMPDIR", tmp.c_str(), 1);
    execv(harness.c_str(), cargs.data());
    std::perror("execv");
    _exit(127);
  }
  bool killed = false;
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (killRank >= 0 && !killed && el >= killAfter) {
      // The harness lists rank pids once it has forked them.
      std::string stem = runArgs[1] + "." + variant;
      DIR* d = opendir((out + "/logs").c_str());
      std::string pidsFile;
      while (d && !pidsFile.size()) {
        dirent* e = readdir(d);
        if (!e) break;
        std::string n = e->d_name;
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".pids") == 0) pidsFile = out + "/logs/" + n;
      }
      if (d) closedir(d);
      std::ifstream f(pidsFile);
      int rk, p;
      while (f >> rk >> p)
        if (rk == killRank) {
          std::printf("kill -9 rank %d (pid %d) at %.2f s\n", rk, p, el);
          kill(p, SIGKILL);
          killed = true;
        }
    }
    if (el > wall) {
      fail("ddp-harness did not finish within " + std::to_string(wall) + " s");
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("ddp-harness exited (status %d) after %.2f s\n", status, took);
  if (killRank >= 0 && !killed) fail("never found the pid of rank " + std::to_string(killRank) + " to kill");

  // Nothing may outlive the harness: no rank process, no temporary file.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto left = processesMentioning(out);
  for (int p : left) {
    fail("process " + std::to_string(p) + " of this run is still alive after ddp-harness exited");
    kill(p, SIGKILL);
  }
  if (!dirEmpty(tmp)) fail("temporary files left in " + tmp);

  // Find the report.
  std::string report;
  if (DIR* d = opendir(out.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 12 && n.compare(n.size() - 12, 12, ".report.json") == 0) report = out + "/" + n;
    }
    closedir(d);
  }
  if (report.empty()) {
    fail("no report written in " + out);
    return 1;
  }
  YAML::Node r;
  try {
    r = YAML::LoadFile(report);
  } catch (const std::exception& e) {
    fail(std::string("report is not valid JSON/YAML: ") + e.what());
    return 1;
  }
  std::printf("verdict: %s\n", scalar(at(r, "verdict.summary")).c_str());

  // The report must carry what reproducing the run needs.
  for (const char* k : {"environment.torch_version", "environment.gloo_version", "environment.nccl_version",
                        "environment.git_commit", "environment.host", "seed", "world_size", "backend",
                        "environment.env.TORCH_NCCL_ASYNC_ERROR_HANDLING"})
    if (scalar(at(r, k)).empty()) fail(std::string("report lacks ") + k);
  std::string trace = scalar(at(r, "trace"));
  if (trace.empty() || !std::ifstream(trace).good()) fail("trace file missing: " + trace);
  else {
    try {
      YAML::Node t = YAML::LoadFile(trace);
      if (!t["traceEvents"] || t["traceEvents"].size() == 0) fail("trace has no events");
    } catch (const std::exception& e) {
      fail(std::string("trace is not valid JSON: ") + e.what());
    }
  }

  YAML::Node pn = at(r, "verdict.problem");
  if (!pn) {
    fail("report has no verdict.problem");
    return 1;
  }
  bool problem = pn.as<bool>();
  YAML::Node ranks = r["ranks"];
  if (killRank >= 0) {
    // A healthy run that lost a rank to kill -9: it must be reported.
    if (!problem) fail("the run with a killed rank reported no problem");
  } else if (variant == "fixed") {
    if (problem) fail("fixed variant reported a problem");
    if (!at(r, "verdict.sequences_identical").as<bool>()) fail("harness says sequences differ");
    // Check it independently from the per-rank lists.
    std::vector<std::string> ref;
    for (size_t i = 0; i < ranks.size(); ++i) {
      std::vector<std::string> seq;
      for (const auto& c : ranks[i]["collectives"])
        seq.push_back(scalar(c["op"]) + scalar(c["shapes"]) + scalar(c["dtype"]) + scalar(c["tag"]) + "/" +
                      scalar(c["state"]));
      if (seq.empty()) fail("rank " + std::to_string(i) + " recorded no collective");
      if (i == 0) ref = seq;
      else if (seq != ref) fail("rank " + std::to_string(i) + "'s collective sequence differs from rank 0's");
      for (auto& s : seq)
        if (s.find("/completed") == std::string::npos) fail("rank " + std::to_string(i) + ": not completed: " + s);
      if (scalar(ranks[i]["exit_code"]) != "0") fail("rank " + std::to_string(i) + " did not exit 0");
    }
    std::printf("fixed: %zu ranks, %zu collectives each, identical\n", ranks.size(), ref.size());
  } else {
    if (!problem) fail("bad variant reported no problem");
  }
  if (!culprits.empty()) {
    std::set<std::string> want, got;
    for (auto& c : split(culprits, ',')) want.insert(c);
    for (const auto& c : at(r, "verdict.culprits")) got.insert(c.as<std::string>());
    if (want != got) {
      std::string g;
      for (auto& x : got) g += x + " ";
      fail("culprits: want {" + culprits + "}, got {" + g + "}");
    }
  }
  if (!outcomes.empty()) {
    std::string o = scalar(at(r, "verdict.outcome"));
    auto ok = split(outcomes, '|');
    if (std::find(ok.begin(), ok.end(), o) == ok.end()) fail("outcome " + o + " not in " + outcomes);
  }
  for (auto& f : fields) {
    auto eq = f.find('=');
    std::string path = f.substr(0, eq), want = f.substr(eq + 1);
    std::string got = scalar(at(r, path));
    if (got.find(want) == std::string::npos) fail(path + " = '" + got + "' does not contain '" + want + "'");
  }
  if (maxLatency > 0) {
    double l = at(r, "verdict.detection_latency_s").as<double>();
    if (l < 0 || l > maxLatency) fail("detection latency " + std::to_string(l) + " s not in [0, " +
                                      std::to_string(maxLatency) + "]");
  }
  // The rule row comes from the catalog, not from the harness's code.
  if (scalar(at(r, "verdict.rule.decision_row.trigger")).empty() ||
      scalar(at(r, "verdict.rule.decision_row.root_cause")).empty() ||
      scalar(at(r, "verdict.rule.decision_row.guardrail")).empty())
    fail("verdict lacks the decision-table row");
  if (failures == 0) rmTree(tmp);
  std::printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
