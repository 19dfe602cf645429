#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <yaml-cpp/yaml.h>

extern char** environ;

namespace ddph {

void Json::sep() {
  if (pendingValue_) { pendingValue_ = false; return; }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

void Json::quote(const std::string& s) {
  out_ += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\r': out_ += "\\r"; break;
      case '\t': out_ += "\\t"; break;
      default:
        if (c < 0x20) {
          char b[8];
          snprintf(b, sizeof b, "\\u%04x", c);
          out_ += b;
        } else {
          out_ += char(c);
        }
    }
  }
  out_ += '"';
}

Json& Json::val(double v) {
  sep();
  if (!std::isfinite(v)) { out_ += "null"; return *this; }
  char b[32];
  snprintf(b, sizeof b, "%.6g", v);
  out_ += b;
  return *this;
}

bool asExpected(const RunInfo& info, const Verdict& v) {
  if (info.variant == "bad") return v.problem;
  return !v.problem && v.sequencesIdentical;
}

static void recJson(Json& j, const RecView& r, int64_t offset) {
  j.beginObj().kv("seq", r.seq).kv("op", r.op).kv("shapes", r.shapes).kv("dtype", r.dtype).kv("numel", r.numel);
  j.kv("root", r.root).kv("reduce_op", r.reduceOp).kv("tag", r.tag).kv("state", ddpg::recStateName(r.state));
  auto t = [&](int64_t x) { return x ? x + offset : int64_t(0); };
  j.kv("t_enqueue_ns", t(r.tEnqueue)).kv("t_issued_ns", t(r.tIssued)).kv("t_end_ns", t(r.tEnd));
  j.endObj();
}

void rankJson(Json& j, const RankView& r, const std::string& doing, size_t maxRecs) {
  const int64_t off = r.clockOffsetNs;
  auto t = [&](int64_t x) { return x ? x + off : int64_t(0); };
  j.beginObj().kv("rank", r.rank).kv("pid", r.pid).kv("phase", ddpg::phaseName(r.phase));
  j.kv("exited", r.exited).kv("exit_code", r.exitCode).kv("signal", r.signal).kv("exit_ns", t(r.exitNs));
  j.kv("signal_name", r.signal ? signalName(r.signal) : std::string());
  j.kv("doing", doing);
  j.kv("error", r.error).kv("error_resource", r.errorResource).kv("error_ns", t(r.errorNs));
  j.kv("heartbeat_ns", t(r.heartbeatNs)).kv("progress_ns", t(r.progressNs));
  j.kv("clock_offset_measured_ns", r.clockOffsetRawNs).kv("clock_uncertainty_ns", r.clockUncertNs)
      .kv("clock_offset_applied_ns", r.clockOffsetNs);
  j.kv("pg_timeout_ms", r.pgTimeoutMs).kv("pg_timeout_explicit", r.pgTimeoutExplicit);
  j.kv("collectives_issued", r.nextSeq).kv("wchan", r.wchan).kv("stderr_tail", r.logTail);
  j.key("stack").beginArr();
  for (const auto& f : r.stack) j.val(f);
  j.endArr();
  j.key("last_collective");
  if (r.recs.empty()) j.null(); else recJson(j, r.recs.back(), off);
  j.key("metrics");
  if (r.metrics.empty()) j.null(); else j.raw(r.metrics);
  j.key("collectives").beginArr();
  size_t first = maxRecs && r.recs.size() > maxRecs ? r.recs.size() - maxRecs : 0;
  for (size_t i = first; i < r.recs.size(); ++i) recJson(j, r.recs[i], off);
  j.endArr();
  j.key("marks").beginArr();
  for (const auto& m : r.marks)
    j.beginObj().kv("name", m.name).kv("resource", m.resource).kv("kind", int(m.kind))
        .kv("t_begin_ns", t(m.tBegin)).kv("t_end_ns", t(m.tEnd)).endObj();
  j.endArr();
  j.endObj();
}

namespace {
template <class T> T get(const YAML::Node& n, const char* k, T dflt) {
  const YAML::Node v = n[k];
  if (!v || v.IsNull()) return dflt;
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    return dflt;
  }
}
}  // namespace

// JSON text back from a parsed JSON node.  yaml-cpp tags quoted scalars
// "!", which keeps "3" a string and 3 a number.
void yamlToJson(Json& j, const YAML::Node& n) {
  if (n.IsMap()) {
    j.beginObj();
    for (const auto& kv : n) {
      j.key(kv.first.as<std::string>());
      yamlToJson(j, kv.second);
    }
    j.endObj();
  } else if (n.IsSequence()) {
    j.beginArr();
    for (const auto& x : n) yamlToJson(j, x);
    j.endArr();
  } else if (n.IsScalar()) {
    std::string v = n.Scalar();
    if (n.Tag() == "!") j.val(v);
    else j.raw(v);
  } else {
    j.null();
  }
}

RankView rankFromJson(const YAML::Node& n) {
  RankView r;
  r.rank = get<int>(n, "rank", 0);
  r.pid = get<int>(n, "pid", 0);
  std::string ph = get<std::string>(n, "phase", "");
  for (int p = 0; p <= int(ddpg::Phase::Failed); ++p)
    if (ph == ddpg::phaseName(ddpg::Phase(p))) r.phase = ddpg::Phase(p);
  r.exited = get<bool>(n, "exited", false);
  r.exitCode = get<int>(n, "exit_code", -1);
  r.signal = get<int>(n, "signal", 0);
  r.exitNs = get<int64_t>(n, "exit_ns", 0);
  r.error = get<std::string>(n, "error", "");
  r.errorResource = get<std::string>(n, "error_resource", "");
  r.errorNs = get<int64_t>(n, "error_ns", 0);
  r.heartbeatNs = get<int64_t>(n, "heartbeat_ns", 0);
  r.progressNs = get<int64_t>(n, "progress_ns", 0);
  r.clockOffsetRawNs = get<int64_t>(n, "clock_offset_measured_ns", 0);
  r.clockUncertNs = get<int64_t>(n, "clock_uncertainty_ns", 0);
  r.clockOffsetNs = 0;  // the times below are already on rank 0's clock
  r.pgTimeoutMs = get<int64_t>(n, "pg_timeout_ms", 0);
  r.pgTimeoutExplicit = get<bool>(n, "pg_timeout_explicit", false);
  r.nextSeq = get<int64_t>(n, "collectives_issued", 0);
  r.wchan = get<std::string>(n, "wchan", "");
  r.logTail = get<std::string>(n, "stderr_tail", "");
  for (const auto& f : n["stack"]) r.stack.push_back(f.as<std::string>());
  if (n["metrics"] && n["metrics"].IsMap()) {
    Json m;
    yamlToJson(m, n["metrics"]);
    r.metrics = m.str();
  }
  for (const auto& c : n["collectives"]) {
    RecView x;
    x.seq = get<int64_t>(c, "seq", 0);
    x.op = get<std::string>(c, "op", "");
    x.shapes = get<std::string>(c, "shapes", "");
    x.dtype = get<std::string>(c, "dtype", "");
    x.numel = get<int64_t>(c, "numel", 0);
    x.root = get<int>(c, "root", -1);
    x.reduceOp = get<int>(c, "reduce_op", -1);
    x.tag = get<std::string>(c, "tag", "");
    std::string st = get<std::string>(c, "state", "");
    for (int k = 0; k <= int(ddpg::RecState::Failed); ++k)
      if (st == ddpg::recStateName(ddpg::RecState(k))) x.state = ddpg::RecState(k);
    x.tEnqueue = get<int64_t>(c, "t_enqueue_ns", 0);
    x.tIssued = get<int64_t>(c, "t_issued_ns", 0);
    x.tEnd = get<int64_t>(c, "t_end_ns", 0);
    r.recs.push_back(std::move(x));
  }
  for (const auto& m : n["marks"]) {
    MarkView x;
    x.name = get<std::string>(m, "name", "");
    x.resource = get<std::string>(m, "resource", "");
    x.kind = ddpg::MarkKind(get<int>(m, "kind", int(ddpg::MarkKind::Other)));
    x.tBegin = get<int64_t>(m, "t_begin_ns", 0);
    x.tEnd = get<int64_t>(m, "t_end_ns", 0);
    r.marks.push_back(std::move(x));
  }
  return r;
}

std::string reportJson(const RunInfo& info, const Snapshot& snap, const Verdict& v, const RuleRow* rule) {
  Json j;
  j.beginObj();
  j.kv("tool", "ddp-harness").kv("report_version", 1);
  j.kv("scenario", info.scenario).kv("variant", info.variant).kv("backend", info.backend);
  j.kv("world_size", info.worldSize).kv("seed", int64_t(info.seed)).kv("launcher", info.launcher);
  j.kv("as_expected", asExpected(info, v));
  j.key("verdict").beginObj();
  j.kv("outcome", v.outcome).kv("problem", v.problem).kv("summary", v.summary);
  j.key("culprits").beginArr();
  for (int c : v.culprits) j.val(c);
  j.endArr();
  j.kv("ambiguous", v.ambiguous).kv("analysis", v.analysis);
  j.kv("divergence_seq", v.divergenceSeq).kv("culprit_op", v.culpritOp).kv("expected_op", v.expectedOp);
  j.kv("sequences_identical", v.sequencesIdentical).kv("common_prefix", v.commonPrefix);
  j.kv("trigger", triggerName(snap.trigger));
  j.kv("detection_latency_s", v.latencyS());
  j.key("doing").beginObj();
  for (auto& d : v.doing) j.kv(std::to_string(d.first), d.second);
  j.endObj();
  j.key("rule");
  if (rule) {
    j.beginObj().kv("id", rule->id).kv("severity", rule->severity).kv("summary", rule->summary);
    j.key("decision_row").beginObj().kv("trigger", rule->trigger).kv("root_cause", rule->rootCause)
        .kv("guardrail", rule->guardrail).endObj();
    j.kv("fix", rule->fix).endObj();
  } else {
    j.null();
  }
  j.endObj();  // verdict

  j.key("ranks").beginArr();
  for (const auto& r : snap.ranks) rankJson(j, r, v.doing.count(r.rank) ? v.doing.at(r.rank) : std::string());
  j.endArr();

  j.key("environment").beginObj();
  j.kv("host", info.host).kv("git_commit", info.gitCommit).kv("torch_version", info.torchVersion);
  j.kv("gloo_version", info.glooVersion).kv("nccl_version", info.ncclVersion);
  j.kv("started_utc", info.startedUtc).kv("timeout_s", info.timeoutS).kv("stall_s", info.stallS);
  j.kv("catalog", info.catalogPath);
  j.key("env").beginObj();
  for (auto& e : info.env) j.kv(e.first, e.second);
  j.endObj();
  j.endObj();
  j.kv("trace", info.tracePath);
  j.endObj();
  return j.str() + "\n";
}

std::string traceJson(const RunInfo& info, const Snapshot& snap, const Verdict& v) {
  // Chrome trace format: one process per rank, collectives on one track,
  // user regions on another, times in microseconds on rank 0's clock.
  int64_t base = INT64_MAX;
  for (const auto& r : snap.ranks) {
    for (const auto& x : r.recs) base = std::min(base, x.tEnqueue + r.clockOffsetNs);
    for (const auto& m : r.marks) base = std::min(base, m.tBegin + r.clockOffsetNs);
  }
  if (base == INT64_MAX) base = snap.triggerNs;
  auto us = [&](int64_t ns) { return double(ns - base) / 1000.0; };
  Json j;
  j.beginObj().kv("displayTimeUnit", "ms");
  j.key("otherData").beginObj().kv("scenario", info.scenario).kv("variant", info.variant)
      .kv("verdict", v.summary).endObj();
  j.key("traceEvents").beginArr();
  for (const auto& r : snap.ranks) {
    j.beginObj().kv("ph", "M").kv("name", "process_name").kv("pid", r.rank).kv("tid", 0);
    j.key("args").beginObj().kv("name", "rank " + std::to_string(r.rank) + " (pid " + std::to_string(r.pid) + ")")
        .endObj().endObj();
    j.beginObj().kv("ph", "M").kv("name", "thread_name").kv("pid", r.rank).kv("tid", 1);
    j.key("args").beginObj().kv("name", "collectives").endObj().endObj();
    j.beginObj().kv("ph", "M").kv("name", "thread_name").kv("pid", r.rank).kv("tid", 2);
    j.key("args").beginObj().kv("name", "regions").endObj().endObj();
    for (const auto& x : r.recs) {
      int64_t t0 = x.tEnqueue + r.clockOffsetNs;
      int64_t t1 = (x.tEnd ? x.tEnd : snap.triggerNs) + r.clockOffsetNs;
      j.beginObj().kv("ph", "X").kv("pid", r.rank).kv("tid", 1).kv("name", x.op + " #" + std::to_string(x.seq));
      j.kv("cat", x.seq == v.divergenceSeq ? "divergence" : "collective");
      j.kv("ts", us(t0)).kv("dur", std::max(0.0, us(t1) - us(t0)));
      j.key("args").beginObj().kv("seq", x.seq).kv("shapes", x.shapes).kv("dtype", x.dtype).kv("tag", x.tag)
          .kv("state", ddpg::recStateName(x.state)).kv("root", x.root).kv("reduce_op", x.reduceOp)
          .kv("issued_after_us", x.tIssued ? double(x.tIssued - x.tEnqueue) / 1000.0 : -1.0).endObj();
      j.endObj();
    }
    for (const auto& m : r.marks) {
      int64_t t0 = m.tBegin + r.clockOffsetNs;
      int64_t t1 = (m.tEnd ? m.tEnd : snap.triggerNs) + r.clockOffsetNs;
      j.beginObj().kv("ph", "X").kv("pid", r.rank).kv("tid", 2).kv("name", m.name).kv("cat", "region");
      j.kv("ts", us(t0)).kv("dur", std::max(0.0, us(t1) - us(t0)));
      j.key("args").beginObj().kv("resource", m.resource).endObj().endObj();
    }
    if (r.exited && r.exitNs) {
      std::string what = r.signal ? "killed by " + signalName(r.signal) : "exit " + std::to_string(r.exitCode);
      j.beginObj().kv("ph", "i").kv("s", "p").kv("pid", r.rank).kv("tid", 1).kv("name", what)
          .kv("ts", us(r.exitNs)).endObj();
    }
    if (r.errorNs) {
      j.beginObj().kv("ph", "i").kv("s", "t").kv("pid", r.rank).kv("tid", 1).kv("name", "error")
          .kv("ts", us(r.errorNs + r.clockOffsetNs));
      j.key("args").beginObj().kv("error", r.error).endObj().endObj();
    }
  }
  if (v.divergenceSeq >= 0 && v.onsetNs) {
    j.beginObj().kv("ph", "i").kv("s", "g").kv("pid", 0).kv("tid", 1)
        .kv("name", "divergence at #" + std::to_string(v.divergenceSeq)).kv("ts", us(v.onsetNs)).endObj();
  }
  if (v.problem) {
    j.beginObj().kv("ph", "i").kv("s", "g").kv("pid", 0).kv("tid", 1).kv("name", "verdict: " + v.outcome)
        .kv("ts", us(v.detectNs));
    j.key("args").beginObj().kv("summary", v.summary).endObj().endObj();
  }
  j.endArr().endObj();
  return j.str() + "\n";
}

bool writeFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  return bool(f);
}

std::map<std::string, std::string> relevantEnv() {
  std::map<std::string, std::string> m;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string k = kv.substr(0, eq);
    if (k.rfind("NCCL_", 0) == 0 || k.rfind("TORCH_", 0) == 0 || k.rfind("GLOO_", 0) == 0 ||
        k == "RANK" || k == "WORLD_SIZE" || k == "LOCAL_RANK" || k == "MASTER_ADDR" || k == "MASTER_PORT" ||
        k == "OMP_NUM_THREADS" || k == "CUDA_VISIBLE_DEVICES")
      m[k] = kv.substr(eq + 1);
  }
  // Absent is a fact worth recording too: it means the 2.x default applies.
  for (const char* k : {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING", "TORCH_DISTRIBUTED_DEBUG"})
    if (!m.count(k)) m[k] = "(unset)";
  return m;
}

}  // namespace ddph
