#include "verdict.hpp"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

namespace ddph {

using ddpg::MarkKind;
using ddpg::RecState;

std::string RecView::signature() const {
  std::ostringstream o;
  // The tag is the caller's name for the data (e.g. which parameter): two
  // ranks reducing different buffers of equal shape still diverge.
  o << op << '|' << shapes << '|' << dtype << '|' << root << '|' << reduceOp << '|' << tag;
  return o.str();
}

static const char* redName(int r) {
  static const char* n[] = {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"};
  return r >= 0 && r < 9 ? n[r] : "";
}

std::string RecView::pretty() const {
  std::ostringstream o;
  o << op << " #" << seq;
  if (!shapes.empty()) o << " " << shapes << " " << dtype;
  if (reduceOp >= 0) o << " " << redName(reduceOp);
  if (root >= 0) o << " root=" << root;
  if (!tag.empty()) o << " (" << tag << ")";
  return o.str();
}

const RecView* RankView::at(int64_t seq) const {
  if (recs.empty() || seq < recs.front().seq || seq > recs.back().seq) return nullptr;
  const RecView& r = recs[size_t(seq - recs.front().seq)];
  return r.seq == seq ? &r : nullptr;
}

const MarkView* RankView::openMark() const {
  for (auto it = marks.rbegin(); it != marks.rend(); ++it)
    if (it->tEnd == 0) return &*it;
  return nullptr;
}

RankView readSlot(const ddpg::RankSlot& s, int rank) {
  RankView v;
  v.rank = rank;
  v.pid = s.pid.load();
  v.phase = ddpg::Phase(s.phase.load());
  v.heartbeatNs = s.heartbeatNs.load();
  v.progressNs = s.progressNs.load();
  v.clockOffsetRawNs = s.clockOffsetNs.load();
  v.clockUncertNs = s.clockUncertNs.load();
  v.clockOffsetNs = std::llabs(v.clockOffsetRawNs) <= v.clockUncertNs ? 0 : v.clockOffsetRawNs;
  v.pgTimeoutMs = s.pgTimeoutMs.load();
  v.pgTimeoutExplicit = s.pgTimeoutExplicit.load() != 0;
  v.nextSeq = s.nextSeq.load(std::memory_order_acquire);
  int64_t first = std::max<int64_t>(0, v.nextSeq - int64_t(ddpg::kMaxRecords));
  for (int64_t q = first; q < v.nextSeq; ++q) {
    const ddpg::CollRecord& r = s.rec[size_t(q) % ddpg::kMaxRecords];
    if (r.seq.load(std::memory_order_acquire) != q) {
      // Being written right now (only the newest can be): stop here so the
      // copied sequence has no holes.
      break;
    }
    RecView x;
    x.seq = q;
    x.op = ddpg::opName(r.op);
    x.shapes = std::string(r.shapes, strnlen(r.shapes, sizeof r.shapes));
    x.dtype = std::string(r.dtype, strnlen(r.dtype, sizeof r.dtype));
    x.tag = std::string(r.tag, strnlen(r.tag, sizeof r.tag));
    x.root = r.root;
    x.reduceOp = r.reduceOp;
    x.numel = r.numel;
    x.state = RecState(r.state.load());
    x.tEnqueue = r.tEnqueue.load();
    x.tIssued = r.tIssued.load();
    x.tEnd = r.tEnd.load();
    v.recs.push_back(std::move(x));
  }
  uint64_t nm = s.nMarks.load(std::memory_order_acquire);
  uint64_t m0 = nm > ddpg::kMaxMarks ? nm - ddpg::kMaxMarks : 0;
  for (uint64_t i = m0; i < nm; ++i) {
    const ddpg::MarkRecord& m = s.marks[i % ddpg::kMaxMarks];
    MarkView x;
    x.name = std::string(m.name, strnlen(m.name, sizeof m.name));
    x.resource = std::string(m.resource, strnlen(m.resource, sizeof m.resource));
    x.kind = m.kind;
    x.tBegin = m.tBegin.load();
    x.tEnd = m.tEnd.load();
    v.marks.push_back(std::move(x));
  }
  v.errorNs = s.errorNs.load();
  if (v.errorNs) {
    v.error = std::string(s.error, strnlen(s.error, sizeof s.error));
    v.errorResource = std::string(s.errorResource, strnlen(s.errorResource, sizeof s.errorResource));
  }
  if (s.metricsReady.load()) v.metrics = std::string(s.metrics, strnlen(s.metrics, sizeof s.metrics));
  return v;
}

const char* triggerName(Trigger t) {
  switch (t) {
    case Trigger::AllDone: return "all ranks exited";
    case Trigger::Failure: return "a rank failed or died";
    case Trigger::Hang: return "no progress (hang)";
    case Trigger::WallClock: return "wall-clock limit";
  }
  return "?";
}

std::string signalName(int sig) {
  const char* d = strsignal(sig);
  static const std::map<int, const char*> names = {
      {SIGKILL, "SIGKILL"}, {SIGABRT, "SIGABRT"}, {SIGSEGV, "SIGSEGV"}, {SIGTERM, "SIGTERM"},
      {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGINT, "SIGINT"},   {SIGILL, "SIGILL"}};
  auto it = names.find(sig);
  std::string n = it != names.end() ? it->second : "signal " + std::to_string(sig);
  return d ? n + " (" + d + ")" : n;
}

std::string joinRanks(const std::vector<int>& r) {
  std::string s;
  for (size_t i = 0; i < r.size(); ++i) s += (i ? "," : "") + std::to_string(r[i]);
  return s;
}

namespace {

std::string secs(int64_t ns) {
  char b[32];
  snprintf(b, sizeof b, "%.2f s", double(ns) / 1e9);
  return b;
}

int64_t aligned(const RankView& r, int64_t t) { return t ? t + r.clockOffsetNs : 0; }

std::string describe(const RankView& r, const Snapshot& s, const AnalyzeOptions& o) {
  std::ostringstream d;
  const RecView* last = r.recs.empty() ? nullptr : &r.recs.back();
  if (r.exited) {
    if (r.signal) d << "killed by " << signalName(r.signal);
    else d << "exited with code " << r.exitCode;
    d << (last ? " after " + last->pretty() + " [" + ddpg::recStateName(last->state) + "]"
               : std::string(" before any collective"));
  } else if (last && last->state < RecState::Completed) {
    d << "blocked in " << last->pretty() << " [" << ddpg::recStateName(last->state) << "] for "
      << secs(s.triggerNs - last->tEnqueue);
  } else if (const MarkView* m = r.openMark()) {
    d << "inside '" << m->name << "'" << (m->resource.empty() ? "" : " on " + m->resource) << " for "
      << secs(s.triggerNs - m->tBegin);
    if (last) d << "; last collective " << last->pretty() << " completed";
  } else {
    d << "running outside any collective";
    if (last) d << "; last collective " << last->pretty() << " [" << ddpg::recStateName(last->state) << "]";
    if (r.progressNs && s.triggerNs - r.progressNs > o.stallNs)
      d << "; no progress for " << secs(s.triggerNs - r.progressNs);
  }
  if (!r.exited && r.heartbeatNs && s.triggerNs - r.heartbeatNs > o.frozenNs)
    d << "; no heartbeat for " << secs(s.triggerNs - r.heartbeatNs) << " (process frozen or stopped)";
  if (!r.exited && !r.wchan.empty() && r.wchan != "0") d << "; main thread waits in kernel at " << r.wchan;
  if (!r.stack.empty()) {
    // The innermost frames of the rank's own code say more than libc's.
    d << "; stack:";
    int shown = 0;
    for (const auto& f : r.stack) {
      if (f.find("[libc") != std::string::npos || f.find("[libstdc++") != std::string::npos) continue;
      d << (shown ? " <- " : " ") << f.substr(0, f.find('('));
      if (++shown == 4) break;
    }
  }
  if (!r.error.empty()) d << "; error: " << r.error;
  if (r.signal && !r.logTail.empty()) d << "; stderr: " << r.logTail;
  return d.str();
}

bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  if (!a1) a1 = INT64_MAX;
  if (!b1) b1 = INT64_MAX;
  return a0 < b1 && b0 < a1;
}

// The op that the repeating pattern of the agreed prefix predicts at `d`:
// training loops repeat, so a rank that breaks the period is the odd one.
std::string predictBySeasonality(const std::vector<std::string>& prefix) {
  int64_t n = int64_t(prefix.size());
  for (int64_t p = 1; 2 * p <= n; ++p) {
    bool ok = true;
    for (int64_t j = 0; j < p && ok; ++j) ok = prefix[size_t(n - 1 - j)] == prefix[size_t(n - 1 - j - p)];
    if (ok) return prefix[size_t(n - p)];
  }
  return "";
}

}  // namespace

std::string jsonStringField(const std::string& json, const std::string& key) {
  std::string pat = "\"" + key + "\"";
  size_t p = json.find(pat);
  if (p == std::string::npos) return "";
  p += pat.size();
  while (p < json.size() && (json[p] == ' ' || json[p] == ':')) ++p;
  if (p >= json.size() || json[p] != '"') return "";
  std::string out;
  for (size_t i = p + 1; i < json.size(); ++i) {
    if (json[i] == '\\' && i + 1 < json.size()) { out += json[++i]; continue; }
    if (json[i] == '"') break;
    out += json[i];
  }
  return out;
}

namespace {

// What every step of the analysis reads: the snapshot and the collectives in
// scope.  A collective a rank issues after its own first error (a cleanup
// barrier in a catch block) is a consequence, not evidence.
struct Ctx {
  const Snapshot& s;
  const std::vector<RankView>& R;
  int W;
  bool inScope(const RankView& r, const RecView& x) const {
    if (s.cutoffNs && x.tEnqueue > s.cutoffNs) return false;
    return r.errorNs == 0 || x.tEnqueue <= r.errorNs;
  }
  std::string sigAt(const RankView& r, int64_t q) const {
    const RecView* x = r.at(q);
    return x && inScope(r, *x) ? x->signature() : std::string();
  }
};

// Whole-run agreement (what a fixed variant must show).
bool sequencesIdentical(const std::vector<RankView>& R) {
  for (const auto& r : R) {
    if (r.nextSeq != R[0].nextSeq || r.recs.size() != R[0].recs.size()) return false;
    for (size_t i = 0; i < r.recs.size(); ++i)
      if (r.recs[i].signature() != R[0].recs[i].signature()) return false;
  }
  return true;
}

// The sequence numbers in scope on every rank [lo, hi), and the first at
// which the ranks disagree (-1: none).
struct Divergence {
  int64_t lo = 0, hi = 0, at = -1;
};
Divergence firstDivergence(const Ctx& c) {
  Divergence d;
  for (const auto& r : c.R) {
    if (!r.recs.empty()) d.lo = std::max(d.lo, r.recs.front().seq);
    int64_t n = 0;
    for (const auto& x : r.recs) if (c.inScope(r, x)) n = x.seq + 1;
    d.hi = std::max(d.hi, n);
  }
  for (int64_t q = d.lo; q < d.hi && d.at < 0; ++q) {
    std::string s0 = c.sigAt(c.R[0], q);
    for (int i = 1; i < c.W; ++i)
      if (c.sigAt(c.R[size_t(i)], q) != s0) { d.at = q; break; }
    if (s0.empty()) d.at = q;
  }
  return d;
}

// SIGPIPE inside a collective: the rank wrote to a socket whose other end, a
// peer, had already gone (a C++ rank that does not ignore SIGPIPE, as Python
// does, dies of its peer's death instead of failing).  A victim, never the
// cause.
bool diedOfVanishedPeer(const RankView& r) {
  return r.signal == SIGPIPE && !r.recs.empty() && r.recs.back().state < RecState::Completed;
}

// Deaths, abnormal exits and errors, and when the first of them happened.
struct Failures {
  bool anySignal = false, anyAbnormal = false, anyError = false;
  int64_t firstBad = 0;
};
Failures failuresOf(const std::vector<RankView>& R) {
  Failures f;
  for (const auto& r : R) {
    if (r.signal) f.anySignal = true;
    if (r.abnormalExit()) {
      f.anyAbnormal = true;
      if (r.exitNs && (!f.firstBad || r.exitNs < f.firstBad)) f.firstBad = r.exitNs;
    }
    if (r.errorNs) {
      f.anyError = true;
      if (!f.firstBad || r.errorNs < f.firstBad) f.firstBad = r.errorNs;
    }
  }
  return f;
}

// Two ranks on one file at once (the collective trace cannot show it): the
// writers, the ranks that read what was being written, the file.
struct FileRace {
  std::set<int> writers, victims;
  std::string resource;
  int64_t overlapNs = 0;
};
FileRace findFileRace(const Ctx& c) {
  FileRace fr;
  const auto& R = c.R;
  for (int a = 0; a < c.W; ++a)
    for (int b = 0; b < c.W; ++b) {
      if (a == b) continue;
      for (const auto& mb : R[size_t(b)].marks) {
        if (mb.kind != MarkKind::Write || mb.resource.empty()) continue;
        int64_t b0 = aligned(R[size_t(b)], mb.tBegin), b1 = aligned(R[size_t(b)], mb.tEnd);
        for (const auto& ma : R[size_t(a)].marks) {
          if (ma.resource != mb.resource) continue;
          int64_t a0 = aligned(R[size_t(a)], ma.tBegin), a1 = aligned(R[size_t(a)], ma.tEnd);
          if (!overlaps(a0, a1, b0, b1)) continue;
          fr.resource = mb.resource;
          if (ma.kind == MarkKind::Write) {
            fr.writers.insert(a);
            fr.writers.insert(b);
            fr.overlapNs = std::max(fr.overlapNs, std::min(a1 ? a1 : c.s.triggerNs, b1 ? b1 : c.s.triggerNs) -
                                                      std::max(a0, b0));
          } else if (ma.kind == MarkKind::Read) {
            fr.writers.insert(b);
            fr.victims.insert(a);
          }
        }
        const RankView& ra = R[size_t(a)];
        if (ra.errorNs && ra.errorResource == mb.resource &&
            overlaps(aligned(ra, ra.errorNs), aligned(ra, ra.errorNs) + 1, b0, b1)) {
          fr.writers.insert(b);
          fr.victims.insert(a);
          fr.resource = mb.resource;
        }
      }
    }
  return fr;
}

void explainRace(const Ctx& c, const FileRace& fr, std::set<int>& culprits, std::ostringstream& why) {
  culprits = fr.writers;
  if (fr.victims.empty()) {
    why << "ranks " << joinRanks({fr.writers.begin(), fr.writers.end()}) << " wrote " << fr.resource
        << " at the same time (overlap " << secs(fr.overlapNs) << ")";
  } else {
    why << "ranks " << joinRanks({fr.victims.begin(), fr.victims.end()}) << " read " << fr.resource
        << " while rank(s) " << joinRanks({fr.writers.begin(), fr.writers.end()}) << " were still writing it";
  }
  for (const auto& r : c.R)
    if (!r.error.empty()) { why << "; rank " << r.rank << " reported: " << r.error; break; }
}

// The collective sequences part at `d.at`: who issued what there, and which
// side deviates (the ranks that issued nothing; else the side the repeating
// pattern before it, or a majority, says is odd).
void explainDivergence(const Ctx& c, const Divergence& d, Verdict& v, std::set<int>& culprits,
                       std::ostringstream& why) {
  const auto& R = c.R;
  const int64_t D = d.at;
  std::vector<int> joiners, absent;
  std::map<std::string, std::vector<int>> groups;
  for (const auto& r : R) {
    std::string sg = c.sigAt(r, D);
    if (sg.empty()) absent.push_back(r.rank);
    else { joiners.push_back(r.rank); groups[sg].push_back(r.rank); }
  }
  auto prettyAt = [&](int rank) { return R[size_t(rank)].at(D)->pretty(); };
  if (groups.size() == 1 && !absent.empty()) {
    // Ranks stopped by a failed earlier collective (a peer vanished under
    // them) are victims; the ones that died, left or stalled are not.
    std::vector<int> primary;
    for (int a : absent) {
      const RankView& ra = R[size_t(a)];
      bool failedInCollective = !ra.recs.empty() && (ra.recs.back().state == RecState::Failed && !ra.signal ||
                                                     diedOfVanishedPeer(ra));
      if (!failedInCollective) primary.push_back(a);
    }
    if (!primary.empty() && primary.size() < absent.size()) {
      std::vector<int> victims;
      std::set_difference(absent.begin(), absent.end(), primary.begin(), primary.end(), std::back_inserter(victims));
      why << "rank(s) " << joinRanks(victims) << " failed in an earlier collective when rank(s) "
          << joinRanks(primary) << " went away; ";
      absent = primary;
    }
    culprits.insert(absent.begin(), absent.end());
    v.expectedOp = prettyAt(joiners[0]);
    v.culpritOp = "never issued it";
    why << "ranks " << joinRanks(joiners) << " issued " << v.expectedOp << "; rank(s) " << joinRanks(absent)
        << " never did (" << v.doing[absent[0]] << ")";
  } else if (groups.size() >= 2) {
    std::vector<std::string> prefix;
    for (int64_t q = d.lo; q < D; ++q) prefix.push_back(c.sigAt(R[0], q));
    std::string expected = predictBySeasonality(prefix);
    std::vector<int> deviant, normal;
    if (!expected.empty() && groups.count(expected)) {
      for (auto& g : groups) (g.first == expected ? normal : deviant).insert(
          (g.first == expected ? normal : deviant).end(), g.second.begin(), g.second.end());
      why << "the collectives before #" << D << " repeat with a period that predicts "
          << prettyAt(normal[0]) << "; ";
    } else {
      size_t best = 0, nBest = 0;
      for (auto& g : groups) best = std::max(best, g.second.size());
      for (auto& g : groups) nBest += g.second.size() == best;
      if (nBest == 1) {
        for (auto& g : groups) (g.second.size() == best ? normal : deviant).insert(
            (g.second.size() == best ? normal : deviant).end(), g.second.begin(), g.second.end());
        why << "majority vote at #" << D << "; ";
      } else {
        v.ambiguous = true;
        deviant = joiners;
        why << "tie at #" << D << ": no repeating pattern or majority tells which side deviates; ";
      }
    }
    std::sort(deviant.begin(), deviant.end());
    culprits.insert(deviant.begin(), deviant.end());
    v.culpritOp = prettyAt(deviant[0]);
    v.expectedOp = normal.empty() ? "" : prettyAt(normal[0]);
    for (auto& g : groups)
      why << "rank(s) " << joinRanks(g.second) << " issued " << prettyAt(g.second[0]) << "; ";
    if (!absent.empty()) why << "rank(s) " << joinRanks(absent) << " issued nothing at #" << D;
  }
}

// The same collectives everywhere: someone died, stalled or failed.
void explainFailure(const Ctx& c, const Failures& f, const Verdict& v, std::set<int>& culprits,
                    std::ostringstream& why) {
  const auto& R = c.R;
  int first = -1;
  for (const auto& r : R)
    if (r.signal && !diedOfVanishedPeer(r) && (first < 0 || r.exitNs < R[size_t(first)].exitNs)) first = r.rank;
  if (first < 0)
    for (const auto& r : R)
      if (r.abnormalExit() && r.error.empty() && (first < 0 || r.exitNs < R[size_t(first)].exitNs)) first = r.rank;
  if (first >= 0) {
    culprits.insert(first);
    why << "rank " << first << " died first: " << v.doing.at(first);
  } else if (c.s.trigger == Trigger::Hang || c.s.trigger == Trigger::WallClock) {
    for (const auto& r : R) {
      bool inColl = !r.recs.empty() && r.recs.back().state < RecState::Completed;
      if (!r.exited && !inColl) culprits.insert(r.rank);
    }
    if (!culprits.empty()) why << "rank(s) " << joinRanks({culprits.begin(), culprits.end()})
                               << " made no progress outside any collective while the others waited";
  } else if (f.anyError) {
    int e = -1;
    for (const auto& r : R)
      if (r.errorNs && (e < 0 || r.errorNs < R[size_t(e)].errorNs)) e = r.rank;
    culprits.insert(e);
    why << "rank " << e << " reported the first error: " << R[size_t(e)].error;
  }
}

// Nothing failed, but a rank measured a problem in its own behaviour (e.g.
// data-loader churn): a performance finding.
std::string explainPerf(const Ctx& c, std::set<int>& culprits, std::ostringstream& why) {
  std::string finding;
  for (const auto& r : c.R) {
    std::string f = jsonStringField(r.metrics, "finding");
    if (f.empty()) continue;
    culprits.insert(r.rank);
    if (finding.empty()) finding = f;
  }
  if (!finding.empty())
    why << "rank(s) " << joinRanks({culprits.begin(), culprits.end()}) << " reported: " << finding;
  return finding;
}

// When the first rank entered the collective that never matched, or the
// first failure, whichever came first.
int64_t onsetOf(const Ctx& c, const Divergence& d, const Failures& f, const FileRace& fr) {
  int64_t onset = f.firstBad;
  if (d.at >= 0)
    for (const auto& r : c.R)
      if (const RecView* x = r.at(d.at))
        if (c.inScope(r, *x) && x->state != RecState::Completed && (!onset || x->tEnqueue < onset)) onset = x->tEnqueue;
  if (!onset && c.s.trigger == Trigger::Hang)
    for (const auto& r : c.R)
      if (!r.exited && (!onset || r.progressNs > onset)) onset = r.progressNs;
  if (!fr.writers.empty() && !onset)
    for (const auto& r : c.R)
      for (const auto& m : r.marks)
        if (m.kind == MarkKind::Write && m.resource == fr.resource && (!onset || m.tBegin < onset)) onset = m.tBegin;
  return onset;
}

std::string summaryOf(const Ctx& c, const Verdict& v) {
  const auto& R = c.R;
  std::ostringstream sum;
  if (!v.problem) {
    sum << "completed: " << c.W << " ranks issued " << (R.empty() ? 0 : R[0].nextSeq) << " collectives"
        << (v.sequencesIdentical ? ", identical on every rank" : ", but the sequences differ");
    return sum.str();
  }
  sum << v.outcome << ": culprit rank(s) " << (v.culprits.empty() ? "unknown" : joinRanks(v.culprits));
  if (v.divergenceSeq >= 0) sum << ", divergence at collective #" << v.divergenceSeq;
  sum << ". " << v.analysis;
  if (v.outcome == "hang") {
    // What the user would have waited for without the harness.
    int64_t t = 0;
    bool expl = true;
    for (const auto& r : R)
      if (!r.exited && !r.recs.empty() && r.recs.back().state < RecState::Completed && r.pgTimeoutMs > t) {
        t = r.pgTimeoutMs;
        expl = r.pgTimeoutExplicit;
      }
    if (t > 0)
      sum << " Without the harness, c10d's " << (expl ? "explicit" : "default (unset)") << " timeout of "
          << t / 1000.0 << " s would have ended this hang.";
  }
  return sum.str();
}

}  // namespace

// Which rank(s) caused it, in order of evidence: a file race, then the first
// collective the ranks disagree on, then the first death, stall or error,
// then a performance finding a rank measured.
Verdict analyze(const Snapshot& s, const AnalyzeOptions& o) {
  Verdict v;
  v.detectNs = s.triggerNs;
  const Ctx c{s, s.ranks, int(s.ranks.size())};
  for (const auto& r : c.R) v.doing[r.rank] = describe(r, s, o);
  v.sequencesIdentical = sequencesIdentical(c.R);
  const Divergence d = firstDivergence(c);
  v.commonPrefix = d.at >= 0 ? d.at : d.hi;
  v.divergenceSeq = d.at;
  const Failures f = failuresOf(c.R);
  const FileRace fr = findFileRace(c);

  std::set<int> culprits;
  std::ostringstream why;
  if (!fr.writers.empty())
    explainRace(c, fr, culprits, why);
  else if (d.at >= 0)
    explainDivergence(c, d, v, culprits, why);
  else
    explainFailure(c, f, v, culprits, why);
  std::string finding;
  if (culprits.empty() && d.at < 0 && !f.anyAbnormal && !f.anyError && s.trigger == Trigger::AllDone)
    finding = explainPerf(c, culprits, why);
  v.culprits.assign(culprits.begin(), culprits.end());
  v.analysis = why.str();

  bool allClean = true;
  for (const auto& r : c.R) allClean = allClean && r.exited && r.exitCode == 0 && !r.signal;
  if (f.anySignal) v.outcome = "crash";
  else if (s.trigger == Trigger::Hang) v.outcome = "hang";
  else if (s.trigger == Trigger::WallClock) v.outcome = "timeout";
  else if (f.anyAbnormal || f.anyError) v.outcome = "error";
  else if (!fr.writers.empty()) v.outcome = "race";
  else if (d.at >= 0) v.outcome = "diverged";
  else if (!finding.empty()) v.outcome = "perf";
  else v.outcome = allClean ? "completed" : "error";
  v.problem = v.outcome != "completed";

  const int64_t onset = onsetOf(c, d, f, fr);
  // A performance finding has no moment of onset to measure latency from.
  v.onsetNs = v.problem && v.outcome != "perf" ? std::min(onset ? onset : s.triggerNs, s.triggerNs) : 0;
  v.summary = summaryOf(c, v);
  return v;
}

}  // namespace ddph
