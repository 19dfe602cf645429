#include "PythonLinter.h"

#include "PyModelBuilder.h"

#include "ddplint/core/Analysis.h"
#include "ddplint/core/Catalog.h"
#include "ddplint/core/FactRules.h"

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

class Renderer {
public:
  Renderer(const SyntaxTree &t, const PyModel &m) : tree_(t), m_(m) {}

  SourcePos pos(core::Loc l) const {
    return l && l <= m_.positions.size() ? m_.positions[l - 1] : SourcePos{1, 1};
  }
  unsigned byte(core::Loc l) const { return l && l <= m_.byteOffsets.size() ? m_.byteOffsets[l - 1] : 0; }

  PyEdit insert(unsigned at, std::string text) const {
    PyEdit e;
    e.offset = at;
    e.length = 0;
    e.replacement = std::move(text);
    e.start = e.end = posOfByte(at);
    return e;
  }
  PyEdit replace(unsigned at, unsigned len, std::string text) const {
    PyEdit e = insert(at, std::move(text));
    e.length = len;
    e.end = posOfByte(at + len);
    return e;
  }

  SourcePos posOfByte(unsigned at) const {
    const std::string &s = tree_.source();
    unsigned line = 1, col = 1;
    for (unsigned i = 0; i < at && i < s.size(); ++i) {
      if (s[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return {line, col};
  }

  // The indentation of the line `at` is on.
  std::string indentAt(unsigned at) const {
    const std::string &s = tree_.source();
    size_t b = s.rfind('\n', at == 0 ? 0 : at - 1);
    b = (b == std::string::npos || at == 0) ? 0 : b + 1;
    size_t e = b;
    while (e < s.size() && (s[e] == ' ' || s[e] == '\t'))
      ++e;
    return s.substr(b, e - b);
  }
  unsigned lineStart(unsigned at) const {
    const std::string &s = tree_.source();
    if (at == 0)
      return 0;
    size_t b = s.rfind('\n', at - 1);
    return b == std::string::npos ? 0 : static_cast<unsigned>(b + 1);
  }

  std::string barrierCall() const {
    if (m_.distAlias.empty())
      return "";
    return m_.distAlias + ".barrier()";
  }

  std::vector<PyEdit> render(const core::Finding &f, int timeoutSeconds) const {
    std::vector<PyEdit> out;
    const std::string &src = tree_.source();
    for (const auto &h : f.fixes) {
      const unsigned at = byte(h.anchor);
      if (!h.anchor)
        continue;
      const bool emptyList = at > 0 && src[at - 1] == '(';
      const std::string sep = emptyList ? "" : ", ";
      switch (h.kind) {
      case core::FixKind::InsertTimeoutArg: {
        std::string td = m_.timedeltaSpelling;
        if (td.empty()) {
          if (!m_.hasImports)
            return {}; // no safe place for the import: leave the fix to the user
          out.push_back(insert(m_.importInsertAt, "import datetime\n"));
          td = "datetime.timedelta";
        }
        std::string arg = sep;
        arg += "timeout=";
        arg += td;
        arg += "(seconds=";
        arg += std::to_string(timeoutSeconds);
        arg += ")";
        out.push_back(insert(at, std::move(arg)));
        break;
      }
      case core::FixKind::InsertPersistentWorkers:
        out.push_back(insert(at, sep + "persistent_workers=True"));
        break;
      case core::FixKind::InsertPinMemory:
        out.push_back(insert(at, sep + "pin_memory=True"));
        break;
      case core::FixKind::SetPersistentWorkersTrue:
      case core::FixKind::SetPinMemoryTrue:
        if (src.compare(at, 5, "False") == 0)
          out.push_back(replace(at, 5, "True"));
        break;
      case core::FixKind::RenameEnvVar: {
        // The literal at the anchor: keep its quotes.
        if (at + 1 + h.oldText.size() <= src.size() &&
            src.compare(at + 1, h.oldText.size(), h.oldText) == 0)
          out.push_back(replace(at + 1, static_cast<unsigned>(h.oldText.size()), h.text));
        break;
      }
      default:
        break;
      }
    }
    // Several insertions at one anchor: keep them in the order asked for.
    if (f.rule == "ddp-rank0-io-barrier" && f.node) {
      auto it = m_.ifNodes.find(f.node->loc);
      const std::string barrier = barrierCall();
      if (it != m_.ifNodes.end() && !barrier.empty() && !is(it->second, "elif_clause")) {
        SyntaxNode s = it->second;
        const unsigned start = startByte(s), end = endByte(s);
        const std::string ind = indentAt(start);
        if (f.missingBefore)
          out.push_back(insert(lineStart(start), ind + barrier + "\n"));
        if (f.missingAfter && !f.regionToEnd)
          out.push_back(insert(end, "\n" + ind + barrier));
      }
    }
    return out;
  }

private:
  const SyntaxTree &tree_;
  const PyModel &m_;
};

bool appliesToPython(const core::RuleInfo &r) {
  return std::find(r.languages.begin(), r.languages.end(), "python") != r.languages.end();
}

int defaultTimeoutSeconds() {
  if (const auto *r = core::findRule("ddp-init-timeout"))
    for (const auto &o : r->options)
      if (o.name == "DefaultTimeoutSeconds")
        return std::atoi(o.defaultValue.c_str()) > 0 ? std::atoi(o.defaultValue.c_str()) : 1800;
  return 1800;
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
  UserNames user{options.rankFunctions, options.mainProcessFunctions, options.collectiveFunctions,
                 options.barrierFunctions, options.checkpointWriters};
  PyModel model = buildModel(tree, user);
  const long long t2 = nowNs();
  gTiming.model += t2 - t1;
  res.functions = model.functionsAnalysed;
  core::Facts &facts = model.program.facts;
  if (options.torchVersion > 0) {
    facts.versions.torchBasis = core::TargetVersions::Basis::Exact;
    facts.versions.torchMajor = options.torchVersion / 100;
    facts.versions.torchMinor = options.torchVersion % 100;
  }
  auto enabled = [&](const std::string &id) {
    const core::RuleInfo *r = core::findRule(id);
    if (!r || !appliesToPython(*r))
      return false;
    return options.rules.empty() || options.rules.count(id) > 0;
  };

  std::vector<core::Finding> findings;
  auto add = [&](std::vector<core::Finding> v) {
    for (auto &f : v)
      findings.push_back(std::move(f));
  };
  {
    core::Analyzer analyzer(model.program);
    if (enabled("ddp-divergent-collective"))
      add(analyzer.divergentCollectives());
    if (enabled("ddp-error-path-exit"))
      add(analyzer.errorPathExits());
    if (enabled("ddp-unguarded-save"))
      add(analyzer.unguardedSaves());
    if (enabled("ddp-rank0-io-barrier"))
      add(analyzer.rank0IoWithoutBarrier(options.requireBarrierBefore));
  }
  if (enabled("ddp-init-timeout"))
    add(core::initTimeoutFindings(model.program));
  std::set<core::Loc> launchesAsked;
  if (enabled("ddp-async-error-handling")) {
    // The "off" finding sits at an NCCL group's creation (a deprecated name
    // is reported at its literal): only then can the launch files change it.
    auto atGroup = [&](const core::Finding &f) {
      for (const auto &pg : facts.processGroups)
        if (pg.loc == f.loc)
          return true;
      return false;
    };
    std::vector<core::Finding> v = core::asyncErrorHandlingFindings(model.program);
    std::vector<PyOptions::LaunchVariable> env;
    bool open = false;
    if (options.launchEnvironment && std::any_of(v.begin(), v.end(), atGroup) &&
        options.launchEnvironment(env, open)) {
      for (const auto &lv : env) {
        core::EnvSetting e;
        e.name = lv.name;
        e.value = lv.value;
        e.valueKnown = lv.valueKnown;
        e.isSet = true;
        e.where = core::EnvSetting::Where::LaunchFile;
        facts.env.push_back(e);
      }
      if (open) {
        core::EnvSetting e; // a name we cannot read: the rule stays quiet
        e.nameKnown = false;
        e.isSet = true;
        e.where = core::EnvSetting::Where::LaunchFile;
        facts.env.push_back(e);
      }
      v = core::asyncErrorHandlingFindings(model.program);
      for (const auto &f : v)
        if (atGroup(f))
          launchesAsked.insert(f.loc);
    }
    add(std::move(v));
  }
  if (enabled("ddp-dataloader-recreated"))
    add(core::dataLoaderRecreatedFindings(model.program));
  if (enabled("ddp-dataloader-options"))
    add(core::dataLoaderOptionsFindings(model.program));
  if (enabled("ddp-forward-shape-branch"))
    add(core::forwardShapeBranchFindings(model.program));

  gTiming.rules += nowNs() - t2;
  Renderer r(tree, model);
  const int timeout =
      options.defaultTimeoutSeconds > 0 ? options.defaultTimeoutSeconds : defaultTimeoutSeconds();
  for (const auto &f : findings) {
    PyDiagnostic d;
    d.rule = f.rule;
    d.pos = r.pos(f.loc);
    d.message = f.message;
    for (const auto &n : f.notes)
      d.notes.push_back({r.pos(n.loc), n.message});
    d.fixes = r.render(f, timeout);
    d.launchesAsked = f.rule == "ddp-async-error-handling" && launchesAsked.count(f.loc) > 0;
    if (suppressed(source, d.pos.line, d.rule))
      continue;
    res.diagnostics.push_back(std::move(d));
  }
  std::stable_sort(res.diagnostics.begin(), res.diagnostics.end(),
                   [](const PyDiagnostic &a, const PyDiagnostic &b) {
                     return a.pos.line != b.pos.line ? a.pos.line < b.pos.line
                                                     : a.pos.column < b.pos.column;
                   });
  return res;
}

} // namespace ddplint::pyfe
