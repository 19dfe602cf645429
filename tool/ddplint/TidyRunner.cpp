#include "TidyRunner.h"

#include "clang-frontend/CodeScope.h"
#include "ddplint/core/Catalog.h"

#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "clang-tidy/ClangTidyModule.h" // ClangTidyASTConsumerFactory owns the factories
#include "clang-tidy/ClangTidyOptions.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <map>

namespace ddplint::cli {
namespace {

using clang::tidy::ClangTidyContext;
using clang::tidy::ClangTidyError;
using clang::tidy::ClangTidyOptions;

// Each finding's file gets its config's options, so two subprojects with
// their own .ddplint.yaml can name different wrappers.
class ConfigOptionsProvider : public clang::tidy::ClangTidyOptionsProvider {
public:
  explicit ConfigOptionsProvider(ConfigResolver &configs) : configs_(configs) {}
  const clang::tidy::ClangTidyGlobalOptions &getGlobalOptions() override { return global_; }
  std::vector<OptionsSource> getRawOptions(llvm::StringRef fileName) override {
    std::vector<ToolError> ignored; // configs were loaded and checked before the run
    std::shared_ptr<const Config> cfg = configs_.forFile(fileName.str(), ignored);
    if (!cfg)
      cfg = std::make_shared<Config>(defaultConfig());
    ClangTidyOptions o;
    o.Checks = cfg->checksGlob();
    o.WarningsAsErrors = "";
    o.HeaderFilterRegex = ".*"; // the project's own headers count; system headers never do
    o.SystemHeaders = false;
    for (const auto &[name, value] : cfg->checkOptions)
      o.CheckOptions[name] = ClangTidyOptions::ClangTidyValue(value);
    return {{ClangTidyOptions::getDefaults(), "ddplint defaults"},
            {o, cfg->path.empty() ? std::string("ddplint built-in config") : cfg->path}};
  }

private:
  ConfigResolver &configs_;
  clang::tidy::ClangTidyGlobalOptions global_;
};

// clang-tidy's consumer, but function bodies outside the user's code are
// skipped: system headers, and library headers however they were included
// (-I or -isystem).  The checks never look into LibTorch's or the standard
// library's inline functions, and parsing them is most of a LibTorch
// translation unit's cost.
class SkipSystemBodiesConsumer : public clang::MultiplexConsumer {
public:
  SkipSystemBodiesConsumer(std::unique_ptr<clang::ASTConsumer> inner, clang::SourceManager &sm)
      : MultiplexConsumer(makeVector(std::move(inner))), sm_(sm) {}
  bool shouldSkipFunctionBody(clang::Decl *d) override {
    return !ddplint::clangfe::isUserCode(sm_, d->getLocation());
  }

private:
  static std::vector<std::unique_ptr<clang::ASTConsumer>>
  makeVector(std::unique_ptr<clang::ASTConsumer> c) {
    std::vector<std::unique_ptr<clang::ASTConsumer>> v;
    v.push_back(std::move(c));
    return v;
  }
  clang::SourceManager &sm_;
};

class TidyActionFactory : public clang::tooling::FrontendActionFactory {
public:
  TidyActionFactory(ClangTidyContext &ctx,
                    llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> fs, bool skipBodies)
      : factory_(ctx, std::move(fs)), skipBodies_(skipBodies) {}
  std::unique_ptr<clang::FrontendAction> create() override {
    return std::make_unique<Action>(&factory_, skipBodies_, &language_);
  }
  // "c" or "c++" once the unit was set up ("" before, or for other languages).
  const std::string &language() const { return language_; }
  bool runInvocation(std::shared_ptr<clang::CompilerInvocation> invocation,
                     clang::FileManager *files,
                     std::shared_ptr<clang::PCHContainerOperations> pch,
                     clang::DiagnosticConsumer *diags) override {
    invocation->getPreprocessorOpts().SetUpStaticAnalyzer = true; // as clang-tidy does
    // Clang's own "N warnings generated." line is noise next to our report.
    invocation->getDiagnosticOpts().ShowCarets = false;
    if (skipBodies_)
      invocation->getFrontendOpts().SkipFunctionBodies = true; // only where the consumer agrees
    return FrontendActionFactory::runInvocation(std::move(invocation), files, std::move(pch),
                                                diags);
  }

private:
  class Action : public clang::ASTFrontendAction {
  public:
    Action(clang::tidy::ClangTidyASTConsumerFactory *f, bool skip, std::string *language)
        : f_(f), skip_(skip), language_(language) {}
    std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &ci,
                                                          llvm::StringRef file) override {
      const clang::LangOptions &lo = ci.getLangOpts();
      *language_ = lo.ObjC ? "objective-c" : lo.CPlusPlus ? "c++" : "c";
      auto consumer = f_->createASTConsumer(ci, file);
      if (!skip_)
        return consumer;
      return std::make_unique<SkipSystemBodiesConsumer>(std::move(consumer),
                                                        ci.getSourceManager());
    }

  private:
    clang::tidy::ClangTidyASTConsumerFactory *f_;
    bool skip_;
    std::string *language_;
  };
  clang::tidy::ClangTidyASTConsumerFactory factory_;
  bool skipBodies_;
  std::string language_;
};

// File text, line starts and line/column lookups for the files diagnostics name.
class SourceFiles {
public:
  struct File {
    bool ok = false;
    std::string text;
    std::vector<unsigned> lineStarts;
  };
  const File &get(const std::string &path) {
    auto it = files_.find(path);
    if (it != files_.end())
      return it->second;
    File f;
    if (auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false)) {
      f.ok = true;
      f.text = (*buf)->getBuffer().str();
      f.lineStarts.push_back(0);
      for (unsigned i = 0; i < f.text.size(); ++i)
        if (f.text[i] == '\n')
          f.lineStarts.push_back(i + 1);
    }
    return files_.emplace(path, std::move(f)).first->second;
  }
  // 1-based line and byte column of `offset`.
  void position(const std::string &path, unsigned offset, unsigned &line, unsigned &col) {
    const File &f = get(path);
    if (!f.ok || f.lineStarts.empty()) {
      line = col = 0;
      return;
    }
    auto it = std::upper_bound(f.lineStarts.begin(), f.lineStarts.end(), offset);
    const unsigned idx = static_cast<unsigned>(it - f.lineStarts.begin()) - 1;
    line = idx + 1;
    col = offset - f.lineStarts[idx] + 1;
  }
  std::string lineText(const std::string &path, unsigned line) {
    const File &f = get(path);
    if (!f.ok || line == 0 || line > f.lineStarts.size())
      return "";
    const unsigned b = f.lineStarts[line - 1];
    unsigned e = line < f.lineStarts.size() ? f.lineStarts[line] - 1 : f.text.size();
    if (e > b && f.text[e - 1] == '\r')
      --e;
    return f.text.substr(b, e - b);
  }

private:
  std::map<std::string, File> files_;
};

std::string absolutePath(llvm::StringRef path, llvm::StringRef buildDir) {
  llvm::SmallString<256> p(path);
  if (!llvm::sys::path::is_absolute(p)) {
    llvm::SmallString<256> base(buildDir);
    if (base.empty() && llvm::sys::fs::current_path(base))
      base.clear(); // no cwd: the path stays relative
    llvm::sys::path::append(base, p);
    p = base;
  }
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return std::string(p);
}

Location locate(SourceFiles &src, const clang::tooling::DiagnosticMessage &m,
                llvm::StringRef buildDir) {
  Location loc;
  if (m.FilePath.empty())
    return loc;
  loc.file = absolutePath(m.FilePath, buildDir);
  src.position(loc.file, m.FileOffset, loc.line, loc.column);
  return loc;
}

} // namespace

void runChecksOnFile(const std::string &absFile, const clang::tooling::CompilationDatabase &db,
                     ConfigResolver &configs, const TidyRunOptions &opts, RunResult &out) {
  std::vector<ToolError> cfgErrors;
  std::shared_ptr<const Config> cfg = configs.forFile(absFile, cfgErrors);
  if (!cfg)
    return; // reported when the configs were loaded

  ClangTidyContext ctx(std::make_unique<ConfigOptionsProvider>(configs));
  // A private physical file system per run: the real one's working directory
  // is the process's, and parallel runs would change it under each other.
  auto fs = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
      llvm::vfs::createPhysicalFileSystem());
  clang::tooling::ClangTool tool(db, {absFile}, std::make_shared<clang::PCHContainerOperations>(),
                                 fs);
  tool.setPrintErrorMessage(false);
  tool.appendArgumentsAdjuster(clang::tooling::getStripPluginsAdjuster());
  if (!opts.resourceDir.empty())
    tool.appendArgumentsAdjuster(clang::tooling::getInsertArgumentAdjuster(
        ("-resource-dir=" + opts.resourceDir).c_str(),
        clang::tooling::ArgumentInsertPosition::END));

  clang::tidy::ClangTidyDiagnosticConsumer consumer(ctx, nullptr, /*RemoveIncompatibleErrors=*/true,
                                                    /*GetFixesFromNotes=*/false);
  clang::DiagnosticsEngine engine(new clang::DiagnosticIDs(), new clang::DiagnosticOptions(),
                                  &consumer, /*ShouldOwnClient=*/false);
  ctx.setDiagnosticsEngine(&engine);
  tool.setDiagnosticConsumer(&consumer);
  TidyActionFactory factory(ctx, fs, !opts.parseSystemBodies && !opts.analyzeLibraryCode);

  int rc = 0;
  llvm::CrashRecoveryContext crc;
  const bool survived = crc.RunSafely([&] { rc = tool.run(&factory); });
  if (!survived) {
    ToolError e;
    e.location.file = absFile;
    e.message = "ddplint crashed while analysing this file; no findings for it (the other files' "
                "findings are kept). Please report it with the file's compile command.";
    out.errors.push_back(e);
    return;
  }
  std::vector<ClangTidyError> diags = consumer.take();

  SourceFiles src;
  bool compileError = false;
  for (const ClangTidyError &d : diags) {
    const bool isCheck = llvm::StringRef(d.DiagnosticName).starts_with("ddp-");
    if (!isCheck) {
      if (d.DiagLevel != clang::tooling::Diagnostic::Error)
        continue; // compiler warnings are not ours to report
      compileError = true;
      ToolError e;
      e.location = locate(src, d.Message, d.BuildDirectory);
      // An error in a header says which translation unit ran into it.
      e.message = e.location.file == absFile ? d.Message.Message
                                             : d.Message.Message + " (compiling " + absFile + ")";
      out.errors.push_back(std::move(e));
      continue;
    }
    Finding f;
    f.ruleId = d.DiagnosticName;
    f.message = d.Message.Message;
    f.location = locate(src, d.Message, d.BuildDirectory);
    std::shared_ptr<const Config> fileCfg = configs.forFile(f.location.file, cfgErrors);
    if (!fileCfg)
      fileCfg = cfg;
    if (fileCfg->excluded(f.location.file))
      continue;
    auto rs = fileCfg->rules.find(f.ruleId);
    if (rs != fileCfg->rules.end()) {
      if (!rs->second.enabled)
        continue;
      f.severity = rs->second.severity;
    }
    f.sourceLine = src.lineText(f.location.file, f.location.line);
    for (const auto &n : d.Notes)
      f.notes.push_back({locate(src, n, d.BuildDirectory), n.Message});
    for (const auto &entry : d.Message.Fix) {
      for (const auto &r : entry.second) {
        Edit e;
        e.file = absolutePath(r.getFilePath(), d.BuildDirectory);
        e.offset = r.getOffset();
        e.length = r.getLength();
        e.replacement = r.getReplacementText().str();
        src.position(e.file, e.offset, e.line, e.column);
        src.position(e.file, e.offset + e.length, e.endLine, e.endColumn);
        f.fixes.push_back(std::move(e));
      }
    }
    out.findings.push_back(std::move(f));
  }
  if (rc != 0 && !compileError) {
    ToolError e;
    e.location.file = absFile;
    e.message = "clang could not build a compile command for this file, or could not read it";
    out.errors.push_back(e);
  }
  // A unit that no enabled check applies to (C with only C++ checks on, say)
  // was parsed but not analysed: say so instead of counting it as clean.
  const std::string &lang = factory.language();
  if (!lang.empty()) {
    bool applies = false;
    for (const auto &rule : ddplint::core::builtinRules())
      if (rule.frontend == "clang-tidy" && ctx.isCheckEnabled(rule.id) &&
          std::find(rule.languages.begin(), rule.languages.end(), lang) != rule.languages.end())
        applies = true;
    if (!applies) {
      out.skipped.emplace_back(absFile, "no enabled check applies to " +
                                            std::string(lang == "c" ? "C" : lang));
      return;
    }
  }
  ++out.filesAnalyzed;
}

} // namespace ddplint::cli
