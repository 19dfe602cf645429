#include "Env.h"

#include "ddplint/core/Catalog.h"

#include <algorithm>
#include <cctype>

namespace ddplint::launch::detail {

void Sink::add(unsigned line, unsigned column, const std::string &what, std::string message) {
  if (!reported_.emplace(line, column, what).second)
    return;
  Finding f;
  f.file = file_;
  f.line = line;
  f.column = column;
  f.message = std::move(message);
  findings_.push_back(std::move(f));
}

std::vector<Finding> Sink::take() {
  std::stable_sort(findings_.begin(), findings_.end(), [](const Finding &a, const Finding &b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  return std::move(findings_);
}

namespace {

std::string versionText(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// NAME=1, NAME='' or NAME='a b': the value as the user would write it back.
std::string assignment(const std::string &name, const std::string &value) {
  bool plain = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
           c == '/' || c == ':';
  });
  return name + "=" + (plain ? value : "'" + value + "'");
}

// The modes PyTorch defines: 0 off, 1 tear down, 2 clean up only, 3 skip clean-up.
bool enablesAsync(const std::string &v) { return v == "1" || v == "2" || v == "3"; }

const char *kHangs = "a failed NCCL collective will hang the other ranks instead of aborting";

} // namespace

AsyncNames asyncNames(const Options &opts) {
  const core::ApiCatalog &api = core::builtinApi();
  AsyncNames n;
  n.current = api.asyncErrorEnv;
  n.legacy = api.asyncErrorEnvDeprecated;
  n.renamedIn = versionText(api.asyncErrorEnvRenamedIn / 100, api.asyncErrorEnvRenamedIn % 100);
  bool known = opts.torchMajor != 0 || opts.torchMinor != 0;
  if (known) {
    n.target = "PyTorch " + versionText(opts.torchMajor, opts.torchMinor);
    n.targetReadsCurrent = opts.torchMajor * 100 + opts.torchMinor >= api.asyncErrorEnvRenamedIn;
  }
  return n;
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

std::vector<std::string> watchedNames(const Options &opts) {
  AsyncNames n = asyncNames(opts);
  return {n.current, n.legacy, kFaultHandler};
}

void evaluate(const Env &env, const Subject &s, const Options &opts, Sink &sink,
              const std::function<bool(Var)> &reportMissing) {
  const AsyncNames n = asyncNames(opts);
  auto find = [&](const std::string &name) -> const Setting * {
    auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
  };
  auto missing = [&](Var v, const std::string &name, const std::string &why) {
    if (s.mayInherit || (reportMissing && !reportMissing(v)))
      return;
    sink.add(s.line, s.column, "missing " + name,
             s.name + s.missingVerb + " " + name + ": " + why + "; " + s.fix(name, "1"));
  };
  auto at = [&](const Setting &st, const std::string &message) {
    if (st.report)
      sink.add(st.line, st.column, "setting", message);
  };
  // The value of the variable the target reads.
  auto checkAsyncValue = [&](const std::string &name, const Setting &st) {
    if (!st.known || enablesAsync(st.value))
      return;
    if (st.value == "0")
      at(st, assignment(name, st.value) + " " + s.context +
                 " turns NCCL async error handling off: " + kHangs + "; set it to 1");
    else
      at(st, assignment(name, st.value) + " " + s.context +
                 " is not a valid value (1, 2 or 3 turn NCCL async error handling on, 0 turns it "
                 "off); set it to 1");
  };

  const Setting *cur = find(n.current), *leg = find(n.legacy);
  if (n.targetReadsCurrent) {
    if (cur)
      checkAsyncValue(n.current, *cur);
    if (leg) {
      const std::string since = " is deprecated since PyTorch " + n.renamedIn;
      if (cur)
        at(*leg, n.legacy + " " + s.context + since + " and " + n.current +
                     " is already set; remove it");
      else if (leg->known && !enablesAsync(leg->value))
        // 2.2 still falls back to the old name, so its value still matters.
        at(*leg, assignment(n.legacy, leg->value) + " " + s.context +
                     (leg->value == "0" ? " turns NCCL async error handling off"
                                        : " is not a valid value") +
                     ", and the name" + since + ": " + kHangs + "; set " + n.current +
                     "=1 instead");
      else
        at(*leg, n.legacy + " " + s.context + since + ", which reads " + n.current +
                     " first and warns about the old name; rename it to " + n.current);
    }
    if (!cur && !leg)
      missing(Var::AsyncErrorHandling, n.current,
              "whether a failed NCCL collective aborts the job or hangs the other ranks is then "
              "left to the image's PyTorch default (off before " +
                  n.renamedIn + ")");
  } else {
    if (leg)
      checkAsyncValue(n.legacy, *leg);
    else if (cur)
      at(*cur, n.current + " " + s.context + " is not read by " + n.target +
                   " (the name exists since " + n.renamedIn + "): " + kHangs + "; set " +
                   n.legacy + "=1 as well");
    else
      missing(Var::AsyncErrorHandling, n.legacy,
              n.target + " leaves NCCL async error handling off, so " + kHangs);
  }

  if (const Setting *fh = find(kFaultHandler)) {
    // Python enables faulthandler for any non-empty value, "0" included.
    if (fh->known && fh->value.empty())
      at(*fh, std::string(kFaultHandler) + " is empty " + s.context +
                  ": Python turns faulthandler on only for a non-empty value; set it to 1");
  } else {
    missing(Var::FaultHandler, kFaultHandler,
            "a rank that crashes or is aborted by the NCCL watchdog dies without a Python "
            "traceback, so nothing shows where it was stuck");
  }
}

} // namespace ddplint::launch::detail
