// The program model as text, for summaries kept between runs: a C or C++
// unit's functions are stored once and linked into the units that call them
// (checks/clang-frontend/UnitSummary).  Frontend-neutral: positions are
// written through a callback (the store keeps them as file:line:col) and
// read back through another.
//
// The format is a flat token stream: integers, and strings as <length>:<bytes>
// (any byte allowed), so no quoting rules; a reader that meets anything it
// does not expect fails, never guesses.
#pragma once

#include "ddplint/core/Model.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ddplint::core {

class ModelWriter {
public:
  // `place` turns a Loc into what is stored for it (0: none).
  explicit ModelWriter(std::function<std::uint32_t(Loc)> place) : place_(std::move(place)) {}
  void integer(std::int64_t v);
  void string(std::string_view s);
  void cond(const Cond &c);
  void node(const Node &n);
  void function(const Function &f);
  std::string take() { return std::move(out_); }

private:
  void loc(Loc l) { integer(l ? place_(l) : 0); }
  std::function<std::uint32_t(Loc)> place_;
  std::string out_;
};

class ModelReader {
public:
  // `loc` turns a stored place back into a Loc of the reading program.
  ModelReader(std::string_view text, std::function<Loc(std::uint32_t)> loc)
      : text_(text), loc_(std::move(loc)) {}
  bool integer(std::int64_t &v);
  bool string(std::string &s);
  bool cond(Cond &c, int depth = 0);
  bool node(Node &n, int depth = 0);
  bool function(Function &f);
  bool atEnd() const { return pos_ >= text_.size(); }
  size_t position() const { return pos_; }

private:
  bool readLoc(Loc &l);
  bool ok_ = true;
  std::string_view text_;
  size_t pos_ = 0;
  std::function<Loc(std::uint32_t)> loc_;
};

} // namespace ddplint::core

namespace ddplint::core {
// Every position of a function (its own, its nodes', their conditions'),
// replaced by what `map` makes of it (0 stays 0), in tree order.
void remapLocs(Function &f, const std::function<Loc(Loc)> &map);
void remapLocs(Cond &c, const std::function<Loc(Loc)> &map);
} // namespace ddplint::core
