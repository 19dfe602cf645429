#include "Fixes.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace ddplint::cli {

FixSummary applyFixes(const std::vector<Finding> &findings) {
  FixSummary s;
  using Key = std::tuple<unsigned, unsigned, std::string>;
  std::map<std::string, std::set<Key>> byFile;
  for (const auto &f : findings)
    for (const auto &e : f.fixes)
      byFile[e.file].insert({e.offset, e.length, e.replacement});

  for (const auto &[file, edits] : byFile) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      s.errors.push_back(fileError(file, "cannot read the file to apply fix-its"));
      continue;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    in.close();

    // Edits are applied back to front so earlier offsets stay valid; an edit
    // that overlaps the one after it would corrupt the file, so it is dropped.
    std::vector<Key> ordered(edits.begin(), edits.end());
    std::vector<Key> keep;
    unsigned nextStart = static_cast<unsigned>(text.size()) + 1;
    for (auto it = ordered.rbegin(); it != ordered.rend(); ++it) {
      const auto &[off, len, repl] = *it;
      if (off + len > text.size() || off + len > nextStart) {
        s.errors.push_back(fileError(file, "a fix-it at byte " + std::to_string(off) +
                                               " overlaps another one or lies outside the "
                                               "file; it was not applied"));
        continue;
      }
      keep.push_back(*it);
      nextStart = off;
    }
    for (const auto &[off, len, repl] : keep) // already back to front
      text.replace(off, len, repl);
    if (keep.empty())
      continue;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) {
      s.errors.push_back(fileError(file, "cannot write the fixed file"));
      continue;
    }
    s.applied += static_cast<unsigned>(keep.size());
    ++s.files;
  }
  return s;
}

} // namespace ddplint::cli
