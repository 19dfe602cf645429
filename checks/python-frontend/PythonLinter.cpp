#include "PythonLinter.h"

#include "PyModelBuilder.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <tuple>

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
  std::atomic<long long> parse{0}, model{0}, rules{0}, link{0}, callers{0}, place{0};
  ~Timing() {
    if (std::getenv("DDPLINT_PY_TIMING"))
      std::fprintf(stderr,
                   "ddplint: python time: parse %.3f s, model %.3f s (of which linking other "
                   "modules %.3f s, their callers %.3f s), rules %.3f s, placing findings %.3f s; "
                   "%lu trees parsed\n",
                   parse / 1e9, model / 1e9, link / 1e9, callers / 1e9, rules / 1e9, place / 1e9,
                   SyntaxTree::parses());
  }
};
Timing gTiming;
long long nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// One bug, one report: a helper that exits on its own non-finite loss in
// one arm and runs DDP's backward in the other (MetaCLIP's `backward()`)
// is reported inside it; the caller's "`backward(...)` raises" that skips
// the next collective is the same decision seen from the call.
void dropRaisingCallRepeats(std::vector<core::Finding> &findings, const LinkResult &linked,
                            const PyModel &model) {
  if (model.raisingCalls.empty())
    return;
  {
    auto plain = [](const std::string &k) { return k.substr(0, k.find('{')); };
    std::set<std::string> decidedInside;
    for (const auto &f : findings) {
      if (f.rule != "ddp-divergent-collective" || !f.loc)
        continue;
      if (linked.moduleOf(f.loc)) {
        if (auto o = linked.owner.find(f.loc); o != linked.owner.end())
          decidedInside.insert(plain(o->second));
      } else if (f.loc <= model.byteOffsets.size()) {
        const unsigned at = model.byteOffsets[f.loc - 1];
        for (const auto &[callLoc, rc] : model.raisingCalls)
          if (rc.end && at >= rc.begin && at < rc.end)
            decidedInside.insert(plain(rc.callee));
      }
    }
    if (!decidedInside.empty())
      findings.erase(std::remove_if(findings.begin(), findings.end(),
                                    [&](const core::Finding &f) {
                                      if (f.rule != "ddp-divergent-collective")
                                        return false;
                                      for (const auto &n : f.notes) {
                                        if (!n.loc || n.loc > model.byteOffsets.size() || linked.moduleOf(n.loc))
                                          continue;
                                        auto rc = model.raisingCalls.find(model.byteOffsets[n.loc - 1]);
                                        if (rc != model.raisingCalls.end() &&
                                            decidedInside.count(plain(rc->second.callee)))
                                          return true;
                                      }
                                      return false;
                                    }),
                     findings.end());
  }
}

// Findings the rules made in another module's code linked into this program:
// that module's own ones (it reports them when linted) are dropped; the ones
// this file's calls cause are reported at the call, with a note at the code.
// Notes in other modules become places in their files.
std::vector<core::Finding> placeInThisFile(std::vector<core::Finding> findings,
                                           const LinkResult &linked, const PyModel &model,
                                           PyProject &project,
                                           const std::vector<std::pair<core::RuleId, core::RuleOptions>> &rules) {
  auto place = [&](const LinkedModule &m, core::Loc l) {
    const SourcePos p = l && l <= model.positions.size() ? model.positions[l - 1] : SourcePos{1, 1};
    return core::ExternalPlace{m.path, p.line, p.column};
  };
  std::vector<core::Finding> out;
  std::vector<bool> reachedThroughCall; // out[i] is another module's code, placed at a call
  // Each report once, by rule, place and message: its index in `out`.
  std::map<std::tuple<std::string, core::Loc, std::string>, size_t> seen;
  for (auto &f : findings) {
    const bool elsewhere = linked.moduleOf(f.loc) != nullptr;
    if (const LinkedModule *m = linked.moduleOf(f.loc)) {
      auto key = [&](core::Loc l) {
        return PyProject::placeKey(l && l <= model.positions.size() ? model.positions[l - 1]
                                                                    : SourcePos{});
      };
      const std::uint64_t here = key(f.loc);
      if (project.findingsAlone(m->path, rules).count({f.rule, m->path, here}))
        continue;
      // A module between this file and the code reports it at its own call
      // (the helper's hazard is that module's, not each script's that reaches it).
      // Not when the rule named a call of this file's own as where the
      // barrier is missing (D-FINE's solver calls dist_utils.save_on_master
      // itself, as its engine module does elsewhere: two fixes).
      const bool ownCall = f.viaCall && !linked.moduleOf(f.viaCall);
      bool reportedBetween = false;
      for (const LinkedModule &between : linked.modules)
        if (!ownCall && between.path != m->path && !reportedBetween)
          reportedBetween = project.findingsAlone(between.path, rules).count({f.rule, m->path, here}) > 0;
      if (reportedBetween)
        continue;
      // One bug, one report: the module whose decision diverges reports it
      // already (maskrcnn's trainer skips a batch on one rank: its own
      // reduce is reported there, not again as the DDP forward its callers see).
      bool conditionReported = false;
      for (const auto &n : f.notes)
        if (n.loc && linked.moduleOf(n.loc) == m && PyProject::isConditionNote(n))
          conditionReported =
              conditionReported || project.findingsAlone(m->path, rules)
                                           .count({PyProject::conditionKey(f.rule), m->path, key(n.loc)}) > 0;
      if (conditionReported)
        continue;
      auto owner = linked.owner.find(f.loc);
      if (owner == linked.owner.end())
        continue;
      auto entry = linked.entry.find(owner->second);
      if (entry == linked.entry.end())
        continue;
      auto name = linked.names.find(owner->second);
      const std::string fn = core::quoteCode(name == linked.names.end() ? owner->second : name->second);
      core::Note at(0, "the code it is about, in " + fn);
      at.external = place(*m, f.loc);
      f.notes.insert(f.notes.begin(), std::move(at));
      f.message = "in " + fn + " (module " + core::quoteCode(m->name) + "), reached from this call: " +
                  f.message;
      // The call where the hazard arises, when the rule named one in this file.
      f.loc = f.viaCall && !linked.moduleOf(f.viaCall) ? f.viaCall : entry->second;
      f.fixes.clear(); // the fix belongs in the other module, which its own lint can fix
    }
    for (auto &n : f.notes)
      if (const LinkedModule *m = n.loc ? linked.moduleOf(n.loc) : nullptr) {
        n.external = place(*m, n.loc);
        n.loc = 0;
      }
    // One report per function a call reaches: the other places of that
    // function the same rule finds (LLaMA-Factory's checkpoint coordinator
    // writes in three rank-0 blocks with no collective between them) are
    // notes of it, not lost.  Two functions stay two reports: ml-cvnets'
    // `Trainer.run` and the `train_epoch` it calls write between different
    // collectives, two fixes.
    // Keyed by the function, not the whole message: ai-toolkit's
    // `get_guidance_loss` dispatches on one setting to five helpers that
    // each run backward; one call, one report.
    const std::string what = elsewhere ? f.message.substr(0, f.message.find(", reached from this call: "))
                                       : f.message;
    if (auto first = seen.find({f.rule, f.loc, what}); first != seen.end()) {
      if (elsewhere && !f.notes.empty() && !f.notes.front().external.file.empty()) {
        core::Note also = f.notes.front();
        const std::string lead = "the code it is about";
        if (also.message.rfind(lead, 0) == 0)
          also.message = "and the code here, which the same call reaches" + also.message.substr(lead.size());
        auto &notes = out[first->second].notes;
        const bool known = std::any_of(notes.begin(), notes.end(), [&](const core::Note &n) {
          return n.external.file == also.external.file && n.external.line == also.external.line;
        });
        if (!known)
          notes.push_back(std::move(also));
      }
      continue;
    }
    seen.emplace(std::make_tuple(f.rule, f.loc, what), out.size());
    out.push_back(std::move(f));
    reachedThroughCall.push_back(elsewhere);
  }
  // One bug, one report: a helper's rank-0 write reached from a call inside
  // a rank-0 block of this file that is reported itself (CvT's `if best_model
  // and comm.is_main_process(): save_model_on_master(...)`, whose helper also
  // returns early off rank 0) is that block's finding, with its fix-it.
  std::vector<std::pair<unsigned, unsigned>> blocks;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].rule == "ddp-rank0-io-barrier" && !reachedThroughCall[i])
      if (auto it = model.ifNodes.find(out[i].loc); it != model.ifNodes.end())
        blocks.emplace_back(startByte(it->second), endByte(it->second));
  if (!blocks.empty()) {
    std::vector<core::Finding> kept;
    for (size_t i = 0; i < out.size(); ++i) {
      core::Finding &f = out[i];
      const bool relocated = f.rule == "ddp-rank0-io-barrier" && reachedThroughCall[i] && f.loc &&
                             f.loc <= model.byteOffsets.size() && !linked.moduleOf(f.loc);
      const unsigned at = relocated ? model.byteOffsets[f.loc - 1] : 0;
      const bool inside = relocated && std::any_of(blocks.begin(), blocks.end(), [&](const auto &b) {
                            return at > b.first && at < b.second;
                          });
      if (!inside)
        kept.push_back(std::move(f));
    }
    out = std::move(kept);
  }
  return out;
}

} // namespace

PyLintResult lintPython(const std::string &source, const PyOptions &options) {
  PyLintResult res;
  const long long t0 = nowNs();
  // Shared with the project: a module imported by an earlier file was parsed then.
  const std::shared_ptr<const SyntaxTree> parsed =
      options.project && !options.path.empty()
          ? options.project->tree(options.path, source)
          : std::make_shared<const SyntaxTree>(source);
  const SyntaxTree &tree = *parsed;
  const long long t1 = nowNs();
  gTiming.parse += t1 - t0;
  if (!tree.ok()) {
    res.parserFailed = true;
    return res;
  }
  res.syntaxErrors = tree.syntaxErrors();
  std::unique_ptr<ModuleContext> project =
      options.project && !options.path.empty() ? options.project->contextFor(options.path)
                                               : nullptr;
  PyModel model = buildModel(tree, options.wrappers, project.get());
  LinkResult linked;
  if (project) {
    long long linkNs = 0, callersNs = 0;
    settleProgram(model, linked, tree, options.path, project.get(), *options.project, options.wrappers,
                  &linkNs, &callersNs);
    gTiming.link += linkNs;
    gTiming.callers += callersNs;
  }
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
  for (auto &n : runner.notices())
    if (!linked.moduleOf(n.loc)) // another module's limits are reported with it
      res.limits.push_back(std::move(n));
  for (auto &n : linked.limits)
    res.limits.push_back(std::move(n));
  dropRaisingCallRepeats(findings, linked, model);
  if (!linked.modules.empty()) {
    const long long p0 = nowNs();
    findings = placeInThisFile(std::move(findings), linked, model, *options.project, rules);
    gTiming.place += nowNs() - p0;
  }

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
