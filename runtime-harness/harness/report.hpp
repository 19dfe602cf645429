// JSON report and Chrome/Perfetto trace of one run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "catalog.hpp"
#include "verdict.hpp"

namespace YAML {
class Node;
}

namespace ddph {

// Minimal streaming JSON writer: enough for reports and traces, escapes
// everything a rank could put into an error string.
class Json {
 public:
  std::string str() const { return out_; }
  Json& beginObj() { sep(); out_ += '{'; first_.push_back(true); return *this; }
  Json& endObj() { out_ += '}'; first_.pop_back(); return *this; }
  Json& beginArr() { sep(); out_ += '['; first_.push_back(true); return *this; }
  Json& endArr() { out_ += ']'; first_.pop_back(); return *this; }
  Json& key(const std::string& k) { sep(); quote(k); out_ += ':'; pendingValue_ = true; return *this; }
  Json& val(const std::string& s) { sep(); quote(s); return *this; }
  Json& val(const char* s) { return val(std::string(s)); }
  Json& val(bool b) { sep(); out_ += b ? "true" : "false"; return *this; }
  Json& val(int64_t v) { sep(); out_ += std::to_string(v); return *this; }
  Json& val(int v) { return val(int64_t(v)); }
  Json& val(double v);
  Json& raw(const std::string& s) { sep(); out_ += s; return *this; }
  Json& null() { sep(); out_ += "null"; return *this; }
  template <class T> Json& kv(const std::string& k, const T& v) { key(k); return val(v); }

 private:
  void sep();
  void quote(const std::string& s);
  std::string out_;
  std::vector<bool> first_;
  bool pendingValue_ = false;
};

struct RunInfo {
  std::string scenario, variant, backend;
  int worldSize = 0;
  uint64_t seed = 0;
  double timeoutS = 0, stallS = 0;
  std::string outDir, reportPath, tracePath;
  std::string host, gitCommit, torchVersion, glooVersion, ncclVersion;
  std::map<std::string, std::string> env;
  std::string startedUtc;
  std::string launcher = "fork";
  std::string catalogPath;
};

// "as expected": a bad variant showed a problem, a fixed one completed with
// identical collective sequences on every rank.
bool asExpected(const RunInfo& info, const Verdict& v);

// One rank as JSON (times on rank 0's clock) and back: the report's
// per-rank entry, and what supervisors of externally launched ranks send to
// rank 0's supervisor.  maxRecs 0: all records.
void rankJson(Json& j, const RankView& r, const std::string& doing, size_t maxRecs = 0);
RankView rankFromJson(const YAML::Node& n);

std::string reportJson(const RunInfo& info, const Snapshot& snap, const Verdict& v, const RuleRow* rule);
std::string traceJson(const RunInfo& info, const Snapshot& snap, const Verdict& v);

bool writeFile(const std::string& path, const std::string& text);
std::map<std::string, std::string> relevantEnv();

}  // namespace ddph
