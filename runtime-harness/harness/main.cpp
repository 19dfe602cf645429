// ddp-harness: reproduce each ddplint rule's failure on real ranks, name the
// culprit, and show that the guardrail-based fix runs clean.
//
// The supervisor (this file) never touches torch: ranks are forked first,
// and only the children initialise LibTorch (see rank_main.cpp).
#include <ftw.h>
#include <sys/wait.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "catalog.hpp"
#include "ddp_guardrails/nccl_probe.hpp"
#include "rank_launch.hpp"
#include "report.hpp"
#include "supervisor.hpp"
#include "verdict.hpp"
#include "supervisor_link.hpp"

#ifndef DDP_HARNESS_GIT_COMMIT
#define DDP_HARNESS_GIT_COMMIT "unknown"
#endif

namespace ddph {

struct Options {
  std::string cmd, scenario;
  bool all = false;
  std::vector<std::string> variants{"bad", "fixed"};
  bool variantGiven = false;
  int world = 2;
  bool worldGiven = false;
  BackendKind backend = BackendKind::Gloo;
  double timeoutS = 60, stallS = 2.0, pgTimeoutS = 20;
  int steps = 6;
  uint64_t seed = 1234;
  std::string out = "ddp-harness-out";
  std::string catalog;
  std::string launcher = "fork";
  bool quiet = false;
};

int runExternal(const Options& o, const Catalog& cat);

[[noreturn]] void usage(int rc) {
  std::fprintf(rc ? stderr : stdout,
      "usage:\n"
      "  ddp-harness list [--catalog PATH]\n"
      "  ddp-harness run SCENARIO [--variant bad|fixed] [--world-size N] [--backend gloo|nccl]\n"
      "                  [--timeout S] [--stall S] [--pg-timeout S] [--steps N] [--seed N]\n"
      "                  [--out DIR] [--catalog PATH] [--launcher fork|env]\n"
      "  ddp-harness run --all [same options]\n"
      "\n"
      "  --timeout S     wall-clock limit of one run (default 60); every rank is killed after it\n"
      "  --stall S       no progress for S seconds while a rank waits in a collective = hang (default 2)\n"
      "  --pg-timeout S  c10d process-group timeout of the ranks (default 20)\n"
      "  --launcher env  run as one rank of an external launcher (torchrun, srun, k8s): reads RANK,\n"
      "                  WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT\n"
      "exit status: 0 every run as expected (bad reproduced, fixed clean), 1 otherwise, 2 usage, 3 backend unavailable\n");
  std::exit(rc);
}

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) usage(2);
  o.cmd = argv[1];
  if (o.cmd == "-h" || o.cmd == "--help" || o.cmd == "help") usage(0);
  auto need = [&](int& i) -> std::string {
    if (i + 1 >= argc) {
      std::fprintf(stderr, "ddp-harness: %s needs a value\n", argv[i]);
      usage(2);
    }
    return argv[++i];
  };
  auto num = [&](const std::string& flag, const std::string& v) {
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (!end || *end || v.empty()) {
      std::fprintf(stderr, "ddp-harness: %s expects a number, got '%s'\n", flag.c_str(), v.c_str());
      usage(2);
    }
    return d;
  };
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--all") o.all = true;
    else if (a == "--variant") {
      std::string v = need(i);
      if (v == "both") o.variants = {"bad", "fixed"};
      else if (v == "bad" || v == "fixed") o.variants = {v};
      else { std::fprintf(stderr, "ddp-harness: --variant must be bad, fixed or both\n"); usage(2); }
      o.variantGiven = true;
    } else if (a == "--world-size") { o.world = int(num(a, need(i))); o.worldGiven = true; }
    else if (a == "--backend") {
      std::string b = need(i);
      if (b == "gloo") o.backend = BackendKind::Gloo;
      else if (b == "nccl") o.backend = BackendKind::Nccl;
      else { std::fprintf(stderr, "ddp-harness: --backend must be gloo or nccl\n"); usage(2); }
    } else if (a == "--timeout") o.timeoutS = num(a, need(i));
    else if (a == "--stall") o.stallS = num(a, need(i));
    else if (a == "--pg-timeout") o.pgTimeoutS = num(a, need(i));
    else if (a == "--steps") o.steps = int(num(a, need(i)));
    else if (a == "--seed") o.seed = uint64_t(num(a, need(i)));
    else if (a == "--out") o.out = need(i);
    else if (a == "--catalog") o.catalog = need(i);
    else if (a == "--launcher") o.launcher = need(i);
    else if (a == "--quiet") o.quiet = true;
    else if (a == "-h" || a == "--help") usage(0);
    else if (!a.empty() && a[0] != '-' && o.scenario.empty()) o.scenario = a;
    else { std::fprintf(stderr, "ddp-harness: unknown argument '%s'\n", a.c_str()); usage(2); }
  }
  if (o.world < 1 || o.world > 64) { std::fprintf(stderr, "ddp-harness: --world-size must be 1..64\n"); usage(2); }
  if (o.timeoutS <= 0 || o.stallS <= 0 || o.pgTimeoutS <= 0) {
    std::fprintf(stderr, "ddp-harness: timeouts must be positive\n");
    usage(2);
  }
  return o;
}

std::string hostName() {
  char b[256] = {0};
  gethostname(b, sizeof b - 1);
  return b;
}

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return b;
}

bool mkdirs(const std::string& p) {
  std::string cur;
  std::stringstream ss(p);
  std::string part;
  if (!p.empty() && p[0] == '/') cur = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += part + "/";
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

// Temporary directory for the FileStore and scenario files; removed with
// everything in it when the run ends, however it ends.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ddp-harness.XXXXXX";
    std::vector<char> b(tmpl.begin(), tmpl.end());
    b.push_back('\0');
    if (!mkdtemp(b.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = b.data();
  }
  ~TempDir() {
    nftw(path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
         FTW_DEPTH | FTW_PHYS);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct RunOutcome {
  std::string scenario, variant;
  Verdict v;
  bool ok = false;
  std::string rule, report;
};

// The commit of the sources the user runs now, "-dirty" when modified;
// the commit seen at configure time when git is not available.
std::string gitCommit() {
#ifdef DDP_HARNESS_REPO_ROOT
  std::string cmd = std::string("git -C '") + DDP_HARNESS_REPO_ROOT +
                    "' describe --always --dirty --abbrev=40 --match=NeVeR 2>/dev/null";
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char b[128] = {0};
    std::string out = fgets(b, sizeof b, p) ? b : "";
    pclose(p);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    if (!out.empty()) return out;
  }
#endif
  return DDP_HARNESS_GIT_COMMIT;
}

RunInfo baseInfo(const Options& o, const Catalog& cat) {
  RunInfo info;
  info.backend = o.backend == BackendKind::Gloo ? "gloo" : "nccl";
  info.worldSize = o.world;
  info.seed = o.seed;
  info.timeoutS = o.timeoutS;
  info.stallS = o.stallS;
  info.host = hostName();
  static const std::string commit = gitCommit();
  info.gitCommit = commit;
  info.torchVersion = torchVersion();
  info.glooVersion = glooVersion();
  info.ncclVersion = ddpg::ncclCompiledIn() ? ddpg::ncclVersionString() : "not compiled in";
  info.env = relevantEnv();
  info.startedUtc = utcNow();
  info.launcher = o.launcher;
  info.catalogPath = cat.path;
  return info;
}

RunOutcome runOne(const Options& o, const Catalog& cat, const ScenarioDef& sc, const std::string& variant) {
  RunOutcome out;
  out.scenario = sc.id;
  out.variant = variant;
  RunInfo info = baseInfo(o, cat);
  info.scenario = sc.id;
  info.variant = variant;
  std::string stem = sc.id + "." + variant + ".w" + std::to_string(o.world);
  if (!mkdirs(o.out + "/logs")) throw std::runtime_error("cannot create output directory " + o.out);
  info.outDir = o.out;
  info.reportPath = o.out + "/" + stem + ".report.json";
  info.tracePath = o.out + "/" + stem + ".trace.json";

  TempDir tmp;
  ddpg::Board board = ddpg::Board::createAnonymous(o.world);
  SuperviseOptions so;
  so.worldSize = o.world;
  so.wallS = o.timeoutS;
  so.stallS = o.stallS;
  so.logPrefix = o.out + "/logs/" + stem + ".rank";
  Snapshot snap;
  {
    RankProcesses procs;
    for (int r = 0; r < o.world; ++r) {
      RankLaunch l;
      l.scenario = &sc;
      l.bad = variant == "bad";
      l.rank = r;
      l.world = o.world;
      l.localRank = r;
      l.backend = o.backend;
      l.slot = &board.slot(r);
      l.storePath = tmp.path() + "/store";
      l.workDir = tmp.path();
      l.seed = o.seed;
      l.steps = o.steps;
      l.pgTimeoutS = o.pgTimeoutS;
      procs.spawn(r, so.logPrefix + std::to_string(r) + ".log", [l] { return runRank(l); });
    }
    // For tools that act on ranks from outside (the kill -9 test, a human
    // with gdb): rank and pid, one per line.
    std::string pids;
    for (auto& c : procs.children()) pids += std::to_string(c.rank) + " " + std::to_string(c.pid) + "\n";
    writeFile(o.out + "/logs/" + stem + ".pids", pids);
    snap = supervise(board, procs, so);
  }  // every rank is dead and reaped here
  AnalyzeOptions ao;
  ao.stallNs = int64_t(o.stallS * 1e9);
  out.v = analyze(snap, ao);
  const RuleRow* rule = cat.forScenario(sc.id);
  out.rule = rule ? rule->id : "?";
  out.ok = asExpected(info, out.v);
  writeFile(info.reportPath, reportJson(info, snap, out.v, rule));
  writeFile(info.tracePath, traceJson(info, snap, out.v));
  out.report = info.reportPath;
  return out;
}

void printVerdict(const RunOutcome& r) {
  std::printf("%s [%s] %s\n", r.scenario.c_str(), r.variant.c_str(), r.ok ? "AS EXPECTED" : "UNEXPECTED");
  std::printf("  verdict : %s\n", r.v.summary.c_str());
  if (r.v.problem) {
    for (auto& d : r.v.doing) std::printf("  rank %d  : %s\n", d.first, d.second.c_str());
    if (r.v.latencyS() >= 0) std::printf("  detected: %.2f s after onset\n", r.v.latencyS());
  }
  std::printf("  rule    : %s\n  report  : %s\n", r.rule.c_str(), r.report.c_str());
}

int cmdList(const Catalog& cat) {
  std::printf("%-40s %-26s %s\n", "SCENARIO", "RULE", "WHAT THE BAD VARIANT DOES");
  for (auto& s : registry()) {
    const RuleRow* r = cat.forScenario(s.id);
    std::printf("%-40s %-26s %s\n", s.id.c_str(), r ? r->id.c_str() : "(not in catalog!)", s.badStory.c_str());
  }
  return 0;
}

// Every scenario must map to a rule, and every `harness:` id to a scenario.
bool checkCatalog(const Catalog& cat) {
  bool ok = true;
  for (auto& s : registry())
    if (!cat.forScenario(s.id)) {
      std::fprintf(stderr, "ddp-harness: scenario '%s' is in no `harness:` list of %s\n", s.id.c_str(), cat.path.c_str());
      ok = false;
    }
  for (auto& r : cat.rules)
    for (auto& id : r.scenarios)
      if (!findScenario(id)) {
        std::fprintf(stderr, "ddp-harness: %s lists harness scenario '%s', which this build does not have\n",
                     r.id.c_str(), id.c_str());
        ok = false;
      }
  return ok;
}

int cmdRun(Options& o, const Catalog& cat) {
  if (o.backend == BackendKind::Nccl) {
    if (!ddpg::ncclCompiledIn()) {
      std::fprintf(stderr, "ddp-harness: --backend nccl: this build has no NCCL path (no CUDA toolkit with NCCL at "
                           "configure time); rebuild with CUDAToolkit_ROOT pointing at one\n");
      return 3;
    }
    std::string why;
    // In a child: initialising CUDA here would make the later forks unsafe.
    int devices = 0;
    if (!ddpg::probeGpuInChild(&why, &devices)) {
      std::fprintf(stderr, "ddp-harness: --backend nccl: %s. NCCL %s is compiled in, but it needs a GPU; "
                           "use --backend gloo here, or run on a GPU node\n",
                   why.c_str(), ddpg::ncclVersionString().c_str());
      return 3;
    }
    // The forked ranks all run here, one GPU each: NCCL refuses two ranks on
    // one device, and a rank without one fails in cudaSetDevice, which a
    // verdict would read as that rank's divergence (seen on a one-GPU H200).
    if (o.launcher == "fork" && devices < o.world) {
      std::fprintf(stderr, "ddp-harness: --backend nccl: this host has %d GPU%s and --world-size %d starts %d ranks "
                           "here, one GPU each (NCCL does not share a device between ranks); run on a host with %d "
                           "GPUs, on several hosts (--launcher env), or with --backend gloo\n",
                   devices, devices == 1 ? "" : "s", o.world, o.world, o.world);
      return 3;
    }
  }
  if (o.launcher == "env") return runExternal(o, cat);
  if (o.launcher != "fork") { std::fprintf(stderr, "ddp-harness: --launcher must be fork or env\n"); return 2; }
  std::vector<const ScenarioDef*> todo;
  if (o.all) {
    for (auto& s : registry()) todo.push_back(&s);
  } else {
    const ScenarioDef* s = findScenario(o.scenario);
    if (!s) {
      std::fprintf(stderr, "ddp-harness: unknown scenario '%s'; see `ddp-harness list`\n", o.scenario.c_str());
      return 2;
    }
    todo.push_back(s);
    if (!o.variantGiven) o.variants = {"bad"};
  }
  std::vector<RunOutcome> results;
  for (auto* s : todo) {
    if (o.world < s->minWorld) {
      std::fprintf(stderr, "ddp-harness: %s needs --world-size >= %d%s\n", s->id.c_str(), s->minWorld,
                   o.all ? "; skipped" : "");
      if (o.all) continue;
      return 2;
    }
    for (auto& v : o.variants) {
      RunOutcome r = runOne(o, cat, *s, v);
      if (!o.all) printVerdict(r);
      else if (!o.quiet) std::fprintf(stderr, "  %-38s %-5s %s\n", s->id.c_str(), v.c_str(), r.v.outcome.c_str());
      results.push_back(std::move(r));
    }
  }
  bool allOk = true;
  for (auto& r : results) allOk = allOk && r.ok;
  if (o.all) {
    std::printf("%-38s %-6s %-9s %-8s %-6s %-9s %-25s %s\n", "SCENARIO", "VAR", "OUTCOME", "CULPRIT", "SEQ",
                "DETECT_S", "RULE", "OK");
    std::vector<double> lat;
    for (auto& r : results) {
      char latb[16] = "-";
      if (r.v.problem && r.v.latencyS() >= 0) {
        snprintf(latb, sizeof latb, "%.2f", r.v.latencyS());
        lat.push_back(r.v.latencyS());
      }
      std::string cul = r.v.culprits.empty() ? "-" : joinRanks(r.v.culprits);
      std::printf("%-38s %-6s %-9s %-8s %-6s %-9s %-25s %s\n", r.scenario.c_str(), r.variant.c_str(),
                  r.v.outcome.c_str(), cul.c_str(),
                  r.v.divergenceSeq >= 0 ? std::to_string(r.v.divergenceSeq).c_str() : "-", latb, r.rule.c_str(),
                  r.ok ? "yes" : "NO");
    }
    if (!lat.empty()) {
      std::sort(lat.begin(), lat.end());
      double med = lat.size() % 2 ? lat[lat.size() / 2] : (lat[lat.size() / 2 - 1] + lat[lat.size() / 2]) / 2;
      std::printf("median detection latency: %.2f s over %zu bad runs; reports in %s\n", med, lat.size(),
                  o.out.c_str());
    }
  }
  return allOk ? 0 : 1;
}

// One rank of an external launcher (torchrun, srun, Kubernetes): this
// process forks its rank, supervises it locally, and talks to the other
// ranks' supervisors through the launcher's store (MASTER_ADDR:MASTER_PORT).
// Rank 0's supervisor decides, collects every rank's state and writes the
// report; every supervisor then kills its own rank.
int runExternal(const Options& o, const Catalog& cat) {
  auto env = [](const char* k) -> std::string {
    const char* v = std::getenv(k);
    return v ? v : "";
  };
  std::string rankS = env("RANK"), worldS = env("WORLD_SIZE"), addr = env("MASTER_ADDR"), portS = env("MASTER_PORT");
  if (rankS.empty()) rankS = env("SLURM_PROCID");
  if (worldS.empty()) worldS = env("SLURM_NTASKS");
  std::string localS = env("LOCAL_RANK").empty() ? env("SLURM_LOCALID") : env("LOCAL_RANK");
  if (rankS.empty() || worldS.empty() || addr.empty() || portS.empty()) {
    std::fprintf(stderr, "ddp-harness: --launcher env needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT "
                         "(got RANK='%s' WORLD_SIZE='%s' MASTER_ADDR='%s' MASTER_PORT='%s')\n",
                 rankS.c_str(), worldS.c_str(), addr.c_str(), portS.c_str());
    return 2;
  }
  if (o.all || o.scenario.empty()) {
    std::fprintf(stderr, "ddp-harness: --launcher env runs one scenario; --all is for local ranks\n");
    return 2;
  }
  const ScenarioDef* sc = findScenario(o.scenario);
  if (!sc) {
    std::fprintf(stderr, "ddp-harness: unknown scenario '%s'\n", o.scenario.c_str());
    return 2;
  }
  const int rank = std::atoi(rankS.c_str()), world = std::atoi(worldS.c_str());
  const int port = std::atoi(portS.c_str()), localRank = localS.empty() ? 0 : std::atoi(localS.c_str());
  const std::string variant = o.variantGiven ? o.variants[0] : "bad";
  const std::string stem = sc->id + "." + variant + ".w" + std::to_string(world);
  if (!mkdirs(o.out + "/logs")) throw std::runtime_error("cannot create output directory " + o.out);
  // Scenario files must be visible to every rank: a directory named after
  // the job, on a shared file system when ranks span nodes (set TMPDIR).
  const char* tmpBase = std::getenv("TMPDIR");
  std::string workDir = std::string(tmpBase && *tmpBase ? tmpBase : "/tmp") + "/ddp-harness-job-" + portS + "-" + sc->id;
  mkdirs(workDir);

  ddpg::Board board = ddpg::Board::createAnonymous(1);
  RankProcesses procs;
  RankLaunch l;
  l.scenario = sc;
  l.bad = variant == "bad";
  l.rank = rank;
  l.world = world;
  l.localRank = localRank;
  l.backend = o.backend;
  l.slot = &board.slot(0);
  l.masterAddr = addr;
  l.masterPort = port;
  l.workDir = workDir;
  l.seed = o.seed;
  l.steps = o.steps;
  l.pgTimeoutS = o.pgTimeoutS;
  std::string logPath = o.out + "/logs/" + stem + ".rank" + std::to_string(rank) + ".log";
  procs.spawn(rank, logPath, [l] { return runRank(l); });

  // The store comes after the fork: it starts threads.  Under torchrun the
  // agent hosts it; otherwise rank 0's supervisor does, so it outlives ranks.
  bool agentStore = env("TORCHELASTIC_USE_AGENT_STORE") == "True";
  std::unique_ptr<SupervisorLink> link;
  int rc = 1;
  try {
  link = SupervisorLink::connect(addr, port, rank == 0 && !agentStore, o.timeoutS);

  const int64_t stallNs = int64_t(o.stallS * 1e9), start = ddpg::nowNs();
  int64_t firstBadSeen = 0;
  bool decided = false, collected = false;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    procs.poll();
    auto& c = procs.children()[0];
    RankView v = readSlot(board.slot(0), rank);
    if (!v.pid) v.pid = c.pid;
    if (c.exited) {
      v.exited = true;
      v.exitNs = c.exitNs;
      if (WIFSIGNALED(c.status)) v.signal = WTERMSIG(c.status);
      else v.exitCode = WEXITSTATUS(c.status);
    }
    int64_t now = ddpg::nowNs();
    bool blocked = !v.exited && !v.recs.empty() && v.recs.back().state < ddpg::RecState::Completed &&
                   now - v.recs.back().tEnqueue > stallNs;
    bool idle = v.exited || (v.progressNs && now - v.progressNs > stallNs);
    bool bad = v.abnormalExit() || v.errorNs != 0;
    link->publishFlags(rank, blocked, idle, bad, v.exited);

    auto publishOwn = [&] {
      if (collected) return;
      v.logTail = tailOfFile(logPath);
      // Times go out on rank 0's clock, using the offset the rank measured.
      int64_t off = v.clockOffsetNs;
      auto sh = [&](int64_t& t) { if (t) t += off; };
      sh(v.exitNs); sh(v.errorNs); sh(v.heartbeatNs); sh(v.progressNs);
      for (auto& x : v.recs) { sh(x.tEnqueue); sh(x.tIssued); sh(x.tEnd); }
      for (auto& m : v.marks) { sh(m.tBegin); sh(m.tEnd); }
      Json j;
      rankJson(j, v, "", 512);
      link->publishSnapshot(rank, j.str());
      collected = true;
    };
    if (link->has("collect")) publishOwn();
    if (rank == 0 && !decided) {
      Trigger t;
      bool fire = false;
      auto f = link->readFlags(world);
      bool allExited = true, anyBlocked = false, allIdle = true, anyBad = false;
      for (auto& x : f) {
        allExited = allExited && x.exited;
        anyBlocked = anyBlocked || x.blocked;
        allIdle = allIdle && x.idle;
        anyBad = anyBad || x.bad;
      }
      if (allExited) { t = anyBad ? Trigger::Failure : Trigger::AllDone; fire = true; }
      else if (anyBad) {
        if (!firstBadSeen) firstBadSeen = now;
        if (now - firstBadSeen > int64_t(0.3e9)) { t = Trigger::Failure; fire = true; }
      } else if (anyBlocked && allIdle) { t = Trigger::Hang; fire = true; }
      if (!fire && now - start > int64_t(o.timeoutS * 1e9)) { t = Trigger::WallClock; fire = true; }
      if (fire) {
        decided = true;
        link->set("collect", "1");
        publishOwn();
        Snapshot snap;
        snap.trigger = t;
        snap.triggerNs = now;
        snap.ranks = link->collectSnapshots(world, 10.0);
        AnalyzeOptions ao;
        ao.stallNs = stallNs;
        Verdict vd = analyze(snap, ao);
        RunInfo info = baseInfo(o, cat);
        info.scenario = sc->id;
        info.variant = variant;
        info.worldSize = world;
        info.reportPath = o.out + "/" + stem + ".report.json";
        info.tracePath = o.out + "/" + stem + ".trace.json";
        const RuleRow* rule = cat.forScenario(sc->id);
        writeFile(info.reportPath, reportJson(info, snap, vd, rule));
        writeFile(info.tracePath, traceJson(info, snap, vd));
        RunOutcome out;
        out.scenario = sc->id;
        out.variant = variant;
        out.v = vd;
        out.ok = asExpected(info, vd);
        out.rule = rule ? rule->id : "?";
        out.report = info.reportPath;
        printVerdict(out);
        link->set("verdict", out.ok ? "ok" : "unexpected");
      }
    }
    if (link->has("verdict") && collected) {
      rc = link->get("verdict") == "ok" ? 0 : 1;
      link->set("ack/" + std::to_string(rank), "1");
      break;
    }
    if (now - start > int64_t((o.timeoutS + 30) * 1e9)) {
      std::fprintf(stderr, "ddp-harness: rank %d: no verdict from rank 0's supervisor; giving up\n", rank);
      break;
    }
  }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp-harness: rank %d: lost the supervisors' store (%s); stopping this rank\n", rank,
                 e.what());
    rc = 1;
  }
  procs.killAll();
  if (rank == 0 && link) {
    // The store lives in this process: keep it up until every supervisor
    // has read the verdict.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (int r = 1; r < world; ++r)
      while (std::chrono::steady_clock::now() < deadline) {
        try {
          if (link->has("ack/" + std::to_string(r))) break;
        } catch (const std::exception&) {
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
  }
  std::string rm = "rm -rf '" + workDir + "'";
  if (std::system(rm.c_str()) != 0) std::fprintf(stderr, "ddp-harness: could not remove %s\n", workDir.c_str());
  return rc;
}

}  // namespace ddph

int main(int argc, char** argv) {
  using namespace ddph;
  Options o = parse(argc, argv);
  installTerminationHandlers();
  try {
    Catalog cat = loadCatalog(o.catalog);
    if (!checkCatalog(cat)) return 2;
    if (o.cmd == "list") return cmdList(cat);
    if (o.cmd == "run") {
      if (!o.all && o.scenario.empty()) {
        std::fprintf(stderr, "ddp-harness: run needs a SCENARIO or --all\n");
        usage(2);
      }
      return cmdRun(o, cat);
    }
    std::fprintf(stderr, "ddp-harness: unknown command '%s'\n", o.cmd.c_str());
    usage(2);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp-harness: %s\n", e.what());
    return 2;
  }
}
