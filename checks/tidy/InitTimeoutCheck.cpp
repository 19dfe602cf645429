#include "tidy/InitTimeoutCheck.h"

#include "clang-frontend/ApiMatcher.h"
#include "ddplint/core/Catalog.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace clang::ast_matchers;

namespace ddplint::tidy {

namespace {

// hasAnyName() takes StringRefs; the strings must outlive the call only.
ast_matchers::internal::Matcher<NamedDecl> anyName(const std::vector<std::string> &names) {
  std::vector<llvm::StringRef> refs(names.begin(), names.end());
  return hasAnyName(llvm::ArrayRef<llvm::StringRef>(refs));
}

// Factories that build an object of their first template argument.
const char *const kMakeFunctions[] = {"::c10::make_intrusive", "::std::make_shared",
                                      "::std::make_unique"};

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

const Stmt *singleParentStmt(const Stmt *s, ASTContext &ctx) {
  auto parents = ctx.getParents(*s);
  return parents.size() == 1 ? parents[0].get<Stmt>() : nullptr;
}

// The variable or member a freshly created object is stored in, looking
// through the conversions and temporaries an initialisation adds.
const ValueDecl *storedInto(const Expr *created, ASTContext &ctx) {
  const Expr *cur = created;
  for (int depth = 0; depth < 10; ++depth) {
    auto parents = ctx.getParents(*cur);
    if (parents.size() != 1)
      return nullptr;
    if (const auto *vd = parents[0].get<VarDecl>())
      return vd;
    if (const auto *init = parents[0].get<CXXCtorInitializer>())
      return init->getMember();
    const Expr *p = parents[0].get<Expr>();
    if (!p)
      return nullptr;
    if (isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups,
            ParenExpr, CXXFunctionalCastExpr>(p)) {
      cur = p;
      continue;
    }
    if (const auto *ce = dyn_cast<CXXConstructExpr>(p)) {
      if (ce->getNumArgs() >= 1 && ce->getArg(0)->IgnoreImplicit() == cur->IgnoreImplicit()) {
        cur = p;
        continue;
      }
      return nullptr;
    }
    if (const auto *bo = dyn_cast<BinaryOperator>(p))
      return bo->isAssignmentOp() && bo->getRHS()->IgnoreImplicit() == cur->IgnoreImplicit()
                 ? declOf(bo->getLHS())
                 : nullptr;
    if (const auto *op = dyn_cast<CXXOperatorCallExpr>(p))
      return op->getOperator() == OO_Equal && op->getNumArgs() == 2 &&
                     op->getArg(1)->IgnoreImplicit() == cur->IgnoreImplicit()
                 ? declOf(op->getArg(0))
                 : nullptr;
    return nullptr;
  }
  return nullptr;
}

// The body of the function (or lambda) the expression is written in.
const Stmt *enclosingBody(const Stmt *s, ASTContext &ctx) {
  DynTypedNode node = DynTypedNode::create(*s);
  for (int depth = 0; depth < 256; ++depth) {
    auto parents = ctx.getParents(node);
    if (parents.empty())
      return nullptr;
    node = parents[0];
    if (const auto *fd = node.get<FunctionDecl>())
      return fd->getBody();
    if (const auto *le = node.get<LambdaExpr>())
      return le->getBody();
  }
  return nullptr;
}

bool isAssignedTo(const Expr *lhs, ASTContext &ctx) {
  const Stmt *cur = lhs;
  while (const Stmt *p = singleParentStmt(cur, ctx)) {
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
bool timeoutAssigned(const ValueDecl *options, const Stmt *body, ASTContext &ctx) {
  if (!options || !body)
    return false;
  for (const auto &m : match(findAll(memberExpr(member(hasName("timeout"))).bind("m")), *body, ctx)) {
    const auto *me = m.getNodeAs<MemberExpr>("m");
    if (declOf(me->getBase()) == options && isAssignedTo(me, ctx))
      return true;
  }
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
  std::vector<std::string> factories, classes;
  for (const auto &b : backends_) {
    factories.push_back("::" + b.factory);
    classes.push_back("::" + b.groupClass);
    classes.push_back("::" + b.optionsClass);
  }
  if (backends_.empty())
    return;
  // Creations inside torch's own headers (Options::create's body, the default
  // argument of the constructors) are the API, not the user's choice.
  auto userCode = allOf(unless(isExpansionInSystemHeader()), unless(isInTemplateInstantiation()));
  finder->addMatcher(
      callExpr(userCode, callee(functionDecl(anyName(factories)))).bind("factory"), this);
  finder->addMatcher(
      callExpr(userCode,
               callee(functionDecl(
                   anyName(std::vector<std::string>(std::begin(kMakeFunctions),
                                                    std::end(kMakeFunctions))),
                   hasTemplateArgument(
                       0, refersToType(hasDeclaration(cxxRecordDecl(anyName(classes))))))))
          .bind("make"),
      this);
  finder->addMatcher(
      cxxConstructExpr(userCode, hasDeclaration(cxxConstructorDecl(
                                     unless(isCopyConstructor()), unless(isMoveConstructor()),
                                     ofClass(cxxRecordDecl(anyName(classes))))))
          .bind("ctor"),
      this);
}

void InitTimeoutCheck::check(const MatchFinder::MatchResult &result) {
  ASTContext &ctx = *result.Context;
  const SourceManager &sm = *result.SourceManager;

  const Expr *created = nullptr;
  std::string cls;       // the class being created
  unsigned written = 0;  // arguments the user wrote
  SourceLocation rparen; // where a missing argument would go
  bool viaFactory = false;

  if (const auto *call = result.Nodes.getNodeAs<CallExpr>("factory")) {
    const auto *fd = call->getDirectCallee();
    if (!fd)
      return;
    const std::string name = clangfe::qualifiedName(fd);
    for (const auto &b : backends_)
      if (b.factory == name)
        cls = b.optionsClass;
    created = call;
    written = writtenArgs(call);
    rparen = call->getRParenLoc();
    viaFactory = true;
  } else if (const auto *call = result.Nodes.getNodeAs<CallExpr>("make")) {
    const auto *fd = call->getDirectCallee();
    const TemplateArgumentList *targs = fd ? fd->getTemplateSpecializationArgs() : nullptr;
    if (!targs || targs->size() == 0 || targs->get(0).getKind() != TemplateArgument::Type)
      return;
    const auto *rd = targs->get(0).getAsType()->getAsCXXRecordDecl();
    if (!rd)
      return;
    cls = clangfe::qualifiedName(rd);
    created = call;
    written = call->getNumArgs();
    rparen = call->getRParenLoc();
  } else if (const auto *ctor = result.Nodes.getNodeAs<CXXConstructExpr>("ctor")) {
    // `new T(...)` and `T x(...)` in user code; the constructions inside
    // make_intrusive live in a system header and are matched as "make".
    cls = clangfe::qualifiedName(ctor->getConstructor()->getParent());
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

  const bool fixable = rparen.isValid() && !rparen.isMacroID() && !created->getBeginLoc().isMacroID();
  const std::string timeoutExpr =
      "std::chrono::seconds(" + std::to_string(defaultTimeoutSeconds_) + ")";
  const std::string defaults = defaultTimeoutText(backend->name);

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
  const ValueDecl *stored = storedInto(created, ctx);
  if (timeoutAssigned(stored, enclosingBody(created, ctx), ctx))
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
  const bool pointer = !stored || !stored->getType()->getAsCXXRecordDecl() ||
                       clangfe::qualifiedName(stored->getType()->getAsCXXRecordDecl()) != cls;
  diag(created->getBeginLoc(),
       "process group options '%0' are created without an explicit timeout; a hung collective "
       "waits the backend default (%1) before failing; set '%2%3timeout = ...' before creating "
       "the group")
      << shortName(cls) << defaults << var << (pointer ? "->" : ".");
  (void)sm;
}

} // namespace ddplint::tidy
