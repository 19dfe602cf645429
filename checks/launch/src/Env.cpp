#include "Env.h"

#include "ddplint/core/Catalog.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace ddplint::launch::detail {

void Sink::add(unsigned line, unsigned column, const std::string &what, std::string message,
               Level level) {
  if (!reported_.emplace(line, column, what).second)
    return;
  Finding f;
  f.file = file_;
  f.line = line;
  f.column = column;
  f.message = std::move(message);
  f.level = level;
  findings_.push_back(std::move(f));
}

void Sink::skip(unsigned line, unsigned column, std::string what, std::string reason,
                bool visible) {
  for (const auto &k : skipped_)
    if (k.line == line && k.column == column && k.reason == reason)
      return;
  skipped_.push_back({file_, line, column, std::move(what), std::move(reason), visible});
}

std::vector<Finding> Sink::take() {
  std::stable_sort(findings_.begin(), findings_.end(), [](const Finding &a, const Finding &b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return std::move(findings_);
}

namespace {

// NAME=1, NAME='' or NAME='a b': the value as the user would write it back.
std::string assignment(const std::string &name, const std::string &value) {
  bool plain = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
           c == '/' || c == ':';
  });
  return name + "=" + (plain ? value : "'" + value + "'");
}

const char *kHangs = "a failed or timed-out NCCL collective hangs the other ranks instead of aborting";

const core::AsyncErrorFacts &facts() { return core::builtinAsyncErrorFacts(); }

std::string modeText(int value) {
  for (const auto &m : facts().modes)
    if (m.value == value)
      return std::to_string(value) + " (" + m.name + ")";
  return std::to_string(value);
}

} // namespace

int imageTorchVersion(const std::string &image) {
  static const std::string repo = "pytorch/pytorch:";
  size_t at = image.find(repo);
  if (at == std::string::npos || (at > 0 && image[at - 1] != '/'))
    return 0;
  Options o;
  std::string tag = image.substr(at + repo.size());
  size_t dash = tag.find('-');
  if (!parseTorchVersion(tag.substr(0, dash), o))
    return 0;
  return o.torchMajor * 100 + o.torchMinor;
}

Target targetOf(const Subject &s, const Options &opts) {
  Target t;
  if (opts.torchMajor != 0 || opts.torchMinor != 0) {
    t.version = opts.torchMajor * 100 + opts.torchMinor;
    t.text = "PyTorch " + core::versionString(t.version) + " (" + opts.versionSource + ")";
  } else if (s.imageVersion) {
    t.version = s.imageVersion;
    t.text = "PyTorch " + core::versionString(t.version) + " (from the image " + s.image + ")";
  } else {
    t.version = facts().assumedVersion;
    t.text = "PyTorch " + core::versionString(t.version) +
             " or newer (assumed: no --torch-version given)";
  }
  return t;
}

const core::LauncherExport *launcherIn(const std::string &text) {
  auto nameChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/';
  };
  for (const auto &l : facts().launchers)
    for (const auto &spelling : l.commands)
      for (size_t at = text.find(spelling); at != std::string::npos;
           at = text.find(spelling, at + 1)) {
        size_t end = at + spelling.size();
        // "/usr/bin/torchrun" names it; "my_torchrun_wrapper" and "torchrun.log" do not.
        bool before = at == 0 || !nameChar(text[at - 1]) || text[at - 1] == '/';
        bool after = end >= text.size() || !nameChar(text[end]) ||
                     (text[end] == '.' && end + 1 < text.size() && text[end + 1] == ' ');
        if (before && after && !(at > 0 && text[at - 1] == '-')) // "--deepspeed cfg" is an option
          return &l;
      }
  return nullptr;
}

bool mentions(const std::string &text, const std::string &name, const std::string &after) {
  auto nameChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    size_t end = at + name.size();
    if (at > 0 && nameChar(text[at - 1]))
      continue;
    if (after.empty() ? (end < text.size() && nameChar(text[end]))
                      : text.compare(end, after.size(), after) != 0)
      continue;
    return true;
  }
  return false;
}

std::vector<std::string> watchedNames(const Options &) {
  std::set<std::string> names;
  for (const auto &r : facts().versions) {
    names.insert(r.reads.begin(), r.reads.end());
    names.insert(r.deprecated.begin(), r.deprecated.end());
  }
  std::vector<std::string> out(names.begin(), names.end());
  out.emplace_back(kFaultHandler);
  return out;
}

void evaluate(const Env &env, const Subject &s, const Options &opts, Sink &sink,
              const std::function<bool(Var, Level)> &reportMissing) {
  const Target target = targetOf(s, opts);
  const core::AsyncErrorVersionRange &range = core::asyncErrorRange(facts(), target.version);
  const core::LauncherExport *launcher =
      s.launcherId.empty() ? nullptr : core::launcherById(facts(), s.launcherId);
  if (!s.command.empty()) {
    // What the process gets, for the program's own checks: the file's settings,
    // and what its launcher exports for this version.
    LaunchedProcess p;
    p.file = sink.file();
    p.line = s.line;
    p.column = s.column;
    p.command = s.command;
    p.mayInherit = s.mayInherit;
    for (const auto &[name, st] : env)
      p.env.push_back({name, st.value, st.known});
    if (launcher && launcher->exportsReadName && target.version >= launcher->since &&
        !range.reads.empty() && !env.count(range.reads.front()))
      p.env.push_back({range.reads.front(), launcher->value, true});
    sink.process(std::move(p));
  }
  auto find = [&](const std::string &name) -> const Setting * {
    auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
  };
  auto at = [&](const Setting &st, const std::string &message, Level level) {
    if (st.report && (level == Level::Hazard || opts.requireExplicit))
      sink.add(st.line, st.column, "setting", message, level);
  };
  // A note never uses up the hazard's turn: each level is asked for on its own.
  auto wantMissing = [&](Var v, Level level) {
    return !s.mayInherit && (!reportMissing || reportMissing(v, level));
  };
  const std::string launcherName = s.launcherName.empty() && launcher ? launcher->name : s.launcherName;

  if (range.reads.empty()) {
    // Before 1.7 there is nothing to set: report the version itself, once.
    if (wantMissing(Var::AsyncErrorHandling, Level::Hazard))
      sink.add(s.line, s.column, "no async error handling",
               s.name + " runs " + target.text + ", which has no NCCL async error handling (" +
                   range.source + "): " + kHangs + "; use PyTorch " +
                   core::versionString(range.until) + " or newer");
  } else {
    const std::string &readName = range.reads.front();
    // What the launcher would export for this version, if anything.
    const bool launcherSets = launcher && launcher->exportsReadName && target.version >= launcher->since;
    const bool launcherOverrides = launcherSets && target.version < launcher->keepsExistingSince;
    const Setting *cur = find(readName);
    const Setting *dep = nullptr;
    std::string depName;
    for (const auto &d : range.deprecated) {
      dep = find(d);
      if (dep) {
        depName = d;
        break;
      }
    }
    // A name this version does not read at all (the new name on 2.1).
    std::string unreadName;
    for (const auto &name : watchedNames(opts))
      if (name != kFaultHandler && name != readName && name != depName && find(name) &&
          find(name)->known)
        unreadName = name;

    auto judgeValue = [&](const std::string &name, const Setting &st, bool deprecated) -> bool {
      // true: the value is in effect and decided; false: computed at run time.
      if (!st.known)
        return true;
      const core::AsyncErrorMode *m = core::asyncErrorMode(facts(), st.value);
      if (m && m->on) {
        if (deprecated)
          at(st, depName + " " + s.context + " is deprecated since PyTorch " +
                     core::versionString(core::firstVersionReading(facts(), readName)) +
                     ", which reads " + readName + " first and warns about the old name (" +
                     target.text + "); rename it to " + readName + " (policy)",
             Level::Policy);
        return true;
      }
      if (launcherOverrides) {
        at(st, assignment(name, st.value) + " " + s.context + " is replaced by " + launcherName +
                   ", which sets " + readName + "=" + launcher->value + " for its workers in " +
                   target.text + "; set it to " + launcher->value + " (policy)",
           Level::Policy);
        return true;
      }
      at(st, assignment(name, st.value) + " " + s.context +
                 (m ? " turns NCCL async error handling off (" + m->name + ")"
                    : std::string(" is not a valid value (1, 2 or 3 turn NCCL async error "
                                  "handling on, 0 turns it off)")) +
                 ": " + kHangs + " (" + target.text + " reads " + readName + "); set " +
                 readName + "=1" + (deprecated ? " instead" : ""),
         Level::Hazard);
      return true;
    };

    if (cur) {
      judgeValue(readName, *cur, false);
      if (dep)
        at(*dep, depName + " " + s.context + " is deprecated and " + readName +
                     " is already set; remove it (policy)",
           Level::Policy);
    } else if (dep) {
      judgeValue(depName, *dep, true);
    } else {
      const Setting *unread = unreadName.empty() ? nullptr : find(unreadName);
      const std::string notRead =
          unread ? " (" + unreadName + " is set, but " + target.text + " does not read it)" : "";
      if (launcherSets || range.defaultMode != 0) {
        if (opts.requireExplicit && wantMissing(Var::AsyncErrorHandling, Level::Policy)) {
          std::string why = launcherSets
                                ? launcherName + " sets " + readName + "=" + launcher->value +
                                      " for the ranks it starts"
                                : target.text + " defaults " + readName + " to " +
                                      modeText(range.defaultMode);
          if (launcherSets && !(opts.torchMajor || opts.torchMinor || s.imageVersion))
            why += " (" + target.text + ")";
          sink.add(s.line, s.column, "missing " + readName,
                   s.name + " does not set " + readName + " explicitly" + notRead +
                       "; async error handling is on only because " + why +
                       ", and images and launchers differ; " + s.fix(readName, "1") +
                       " (policy; RequireExplicitSetting)",
                   Level::Policy);
        }
      } else if (wantMissing(Var::AsyncErrorHandling, Level::Hazard)) {
        sink.add(s.line, s.column, "missing " + readName,
                 s.name + s.missingVerb + " " + readName + notRead + ": " + target.text +
                     " reads " + readName + " with default " + modeText(range.defaultMode) +
                     ", off, and " +
                     (launcher ? launcherName + " does not set it"
                               : std::string("no launcher sets it")) +
                     ", so " + kHangs + "; " + s.fix(readName, "1"),
                 Level::Hazard);
      }
    }
  }

  if (const Setting *fh = find(kFaultHandler)) {
    // Python enables faulthandler for any non-empty value, "0" included.
    if (fh->known && fh->value.empty())
      at(*fh, std::string(kFaultHandler) + " is empty " + s.context +
                  ": Python turns faulthandler on only for a non-empty value; set it to 1 (policy)",
         Level::Policy);
  } else if (opts.requireExplicit && wantMissing(Var::FaultHandler, Level::Policy)) {
    sink.add(s.line, s.column, "missing " + std::string(kFaultHandler),
             s.name + s.missingVerb + " " + kFaultHandler +
                 ": a rank that crashes or is aborted by the NCCL watchdog dies without a Python "
                 "traceback, so nothing shows where it was stuck; " +
                 s.fix(kFaultHandler, "1") + " (policy; RequireExplicitSetting)",
             Level::Policy);
  }
}

} // namespace ddplint::launch::detail
