// The Python syntax tree: tree-sitter's error-tolerant parser with the pinned
// tree-sitter-python grammar (scripts/setup-tree-sitter-python.sh).  A syntax
// error leaves ERROR nodes in an otherwise complete tree, so the code above and
// around it is still analysed.
#pragma once

#include <tree_sitter/api.h>

#include <string>
#include <string_view>
#include <vector>

extern "C" const TSLanguage *tree_sitter_python(void);

namespace ddplint::pyfe {

struct SourcePos {
  unsigned line = 0, column = 0; // 1-based; column counts bytes, as Clang's do
};

class SyntaxTree {
public:
  explicit SyntaxTree(std::string source);
  ~SyntaxTree();
  SyntaxTree(const SyntaxTree &) = delete;
  SyntaxTree &operator=(const SyntaxTree &) = delete;

  bool ok() const { return tree_ != nullptr; }
  TSNode root() const;
  const std::string &source() const { return source_; }
  std::string_view text(TSNode n) const;
  // The first syntax errors (ERROR and MISSING nodes), in source order.
  std::vector<SourcePos> syntaxErrors(size_t max = 3) const;

private:
  std::string source_;
  TSParser *parser_ = nullptr;
  TSTree *tree_ = nullptr;
};

inline std::string_view kindOf(TSNode n) {
  return ts_node_is_null(n) ? std::string_view() : std::string_view(ts_node_type(n));
}
inline bool is(TSNode n, std::string_view k) { return kindOf(n) == k; }
TSNode field(TSNode n, const char *name);
std::vector<TSNode> namedKids(TSNode n);
SourcePos startOf(TSNode n);
SourcePos endOf(TSNode n);

} // namespace ddplint::pyfe
