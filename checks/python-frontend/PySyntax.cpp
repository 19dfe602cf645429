#include "PySyntax.h"

#include <functional>

#include <atomic>
#include <cctype>

#include <cstring>

namespace ddplint::pyfe {
namespace {

// One parser per thread, reused: its stacks and buffers are allocated once.
struct Parser {
  TSParser *p = ts_parser_new();
  bool ok = p && ts_parser_set_language(p, tree_sitter_python());
  ~Parser() {
    if (p)
      ts_parser_delete(p);
  }
};

// Kind names by symbol, with their lengths: compared as string_views, never strlen'd.
const std::vector<std::string_view> &kindNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    const TSLanguage *lang = tree_sitter_python();
    const uint32_t count = ts_language_symbol_count(lang);
    for (uint32_t s = 0; s < count; ++s) {
      const char *n = ts_language_symbol_name(lang, static_cast<TSSymbol>(s));
      v.emplace_back(n ? n : "");
    }
    return v;
  }();
  return names;
}

// tree-sitter-python 0.23.6 rejects a starred element written before a
// bracket after a comma: `return name, *(int(x) for x in m)` (litgpt),
// `x = 1, *[2]`, or first after `return`, `yield` or `=` (suncet's `return
// *[transform(img) for _ in range(n)], target`), which CPython accepts since
// 3.8.  The same bytes with that `*` blanked (`return name, (int(...))`)
// parse, at the same offsets, and a starred element means nothing else to
// the rules.  Empty: nothing to blank.
std::string withoutBracketedStars(const std::string &src) {
  std::string out;
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\'; };
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  // The starred element opens the expression list: after `return`, `yield`
  // or a plain `=` (not `==`, `<=`, `+=` ...).
  auto opensList = [&](size_t b) {
    for (std::string_view kw : {std::string_view("return"), std::string_view("yield")})
      if (b >= kw.size() && std::string_view(src).substr(b - kw.size(), kw.size()) == kw &&
          (b == kw.size() || !word(src[b - kw.size() - 1])))
        return true;
    return src[b - 1] == '=' && (b < 2 || std::string_view("=<>!:+-*/%&|^@").find(src[b - 2]) == std::string_view::npos);
  };
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] != '*' || (i > 0 && src[i - 1] == '*') || (i + 1 < src.size() && src[i + 1] == '*'))
      continue;
    size_t b = i;
    while (b > 0 && blank(src[b - 1]))
      --b;
    size_t e = i + 1;
    while (e < src.size() && blank(src[e]))
      ++e;
    if (b == 0 || (src[b - 1] != ',' && !opensList(b)) || e >= src.size() || (src[e] != '(' && src[e] != '['))
      continue;
    if (out.empty())
      out = src;
    out[i] = ' ';
  }
  return out;
}

} // namespace

namespace {
std::atomic<unsigned long> gParses{0};
}
unsigned long SyntaxTree::parses() { return gParses.load(); }

SyntaxTree::SyntaxTree(std::string source)
    : source_(std::move(source)), kindNames_(&kindNames()) {
  ++gParses;
  thread_local Parser parser;
  if (!parser.ok)
    return; // the grammar's ABI does not match the runtime: ok() says so
  TSTree *tree = ts_parser_parse_string(parser.p, nullptr, source_.data(),
                                        static_cast<uint32_t>(source_.size()));
  if (!tree)
    return;
  if (ts_node_has_error(ts_tree_root_node(tree))) {
    // A grammar gap, not the user's error: parsed again without it.  Texts
    // still come from the source as written (the offsets are the same).
    const std::string again = withoutBracketedStars(source_);
    if (!again.empty()) {
      TSTree *second = ts_parser_parse_string(parser.p, nullptr, again.data(),
                                              static_cast<uint32_t>(again.size()));
      if (second && !ts_node_has_error(ts_tree_root_node(second))) {
        ts_tree_delete(tree);
        tree = second;
      } else if (second) {
        ts_tree_delete(second);
      }
    }
  }
  // Preorder copy with one cursor; then each node's children, grouped by parent.
  nodes_.reserve(source_.size() / 3 + 16);
  std::vector<uint32_t> open; // the indices of the current node's ancestors
  TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(tree));
  for (;;) {
    TSNode n = ts_tree_cursor_current_node(&c);
    Rec r;
    r.parent = open.empty() ? 0 : open.back();
    r.startByte = ts_node_start_byte(n);
    r.endByte = ts_node_end_byte(n);
    r.start = ts_node_start_point(n);
    r.end = ts_node_end_point(n);
    r.symbol = ts_node_symbol(n);
    r.field = ts_tree_cursor_current_field_id(&c);
    r.flags = (ts_node_is_named(n) ? Named : 0) | (ts_node_is_missing(n) ? Missing : 0) |
              (ts_node_has_error(n) ? HasError : 0) | (open.empty() ? IsRoot : 0);
    nodes_.push_back(r);
    if (ts_tree_cursor_goto_first_child(&c)) {
      open.push_back(static_cast<uint32_t>(nodes_.size() - 1));
      continue;
    }
    bool done = false;
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) {
        done = true;
        break;
      }
      open.pop_back();
    }
    if (done)
      break;
  }
  ts_tree_cursor_delete(&c);
  ts_tree_delete(tree);

  // Counting sort by parent keeps each parent's children in source order.
  const size_t n = nodes_.size();
  std::vector<uint32_t> count(n + 1, 0), namedCount(n + 1, 0);
  for (size_t i = 1; i < n; ++i) {
    ++count[nodes_[i].parent];
    if (nodes_[i].flags & Named)
      ++namedCount[nodes_[i].parent];
  }
  uint32_t at = 0, namedAt = 0;
  for (size_t i = 0; i < n; ++i) {
    nodes_[i].kidsBegin = nodes_[i].kidsEnd = at;
    nodes_[i].namedBegin = nodes_[i].namedEnd = namedAt;
    at += count[i];
    namedAt += namedCount[i];
  }
  kids_.resize(at);
  named_.resize(namedAt);
  for (size_t i = 1; i < n; ++i) {
    Rec &p = nodes_[nodes_[i].parent];
    kids_[p.kidsEnd++] = static_cast<uint32_t>(i);
    if (nodes_[i].flags & Named)
      named_[p.namedEnd++] = static_cast<uint32_t>(i);
  }
  ok_ = true;
}

std::string_view SyntaxTree::text(SyntaxNode n) const {
  if (n.isNull())
    return {};
  const Rec &r = rec(n);
  if (r.startByte > r.endByte || r.endByte > source_.size())
    return {};
  return std::string_view(source_).substr(r.startByte, r.endByte - r.startByte);
}

std::vector<SourcePos> SyntaxTree::syntaxErrors(size_t max) const {
  std::vector<SourcePos> out;
  if (!ok_ || !hasError(root()))
    return out;
  // Depth-first, in source order; only subtrees that contain an error are entered.
  std::vector<SyntaxNode> stack{root()};
  while (!stack.empty() && out.size() < max) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    if (kindOf(n) == "ERROR" || isMissing(n)) {
      out.push_back(startOf(n));
      continue;
    }
    NodeList k = allKids(n);
    for (auto it = k.rbegin(); it != k.rend(); ++it)
      if (hasError(*it) || isMissing(*it))
        stack.push_back(*it);
  }
  return out;
}

SyntaxNode field(SyntaxNode n, const char *name) {
  if (n.isNull())
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
  if (id == 0)
    return SyntaxNode();
  for (SyntaxNode k : allKids(n))
    if (n.tree()->rec(k).field == id)
      return k;
  return SyntaxNode();
}

SourcePos startOf(SyntaxNode n) {
  if (n.isNull())
    return {1, 1};
  TSPoint p = n.tree()->rec(n).start;
  return {p.row + 1, p.column + 1};
}

SourcePos endOf(SyntaxNode n) {
  if (n.isNull())
    return {1, 1};
  TSPoint p = n.tree()->rec(n).end;
  return {p.row + 1, p.column + 1};
}


std::map<std::string, std::string> libraryFunctionAliases(const SyntaxTree &tree) {
  std::map<std::string, std::string> out;
  SyntaxNode root = tree.root();
  if (root.isNull())
    return out;
  auto str = [&](SyntaxNode n) { return std::string(tree.text(n)); };
  // The module's own imports of torch, as `import torch.distributed as dist`
  // or `from torch import distributed as dist` bind them.
  std::map<std::string, std::string> imports;
  for (SyntaxNode st : namedKids(root)) {
    if (is(st, "import_statement")) {
      for (SyntaxNode k : namedKids(st))
        if (is(k, "dotted_name")) {
          const std::string full = str(k);
          imports[full.substr(0, full.find('.'))] = full.substr(0, full.find('.'));
        } else if (is(k, "aliased_import")) {
          imports[str(field(k, "alias"))] = str(field(k, "name"));
        }
    } else if (is(st, "import_from_statement")) {
      const std::string mod = str(field(st, "module_name"));
      if (mod.empty() || mod[0] == '.')
        continue;
      for (SyntaxNode k : namedKids(st)) {
        if (k == field(st, "module_name"))
          continue;
        if (is(k, "dotted_name"))
          imports[str(k)] = mod + "." + str(k);
        else if (is(k, "aliased_import"))
          imports[str(field(k, "alias"))] = mod + "." + str(field(k, "name"));
      }
    }
  }
  std::function<std::string(SyntaxNode)> dotted = [&](SyntaxNode n) -> std::string {
    if (is(n, "identifier")) {
      auto it = imports.find(str(n));
      return it == imports.end() ? std::string() : it->second;
    }
    if (is(n, "attribute")) {
      const std::string o = dotted(field(n, "object"));
      return o.empty() ? o : o + "." + str(field(n, "attribute"));
    }
    return "";
  };
  std::map<std::string, int> bound;
  for (SyntaxNode st : namedKids(root)) {
    if (!is(st, "expression_statement") || namedChildCount(st) != 1)
      continue;
    SyntaxNode a = namedChild(st, 0);
    if (!is(a, "assignment") || !is(field(a, "left"), "identifier") || field(a, "right").isNull())
      continue;
    const std::string name = str(field(a, "left"));
    ++bound[name];
    SyntaxNode r = field(a, "right");
    while (is(r, "parenthesized_expression") && namedChildCount(r) == 1)
      r = namedChild(r, 0);
    if (is(r, "call")) {
      const std::string f = dotted(field(r, "function"));
      SyntaxNode al = field(r, "arguments");
      if ((f != "functools.partial" && !(f.empty() && str(field(r, "function")) == "partial")) ||
          namedChildCount(al) == 0)
        continue;
      r = namedChild(al, 0);
    }
    const std::string target = dotted(r);
    if (target.rfind("torch.", 0) == 0 && target.size() > 6)
      out[name] = target;
  }
  for (auto it = out.begin(); it != out.end();)
    it = bound[it->first] > 1 ? out.erase(it) : std::next(it);
  return out;
}

} // namespace ddplint::pyfe
