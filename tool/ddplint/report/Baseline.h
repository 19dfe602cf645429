// Baselines: adopt ddplint on a codebase with known findings, fail only on new ones.
//
// Fingerprints identify a finding without its line number, so a baseline
// survives edits elsewhere in the file.  One is
//     <32 hex digits>:<occurrence>
// where the hex digits are a SHA-256 prefix of
//     rule id, path relative to the root, the flagged source line with
//     whitespace collapsed, the message with line/column numbers (and the
//     root's absolute path) normalised away
// and <occurrence> (1-based) counts findings with the same hash in that file
// in line order, so two identical findings on identical lines differ.  Notes
// are left out: they point at other lines (the rank condition) that move
// independently of the finding.  The same value is SARIF's
// partialFingerprints["ddplint/v1"].
//
// Baseline file, version 1 (sorted by file, line, rule, fingerprint; written
// atomically; "line" and "message" are informational, only rule+fingerprint
// match):
//   {
//     "version": 1,
//     "tool": "ddplint",
//     "findings": [
//       {"rule": "ddp-...", "file": "src/train.cpp", "fingerprint": "...",
//        "message": "...", "line": 42}
//     ]
//   }
#pragma once

#include "Finding.h"

#include <string>
#include <vector>

namespace ddplint::cli {

struct BaselineEntry {
  std::string rule;
  std::string file; // relative to the root the baseline was written with
  std::string fingerprint;
  std::string message;
  unsigned line = 0;
};

struct Baseline {
  std::string path; // where it was loaded from
  std::vector<BaselineEntry> entries;
};

// Fills Finding::fingerprint of every finding.  `root` is the project root
// (absolute); files outside it are hashed by their absolute path.
void computeFingerprints(std::vector<Finding> &findings, const std::string &root);

// Writes the baseline of `findings` to `path` (computing fingerprints for
// findings that have none).  On failure returns false and sets `err` to a
// message without the path (the caller reports it against `path`).
bool writeBaseline(const std::string &path, const std::vector<Finding> &findings,
                   const std::string &root, std::string &err);

// Reads a baseline.  On failure returns false and sets `err` to a complete
// clang-style diagnostic, "PATH:LINE:COL: error: ..." (no LINE:COL when the
// file cannot be read), for malformed JSON, a wrong version or wrong types.
bool loadBaseline(const std::string &path, Baseline &out, std::string &err);

// Removes the findings the baseline records and returns how many.  Multiset
// semantics: an entry suppresses one finding with its rule and fingerprint;
// findings without a fingerprint are never suppressed.
unsigned applyBaseline(std::vector<Finding> &findings, const Baseline &baseline);

// The parts of the fingerprint, exposed for tests and for tools that explain
// why two findings match.
std::string normaliseSourceLine(const std::string &line);
std::string normaliseMessage(const std::string &message, const std::string &root);

} // namespace ddplint::cli
