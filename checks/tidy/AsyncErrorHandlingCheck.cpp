#include "tidy/AsyncErrorHandlingCheck.h"

#include "tidy/UserCode.h"

#include "clang-frontend/ApiMatcher.h"
#include "ddplint/core/AsyncErrorFacts.h"
#include "ddplint/core/Catalog.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace ddplint::tidy {

namespace {

// Records TORCH_VERSION_MAJOR/MINOR from <torch/version.h> or the command line.
class VersionCallbacks : public PPCallbacks {
public:
  VersionCallbacks(Preprocessor &pp, AsyncErrorHandlingCheck &check) : pp_(pp), check_(check) {}
  void MacroDefined(const Token &name, const MacroDirective *md) override {
    const IdentifierInfo *ii = name.getIdentifierInfo();
    if (!ii || !md)
      return;
    std::optional<int> *slot = nullptr;
    if (ii->getName() == "TORCH_VERSION_MAJOR")
      slot = &check_.versionMajor;
    else if (ii->getName() == "TORCH_VERSION_MINOR")
      slot = &check_.versionMinor;
    if (!slot)
      return;
    const MacroInfo *mi = md->getMacroInfo();
    if (!mi || mi->getNumTokens() != 1 || !mi->tokens().front().is(tok::numeric_constant))
      return;
    unsigned value = 0;
    if (!llvm::StringRef(pp_.getSpelling(mi->tokens().front())).getAsInteger(10, value))
      *slot = static_cast<int>(value);
  }

  // A precompiled header or preamble (the ddplint CLI's cache, clangd) brings
  // <torch/version.h> in already defined, with no MacroDefined callback: read
  // the macros from the preprocessor at the end of the unit instead.
  void EndOfMainFile() override {
    read("TORCH_VERSION_MAJOR", check_.versionMajor);
    read("TORCH_VERSION_MINOR", check_.versionMinor);
  }

private:
  void read(llvm::StringRef name, std::optional<int> &slot) {
    if (slot)
      return;
    const MacroInfo *mi = pp_.getMacroInfo(pp_.getIdentifierInfo(name));
    if (!mi || mi->getNumTokens() != 1 || !mi->tokens().front().is(tok::numeric_constant))
      return;
    unsigned value = 0;
    if (!llvm::StringRef(pp_.getSpelling(mi->tokens().front())).getAsInteger(10, value))
      slot = static_cast<int>(value);
  }
  Preprocessor &pp_;
  AsyncErrorHandlingCheck &check_;
};

const Expr *ignoreStringWrappers(const Expr *e) {
  while (true) {
    // Explicit casts too: putenv(const_cast<char *>("NAME=1")).
    e = e->IgnoreParenCasts();
    if (const auto *bind = dyn_cast<CXXBindTemporaryExpr>(e)) {
      e = bind->getSubExpr();
      continue;
    }
    if (const auto *mt = dyn_cast<MaterializeTemporaryExpr>(e)) {
      e = mt->getSubExpr();
      continue;
    }
    if (const auto *ctor = dyn_cast<CXXConstructExpr>(e)) {
      if (ctor->getNumArgs() >= 1) {
        e = ctor->getArg(0);
        continue;
      }
      return e;
    }
    // std::string("X").c_str()
    if (const auto *mc = dyn_cast<CXXMemberCallExpr>(e)) {
      const auto *md = mc->getMethodDecl();
      if (md && (md->getName() == "c_str" || md->getName() == "data")) {
        e = mc->getImplicitObjectArgument();
        continue;
      }
      return e;
    }
    return e;
  }
}

// The string an argument spells: a literal, or a constant initialised with one
// (c10d::NCCL_ASYNC_ERROR_HANDLING in LibTorch 1.13).
std::optional<std::string> stringOf(const Expr *e, const StringLiteral **literal, int depth = 0) {
  if (!e || depth > 4)
    return std::nullopt;
  e = ignoreStringWrappers(e);
  if (const auto *sl = dyn_cast<StringLiteral>(e)) {
    if (!sl->isOrdinary() && !sl->isUTF8())
      return std::nullopt;
    if (literal && depth == 0)
      *literal = sl;
    return sl->getString().str();
  }
  if (const auto *dre = dyn_cast<DeclRefExpr>(e))
    if (const auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
      if (vd->getType().isNull() || vd->getType().isConstQualified() || vd->getType()->isPointerType() || vd->isConstexpr())
        if (const Expr *init = vd->getAnyInitializer())
          return stringOf(init, literal, depth + 1);
  return std::nullopt;
}

} // namespace

AsyncErrorHandlingCheck::AsyncErrorHandlingCheck(llvm::StringRef name,
                                                 clang::tidy::ClangTidyContext *context)
    : ClangTidyCheck(name, context) {
  for (const auto &pg : core::builtinApi().processGroups)
    if (pg.backend == "nccl")
      ncclGroupClasses_.push_back(pg.className);
  envFunctions_ = {"setenv", "putenv"};
  for (const auto &f : core::builtinApi().envFunctions)
    envFunctions_.push_back(f);
}

void AsyncErrorHandlingCheck::registerPPCallbacks(const SourceManager &, Preprocessor *pp,
                                                  Preprocessor *) {
  pp->addPPCallbacks(std::make_unique<VersionCallbacks>(*pp, *this));
}

void AsyncErrorHandlingCheck::registerMatchers(MatchFinder *finder) {
  // The unit once; its functions are walked in check() (see UserCode.h).
  finder->addMatcher(translationUnitDecl().bind("tu"), this);
}

void AsyncErrorHandlingCheck::check(const MatchFinder::MatchResult &result) {
  const auto *tu = result.Nodes.getNodeAs<TranslationUnitDecl>("tu");
  if (!tu)
    return;
  ctx_ = result.Context;
  const SourceManager &sm = *result.SourceManager;
  forEachUserFunction(tu, sm, [&](const FunctionDecl *fd) {
    forEachStmt(fd->getBody(), [&](const Stmt *s) {
      if (!isa<CallExpr, CXXConstructExpr>(s) || !clangfe::isUserCode(sm, s->getBeginLoc()))
        return;
      if (const auto *ctor = dyn_cast<CXXConstructExpr>(s)) {
        const CXXConstructorDecl *cd = ctor->getConstructor();
        if (cd && !cd->isCopyOrMoveConstructor() && isNcclGroup(cd->getParent()))
          creations_.push_back({ctor->getBeginLoc(), cd->getParent()->getNameAsString()});
        return;
      }
      examineCall(cast<CallExpr>(s));
    });
  }, /*instantiations=*/true);
}

bool AsyncErrorHandlingCheck::isNcclGroup(const CXXRecordDecl *rd) const {
  return rd && llvm::is_contained(ncclGroupClasses_, clangfe::qualifiedName(rd));
}

void AsyncErrorHandlingCheck::examineCall(const CallExpr *call) {
  const FunctionDecl *callee = call->getDirectCallee();
  if (!callee || !callee->getDeclName().isIdentifier())
    return;
  const llvm::StringRef fn = callee->getName();
  if (fn == "make_intrusive" || fn == "make_shared" || fn == "make_unique") {
    const TemplateArgumentList *targs = callee->getTemplateSpecializationArgs();
    if (targs && targs->size() > 0 && targs->get(0).getKind() == TemplateArgument::Type &&
        isNcclGroup(targs->get(0).getAsType()->getAsCXXRecordDecl()))
      creations_.push_back(
          {call->getBeginLoc(), targs->get(0).getAsType()->getAsCXXRecordDecl()->getNameAsString()});
    return;
  }
  if (call->getNumArgs() == 0 || !llvm::is_contained(envFunctions_, clangfe::qualifiedName(callee)))
    return;
  EnvUse use;
  use.isSet = fn == "setenv" || fn == "putenv";
  std::optional<std::string> name = stringOf(call->getArg(0), &use.literal);
  if (!name) {
    use.nameKnown = false;
    env_.push_back(use);
    return;
  }
  if (fn == "putenv") {
    // putenv("NAME=VALUE")
    const auto eq = name->find('=');
    if (eq != std::string::npos) {
      use.value = name->substr(eq + 1);
      name->resize(eq);
    }
  } else if (fn == "setenv" && call->getNumArgs() >= 2) {
    use.value = stringOf(call->getArg(1), nullptr);
  }
  use.name = *name;
  env_.push_back(use);
}

void AsyncErrorHandlingCheck::onEndOfTranslationUnit() {
  // The facts per LibTorch version come from rules/nccl-async-error.yaml.
  const core::AsyncErrorFacts &facts = core::builtinAsyncErrorFacts();

  // The version: <torch/version.h>, else what the headers declare
  // (c10d::TORCH_NCCL_ASYNC_ERROR_HANDLING from 2.2, c10d::Backend from 2.0).
  int version = 0;
  std::string versionName;
  if (versionMajor && versionMinor) {
    version = *versionMajor * 100 + *versionMinor;
    versionName = "LibTorch " + core::versionString(version);
  } else if (ctx_) {
    auto declaresInC10d = [&](llvm::StringRef name) {
      for (const NamedDecl *ns : ctx_->getTranslationUnitDecl()->lookup(&ctx_->Idents.get("c10d")))
        if (const auto *dc = dyn_cast<NamespaceDecl>(ns))
          if (!dc->lookup(&ctx_->Idents.get(name)).empty())
            return true;
      return false;
    };
    const core::AsyncErrorVersionRange &newest = facts.versions.back();
    if (!newest.reads.empty() && declaresInC10d(newest.reads.front())) {
      version = newest.from;
      versionName = "LibTorch " + core::versionString(version) + " or newer (the headers declare c10d::" +
                    newest.reads.front() + ")";
    } else if (declaresInC10d("Backend")) {
      version = 200;
      versionName = "LibTorch 2.0 or newer (the headers declare c10d::Backend)";
    } else {
      version = 113;
      versionName = "LibTorch 1.13 or older (the headers declare no c10d::Backend)";
    }
  }
  const core::AsyncErrorVersionRange &range = core::asyncErrorRange(facts, version);
  const std::string readName = range.reads.empty() ? "" : range.reads.front();

  // A deprecated spelling this version still reads: rename it.
  llvm::DenseSet<SourceLocation> seen;
  for (const EnvUse &use : env_) {
    if (!use.nameKnown || !use.literal || !llvm::is_contained(range.deprecated, use.name))
      continue;
    const SourceLocation at = use.literal->getBeginLoc();
    if (!seen.insert(at).second)
      continue;
    auto d = diag(at, "'%0' is deprecated since LibTorch %1; use '%2'")
             << use.name << core::versionString(core::firstVersionReading(facts, readName))
             << readName;
    // The new name is the old one with a TORCH_ prefix: insert it after the quote.
    if (!at.isMacroID() && use.literal->getNumConcatenated() == 1 && use.literal->isOrdinary() &&
        llvm::StringRef(readName).ends_with(use.name))
      d << FixItHint::CreateInsertion(at.getLocWithOffset(1),
                                      readName.substr(0, readName.size() - use.name.size()));
  }

  const core::AsyncErrorMode *defaultMode =
      core::asyncErrorMode(facts, std::to_string(range.defaultMode));
  const bool onByDefault = defaultMode && defaultMode->on;
  if (!creations_.empty() && !readName.empty()) {
    bool enabled = onByDefault, setToOff = false;
    for (const EnvUse &use : env_) {
      if (!use.isSet)
        continue;
      const bool ours = use.nameKnown && (use.name == readName ||
                                          llvm::is_contained(range.deprecated, use.name));
      // A name we cannot read may well be this one: stay quiet.
      if (!use.nameKnown || (ours && (!use.value || *use.value != "0")))
        enabled = true;
      else if (ours && use.value && *use.value == "0")
        setToOff = true;
    }
    if (setToOff)
      enabled = false;
    if (!enabled) {
      const Creation &first = creations_.front();
      diag(first.loc,
           "NCCL process group '%0' is created with async error handling off: %1 reads %2 "
           "with default %3%4, so a failed or hung collective is not aborted and the other "
           "ranks wait forever; call setenv(\"%2\", \"1\", 1) before creating the group")
          << first.cls << versionName << readName
          << (std::to_string(range.defaultMode) + " (" + (defaultMode ? defaultMode->name : "") + ")")
          << (setToOff ? std::string(", and the program sets it to 0") : std::string(", off, and the program never sets it"));
    }
  }
  env_.clear();
  creations_.clear();
  versionMajor.reset();
  versionMinor.reset();
  ctx_ = nullptr;
}

} // namespace ddplint::tidy
