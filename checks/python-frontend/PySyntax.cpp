#include "PySyntax.h"

#include <cstring>

namespace ddplint::pyfe {

SyntaxTree::SyntaxTree(std::string source) : source_(std::move(source)) {
  parser_ = ts_parser_new();
  if (!parser_ || !ts_parser_set_language(parser_, tree_sitter_python()))
    return; // the grammar's ABI does not match the runtime: ok() says so
  tree_ = ts_parser_parse_string(parser_, nullptr, source_.data(),
                                 static_cast<uint32_t>(source_.size()));
}

SyntaxTree::~SyntaxTree() {
  if (tree_)
    ts_tree_delete(tree_);
  if (parser_)
    ts_parser_delete(parser_);
}

TSNode SyntaxTree::root() const { return ts_tree_root_node(tree_); }

std::string_view SyntaxTree::text(TSNode n) const {
  if (ts_node_is_null(n))
    return {};
  const uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
  if (b > e || e > source_.size())
    return {};
  return std::string_view(source_).substr(b, e - b);
}

std::vector<SourcePos> SyntaxTree::syntaxErrors(size_t max) const {
  std::vector<SourcePos> out;
  if (!tree_ || !ts_node_has_error(root()))
    return out;
  // Depth-first, in source order; only subtrees that contain an error are entered.
  std::vector<TSNode> stack{root()};
  while (!stack.empty() && out.size() < max) {
    TSNode n = stack.back();
    stack.pop_back();
    if (kindOf(n) == "ERROR" || ts_node_is_missing(n)) {
      out.push_back(startOf(n));
      continue;
    }
    const uint32_t c = ts_node_child_count(n);
    for (uint32_t i = c; i-- > 0;) {
      TSNode k = ts_node_child(n, i);
      if (ts_node_has_error(k) || ts_node_is_missing(k))
        stack.push_back(k);
    }
  }
  return out;
}

TSNode field(TSNode n, const char *name) {
  if (ts_node_is_null(n))
    return n;
  // Field names are string literals: their ids are looked up once each.
  thread_local std::vector<std::pair<const char *, TSFieldId>> ids;
  TSFieldId id = 0;
  bool found = false;
  for (const auto &[p, i] : ids)
    if (p == name) {
      id = i;
      found = true;
      break;
    }
  if (!found) {
    id = ts_language_field_id_for_name(tree_sitter_python(), name,
                                       static_cast<uint32_t>(std::strlen(name)));
    ids.emplace_back(name, id);
  }
  if (id == 0) {
    TSNode none{};
    return none;
  }
  return ts_node_child_by_field_id(n, id);
}

// With a cursor: ts_node_named_child(n, i) walks from the first child each time.
std::vector<TSNode> namedKids(TSNode n) {
  std::vector<TSNode> out;
  if (ts_node_is_null(n) || ts_node_child_count(n) == 0)
    return out;
  TSTreeCursor c = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&c)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&c);
      if (ts_node_is_named(k))
        out.push_back(k);
    } while (ts_tree_cursor_goto_next_sibling(&c));
  }
  ts_tree_cursor_delete(&c);
  return out;
}

SourcePos startOf(TSNode n) {
  TSPoint p = ts_node_start_point(n);
  return {p.row + 1, p.column + 1};
}

SourcePos endOf(TSNode n) {
  TSPoint p = ts_node_end_point(n);
  return {p.row + 1, p.column + 1};
}

} // namespace ddplint::pyfe
