#include "ddplint/core/ModelIO.h"

namespace ddplint::core {
namespace {
// Trees deeper than this are refused when read (a corrupt or hostile file
// must not overflow the stack); the frontends never build them this deep.
constexpr int kMaxDepth = 4000;
} // namespace

void ModelWriter::integer(std::int64_t v) {
  out_ += std::to_string(v);
  out_ += ' ';
}

void ModelWriter::string(std::string_view s) {
  out_ += std::to_string(s.size());
  out_ += ':';
  out_.append(s.data(), s.size());
  out_ += ' ';
}

void ModelWriter::cond(const Cond &c) {
  integer(int(c.kind));
  integer(c.constValue);
  integer(int(c.op));
  integer(c.value);
  integer(c.mod);
  string(c.key);
  integer(int(c.dep));
  integer(c.probesFile | c.errorCheck << 1 | c.sweep << 2 | c.localMain << 3 | c.invariant << 4);
  string(c.text);
  string(c.group);
  loc(c.loc);
  integer(std::int64_t(c.kids.size()));
  for (const Cond &k : c.kids)
    cond(k);
}

void ModelWriter::node(const Node &n) {
  integer(int(n.kind));
  loc(n.loc);
  integer(int(n.event));
  string(n.name);
  integer(int(n.pathDep));
  string(n.pathKey);
  string(n.callee);
  string(n.standsInFor);
  string(n.group);
  integer(n.assumedDdp);
  if (n.kind == Node::Kind::If)
    cond(n.cond);
  integer(int(n.trip));
  string(n.tripText);
  loc(n.tripLoc);
  integer(n.perEpoch);
  integer(int(n.exit));
  integer(std::int64_t(n.kids.size()));
  for (const Node &k : n.kids)
    node(k);
}

void ModelWriter::function(const Function &f) {
  string(f.key);
  string(f.name);
  loc(f.loc);
  integer((f.launchesRanks ? 1 : 0) | (f.runsEveryStep ? 2 : 0) | (f.libraryHook ? 4 : 0));
  node(f.body);
}

bool ModelReader::integer(std::int64_t &v) {
  if (!ok_)
    return false;
  size_t p = pos_;
  bool neg = false;
  if (p < text_.size() && text_[p] == '-') {
    neg = true;
    ++p;
  }
  const size_t digits = p;
  std::uint64_t x = 0;
  while (p < text_.size() && text_[p] >= '0' && text_[p] <= '9' && p - digits < 19)
    x = x * 10 + std::uint64_t(text_[p++] - '0');
  if (p == digits || p >= text_.size() || text_[p] != ' ')
    return ok_ = false;
  pos_ = p + 1;
  v = neg ? -std::int64_t(x) : std::int64_t(x);
  return true;
}

bool ModelReader::string(std::string &s) {
  if (!ok_)
    return false;
  size_t p = pos_;
  std::uint64_t n = 0;
  const size_t digits = p;
  while (p < text_.size() && text_[p] >= '0' && text_[p] <= '9' && p - digits < 12)
    n = n * 10 + std::uint64_t(text_[p++] - '0');
  if (p == digits || p >= text_.size() || text_[p] != ':' || n > text_.size() - p - 1)
    return ok_ = false;
  ++p;
  if (p + n >= text_.size() || text_[p + n] != ' ')
    return ok_ = false;
  s.assign(text_.substr(p, n));
  pos_ = p + n + 1;
  return true;
}

bool ModelReader::readLoc(Loc &l) {
  std::int64_t v = 0;
  if (!integer(v) || v < 0 || v > std::int64_t(UINT32_MAX))
    return ok_ = false;
  l = v ? loc_(std::uint32_t(v)) : 0;
  return true;
}

template <typename E> static bool inRange(std::int64_t v, E last) {
  return v >= 0 && v <= std::int64_t(last);
}

bool ModelReader::cond(Cond &c, int depth) {
  std::int64_t kind, cv, op, value, mod, dep, flags, kids;
  if (depth > kMaxDepth || !integer(kind) || !inRange(kind, Cond::Kind::Or) || !integer(cv) ||
      !integer(op) || !inRange(op, CmpOp::GE) || !integer(value) || !integer(mod) ||
      !string(c.key) || !integer(dep) || !inRange(dep, Dep::Local) || !integer(flags) ||
      !string(c.text) || !string(c.group) || !readLoc(c.loc) || !integer(kids) || kids < 0 || kids > 1 << 20)
    return ok_ = false;
  c.kind = Cond::Kind(kind);
  c.constValue = cv != 0;
  c.op = CmpOp(op);
  c.value = value;
  c.mod = mod;
  c.dep = Dep(dep);
  c.probesFile = flags & 1;
  c.errorCheck = flags & 2;
  c.sweep = flags & 4;
  c.localMain = flags & 8;
  c.invariant = flags & 16;
  c.kids.resize(size_t(kids));
  for (Cond &k : c.kids)
    if (!cond(k, depth + 1))
      return false;
  return true;
}

bool ModelReader::node(Node &n, int depth) {
  std::int64_t kind, event, pathDep, trip, perEpoch, exit, kids, assumedDdp;
  if (depth > kMaxDepth || !integer(kind) || !inRange(kind, Node::Kind::Exit) || !readLoc(n.loc) ||
      !integer(event) || !inRange(event, EventKind::FileRead) || !string(n.name) ||
      !integer(pathDep) || !inRange(pathDep, Dep::Local) || !string(n.pathKey) || !string(n.callee) ||
      !string(n.standsInFor) || !string(n.group) || !integer(assumedDdp) || assumedDdp < 0 || assumedDdp > 1)
    return ok_ = false;
  n.assumedDdp = assumedDdp == 1;
  n.kind = Node::Kind(kind);
  if (n.kind == Node::Kind::If && !cond(n.cond))
    return false;
  if (!integer(trip) || !inRange(trip, Dep::Local) || !string(n.tripText) || !readLoc(n.tripLoc) ||
      !integer(perEpoch) || !integer(exit) || !inRange(exit, ExitKind::Terminate) ||
      !integer(kids) || kids < 0 || kids > 1 << 20)
    return ok_ = false;
  n.event = EventKind(event);
  n.pathDep = Dep(pathDep);
  n.trip = Dep(trip);
  n.perEpoch = perEpoch != 0;
  n.exit = ExitKind(exit);
  n.kids.resize(size_t(kids));
  for (Node &k : n.kids)
    if (!node(k, depth + 1))
      return false;
  return true;
}

bool ModelReader::function(Function &f) {
  std::int64_t flags = 0;
  if (!string(f.key) || !string(f.name) || !readLoc(f.loc) || !integer(flags) || flags < 0 ||
      flags > 3)
    return false;
  f.launchesRanks = (flags & 1) != 0;
  f.runsEveryStep = (flags & 2) != 0;
  f.libraryHook = (flags & 4) != 0;
  return node(f.body);
}

} // namespace ddplint::core

namespace ddplint::core {
namespace {
Loc mapped(Loc l, const std::function<Loc(Loc)> &map) { return l ? map(l) : 0; }

void remapNode(Node &n, const std::function<Loc(Loc)> &map) {
  n.loc = mapped(n.loc, map);
  if (n.kind == Node::Kind::If)
    remapLocs(n.cond, map);
  n.tripLoc = mapped(n.tripLoc, map);
  for (Node &k : n.kids)
    remapNode(k, map);
}
} // namespace

void remapLocs(Cond &c, const std::function<Loc(Loc)> &map) {
  c.loc = mapped(c.loc, map);
  for (Cond &k : c.kids)
    remapLocs(k, map);
}

void remapLocs(Function &f, const std::function<Loc(Loc)> &map) {
  f.loc = mapped(f.loc, map);
  remapNode(f.body, map);
}
} // namespace ddplint::core
