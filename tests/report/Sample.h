// A RunResult with every shape the writers must handle: a finding with notes
// and a fix-it on its own line, a fix-it on other lines, a note-level finding,
// a finding of a rule missing from the catalog, a file outside the root, a
// path that needs percent-encoding, a tab in the source line, and tool errors
// with and without a location.  Shared by the unit tests and sarif_driver.
#pragma once

#include "Finding.h"

#include <string>

namespace ddplint::testing {

// Named steps instead of nested braces: GCC 12 warns (falsely) about
// brace-initialised temporaries of these aggregates.
inline cli::Location loc(const std::string &file, unsigned line, unsigned column) {
  cli::Location l;
  l.file = file;
  l.line = line;
  l.column = column;
  return l;
}

inline cli::Note note(const cli::Location &at, const std::string &message) {
  cli::Note n;
  n.location = at;
  n.message = message;
  return n;
}

inline cli::ToolError toolError(const cli::Location &at, const std::string &message) {
  cli::ToolError e;
  e.location = at;
  e.message = message;
  return e;
}

inline cli::RunResult sampleRun(const std::string &root) {
  using namespace ddplint::cli;
  RunResult r;
  r.filesAnalyzed = 3;
  r.suppressedByBaseline = 1;

  Finding a;
  a.ruleId = "ddp-divergent-collective";
  a.severity = Severity::Error;
  a.message = "collective 'allreduce' is reached only by rank 0; the other ranks block in "
              "their next collective";
  a.location = loc(root + "/src/train.cpp", 12, 5);
  a.sourceLine = "    pg->allreduce(tensors);";
  a.notes.push_back(note(loc(root + "/src/train.cpp", 10, 7), "rank-dependent branch here"));
  a.fingerprint = "0123456789abcdef0123456789abcdef:1";
  r.findings.push_back(a);

  Finding b;
  b.ruleId = "ddp-rank0-io-barrier";
  b.severity = Severity::Warning;
  b.message = "rank 0 writes 'ckpt.pt' without a barrier after it";
  b.location = loc(root + "/src/train.cpp", 30, 2); // just after the tab
  b.sourceLine = "\tif (rank == 0) torch::save(model, \"ckpt.pt\");";
  // A fix-it on the flagged line and one on the next line.
  b.fixes.push_back({root + "/src/train.cpp", 400, 0, "pg->barrier()->wait(); ", 30, 2, 30, 2});
  b.fixes.push_back({root + "/src/train.cpp", 450, 0, "\n  pg->barrier()->wait();", 31, 1, 31, 1});
  r.findings.push_back(b);

  Finding c;
  c.ruleId = "ddp-dataloader-recreated";
  c.severity = Severity::Note;
  c.message = "data loader created inside the epoch loop";
  c.location = loc(root + "/src/my data/load er.cpp", 7, 14);
  c.sourceLine = "  auto loader = torch::data::make_data_loader(ds);";
  r.findings.push_back(c);

  Finding d;
  d.ruleId = "ddp-launch-unknown";
  d.severity = Severity::Warning;
  d.message = "a rule the catalog does not know";
  d.location = loc("/usr/include/outside/header.h", 3, 1);
  d.sourceLine = "int x;";
  r.findings.push_back(d);

  r.errors.push_back(toolError(loc(root + "/src/broken.cpp", 4, 9), "use of undeclared identifier 'foo'"));
  r.errors.push_back(toolError(loc("", 0, 0), "no compile database found"));
  return r;
}

} // namespace ddplint::testing
