#include "clang-frontend/ApiMatcher.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "ddplint/core/Model.h"

namespace ddplint::clangfe {

using namespace clang;

std::string qualifiedName(const NamedDecl *d) {
  if (!d)
    return {};
  std::string name = d->getDeclName().isIdentifier() ? d->getName().str() : d->getNameAsString();
  for (const DeclContext *dc = d->getDeclContext(); dc; dc = dc->getParent()) {
    if (const auto *ns = dyn_cast<NamespaceDecl>(dc)) {
      if (ns->isInline() || ns->isAnonymousNamespace())
        continue;
      name.insert(0, ns->getName().str() + "::");
    } else if (const auto *rd = dyn_cast<RecordDecl>(dc)) {
      if (rd->getIdentifier())
        name.insert(0, rd->getName().str() + "::");
    } else if (isa<TranslationUnitDecl>(dc) || isa<LinkageSpecDecl>(dc)) {
      continue;
    } else {
      break; // function-local declarations keep their plain name
    }
  }
  return name;
}

bool nameIn(const std::string &qualified, const std::vector<std::string> &names, bool suffixOk) {
  for (const auto &n : names) {
    std::string want = n.rfind("::", 0) == 0 ? n.substr(2) : n;
    if (qualified == want)
      return true;
    if (suffixOk && qualified.size() > want.size() + 2 &&
        qualified.compare(qualified.size() - want.size(), want.size(), want) == 0 &&
        qualified.compare(qualified.size() - want.size() - 2, 2, "::") == 0)
      return true;
  }
  return false;
}

ApiMatcher::ApiMatcher(const core::ApiCatalog &api, UserApi user)
    : api_(api), user_(std::move(user)) {
  auto key = [](const std::string &n) { return n.rfind("::", 0) == 0 ? n.substr(2) : n; };
  auto add = [&](const std::vector<std::string> &names, CallRole role, int arg, bool opIsName) {
    for (const auto &n : names)
      functions_.emplace(key(n), CallInfo{role, opIsName ? key(n) : std::string(), arg});
  };
  auto addArgs = [&](const std::vector<core::FunctionArg> &list, CallRole role) {
    for (const auto &f : list)
      functions_.emplace(key(f.name), CallInfo{role, key(f.name), f.arg});
  };
  add(api_.collectiveFunctions, CallRole::Collective, -1, true);
  add(api_.barrierFunctions, CallRole::Barrier, -1, true);
  add(api_.pointToPointFunctions, CallRole::PointToPoint, -1, true);
  add(api_.exitFunctions, CallRole::Exit, -1, true);
  add(api_.notCollectiveFunctions, CallRole::NotCollective, -1, true);
  addArgs(api_.rankOutParams, CallRole::RankSource);
  addArgs(api_.worldSizeOutParams, CallRole::WorldSize);
  addArgs(api_.checkpointWriters, CallRole::CheckpointWrite);
  add(api_.fileWriterFunctions, CallRole::FileWrite, 0, true);
  add(api_.dataLoaderFactories, CallRole::DataLoaderFactory, -1, true);
  addArgs(api_.localOutParams, CallRole::LocalSource); // before: the argument wins
  add(api_.localFunctions, CallRole::LocalSource, -1, true);
  // Classified by the catalog as neither collective nor point-to-point.
  for (const auto *list : {&api_.oneSidedFunctions, &api_.requestFunctions, &api_.fileIoFunctions,
                           &api_.localApiFunctions, &api_.queryFunctions})
    add(*list, CallRole::NotCollective, -1, true);
}

bool ApiMatcher::isProcessGroupClass(const CXXRecordDecl *rd) const {
  if (!rd)
    return false;
  rd = rd->getDefinition() ? rd->getDefinition() : rd;
  if (nameIn(qualifiedName(rd), api_.processGroupClasses))
    return true;
  if (!rd->hasDefinition())
    return false;
  for (const auto &base : rd->bases())
    if (const auto *b = base.getType().isNull() ? nullptr : base.getType()->getAsCXXRecordDecl())
      if (isProcessGroupClass(b))
        return true;
  return false;
}

// Looks through pointers, references and smart pointers (intrusive_ptr, shared_ptr).
static QualType pointee(QualType t) {
  t = t.getNonReferenceType();
  if (t->isPointerType())
    return t->getPointeeType();
  if (const auto *ts = t->getAs<TemplateSpecializationType>()) {
    if (ts->template_arguments().size() == 1 &&
        ts->template_arguments()[0].getKind() == TemplateArgument::Type)
      return ts->template_arguments()[0].getAsType();
  }
  if (const auto *rd = t->getAsCXXRecordDecl())
    if (const auto *spec = dyn_cast<ClassTemplateSpecializationDecl>(rd))
      if (spec->getTemplateArgs().size() >= 1 &&
          spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type) {
        std::string n = qualifiedName(spec);
        if (n == "c10::intrusive_ptr" || n == "std::shared_ptr" || n == "std::unique_ptr" ||
            n == "c10::weak_intrusive_ptr")
          return spec->getTemplateArgs()[0].getAsType();
      }
  return t;
}

bool ApiMatcher::isProcessGroupType(QualType t) const {
  if (t.isNull())
    return false;
  QualType inner = pointee(t);
  return isProcessGroupClass(inner->getAsCXXRecordDecl()) ||
         isProcessGroupClass(t.getNonReferenceType()->getAsCXXRecordDecl());
}

bool ApiMatcher::isCommunicatorType(QualType t) const {
  if (t.isNull())
    return false;
  if (isProcessGroupType(t))
    return true;
  std::string s = t.getNonReferenceType().getUnqualifiedType().getAsString();
  return s.find("ncclComm_t") != std::string::npos || s.find("MPI_Comm") != std::string::npos;
}

std::string stringLiteralOf(const Expr *e) {
  if (!e)
    return {};
  e = e->IgnoreParenImpCasts();
  if (const auto *s = dyn_cast<StringLiteral>(e))
    return s->getString().str();
  if (const auto *c = dyn_cast<CXXConstructExpr>(e))
    if (c->getNumArgs() >= 1)
      return stringLiteralOf(c->getArg(0));
  if (const auto *m = dyn_cast<MaterializeTemporaryExpr>(e))
    return stringLiteralOf(m->getSubExpr());
  if (const auto *b = dyn_cast<CXXBindTemporaryExpr>(e))
    return stringLiteralOf(b->getSubExpr());
  if (const auto *f = dyn_cast<CXXFunctionalCastExpr>(e))
    return stringLiteralOf(f->getSubExpr());
  return {};
}

namespace {

// A record's file name: a log's or settings' (core::namesRecordFile), or a
// table of results (`latency-%s.csv`, `saveRankDetailsCSV`): C and C++
// benchmarks' rank-0 reports, read by people after the run, not by the ranks.
bool recordFileName(std::string_view name) {
  if (core::namesRecordFile(name))
    return true;
  std::string last, word;
  for (char ch : std::string(name) + " ") {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      continue;
    }
    if (!word.empty())
      last = word;
    word.clear();
  }
  // `saveRankDetailsCSV` is one word; its ending says the format.
  return last == "csv" || (last.size() > 3 && last.compare(last.size() - 3, 3, "csv") == 0);
}

// The format a function prints a local buffer's name with (`char file[N];
// sprintf(file, "%s-%d.csv", prefix, i)`), or "": one print, a literal format.
std::string printedName(const VarDecl *v) {
  const auto *fn = v ? dyn_cast_or_null<FunctionDecl>(v->getDeclContext()) : nullptr;
  if (!fn || !fn->hasBody() || !v->getType()->isArrayType())
    return {};
  struct Finder : RecursiveASTVisitor<Finder> {
    const VarDecl *v;
    std::string format;
    int prints = 0;
    bool VisitCallExpr(CallExpr *c) {
      const FunctionDecl *f = c->getDirectCallee();
      if (!f || !f->getIdentifier() || c->getNumArgs() < 2)
        return true;
      const llvm::StringRef n = f->getName();
      const unsigned fmt = n == "sprintf" ? 1 : n == "snprintf" ? 2 : 0;
      if (fmt == 0 || fmt >= c->getNumArgs())
        return true;
      const auto *d = dyn_cast<DeclRefExpr>(c->getArg(0)->IgnoreParenImpCasts());
      if (!d || d->getDecl() != v)
        return true;
      ++prints;
      format = stringLiteralOf(c->getArg(fmt));
      return true;
    }
  } f;
  f.v = v;
  f.TraverseStmt(fn->getBody());
  return f.prints == 1 ? f.format : std::string();
}

// The path's last part names a log: "train.log", `log_path`,
// `out_dir + "/log.txt"` (a file in a log folder, `log_dir + "/config.yaml"`,
// is not one).
bool pathNamesLog(const Expr *e) {
  if (!e)
    return false;
  e = e->IgnoreParenImpCasts();
  if (const auto *m = dyn_cast<MaterializeTemporaryExpr>(e))
    return pathNamesLog(m->getSubExpr());
  if (const auto *b = dyn_cast<CXXBindTemporaryExpr>(e))
    return pathNamesLog(b->getSubExpr());
  if (const auto *c = dyn_cast<CXXConstructExpr>(e))
    return c->getNumArgs() >= 1 && pathNamesLog(c->getArg(0));
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e))
    return (op->getOperator() == OO_Plus || op->getOperator() == OO_Slash) && op->getNumArgs() == 2 &&
           pathNamesLog(op->getArg(1));
  if (const auto *call = dyn_cast<CXXMemberCallExpr>(e)) // log_path.c_str()
    return pathNamesLog(call->getImplicitObjectArgument());
  if (const auto *s = dyn_cast<StringLiteral>(e)) {
    std::string_view t(s->getBytes().data(), s->getBytes().size());
    if (auto slash = t.rfind('/'); slash != std::string_view::npos)
      t = t.substr(slash + 1);
    return recordFileName(t);
  }
  if (const auto *d = dyn_cast<DeclRefExpr>(e)) {
    if (d->getDecl()->getDeclName().isIdentifier() && recordFileName(d->getDecl()->getName()))
      return true;
    std::string printed = printedName(dyn_cast<VarDecl>(d->getDecl()));
    if (auto slash = printed.rfind('/'); slash != std::string::npos)
      printed = printed.substr(slash + 1);
    return !printed.empty() && recordFileName(printed);
  }
  if (const auto *m = dyn_cast<MemberExpr>(e))
    return m->getMemberDecl()->getDeclName().isIdentifier() &&
           recordFileName(m->getMemberDecl()->getName());
  return false;
}

// `std::ios::app`, `std::ofstream::out | std::ofstream::app`: an open mode
// that appends.
bool modeAppends(const Expr *e) {
  struct Finder : RecursiveASTVisitor<Finder> {
    bool found = false;
    bool VisitDeclRefExpr(DeclRefExpr *d) {
      found = found || (d->getDecl()->getDeclName().isIdentifier() && d->getDecl()->getName() == "app");
      return !found;
    }
  } f;
  f.TraverseStmt(const_cast<Expr *>(e));
  return f.found;
}

} // namespace

CallInfo ApiMatcher::classifyCallee(const FunctionDecl *fd, const CallExpr *call) const {
  CallInfo info;
  if (!fd)
    return info;
  const std::string q = qualifiedName(fd);
  const std::string plain = fd->getDeclName().isIdentifier() ? fd->getName().str() : "";

  // The user's wrappers win over the catalog: they know their own code.
  if (nameIn(q, user_.mainProcessFunctions, true))
    return {CallRole::MainProcess, q, -1};
  if (nameIn(q, user_.rankFunctions, true))
    return {CallRole::RankSource, q, -1};
  if (nameIn(q, user_.barrierFunctions, true))
    return {CallRole::Barrier, plain, -1};
  if (nameIn(q, user_.collectiveFunctions, true))
    return {CallRole::Collective, plain, -1};
  if (nameIn(q, user_.checkpointWriters, true))
    return {CallRole::CheckpointWrite, q, 0};
  if (nameIn(q, user_.dataLoaderFactories, true))
    return {CallRole::DataLoaderFactory, q, -1};

  // Member functions of process groups.
  if (const auto *md = dyn_cast<CXXMethodDecl>(fd); md && isProcessGroupClass(md->getParent())) {
    if (nameIn(plain, api_.collectiveMethods))
      return {CallRole::Collective, plain, -1};
    if (nameIn(plain, api_.barrierMethods))
      return {CallRole::Barrier, "barrier", -1};
    if (nameIn(plain, api_.pointToPointMethods))
      return {CallRole::PointToPoint, plain, -1};
    if (nameIn(plain, api_.rankMethods))
      return {CallRole::RankSource, plain, -1};
    if (nameIn(plain, api_.worldSizeMethods))
      return {CallRole::WorldSize, plain, -1};
    return info;
  }
  if (auto it = functions_.find(q); it != functions_.end()) {
    CallInfo hit = it->second;
    if (hit.role != CallRole::LocalSource || !nameIn(q, api_.envFunctions))
      return hit;
  }
  if (nameIn(q, api_.envFunctions) && call && call->getNumArgs() >= 1) {
    std::string var = stringLiteralOf(call->getArg(0));
    if (nameIn(var, api_.rankEnvVars))
      return {CallRole::RankSource, q + "(\"" + var + "\")", -1};
    if (nameIn(var, api_.worldSizeEnvVars))
      return {CallRole::WorldSize, q, -1};
    return {CallRole::EnvRead, q, -1};
  }
  if (const auto *md = dyn_cast<CXXMethodDecl>(fd)) {
    if (nameIn(plain, api_.localMethods))
      return {CallRole::LocalSource, plain, -1};
    if (nameIn(qualifiedName(md->getParent()), api_.localClasses))
      return {CallRole::LocalSource, q, -1};
  }
  return info;
}

// A collective handed in as a callback and called through a function
// pointer or a std::function that a field or a variable holds
// (TransformerEngine's Userbuffers: `comm->_barrier(comm->comm_world)`,
// `comm->_allgather(...)`, set to MPI or to torch.distributed by the
// caller).  Known by the holder's name: its last word, a collective's.
static CallInfo callbackCollective(const CallExpr *call) {
  const Expr *callee = call->getCallee()->IgnoreParenImpCasts();
  // `holder(args)` on a std::function: operator() of its class.
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(call); op && op->getOperator() == OO_Call && op->getNumArgs())
    callee = op->getArg(0)->IgnoreParenImpCasts();
  else if (const auto *mc = dyn_cast<CXXMemberCallExpr>(call); mc && mc->getMethodDecl() &&
                                                               mc->getMethodDecl()->getOverloadedOperator() == OO_Call)
    callee = mc->getImplicitObjectArgument()->IgnoreParenImpCasts();
  if (const auto *u = dyn_cast<UnaryOperator>(callee); u && u->getOpcode() == UO_Deref)
    callee = u->getSubExpr()->IgnoreParenImpCasts(); // `(*fp)(args)`
  const ValueDecl *holder = nullptr;
  if (const auto *m = dyn_cast<MemberExpr>(callee))
    holder = m->getMemberDecl();
  else if (const auto *d = dyn_cast<DeclRefExpr>(callee))
    holder = d->getDecl();
  if (!holder || !holder->getDeclName().isIdentifier() || isa<FunctionDecl>(holder))
    return {};
  QualType t = holder->getType().getNonReferenceType();
  const bool pointer = t->isFunctionPointerType() || t->isMemberFunctionPointerType();
  const bool stdFunction = qualifiedName(t->getAsRecordDecl()) == "std::function";
  if (!pointer && !stdFunction)
    return {};
  // The words of `_barrier`, `allgather_fn`, `ubBarrier`, lower case; the
  // last, or the one before a `fn`/`callback` suffix.
  std::vector<std::string> words(1);
  for (char c : holder->getName().str()) {
    if (c == '_') {
      if (!words.back().empty())
        words.emplace_back();
      continue;
    }
    if (std::isupper(static_cast<unsigned char>(c)) && !words.back().empty())
      words.emplace_back();
    words.back() += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (words.back().empty())
    words.pop_back();
  if (words.size() > 1 && (words.back() == "fn" || words.back() == "func" || words.back() == "op" ||
                           words.back() == "cb" || words.back() == "callback"))
    words.pop_back();
  const std::string last = words.empty() ? std::string() : words.back();
  CallInfo info;
  if (last == "barrier")
    info.role = CallRole::Barrier;
  else if (last == "allgather" || last == "allreduce" || last == "bcast" || last == "broadcast" ||
           last == "alltoall")
    info.role = CallRole::Collective;
  else
    return {};
  info.op = holder->getName().str() + " (a callback)";
  return info;
}

CallInfo ApiMatcher::classify(const CallExpr *call) const {
  if (!call)
    return {};
  const FunctionDecl *fd = call->getDirectCallee();
  if (!fd || (isa<CXXMethodDecl>(fd) && cast<CXXMethodDecl>(fd)->getOverloadedOperator() == OO_Call &&
              qualifiedName(cast<CXXMethodDecl>(fd)->getParent()) == "std::function"))
    return callbackCollective(call);
  if (const auto *tmpl = fd->getPrimaryTemplate())
    fd = tmpl->getTemplatedDecl();
  CallInfo info = classifyCallee(fd, call);
  // fopen(path, "r") and open(path, O_RDONLY) read: only a writing mode is a file write.
  if (info.role == CallRole::FileWrite && call->getNumArgs() >= 2 &&
      (info.op == "fopen" || info.op == "std::fopen" || info.op == "freopen" ||
       info.op == "std::freopen" || info.op == "fopen64")) {
    std::string mode = stringLiteralOf(call->getArg(1));
    if (!mode.empty() && mode.find_first_of("wa+") == std::string::npos)
      return {};
    info.log = mode.find('a') != std::string::npos || pathNamesLog(call->getArg(0));
  }
  // fprintf(stderr, ...), fputs(s, stdout): console output, not a file.
  if (info.role == CallRole::FileWrite) {
    int stream = info.op == "fprintf" || info.op == "std::fprintf"   ? 0
                 : info.op == "fputs" || info.op == "std::fputs"     ? 1
                 : info.op == "fwrite" || info.op == "std::fwrite"   ? 3
                                                                     : -1;
    if (stream >= 0 && unsigned(stream) < call->getNumArgs())
      if (const auto *dr = dyn_cast<DeclRefExpr>(call->getArg(unsigned(stream))->IgnoreParenImpCasts()))
        if (dr->getDecl()->getDeclName().isIdentifier() &&
            (dr->getDecl()->getName() == "stdout" || dr->getDecl()->getName() == "stderr"))
          return {};
    // A write through a stream that is open already adds to the file its
    // `fopen` created: that open is the write a reader can race with (and
    // is where a rank-0 block writes one).  miniMD's rank-0 blocks, each
    // printing a few lines of one report between two allreduces, are one
    // file, and its `fopen` is what asks for the barrier.
    if (stream >= 0 && unsigned(stream) < call->getNumArgs())
      info.log = true;
  }
  if (info.role == CallRole::FileWrite && call->getNumArgs() >= 2 && (info.op == "open" || info.op == "open64")) {
    const Expr *flags = call->getArg(1)->IgnoreParenImpCasts();
    if (!flags->isValueDependent() && !flags->isTypeDependent() && !flags->containsErrors() &&
        !flags->getType().isNull() && flags->getType()->isIntegerType())
      if (auto v = flags->getIntegerConstantExpr(fd->getASTContext()); v && (v->getExtValue() & 3) == 0)
        return {}; // O_RDONLY
    // O_APPEND's value differs between systems: its spelling does not.
    const ASTContext &ctx = fd->getASTContext();
    CharSourceRange range = CharSourceRange::getTokenRange(call->getArg(1)->getSourceRange());
    llvm::StringRef spelled = Lexer::getSourceText(ctx.getSourceManager().getExpansionRange(range),
                                                   ctx.getSourceManager(), ctx.getLangOpts());
    info.log = spelled.contains("O_APPEND") || pathNamesLog(call->getArg(0));
  }
  if (info.role == CallRole::FileWrite && call->getNumArgs() >= 1 && info.op == "creat")
    info.log = pathNamesLog(call->getArg(0));
  // A writer is a checkpoint write only in the overloads that take a path;
  // the stream overloads write wherever the caller's stream goes.
  if (info.role == CallRole::CheckpointWrite && info.arg >= 0 &&
      unsigned(info.arg) < call->getNumArgs()) {
    QualType t = call->getArg(unsigned(info.arg))->IgnoreParenImpCasts()->getType();
    if (t.isNull() || t->isDependentType())
      return {};
    t = t.getNonReferenceType().getCanonicalType();
    bool pathLike = t->isPointerType() || t->isArrayType();
    if (const auto *rd = t->getAsCXXRecordDecl()) {
      std::string n = qualifiedName(rd);
      pathLike = n == "std::basic_string" || n == "std::filesystem::path" ||
                 n == "std::basic_string_view" || n == "c10::basic_string_view";
    }
    if (!pathLike)
      return {};
  }
  return info;
}

CallInfo ApiMatcher::classifyConstruct(const CXXConstructExpr *ctor) const {
  if (!ctor || !ctor->getConstructor())
    return {};
  const CXXRecordDecl *rd = ctor->getConstructor()->getParent();
  std::string q = qualifiedName(rd);
  if (nameIn(q, api_.fileWriterClasses) && ctor->getNumArgs() >= 1) {
    CallInfo info{CallRole::FileWrite, q, 0};
    info.log = (ctor->getNumArgs() >= 2 && modeAppends(ctor->getArg(1))) || pathNamesLog(ctor->getArg(0));
    return info;
  }
  if (nameIn(q, api_.localClasses))
    return {CallRole::LocalSource, q, -1};
  return {};
}

} // namespace ddplint::clangfe
