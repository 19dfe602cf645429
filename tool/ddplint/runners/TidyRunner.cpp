#include "TidyRunner.h"

#include "clang-frontend/CodeScope.h"
#include "ddplint/core/Catalog.h"
#include "ddplint/core/Rules.h"

#include "clang-tidy/ClangTidy.h"
#include "clang-tidy/ClangTidyDiagnosticConsumer.h"
#include "clang-tidy/ClangTidyModule.h" // ClangTidyASTConsumerFactory owns the factories
#include "clang-tidy/ClangTidyOptions.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <map>

namespace ddplint::cli {
namespace {

using clang::tidy::ClangTidyContext;
using clang::tidy::ClangTidyError;
using clang::tidy::ClangTidyOptions;

std::string absolutePath(llvm::StringRef path, llvm::StringRef buildDir);

// The path of a file Clang opened, as the file system names it: the real path
// the FileManager recorded when it opened the file, else the name made absolute
// and resolved by the file system.  Never `..` folded as text: a compiler named
// without a path finds libstdc++ through `/bin/../include/c++/12`, and with
// `/bin` a symlink to `usr/bin` the textual fold `/include/c++/12` names nothing.
std::string openedPath(clang::FileEntryRef f, llvm::StringRef buildDir) {
  llvm::StringRef real = f.getFileEntry().tryGetRealPathName();
  if (!real.empty() && llvm::sys::path::is_absolute(real))
    return real.str();
  llvm::SmallString<256> p(f.getName());
  if (!llvm::sys::path::is_absolute(p)) {
    llvm::SmallString<256> base(buildDir);
    llvm::sys::path::append(base, p);
    p = base;
  }
  llvm::SmallString<256> resolved;
  if (!llvm::sys::fs::real_path(p, resolved))
    return std::string(resolved);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/false);
  return std::string(p);
}

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
  // The checks match the translation unit and walk the user's functions
  // themselves; the matcher's walk over every library declaration finds
  // nothing and, with a precompiled preamble, would read the whole PCH back.
  // It visits the unit and the user's top-level declarations only.
  void HandleTranslationUnit(clang::ASTContext &ctx) override {
    std::vector<clang::Decl *> scope;
    for (clang::Decl *d : ctx.getTranslationUnitDecl()->decls())
      if (ddplint::clangfe::isUserCode(sm_, d->getLocation()))
        scope.push_back(d);
    ctx.setTraversalScope(scope);
    MultiplexConsumer::HandleTranslationUnit(ctx);
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
                    llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> fs, bool skipBodies,
                    const PreambleUse *preamble)
      : factory_(ctx, std::move(fs)), skipBodies_(skipBodies), preamble_(preamble) {}
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
    if (preamble_) {
      // The shared preamble: its PCH stands for the unit's first bytes, which
      // the lexer skips; everything after keeps its own positions.
      invocation->getPreprocessorOpts().ImplicitPCHInclude = preamble_->pchPath;
      invocation->getPreprocessorOpts().PrecompiledPreambleBytes = {preamble_->bytes, true};
    }
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
  const PreambleUse *preamble_;
  std::string language_;
};

// One command for one (virtual) file: the preamble header's.
class OneCommandDatabase : public clang::tooling::CompilationDatabase {
public:
  explicit OneCommandDatabase(clang::tooling::CompileCommand cmd) : cmd_(std::move(cmd)) {}
  std::vector<clang::tooling::CompileCommand> getCompileCommands(llvm::StringRef) const override {
    return {cmd_};
  }
  std::vector<std::string> getAllFiles() const override { return {cmd_.Filename}; }

private:
  clang::tooling::CompileCommand cmd_;
};

// The first compile error of a preamble build, for the reason it is not used.
class FirstError : public clang::DiagnosticConsumer {
public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic &info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level >= clang::DiagnosticsEngine::Error && message.empty()) {
      llvm::SmallString<256> text;
      info.FormatDiagnostic(text);
      message = std::string(text);
    }
  }
  std::string message;
};

// GeneratePCHAction with the CLI's body skipping, writing to a given file and
// listing the files it read.
class PreamblePchAction : public clang::GeneratePCHAction {
public:
  PreamblePchAction(std::string out, bool skip, const PreambleSpec &spec,
                    std::vector<PreambleInput> *inputs)
      : out_(std::move(out)), skip_(skip), spec_(spec), inputs_(inputs) {}
  bool BeginInvocation(clang::CompilerInstance &ci) override {
    ci.getFrontendOpts().OutputFile = out_;
    return true;
  }
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &ci,
                                                        llvm::StringRef file) override {
    auto consumer = GeneratePCHAction::CreateASTConsumer(ci, file);
    if (!consumer || !skip_)
      return consumer;
    return std::make_unique<SkipSystemBodiesConsumer>(std::move(consumer), ci.getSourceManager());
  }
  void EndSourceFileAction() override {
    const clang::SourceManager &sm = getCompilerInstance().getSourceManager();
    for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it) {
      clang::FileEntryRef f = it->first;
      if (absolutePath(f.getName(), spec_.pchCommand.Directory) == spec_.headerPath)
        continue; // in memory; its text is part of the key
      inputs_->push_back({openedPath(f, spec_.pchCommand.Directory),
                          static_cast<uint64_t>(f.getSize()),
                          static_cast<int64_t>(f.getModificationTime())});
    }
    GeneratePCHAction::EndSourceFileAction();
  }

private:
  std::string out_;
  bool skip_;
  const PreambleSpec &spec_;
  std::vector<PreambleInput> *inputs_;
};

class PreamblePchFactory : public clang::tooling::FrontendActionFactory {
public:
  PreamblePchFactory(std::string out, bool skip, const PreambleSpec &spec,
                     std::vector<PreambleInput> *inputs)
      : out_(std::move(out)), skip_(skip), spec_(spec), inputs_(inputs) {}
  std::unique_ptr<clang::FrontendAction> create() override {
    return std::make_unique<PreamblePchAction>(out_, skip_, spec_, inputs_);
  }
  bool runInvocation(std::shared_ptr<clang::CompilerInvocation> invocation,
                     clang::FileManager *files,
                     std::shared_ptr<clang::PCHContainerOperations> pch,
                     clang::DiagnosticConsumer *diags) override {
    // Exactly as the units are parsed (TidyActionFactory::runInvocation):
    // the PCH's predefined macros must match theirs.
    invocation->getPreprocessorOpts().SetUpStaticAnalyzer = true;
    if (skip_)
      invocation->getFrontendOpts().SkipFunctionBodies = true;
    return FrontendActionFactory::runInvocation(std::move(invocation), files, std::move(pch),
                                                diags);
  }

private:
  std::string out_;
  bool skip_;
  const PreambleSpec &spec_;
  std::vector<PreambleInput> *inputs_;
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

// How one parse went: did it fail in a way a preamble could have caused?
struct RunStatus {
  bool failed = false;
};

RunStatus runOnce(const std::string &absFile, const clang::tooling::CompilationDatabase &db,
                  ConfigResolver &configs, const TidyRunOptions &opts, RunResult &out,
                  const PreambleUse *preamble) {
  RunStatus status;
  std::vector<ToolError> cfgErrors;
  std::shared_ptr<const Config> cfg = configs.forFile(absFile, cfgErrors);
  if (!cfg)
    return status; // reported when the configs were loaded

  ClangTidyContext ctx(std::make_unique<ConfigOptionsProvider>(configs));
  // A private physical file system per run: the real one's working directory
  // is the process's, and parallel runs would change it under each other.
  auto fs = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
      llvm::vfs::createPhysicalFileSystem());
  if (preamble) {
    // The header the PCH was built from, with the time it was built with.
    auto mem = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
    mem->addFile(preamble->headerPath, 0, llvm::MemoryBuffer::getMemBufferCopy(preamble->text));
    fs->pushOverlay(mem);
  }
  // ClangTool aborts the whole process (report_fatal_error) when it cannot
  // enter a command's directory: a database moved or generated elsewhere.
  for (const auto &cmd : db.getCompileCommands(absFile))
    if (!llvm::sys::fs::is_directory(cmd.Directory)) {
      ToolError e;
      e.location.file = absFile;
      e.message = "the compilation database runs this file's compile command in '" + cmd.Directory +
                  "', which is not a directory here; regenerate compile_commands.json on this "
                  "machine (or pass the flags after --)";
      out.errors.push_back(e);
      status.failed = true;
      return status;
    }
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
  TidyActionFactory factory(ctx, fs, !opts.parseSystemBodies && !opts.analyzeLibraryCode,
                            preamble);

  int rc = 0;
  llvm::CrashRecoveryContext crc;
  const bool survived = crc.RunSafely([&] { rc = tool.run(&factory); });
  if (!survived) {
    ToolError e;
    e.location.file = absFile;
    e.message = "ddplint crashed while analysing this file; no findings for it (the other files' "
                "findings are kept). Please report it with the file's compile command.";
    out.errors.push_back(e);
    status.failed = true;
    return status;
  }
  std::vector<ClangTidyError> diags = consumer.take();

  SourceFiles src;
  // The preamble's header holds the unit's first bytes: a position in it (a
  // note "expanded from macro" for a macro #defined at the top of the unit)
  // is the same byte of the unit itself.
  const std::string preambleHeader =
      preamble ? absolutePath(preamble->headerPath, "") : std::string();
  auto locate = [&](const clang::tooling::DiagnosticMessage &m, llvm::StringRef buildDir) {
    Location at = cli::locate(src, m, buildDir);
    if (!preambleHeader.empty() && at.file == preambleHeader) {
      at.file = absFile;
      src.position(absFile, m.FileOffset, at.line, at.column);
    }
    return at;
  };
  bool compileError = false;
  for (const ClangTidyError &d : diags) {
    const bool isCheck = llvm::StringRef(d.DiagnosticName).starts_with("ddp-");
    if (!isCheck) {
      if (d.DiagLevel != clang::tooling::Diagnostic::Error)
        continue; // compiler warnings are not ours to report
      compileError = true;
      ToolError e;
      e.location = locate(d.Message, d.BuildDirectory);
      // An error in a header says which translation unit ran into it.
      e.message = e.location.file == absFile ? d.Message.Message
                                             : d.Message.Message + " (compiling " + absFile + ")";
      out.errors.push_back(std::move(e));
      continue;
    }
    // The path rules' shared analysis says where it stopped short: not a
    // finding of the rule that happened to report it.
    if (d.DiagLevel == clang::tooling::Diagnostic::Remark &&
        llvm::StringRef(d.Message.Message).starts_with(ddplint::core::kAnalysisLimitPrefix)) {
      Location at = locate(d.Message, d.BuildDirectory);
      std::shared_ptr<const Config> limitCfg = configs.forFile(at.file, cfgErrors);
      if (!(limitCfg ? limitCfg : cfg)->excluded(at.file))
        out.analysisLimits.push_back({std::move(at), d.Message.Message});
      continue;
    }
    Finding f;
    f.ruleId = d.DiagnosticName;
    f.message = d.Message.Message;
    f.location = locate(d.Message, d.BuildDirectory);
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
    // A remark is the rule's note-level form (a policy finding, or its weaker case).
    if (d.DiagLevel == clang::tooling::Diagnostic::Remark)
      f.severity = Severity::Note;
    f.sourceLine = src.lineText(f.location.file, f.location.line);
    for (const auto &n : d.Notes)
      f.notes.push_back({locate(n, d.BuildDirectory), n.Message});
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
  status.failed = rc != 0 || compileError;
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
      if (rule.runner == "program" && ctx.isCheckEnabled(rule.id) &&
          std::find(rule.languages.begin(), rule.languages.end(), lang) != rule.languages.end())
        applies = true;
    if (!applies) {
      out.skipped.emplace_back(absFile, "no enabled check applies to " +
                                            std::string(lang == "c" ? "C" : lang));
      return status;
    }
  }
  ++out.filesAnalyzed;
  return status;
}

} // namespace

void runChecksOnFile(const std::string &absFile, const clang::tooling::CompilationDatabase &db,
                     ConfigResolver &configs, const TidyRunOptions &opts, RunResult &out,
                     const PreambleUse *preamble, bool *preambleBroken) {
  if (!preamble) {
    runOnce(absFile, db, configs, opts, out, nullptr);
    return;
  }
  RunResult withPreamble;
  if (!runOnce(absFile, db, configs, opts, withPreamble, preamble).failed) {
    out = std::move(withPreamble);
    return;
  }
  // The unit does not compile with the preamble: whatever the reason (its
  // code, a header changed under the PCH, a preamble that cannot stand
  // alone), the whole parse decides what is reported.
  RunResult whole;
  const bool wholeFailed = runOnce(absFile, db, configs, opts, whole, nullptr).failed;
  if (preambleBroken && !wholeFailed)
    *preambleBroken = true;
  if (!wholeFailed && std::getenv("DDPLINT_DEBUG_PREAMBLE"))
    for (const auto &e : withPreamble.errors)
      llvm::errs() << "ddplint: debug: " << absFile << ": with the preamble: " << e.location.file
                   << ":" << e.location.line << ": " << e.message << "\n";
  out = std::move(whole);
}

bool buildPreamblePch(const PreambleSpec &spec, const std::string &outPch,
                      const TidyRunOptions &opts, std::vector<PreambleInput> &inputs,
                      std::string &error) {
  auto fs = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(
      llvm::vfs::createPhysicalFileSystem());
  auto mem = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  mem->addFile(spec.headerPath, 0, llvm::MemoryBuffer::getMemBufferCopy(spec.text));
  fs->pushOverlay(mem);
  if (!llvm::sys::fs::is_directory(spec.pchCommand.Directory)) {
    error = "its compile command's directory '" + spec.pchCommand.Directory + "' is not a directory";
    return false; // runOnce says so for the unit
  }
  OneCommandDatabase db(spec.pchCommand);
  clang::tooling::ClangTool tool(db, {spec.headerPath},
                                 std::make_shared<clang::PCHContainerOperations>(), fs);
  tool.setPrintErrorMessage(false);
  tool.appendArgumentsAdjuster(clang::tooling::getStripPluginsAdjuster());
  if (!opts.resourceDir.empty())
    tool.appendArgumentsAdjuster(clang::tooling::getInsertArgumentAdjuster(
        ("-resource-dir=" + opts.resourceDir).c_str(),
        clang::tooling::ArgumentInsertPosition::END));
  FirstError diags;
  tool.setDiagnosticConsumer(&diags);
  PreamblePchFactory factory(outPch, !opts.parseSystemBodies && !opts.analyzeLibraryCode, spec,
                             &inputs);
  int rc = 1;
  llvm::CrashRecoveryContext crc;
  if (!crc.RunSafely([&] { rc = tool.run(&factory); })) {
    error = "crashed while building the preamble";
    return false;
  }
  if (rc != 0 || diags.getNumErrors() > 0) {
    error = diags.message.empty() ? "the preamble does not compile on its own" : diags.message;
    return false;
  }
  return llvm::sys::fs::exists(outPch);
}

} // namespace ddplint::cli
