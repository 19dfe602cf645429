#include "PythonLinter.h"

#include "PyModelBuilder.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace ddplint::pyfe {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::vector<std::string_view> lines(const std::string &src) {
  std::vector<std::string_view> out;
  size_t b = 0;
  for (size_t i = 0; i <= src.size(); ++i)
    if (i == src.size() || src[i] == '\n') {
      out.push_back(std::string_view(src).substr(b, i - b));
      b = i + 1;
    }
  return out;
}

// The comment part of a line: after the first '#' outside a string literal.
std::string_view commentOf(std::string_view line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      return line.substr(i + 1);
    }
  }
  return {};
}

// `NAME` alone suppresses everything; `NAME(a, b)` / `NAME: a, b` the listed rules.
bool marks(std::string_view comment, std::string_view name, const std::string &rule,
           bool colonForm) {
  size_t at = 0;
  const std::string lc = lower(std::string(comment));
  const std::string ln = lower(std::string(name));
  while ((at = lc.find(ln, at)) != std::string::npos) {
    size_t p = at + ln.size();
    // NOLINT must not match NOLINTNEXTLINE
    if (p < lc.size() && (std::isalnum(static_cast<unsigned char>(lc[p])) || lc[p] == '_')) {
      at = p;
      continue;
    }
    while (p < comment.size() && comment[p] == ' ')
      ++p;
    std::string list;
    if (p < comment.size() && comment[p] == '(') {
      auto e = comment.find(')', p);
      list = std::string(comment.substr(p + 1, e == std::string_view::npos ? e : e - p - 1));
    } else if (colonForm && p < comment.size() && comment[p] == ':') {
      auto e = comment.find('#', p);
      list = std::string(comment.substr(p + 1, e == std::string_view::npos ? e : e - p - 1));
    } else {
      return true;
    }
    size_t s = 0;
    while (s <= list.size()) {
      size_t e = list.find_first_of(", ", s);
      if (e == std::string::npos)
        e = list.size();
      std::string item = list.substr(s, e - s);
      if (!item.empty()) {
        if (item == rule || item == "*")
          return true;
        // clang-tidy style globs: ddp-*
        if (item.back() == '*' && rule.compare(0, item.size() - 1, item, 0, item.size() - 1) == 0)
          return true;
      }
      s = e + 1;
    }
    at = p;
  }
  return false;
}

} // namespace

bool suppressed(const std::string &source, unsigned line, const std::string &rule) {
  auto ls = lines(source);
  if (line == 0 || line > ls.size())
    return false;
  std::string_view c = commentOf(ls[line - 1]);
  if (!c.empty() && (marks(c, "noqa", rule, true) || marks(c, "NOLINT", rule, false)))
    return true;
  if (line >= 2) {
    std::string_view above = commentOf(ls[line - 2]);
    if (!above.empty() && marks(above, "NOLINTNEXTLINE", rule, false))
      return true;
  }
  return false;
}

namespace {
// DDPLINT_PY_TIMING=1: where the time goes (parse, model, rules), summed over
// the run and printed at exit; for the benchmark's breakdown.
struct Timing {
  std::atomic<long long> parse{0}, model{0}, rules{0};
  ~Timing() {
    if (std::getenv("DDPLINT_PY_TIMING"))
      std::fprintf(stderr, "ddplint: python time: parse %.3f s, model %.3f s, rules %.3f s\n",
                   parse / 1e9, model / 1e9, rules / 1e9);
  }
};
Timing gTiming;
long long nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
} // namespace

PyLintResult lintPython(const std::string &source, const PyOptions &options) {
  PyLintResult res;
  const long long t0 = nowNs();
  SyntaxTree tree(source);
  const long long t1 = nowNs();
  gTiming.parse += t1 - t0;
  if (!tree.ok()) {
    res.parserFailed = true;
    return res;
  }
  res.syntaxErrors = tree.syntaxErrors();
  PyModel model = buildModel(tree, options.wrappers);
  const long long t2 = nowNs();
  gTiming.model += t2 - t1;
  res.functions = model.functionsAnalysed;
  core::Facts &facts = model.program.facts;
  if (options.torchVersion > 0) {
    facts.versions.torchBasis = core::TargetVersions::Basis::Exact;
    facts.versions.torchMajor = options.torchVersion / 100;
    facts.versions.torchMinor = options.torchVersion % 100;
  }

  std::vector<std::pair<core::RuleId, core::RuleOptions>> rules = options.rules;
  if (rules.empty())
    for (const core::RuleSpec &r : core::ruleRegistry())
      rules.emplace_back(r.id, core::RuleOptions::of(r.id));
  core::RuleRunner runner(model.program);
  const core::LaunchEnvironment *launch =
      options.launchEnvironment ? &options.launchEnvironment : nullptr;
  std::vector<core::Finding> findings;
  for (const auto &[id, ruleOptions] : rules) {
    const core::RuleSpec &spec = core::ruleSpec(id);
    if (!spec.definition || !spec.appliesTo("python"))
      continue;
    for (auto &f : runner.run(id, ruleOptions, launch))
      findings.push_back(std::move(f));
  }
  gTiming.rules += nowNs() - t2;

  const PyFixRenderer renderer(tree, model);
  std::vector<std::pair<core::Finding, std::vector<PyEdit>>> kept;
  for (auto &f : findings) {
    if (suppressed(source, renderer.pos(f.loc).line, f.rule))
      continue;
    std::vector<PyEdit> edits = renderer.render(f);
    kept.emplace_back(std::move(f), std::move(edits));
  }
  std::stable_sort(kept.begin(), kept.end(), [&](const auto &a, const auto &b) {
    const SourcePos pa = renderer.pos(a.first.loc), pb = renderer.pos(b.first.loc);
    return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
  });
  for (auto &[f, edits] : kept) {
    res.findings.push_back(std::move(f));
    res.fixes.push_back(std::move(edits));
  }
  res.positions = std::move(model.positions);
  return res;
}

} // namespace ddplint::pyfe
