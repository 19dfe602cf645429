// The Python syntax tree: tree-sitter's error-tolerant parser with the pinned
// tree-sitter-python grammar (scripts/setup-tree-sitter-python.sh).  A syntax
// error leaves ERROR nodes in an otherwise complete tree, so the code above and
// around it is still analysed.
//
// The parse tree is copied once, in one cursor walk, into a flat array: the
// model builder asks for kinds, fields, children and parents many times per
// node, and tree-sitter answers each of those by walking (a node's parent or
// its n-th child costs a scan from its parent or first child).  In the array
// each is an index.
#pragma once

#include <tree_sitter/api.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

extern "C" const TSLanguage *tree_sitter_python(void);

namespace ddplint::pyfe {

inline bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
inline bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
// A module or tensor method that moves or converts its receiver and returns
// the same thing (`model.to(device)`, `x.half()`): what it is, which class it
// is an instance of and which ranks it depends on carry through.
inline bool isMoveOrCastMethod(std::string_view m) {
  return m == "to" || m == "cuda" || m == "cpu" || m == "float" || m == "half" ||
         m == "bfloat16" || m == "double";
}

struct SourcePos {
  unsigned line = 0, column = 0; // 1-based; column counts bytes, as Clang's do
};

class SyntaxTree;

// A node of a SyntaxTree, by value (a tree and an index); default: no node.
class SyntaxNode {
public:
  SyntaxNode() = default;
  SyntaxNode(const SyntaxTree *t, uint32_t i) : tree_(t), index_(i) {}
  bool isNull() const { return tree_ == nullptr; }
  const SyntaxTree *tree() const { return tree_; }
  uint32_t index() const { return index_; }
  friend bool operator==(SyntaxNode a, SyntaxNode b) {
    return a.tree_ == b.tree_ && (a.tree_ == nullptr || a.index_ == b.index_);
  }
  friend bool operator!=(SyntaxNode a, SyntaxNode b) { return !(a == b); }

private:
  const SyntaxTree *tree_ = nullptr;
  uint32_t index_ = 0;
};

// Children of a node, as a view into the tree (no copy).
class NodeList {
public:
  class iterator {
  public:
    using value_type = SyntaxNode;
    using difference_type = std::ptrdiff_t;
    using reference = SyntaxNode;
    using pointer = void;
    using iterator_category = std::random_access_iterator_tag;
    iterator(const SyntaxTree *t, const uint32_t *p) : t_(t), p_(p) {}
    SyntaxNode operator*() const { return {t_, *p_}; }
    iterator &operator++() { ++p_; return *this; }
    iterator &operator--() { --p_; return *this; }
    iterator operator+(difference_type d) const { return {t_, p_ + d}; }
    iterator operator-(difference_type d) const { return {t_, p_ - d}; }
    difference_type operator-(const iterator &o) const { return p_ - o.p_; }
    bool operator==(const iterator &o) const { return p_ == o.p_; }
    bool operator!=(const iterator &o) const { return p_ != o.p_; }

  private:
    const SyntaxTree *t_;
    const uint32_t *p_;
  };
  using reverse_iterator = std::reverse_iterator<iterator>;

  NodeList() = default;
  NodeList(const SyntaxTree *t, const uint32_t *b, const uint32_t *e) : t_(t), b_(b), e_(e) {}
  iterator begin() const { return {t_, b_}; }
  iterator end() const { return {t_, e_}; }
  reverse_iterator rbegin() const { return reverse_iterator(end()); }
  reverse_iterator rend() const { return reverse_iterator(begin()); }
  size_t size() const { return static_cast<size_t>(e_ - b_); }
  bool empty() const { return b_ == e_; }
  SyntaxNode operator[](size_t i) const { return {t_, b_[i]}; }
  SyntaxNode front() const { return (*this)[0]; }
  SyntaxNode back() const { return (*this)[size() - 1]; }
  operator std::vector<SyntaxNode>() const { return {begin(), end()}; }

private:
  const SyntaxTree *t_ = nullptr;
  const uint32_t *b_ = nullptr, *e_ = nullptr;
};

class SyntaxTree {
public:
  explicit SyntaxTree(std::string source);
  SyntaxTree(const SyntaxTree &) = delete;
  SyntaxTree &operator=(const SyntaxTree &) = delete;

  bool ok() const { return ok_; }
  // Trees parsed in this process so far (DDPLINT_PY_TIMING's count).
  static unsigned long parses();
  SyntaxNode root() const { return ok_ ? SyntaxNode(this, 0) : SyntaxNode(); }
  const std::string &source() const { return source_; }
  std::string_view text(SyntaxNode n) const;
  // The first syntax errors (ERROR and MISSING nodes), in source order.
  std::vector<SourcePos> syntaxErrors(size_t max = 3) const;

  struct Rec {
    uint32_t parent = 0; // the root is its own parent (flag Root)
    uint32_t kidsBegin = 0, kidsEnd = 0, namedBegin = 0, namedEnd = 0;
    uint32_t startByte = 0, endByte = 0;
    TSPoint start{}, end{};
    TSSymbol symbol = 0;
    TSFieldId field = 0; // the field this node fills in its parent (0: none)
    uint8_t flags = 0;
  };
  std::string_view kindName(TSSymbol s) const {
    if (s < kindNames_->size())
      return (*kindNames_)[s];
    return s == static_cast<TSSymbol>(-1) ? std::string_view("ERROR") : std::string_view();
  }
  enum Flag : uint8_t { Named = 1, Missing = 2, HasError = 4, IsRoot = 8 };
  const Rec &rec(SyntaxNode n) const { return nodes_[n.index()]; }
  NodeList kids(SyntaxNode n) const {
    const Rec &r = rec(n);
    return {this, kids_.data() + r.kidsBegin, kids_.data() + r.kidsEnd};
  }
  NodeList named(SyntaxNode n) const {
    const Rec &r = rec(n);
    return {this, named_.data() + r.namedBegin, named_.data() + r.namedEnd};
  }

private:
  std::string source_;
  bool ok_ = false;
  std::vector<Rec> nodes_;      // preorder; 0 is the root
  std::vector<uint32_t> kids_;  // every node's children, grouped by parent, in order
  std::vector<uint32_t> named_; // the same, named children only
  const std::vector<std::string_view> *kindNames_; // by symbol, the grammar's names
};

// The node's kind ("identifier", "call", "ERROR"; "==" for anonymous tokens).
inline std::string_view kindOf(SyntaxNode n) {
  return n.isNull() ? std::string_view() : n.tree()->kindName(n.tree()->rec(n).symbol);
}
inline bool is(SyntaxNode n, std::string_view k) { return kindOf(n) == k; }
// A literal kind: its length is known here, not measured with strlen (the
// builder asks this for nearly every node it meets).
template <size_t N> inline bool is(SyntaxNode n, const char (&k)[N]) {
  return kindOf(n) == std::string_view(k, N - 1);
}
// The first child in the grammar field `name` (a string literal), or no node.
SyntaxNode field(SyntaxNode n, const char *name);
inline NodeList namedKids(SyntaxNode n) {
  return n.isNull() ? NodeList() : n.tree()->named(n);
}
inline uint32_t namedChildCount(SyntaxNode n) {
  return static_cast<uint32_t>(namedKids(n).size());
}
inline SyntaxNode namedChild(SyntaxNode n, uint32_t i) {
  NodeList k = namedKids(n);
  return i < k.size() ? k[i] : SyntaxNode();
}
inline NodeList allKids(SyntaxNode n) { return n.isNull() ? NodeList() : n.tree()->kids(n); }
// Visits `root` and the nodes under it that run when it runs: not the bodies
// of the functions, lambdas and classes it defines (they run when called).
// `visit` returns false to stop the walk.
template <class Visit> bool forEachOwnNode(SyntaxNode root, Visit &&visit) {
  std::vector<SyntaxNode> todo{root};
  while (!todo.empty()) {
    SyntaxNode n = todo.back();
    todo.pop_back();
    if (!(n == root) && (is(n, "function_definition") || is(n, "class_definition") || is(n, "lambda")))
      continue;
    if (!visit(n))
      return false;
    for (SyntaxNode k : namedKids(n))
      todo.push_back(k);
  }
  return true;
}
// A path built from parts: `os.path.join(out, name)`, `out.joinpath(name)`,
// `out + "/" + name`, `out / name`, `f"{out}/{name}"`.
inline bool pathExpression(SyntaxNode e) {
  if (is(e, "call")) {
    SyntaxNode fn = field(e, "function");
    if (!is(fn, "attribute"))
      return false;
    const std::string_view a = e.tree()->text(field(fn, "attribute"));
    return a == "join" || a == "joinpath";
  }
  if (is(e, "binary_operator")) {
    const std::string_view op = e.tree()->text(field(e, "operator"));
    return op == "+" || op == "/";
  }
  if (is(e, "string"))
    for (SyntaxNode k : namedKids(e))
      if (is(k, "interpolation"))
        return true;
  return false;
}
// The string literals a path is spelled with (`osp.join(out,
// 'checkpoint_best.pt')` gives "checkpoint_best.pt"; an f-string's text
// with its quotes dropped).
inline std::set<std::string> pathLiterals(SyntaxNode from) {
  std::set<std::string> out;
  std::vector<SyntaxNode> st{from};
  while (!st.empty()) {
    SyntaxNode n = st.back();
    st.pop_back();
    if (n.isNull())
      continue;
    if (is(n, "string")) {
      std::string t(n.tree()->text(n));
      const size_t open = t.find_first_of("'\"");
      if (open != std::string::npos)
        t = t.substr(open);
      t.erase(std::remove(t.begin(), t.end(), '\''), t.end());
      t.erase(std::remove(t.begin(), t.end(), '"'), t.end());
      if (!t.empty())
        out.insert(t);
      continue;
    }
    for (SyntaxNode k : namedKids(n))
      st.push_back(k);
  }
  return out;
}
// A parameter's name node: `x`, `x=1`, `x: int`, `x: int = 1`.
inline SyntaxNode parameterName(SyntaxNode p) {
  if (is(p, "identifier"))
    return p;
  if (is(p, "typed_parameter") && namedChildCount(p) > 0)
    return namedChild(p, 0); // `gpu_id: int` has no name field
  return field(p, "name");
}
inline SyntaxNode parentOf(SyntaxNode n) {
  if (n.isNull())
    return n;
  const auto &r = n.tree()->rec(n);
  return (r.flags & SyntaxTree::IsRoot) ? SyntaxNode() : SyntaxNode(n.tree(), r.parent);
}
// The function `n` is written in, or the module when it is at top level.
inline SyntaxNode enclosingScope(SyntaxNode n) {
  SyntaxNode scope = parentOf(n);
  while (!scope.isNull() && !is(scope, "function_definition") && !parentOf(scope).isNull())
    scope = parentOf(scope);
  return scope;
}
inline uint32_t startByte(SyntaxNode n) { return n.isNull() ? 0 : n.tree()->rec(n).startByte; }
inline uint32_t endByte(SyntaxNode n) { return n.isNull() ? 0 : n.tree()->rec(n).endByte; }
inline bool hasError(SyntaxNode n) {
  return !n.isNull() && (n.tree()->rec(n).flags & SyntaxTree::HasError);
}
inline bool isNamed(SyntaxNode n) {
  return !n.isNull() && (n.tree()->rec(n).flags & SyntaxTree::Named);
}
inline bool isMissing(SyntaxNode n) {
  return !n.isNull() && (n.tree()->rec(n).flags & SyntaxTree::Missing);
}
SourcePos startOf(SyntaxNode n);
SourcePos endOf(SyntaxNode n);

// A module's top-level names bound to one of torch's functions
// (`allreduce = dist.all_reduce`, `allreduce_async = functools.partial(
// dist.all_reduce, async_op=True)`; DeCLIP's vendored `linklink` shim): the
// function's dotted name, as an import would bind the name.  A name bound
// twice at top level binds nothing here.
std::map<std::string, std::string> libraryFunctionAliases(const SyntaxTree &tree);

} // namespace ddplint::pyfe
