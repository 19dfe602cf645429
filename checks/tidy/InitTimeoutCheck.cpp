#include "tidy/InitTimeoutCheck.h"

#include "tidy/UserCode.h"

#include "clang-frontend/ApiMatcher.h"
#include "ddplint/core/Catalog.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ASTLambda.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Lexer.h"

#include "llvm/ADT/STLExtras.h"

#include <optional>

using namespace clang;
using namespace clang::ast_matchers;

namespace ddplint::tidy {

namespace {

// Factories that build an object of their first template argument.
const char *const kMakeFunctions[] = {"c10::make_intrusive", "std::make_shared",
                                      "std::make_unique"};

std::string shortName(const std::string &qualified) {
  // "c10d::ProcessGroupGloo::Options" -> "ProcessGroupGloo::Options"
  const auto first = qualified.find("::");
  return first == std::string::npos ? qualified : qualified.substr(first + 2);
}

std::string defaultTimeoutText(const std::string &backend) {
  if (backend == "gloo")
    return "30 min for Gloo";
  if (backend == "nccl")
    return "10 to 30 min for NCCL, by version";
  return "the backend's default";
}

// Arguments the user wrote: default arguments are filled in by Sema.
template <class CallLike> unsigned writtenArgs(const CallLike *call) {
  unsigned n = 0;
  for (const Expr *a : call->arguments()) {
    if (isa<CXXDefaultArgExpr>(a))
      break;
    ++n;
  }
  return n;
}

const ValueDecl *declOf(const Expr *e) {
  e = e->IgnoreParenImpCasts();
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e))
    if (op->getOperator() == OO_Arrow && op->getNumArgs() >= 1)
      return declOf(op->getArg(0));
  if (const auto *dre = dyn_cast<DeclRefExpr>(e))
    return dre->getDecl();
  if (const auto *me = dyn_cast<MemberExpr>(e))
    return me->getMemberDecl();
  return nullptr;
}

// The variable or member a freshly created object is stored in, looking
// through the conversions and temporaries an initialisation adds.
const ValueDecl *storedInto(const Expr *created, const LocalParents &lp) {
  const Stmt *cur = created;
  for (int depth = 0; depth < 10; ++depth) {
    if (const ValueDecl *d = lp.initialised(cur))
      return d;
    const auto *p = dyn_cast_or_null<Expr>(lp.parent(cur));
    if (!p)
      return nullptr;
    const Expr *curE = cast<Expr>(cur)->IgnoreImplicit();
    if (isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups,
            ParenExpr, CXXFunctionalCastExpr>(p)) {
      cur = p;
      continue;
    }
    if (const auto *ce = dyn_cast<CXXConstructExpr>(p)) {
      if (ce->getNumArgs() >= 1 && ce->getArg(0)->IgnoreImplicit() == curE) {
        cur = p;
        continue;
      }
      return nullptr;
    }
    if (const auto *bo = dyn_cast<BinaryOperator>(p))
      return bo->isAssignmentOp() && bo->getRHS()->IgnoreImplicit() == curE ? declOf(bo->getLHS())
                                                                            : nullptr;
    if (const auto *op = dyn_cast<CXXOperatorCallExpr>(p))
      return op->getOperator() == OO_Equal && op->getNumArgs() == 2 &&
                     op->getArg(1)->IgnoreImplicit() == curE
                 ? declOf(op->getArg(0))
                 : nullptr;
    return nullptr;
  }
  return nullptr;
}

// The body of the lambda (or else the function) the expression is written in.
const Stmt *enclosingBody(const Stmt *s, const LocalParents &lp, const FunctionDecl *fd) {
  for (const Stmt *p = lp.parent(s); p; p = lp.parent(p))
    if (const auto *le = dyn_cast<LambdaExpr>(p))
      return le->getBody();
  return fd->getBody();
}

bool isAssignedTo(const Expr *lhs, const LocalParents &lp) {
  const Stmt *cur = lhs;
  while (const Stmt *p = lp.parent(cur)) {
    if (isa<ParenExpr, ImplicitCastExpr>(p)) {
      cur = p;
      continue;
    }
    if (const auto *bo = dyn_cast<BinaryOperator>(p))
      return bo->isAssignmentOp() && bo->getLHS()->IgnoreParenImpCasts() == lhs;
    if (const auto *op = dyn_cast<CXXOperatorCallExpr>(p))
      return op->isAssignmentOp() && op->getArg(0)->IgnoreParenImpCasts() == lhs;
    return false;
  }
  return false;
}

// `opts->timeout = ...` or `opts.timeout = ...` anywhere in `body`.
bool timeoutAssigned(const ValueDecl *options, const Stmt *s, const LocalParents &lp) {
  if (!options || !s)
    return false;
  if (const auto *me = dyn_cast<MemberExpr>(s))
    if (me->getMemberDecl()->getDeclName().isIdentifier() &&
        me->getMemberDecl()->getName() == "timeout" && declOf(me->getBase()) == options &&
        isAssignedTo(me, lp))
      return true;
  for (const Stmt *kid : s->children())
    if (timeoutAssigned(options, kid, lp))
      return true;
  return false;
}

} // namespace

InitTimeoutCheck::InitTimeoutCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context)
    : ClangTidyCheck(name, context),
      defaultTimeoutSeconds_(Options.get("DefaultTimeoutSeconds", 300U)) {
  const core::ApiCatalog &api = core::builtinApi();
  // Only backends whose options carry a timeout are in scope (MPI has none).
  for (const auto &opt : api.processGroupOptions) {
    const std::string suffix = "::create";
    if (opt.factory.size() <= suffix.size() ||
        opt.factory.compare(opt.factory.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    for (const auto &pg : api.processGroups) {
      if (pg.backend != opt.backend)
        continue;
      Backend b;
      b.name = opt.backend;
      b.groupClass = pg.className;
      b.optionsClass = opt.factory.substr(0, opt.factory.size() - suffix.size());
      b.factory = opt.factory;
      b.optionsArg = pg.optionsArg;
      b.timeoutArg = opt.timeoutArg;
      backends_.push_back(b);
    }
  }
}

void InitTimeoutCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) {
  Options.store(opts, "DefaultTimeoutSeconds", defaultTimeoutSeconds_);
}

void InitTimeoutCheck::registerMatchers(MatchFinder *finder) {
  if (backends_.empty())
    return;
  // The unit once; its functions are walked in check() (see UserCode.h).
  finder->addMatcher(translationUnitDecl().bind("tu"), this);
}

void InitTimeoutCheck::check(const MatchFinder::MatchResult &result) {
  const auto *tu = result.Nodes.getNodeAs<TranslationUnitDecl>("tu");
  if (!tu)
    return;
  const SourceManager &sm = *result.SourceManager;
  forEachUserFunction(tu, sm, [&](const FunctionDecl *fd) {
    std::optional<LocalParents> lp;
    auto visit = [&](const Stmt *s) {
      if (!isa<CallExpr, CXXConstructExpr>(s) || !clangfe::isUserCode(sm, s->getBeginLoc()))
        return;
      if (!lp)
        lp.emplace(fd);
      examine(cast<Expr>(s), *lp, fd);
    };
    forEachStmt(fd->getBody(), visit);
    // Constructor initialisers: `opts_(Options::create())`.
    if (const auto *ctor = dyn_cast<CXXConstructorDecl>(fd))
      for (const CXXCtorInitializer *init : ctor->inits())
        if (init->isWritten())
          forEachStmt(init->getInit(), visit);
  }, /*instantiations=*/true);
  reported_.clear();
}

void InitTimeoutCheck::examine(const Expr *e, const LocalParents &lp, const FunctionDecl *fd) {
  const Expr *created = nullptr;
  std::string cls;       // the class being created
  unsigned written = 0;  // arguments the user wrote
  SourceLocation rparen; // where a missing argument would go
  bool viaFactory = false;

  if (const auto *call = dyn_cast<CallExpr>(e)) {
    const FunctionDecl *callee = call->getDirectCallee();
    if (!callee || !callee->getDeclName().isIdentifier())
      return;
    const llvm::StringRef last = callee->getName();
    if (last == "create") {
      const std::string name = clangfe::qualifiedName(callee);
      for (const auto &b : backends_)
        if (b.factory == name)
          cls = b.optionsClass;
      if (cls.empty())
        return;
      viaFactory = true;
      written = writtenArgs(call);
    } else if (last == "make_intrusive" || last == "make_shared" || last == "make_unique") {
      const std::string name = clangfe::qualifiedName(callee);
      if (!llvm::is_contained(kMakeFunctions, name))
        return;
      const TemplateArgumentList *targs = callee->getTemplateSpecializationArgs();
      if (!targs || targs->size() == 0 || targs->get(0).getKind() != TemplateArgument::Type)
        return;
      const auto *rd = targs->get(0).getAsType()->getAsCXXRecordDecl();
      if (!rd)
        return;
      cls = clangfe::qualifiedName(rd);
      written = call->getNumArgs();
    } else {
      return;
    }
    created = call;
    rparen = call->getRParenLoc();
  } else if (const auto *ctor = dyn_cast<CXXConstructExpr>(e)) {
    // `new T(...)` and `T x(...)`; the constructions inside make_intrusive
    // live in a system header and are judged at the make_intrusive call.
    const CXXConstructorDecl *cd = ctor->getConstructor();
    if (!cd || cd->isCopyOrMoveConstructor())
      return;
    cls = clangfe::qualifiedName(cd->getParent());
    created = ctor;
    written = writtenArgs(ctor);
    rparen = ctor->getParenOrBraceRange().getEnd();
  }
  if (!created || cls.empty())
    return;
  const Backend *backend = nullptr;
  bool isGroup = false;
  for (const auto &b : backends_) {
    if (b.groupClass == cls) {
      backend = &b;
      isGroup = true;
    } else if (b.optionsClass == cls) {
      backend = &b;
    }
  }
  if (!backend)
    return;

  // An instantiation shares its text with other instantiations: no edits there.
  const bool fixable = rparen.isValid() && !rparen.isMacroID() &&
                       !created->getBeginLoc().isMacroID() && !isInstantiation(fd);
  const std::string timeoutExpr =
      "std::chrono::seconds(" + std::to_string(defaultTimeoutSeconds_) + ")";
  const std::string defaults = defaultTimeoutText(backend->name);

  // A template instantiated twice creates at one place.
  if (!reported_.insert(created->getBeginLoc()).second)
    return;
  if (isGroup) {
    // Options passed explicitly are judged where they are created: one
    // diagnostic per group.
    if (backend->optionsArg < 0 || written > static_cast<unsigned>(backend->optionsArg))
      return;
    const bool gloo = backend->timeoutArg >= 0;
    auto d = diag(created->getBeginLoc(),
                  "process group '%0' is created without an explicit timeout; a hung collective "
                  "waits the backend default (%1) before failing; %2")
             << shortName(cls) << defaults
             << (gloo ? "pass options with a timeout"
                      : "pass options whose 'timeout' member is set");
    if (gloo && fixable && written == static_cast<unsigned>(backend->optionsArg) && written > 0)
      d << FixItHint::CreateInsertion(rparen, ", " + backend->optionsClass + "::create(" +
                                                  timeoutExpr + ")");
    return;
  }

  // Options: the timeout is either an argument or assigned to the member.
  if (backend->timeoutArg >= 0 && written > static_cast<unsigned>(backend->timeoutArg))
    return;
  const ValueDecl *stored = storedInto(created, lp);
  if (timeoutAssigned(stored, enclosingBody(created, lp, fd), lp))
    return;
  if (backend->timeoutArg >= 0) {
    auto d = diag(created->getBeginLoc(),
                  "process group options '%0' are created without an explicit timeout; a hung "
                  "collective waits the backend default (%1) before failing; pass a timeout")
             << shortName(cls) << defaults;
    // Options::create() and make_intrusive<Options>() take the timeout first.
    if (fixable && written == 0 && backend->timeoutArg == 0 &&
        (viaFactory || isa<CallExpr>(created) || isa<CXXTemporaryObjectExpr>(created)))
      d << FixItHint::CreateInsertion(rparen, timeoutExpr);
    return;
  }
  const std::string var = stored ? stored->getNameAsString() : std::string("opts");
  const bool pointer = !stored || stored->getType().isNull() || !stored->getType()->getAsCXXRecordDecl() ||
                       clangfe::qualifiedName(stored->getType()->getAsCXXRecordDecl()) != cls;
  diag(created->getBeginLoc(),
       "process group options '%0' are created without an explicit timeout; a hung collective "
       "waits the backend default (%1) before failing; set '%2%3timeout = ...' before creating "
       "the group")
      << shortName(cls) << defaults << var << (pointer ? "->" : ".");
}

} // namespace ddplint::tidy
