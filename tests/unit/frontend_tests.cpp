// Unit tests of the Clang frontend: rank dependence (DependenceAnalyzer), API
// matching (ApiMatcher, qualifiedName, nameIn) and the model builder, on small
// snippets parsed against the mock LibTorch/NCCL/MPI headers in tests/mock-headers.
#include "clang-frontend/ApiMatcher.h"
#include "clang-frontend/ModelBuilder.h"
#include "clang-frontend/RankDependence.h"
#include "ddplint/core/Rules.h"
#include "ddplint/core/Catalog.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace ddplint;
using namespace ddplint::clangfe;
using core::CmpOp;
using core::Cond;
using core::Dep;

namespace {

const char *kPrelude = R"cc(
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <mpi.h>
#include <nccl.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
using PG = c10::intrusive_ptr<c10d::ProcessGroup>;
)cc";

// One parsed snippet with the frontend's analyses over it.
struct TU {
  std::unique_ptr<clang::ASTUnit> ast;
  std::unique_ptr<ApiMatcher> api;
  clangfe::LocTable locs;
  std::unique_ptr<DependenceAnalyzer> deps;

  explicit TU(const std::string &code, UserApi user = {}) {
    std::vector<std::string> args = {"-std=c++17", "-isystem", DDPLINT_TEST_INCLUDE_DIR, "-resource-dir",
                                     DDPLINT_TEST_RESOURCE_DIR, "-Wno-unused-value"};
    ast = clang::tooling::buildASTFromCodeWithArgs(std::string(kPrelude) + code, args, "input.cc");
    REQUIRE(ast != nullptr);
    REQUIRE_FALSE(ast->getDiagnostics().hasErrorOccurred());
    api = std::make_unique<ApiMatcher>(core::builtinApi(), std::move(user));
    deps = std::make_unique<DependenceAnalyzer>(ctx(), *api, locs);
  }
  clang::ASTContext &ctx() { return ast->getASTContext(); }

  // The definition of the function or method named `name` written in the snippet.
  const clang::FunctionDecl *function(const std::string &name) {
    struct V : clang::RecursiveASTVisitor<V> {
      std::string name;
      const clang::SourceManager *sm = nullptr;
      const clang::FunctionDecl *found = nullptr;
      bool VisitFunctionDecl(clang::FunctionDecl *fd) {
        if (!found && fd->doesThisDeclarationHaveABody() && fd->getNameAsString() == name &&
            sm->isInMainFile(sm->getExpansionLoc(fd->getLocation())))
          found = fd;
        return true;
      }
    } v;
    v.name = name;
    v.sm = &ctx().getSourceManager();
    v.TraverseDecl(ctx().getTranslationUnitDecl());
    REQUIRE(v.found != nullptr);
    return v.found;
  }

  template <class T> std::vector<const T *> all(const clang::FunctionDecl *fd) {
    struct V : clang::RecursiveASTVisitor<V> {
      std::vector<const T *> out;
      bool shouldVisitImplicitCode() const { return false; }
      bool VisitStmt(clang::Stmt *s) {
        if (auto *t = llvm::dyn_cast<T>(s))
          out.push_back(t);
        return true;
      }
    } v;
    v.TraverseStmt(fd->getBody());
    return v.out;
  }

  // The condition of the n-th `if` in function `fn` (source order).
  const clang::Expr *ifCond(const std::string &fn, size_t n = 0) {
    auto ifs = all<clang::IfStmt>(function(fn));
    REQUIRE(ifs.size() > n);
    return ifs[n]->getCond();
  }
  // The initialiser of local variable `var` in function `fn`.
  const clang::Expr *init(const std::string &fn, const std::string &var) {
    for (const auto *ds : all<clang::DeclStmt>(function(fn)))
      for (const auto *d : ds->decls())
        if (const auto *v = llvm::dyn_cast<clang::VarDecl>(d); v && v->getName() == var) {
          REQUIRE(v->getInit() != nullptr);
          return v->getInit();
        }
    FAIL("no variable " << var << " in " << fn);
    return nullptr;
  }
  // A reference to `var` (a DeclRefExpr) in `fn`: the variable as a value.
  const clang::Expr *ref(const std::string &fn, const std::string &var) {
    for (const auto *dr : all<clang::DeclRefExpr>(function(fn)))
      if (dr->getDecl()->getName() == var)
        return dr;
    FAIL("no reference to " << var << " in " << fn);
    return nullptr;
  }
  // The first call in `fn` whose callee is named `callee`.
  const clang::CallExpr *call(const std::string &fn, const std::string &callee) {
    for (const auto *c : all<clang::CallExpr>(function(fn)))
      if (const auto *d = c->getDirectCallee(); d && d->getNameAsString() == callee)
        return c;
    FAIL("no call of " << callee << " in " << fn);
    return nullptr;
  }
  // The returned expression of the only `return` in `fn`.
  const clang::Expr *returned(const std::string &fn) {
    auto rs = all<clang::ReturnStmt>(function(fn));
    REQUIRE(rs.size() == 1);
    return rs[0]->getRetValue();
  }

  unsigned line(core::Loc l) {
    clang::SourceLocation sl = locs.get(l);
    REQUIRE(sl.isValid());
    return ctx().getSourceManager().getPresumedLineNumber(sl);
  }
};

// The line, in the snippet passed to TU, of the first line containing `marker`.
unsigned lineOf(const std::string &code, const std::string &marker) {
  std::string all = std::string(kPrelude) + code;
  size_t at = all.find(marker);
  REQUIRE(at != std::string::npos);
  unsigned line = 1;
  for (size_t i = 0; i < at; ++i)
    line += all[i] == '\n';
  return line;
}

bool isRankCmp(const Cond &c, CmpOp op, std::int64_t value, std::int64_t mod = 0) {
  return c.kind == Cond::Kind::RankCmp && c.op == op && c.value == value && c.mod == mod;
}

} // namespace

// ===========================================================================
// Rank sources
// ===========================================================================

TEST_CASE("pg->getRank() is the rank", "[rank]") {
  TU tu(R"cc(
void f(PG pg) {
  if (pg->getRank() == 0) {}
  int r = pg->getRank();
  if (r != 1) {}
}
)cc");
  const clang::Expr *c = tu.ifCond("f");
  CHECK(tu.deps->depOf(c) == Dep::Rank);
  Cond cond = tu.deps->condOf(c);
  CHECK(isRankCmp(cond, CmpOp::EQ, 0));
  CHECK(cond.text == "pg->getRank() == 0");
  CHECK(tu.deps->isRank(tu.init("f", "r")));
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f", 1)), CmpOp::NE, 1));
}

TEST_CASE("a reversed comparison is flipped: 0 < rank", "[rank]") {
  TU tu(R"cc(
void f(PG pg) {
  int rank = pg->getRank();
  if (0 < rank) {}
  if (rank) {}
}
)cc");
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f")), CmpOp::GT, 0));
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f", 1)), CmpOp::NE, 0));
}

TEST_CASE("std::atoi(std::getenv(\"RANK\")) is the rank", "[rank][env]") {
  TU tu(R"cc(
void f() {
  int rank = std::atoi(std::getenv("RANK"));
  if (rank == 0) {}
}
)cc");
  CHECK(tu.deps->isRank(tu.init("f", "rank")));
  CHECK(tu.deps->depOf(tu.init("f", "rank")) == Dep::Rank);
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f")), CmpOp::EQ, 0));
}

TEST_CASE("getenv of LOCAL_RANK, SLURM_PROCID and std::stoi are ranks; WORLD_SIZE and HOME are not",
          "[rank][env]") {
  TU tu(R"cc(
void f() {
  int local = atoi(getenv("LOCAL_RANK"));
  int slurm = std::stoi(std::string(std::getenv("SLURM_PROCID")));
  int world = std::atoi(std::getenv("WORLD_SIZE"));
  const char *home = std::getenv("HOME");
  if (local == 0) {}
  if (slurm == 0) {}
  if (world > 1) {}
  if (home) {}
}
)cc");
  CHECK(tu.deps->isRank(tu.init("f", "local")));
  CHECK(tu.deps->isRank(tu.init("f", "slurm")));
  CHECK_FALSE(tu.deps->isRank(tu.init("f", "world")));
  CHECK(tu.deps->depOf(tu.init("f", "world")) == Dep::Uniform);
  CHECK(tu.deps->depOf(tu.init("f", "home")) == Dep::Uniform);
  // LOCAL_RANK is the rank within the node: `local == 0` passes one process
  // per node (an atom marked localMain), not rank 0 alone.
  {
    const auto c = tu.deps->condOf(tu.ifCond("f", 0));
    CHECK(c.kind == ddplint::core::Cond::Kind::Atom);
    CHECK(c.localMain);
    CHECK(c.dependence() == Dep::Rank);
  }
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f", 1)), CmpOp::EQ, 0));
  CHECK(tu.deps->condOf(tu.ifCond("f", 2)).dependence() == Dep::Uniform);
  CHECK(tu.deps->condOf(tu.ifCond("f", 3)).dependence() == Dep::Uniform);
}

TEST_CASE("the out-parameter of MPI_Comm_rank is the rank, of MPI_Comm_size is uniform", "[rank][mpi]") {
  TU tu(R"cc(
void f() {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {}
  if (size > 1) {}
}
)cc");
  CHECK(tu.deps->isRank(tu.ref("f", "rank")));
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f", 0)), CmpOp::EQ, 0));
  CHECK_FALSE(tu.deps->isRank(tu.ref("f", "size")));
  Cond ws = tu.deps->condOf(tu.ifCond("f", 1));
  CHECK(ws.kind != Cond::Kind::RankCmp);
  CHECK(ws.dependence() == Dep::Uniform);
}

// Known bug (reported): a rank variable initialised before MPI_Comm_rank
// writes it (`int rank = -1;`) is only an opaque rank atom, not `rank == 0`,
// so isMainOnly() fails and ddp-rank0-io-barrier misses the block.
TEST_CASE("MPI_Comm_rank into an initialised variable is still the rank", "[fixed-bug][rank][mpi]") {
  TU tu(R"cc(
void f() {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {}
}
)cc");
  CHECK(tu.deps->depOf(tu.ifCond("f")) == Dep::Rank);
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f")), CmpOp::EQ, 0));
}

TEST_CASE("the out-parameter of ncclCommUserRank is the rank, of ncclCommCount is uniform", "[rank][nccl]") {
  TU tu(R"cc(
void f(ncclComm_t comm) {
  int me, n;
  ncclCommUserRank(comm, &me);
  ncclCommCount(comm, &n);
  if (me == 0) {}
  if (n == 8) {}
}
)cc");
  CHECK(tu.deps->isRank(tu.ref("f", "me")));
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f", 0)), CmpOp::EQ, 0));
  CHECK(tu.deps->condOf(tu.ifCond("f", 1)).dependence() == Dep::Uniform);
}

TEST_CASE("a member initialised from getRank in the constructor is the rank", "[rank][member]") {
  TU tu(R"cc(
struct Trainer {
  explicit Trainer(PG pg) : pg_(pg), rank_(pg->getRank()) { world_ = pg->getSize(); }
  void step() {
    if (rank_ == 0) {}
    if (world_ > 1) {}
  }
  PG pg_;
  int rank_;
  int world_;
};
struct Assigned {
  explicit Assigned(PG pg) { rank_ = pg->getRank(); }
  void step() { if (this->rank_ != 0) {} }
  int rank_ = 0;
};
)cc");
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("step", 0)), CmpOp::EQ, 0));
  Cond ws = tu.deps->condOf(tu.ifCond("step", 1));
  CHECK(ws.kind != Cond::Kind::RankCmp);
  CHECK(ws.dependence() == Dep::Uniform);
  // The second class's step(): assigned in the constructor body (plus a default initialiser).
  struct V : clang::RecursiveASTVisitor<V> {
    const clang::FunctionDecl *found = nullptr;
    bool VisitCXXMethodDecl(clang::CXXMethodDecl *md) {
      if (md->getParent()->getName() == "Assigned" && md->getNameAsString() == "step")
        found = md;
      return true;
    }
  } v;
  v.TraverseDecl(tu.ctx().getTranslationUnitDecl());
  const clang::FunctionDecl *step2 = v.found;
  REQUIRE(step2 != nullptr);
  auto ifs = tu.all<clang::IfStmt>(step2);
  REQUIRE(ifs.size() == 1);
  CHECK(tu.deps->depOf(ifs[0]->getCond()) == Dep::Rank);
}

TEST_CASE("a helper that returns getRank() is the rank", "[rank][helper]") {
  TU tu(R"cc(
PG g_pg;
int rank() { return g_pg->getRank(); }
bool is_main() { return rank() == 0; }
struct Ctx {
  PG pg;
  int my_rank() const { return pg->getRank(); }
  void run() { if (my_rank() == 2) {} }
};
void f() {
  if (rank() == 0) {}
  if (is_main()) {}
  if (!is_main()) {}
}
)cc");
  CHECK(tu.deps->isRank(tu.returned("rank")));
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f", 0)), CmpOp::EQ, 0));
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f", 1)), CmpOp::EQ, 0));
  Cond neg = tu.deps->condOf(tu.ifCond("f", 2));
  REQUIRE(neg.kind == Cond::Kind::Not);
  REQUIRE(neg.kids.size() == 1);
  CHECK(isRankCmp(neg.kids[0], CmpOp::EQ, 0));
  CHECK(core::isMainOnly(tu.deps->condOf(tu.ifCond("f", 1))));
  CHECK_FALSE(core::isMainOnly(neg));
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("run")), CmpOp::EQ, 2));
}

TEST_CASE("const bool is_main = rank == 0 makes `if (is_main)` a rank comparison", "[rank][flag]") {
  TU tu(R"cc(
void f(PG pg) {
  const int rank = pg->getRank();
  const bool is_main = rank == 0;
  bool is_leader = (rank % 8 == 0);
  if (is_main) {}
  if (!is_main) {}
  if (is_leader) {}
  if (is_main && rank < 4) {}
}
)cc");
  Cond c = tu.deps->condOf(tu.ifCond("f", 0));
  CHECK(isRankCmp(c, CmpOp::EQ, 0));
  CHECK(c.text == "is_main");
  CHECK(core::isMainOnly(c));
  Cond n = tu.deps->condOf(tu.ifCond("f", 1));
  REQUIRE(n.kind == Cond::Kind::Not);
  CHECK(isRankCmp(n.kids.at(0), CmpOp::EQ, 0));
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f", 2)), CmpOp::EQ, 0, 8));
  Cond a = tu.deps->condOf(tu.ifCond("f", 3));
  REQUIRE(a.kind == Cond::Kind::And);
  REQUIRE(a.kids.size() == 2);
  CHECK(isRankCmp(a.kids[0], CmpOp::EQ, 0));
  CHECK(isRankCmp(a.kids[1], CmpOp::LT, 4));
}

TEST_CASE("rank % 2 == 0 is a rank comparison with modulus 2", "[rank][mod]") {
  TU tu(R"cc(
void f(PG pg) {
  int rank = pg->getRank();
  if (rank % 2 == 0) {}
  if (pg->getRank() % 4 != 3) {}
}
)cc");
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f", 0)), CmpOp::EQ, 0, 2));
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f", 1)), CmpOp::NE, 3, 4));
}

// ===========================================================================
// Uniform values
// ===========================================================================

TEST_CASE("pg->getSize() > 1 is uniform", "[uniform]") {
  TU tu(R"cc(
void f(PG pg) {
  if (pg->getSize() > 1) {}
  int world = pg->getSize();
  if (world % 2 == 0) {}
}
)cc");
  for (size_t i = 0; i < 2; ++i) {
    INFO("if #" << i);
    const clang::Expr *e = tu.ifCond("f", i);
    CHECK(tu.deps->depOf(e) == Dep::Uniform);
    Cond c = tu.deps->condOf(e);
    CHECK(c.kind != Cond::Kind::RankCmp);
    CHECK(c.dependence() == Dep::Uniform);
  }
}

TEST_CASE("a LoRA `int rank = 16` is not a process rank", "[uniform][lora]") {
  TU tu(R"cc(
torch::Tensor lora(torch::Tensor w, int rank) {
  if (rank > 8) return w;
  return w;
}
void f(torch::Tensor w) {
  int rank = 16;
  if (rank == 0) {}
  lora(w, rank);
  lora(w, 4);
}
)cc");
  CHECK_FALSE(tu.deps->isRank(tu.ref("f", "rank")));
  CHECK(tu.deps->depOf(tu.ifCond("f")) == Dep::Uniform);
  Cond c = tu.deps->condOf(tu.ifCond("f"));
  CHECK(c.kind != Cond::Kind::RankCmp);
  CHECK(c.dependence() == Dep::Uniform);
  // The parameter named `rank` receives only constants.
  CHECK(tu.deps->depOf(tu.ifCond("lora")) == Dep::Uniform);
  CHECK(tu.deps->condOf(tu.ifCond("lora")).dependence() == Dep::Uniform);
}

TEST_CASE("a parameter named rank that receives the process rank is the rank", "[rank][param]") {
  TU tu(R"cc(
void worker(int rank) { if (rank == 0) {} }
void f(PG pg) { worker(pg->getRank()); }
)cc");
  CHECK(tu.deps->depOf(tu.ifCond("worker")) == Dep::Rank);
}

// ===========================================================================
// Rank-local values
// ===========================================================================

TEST_CASE("loss.item<float>() is rank-local, and uniform once the tensor went through allreduce",
          "[local][agreed]") {
  TU tu(R"cc(
void f(PG pg, torch::Tensor local_loss, torch::Tensor global_loss) {
  std::vector<torch::Tensor> v{global_loss};
  pg->allreduce(v);
  float a = local_loss.item<float>();
  float b = global_loss.item<float>();
  if (a < 0.1f) {}
  if (b < 0.1f) {}
}
)cc");
  CHECK(tu.deps->depOf(tu.init("f", "a")) == Dep::Local);
  CHECK(tu.deps->depOf(tu.init("f", "b")) == Dep::Uniform);
  Cond ca = tu.deps->condOf(tu.ifCond("f", 0));
  CHECK(ca.kind == Cond::Kind::Atom);
  CHECK(ca.dependence() == Dep::Local);
  CHECK(tu.deps->condOf(tu.ifCond("f", 1)).dependence() == Dep::Uniform);
}

TEST_CASE("a tensor allreduced directly through a vector variable is agreed", "[local][agreed]") {
  TU tu(R"cc(
void f(PG pg, torch::Tensor loss) {
  std::vector<torch::Tensor> t = {loss};
  pg->allreduce(t)->wait();
  if (loss.item<float>() > 1.0f) {}
}
)cc");
  CHECK(tu.deps->depOf(tu.ifCond("f")) == Dep::Uniform);
}

TEST_CASE("std::chrono::steady_clock::now() is rank-local", "[local][clock]") {
  TU tu(R"cc(
void f() {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = std::chrono::steady_clock::now() - t0;
  if (elapsed > std::chrono::seconds(10)) {}
  int r = std::rand();
  if (r % 2) {}
}
)cc");
  CHECK(tu.deps->depOf(tu.init("f", "t0")) == Dep::Local);
  CHECK(tu.deps->depOf(tu.ifCond("f", 0)) == Dep::Local);
  CHECK(tu.deps->condOf(tu.ifCond("f", 0)).dependence() == Dep::Local);
  CHECK(tu.deps->depOf(tu.ifCond("f", 1)) == Dep::Local);
}

TEST_CASE("seed() forces a declaration's dependence", "[local][seed]") {
  TU tu(R"cc(
torch::Tensor forward(torch::Tensor x) {
  if (x.size(0) > 4) return x;
  return x;
}
)cc");
  CHECK(tu.deps->depOf(tu.ifCond("forward")) == Dep::Uniform);
  const clang::FunctionDecl *fwd = tu.function("forward");
  tu.deps->seed(fwd->getParamDecl(0), Dep::Local);
  CHECK(tu.deps->depOf(tu.ifCond("forward")) == Dep::Local);
}

// ===========================================================================
// User API through check options
// ===========================================================================

TEST_CASE("user RankFunctions and MainProcessFunctions", "[user]") {
  const char *code = R"cc(
namespace util {
int my_rank();
bool is_main_process();
}
void f() {
  if (util::my_rank() == 1) {}
  if (util::is_main_process()) {}
}
)cc";
  SECTION("without options they are unknown, hence uniform") {
    TU tu(code);
    CHECK(tu.deps->condOf(tu.ifCond("f", 0)).dependence() == Dep::Uniform);
    CHECK(tu.deps->condOf(tu.ifCond("f", 1)).dependence() == Dep::Uniform);
  }
  SECTION("with options, qualified or by their last component") {
    UserApi user;
    user.rankFunctions = {"util::my_rank"};
    user.mainProcessFunctions = {"is_main_process"};
    TU tu(code, user);
    CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("f", 0)), CmpOp::EQ, 1));
    Cond m = tu.deps->condOf(tu.ifCond("f", 1));
    CHECK(isRankCmp(m, CmpOp::EQ, 0));
    CHECK(core::isMainOnly(m));
    CHECK(tu.api->classify(tu.call("f", "my_rank")).role == CallRole::RankSource);
    CHECK(tu.api->classify(tu.call("f", "is_main_process")).role == CallRole::MainProcess);
  }
}

TEST_CASE("user CollectiveFunctions, BarrierFunctions and CheckpointWriters", "[user]") {
  const char *code = R"cc(
void sync_all();
void all_reduce_grads();
void save_ckpt(const std::string &path);
void f() {
  sync_all();
  all_reduce_grads();
  save_ckpt("model.pt");
}
)cc";
  UserApi user;
  user.barrierFunctions = {"sync_all"};
  user.collectiveFunctions = {"all_reduce_grads"};
  user.checkpointWriters = {"save_ckpt"};
  TU tu(code, user);
  CHECK(tu.api->classify(tu.call("f", "sync_all")).role == CallRole::Barrier);
  CHECK(tu.api->classify(tu.call("f", "all_reduce_grads")).role == CallRole::Collective);
  CallInfo w = tu.api->classify(tu.call("f", "save_ckpt"));
  CHECK(w.role == CallRole::CheckpointWrite);
  CHECK(w.arg == 0);
  TU plain(code);
  CHECK(plain.api->classify(plain.call("f", "sync_all")).role == CallRole::None);
}

// ===========================================================================
// ApiMatcher on the catalog
// ===========================================================================

TEST_CASE("ApiMatcher classifies c10d, MPI and NCCL calls", "[api]") {
  TU tu(R"cc(
void f(PG pg, ncclComm_t comm, torch::nn::Linear model, std::vector<torch::Tensor> &t) {
  pg->allreduce(t);
  pg->barrier();
  pg->send(t, 1, 0);
  pg->getSize();
  float x = 0;
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Send(&x, 1, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
  MPI_Abort(MPI_COMM_WORLD, 1);
  ncclAllReduce(&x, &x, 1, ncclFloat, ncclSum, comm, nullptr);
  ncclSend(&x, 1, ncclFloat, 1, comm, nullptr);
  torch::save(model, "ckpt.pt");
}
)cc");
  auto role = [&](const std::string &callee) { return tu.api->classify(tu.call("f", callee)).role; };
  CHECK(role("allreduce") == CallRole::Collective);
  CHECK(tu.api->classify(tu.call("f", "allreduce")).op == "allreduce");
  CHECK(role("barrier") == CallRole::Barrier);
  CHECK(role("send") == CallRole::PointToPoint);
  CHECK(role("getSize") == CallRole::WorldSize);
  CHECK(role("MPI_Allreduce") == CallRole::Collective);
  CHECK(role("MPI_Barrier") == CallRole::Barrier);
  CHECK(role("MPI_Send") == CallRole::PointToPoint);
  CHECK(role("MPI_Abort") == CallRole::Exit);
  CHECK(role("ncclAllReduce") == CallRole::Collective);
  CHECK(role("ncclSend") == CallRole::PointToPoint);
  CallInfo save = tu.api->classify(tu.call("f", "save"));
  CHECK(save.role == CallRole::CheckpointWrite);
  CHECK(save.op == "torch::save");
  CHECK(save.arg == 1);
}

// ===========================================================================
// Names
// ===========================================================================

TEST_CASE("qualifiedName strips inline and anonymous namespaces and template arguments", "[names]") {
  TU tu(R"cc(
namespace lib { inline namespace v2 { void g() {} } }
namespace { void h() {} }
template <class T> struct Box { void put() {} };
void f() {
  auto t = std::chrono::steady_clock::now();
  (void)t;
  std::string s;
  lib::g();
  h();
  Box<int> b;
  b.put();
}
)cc");
  const clang::CallExpr *now = tu.call("f", "now");
  CHECK(qualifiedName(now->getDirectCallee()) == "std::chrono::steady_clock::now");
  CHECK(qualifiedName(tu.call("f", "g")->getDirectCallee()) == "lib::g");
  CHECK(qualifiedName(tu.call("f", "h")->getDirectCallee()) == "h");
  CHECK(qualifiedName(tu.call("f", "put")->getDirectCallee()) == "Box::put");
  // std::string is std::__cxx11::basic_string<char> in libstdc++.
  const clang::CXXRecordDecl *str = nullptr;
  for (const auto *ds : tu.all<clang::DeclStmt>(tu.function("f")))
    for (const auto *d : ds->decls())
      if (const auto *v = llvm::dyn_cast<clang::VarDecl>(d); v && v->getName() == "s")
        str = v->getType()->getAsCXXRecordDecl();
  REQUIRE(str != nullptr);
  CHECK(qualifiedName(str) == "std::basic_string");
  CHECK(qualifiedName(nullptr).empty());
}

TEST_CASE("nameIn matches qualified names, and trailing components with suffixOk", "[names]") {
  CHECK(nameIn("torch::save", {"torch::save"}));
  CHECK(nameIn("torch::save", {"::torch::save"}));
  CHECK_FALSE(nameIn("torch::save", {"save"}));
  CHECK(nameIn("util::is_main", {"is_main"}, true));
  CHECK(nameIn("a::util::is_main", {"util::is_main"}, true));
  CHECK_FALSE(nameIn("util::not_is_main", {"is_main"}, true));
  CHECK_FALSE(nameIn("xis_main", {"is_main"}, true));
  CHECK(nameIn("is_main", {"is_main"}, true));
  CHECK_FALSE(nameIn("is_main", {}, true));
}

// ===========================================================================
// Model building and the core, end to end
// ===========================================================================

TEST_CASE("end to end: a rank-0 allreduce is one finding at its line, the idiom none", "[model][e2e]") {
  const std::string code = R"cc(
void bad(PG pg, std::vector<torch::Tensor> &t) {
  if (pg->getRank() == 0) {   // COND
    pg->allreduce(t);         // BAD
  }
}
void main_first(PG pg) {
  const int rank = pg->getRank();
  if (rank != 0) pg->barrier();
  torch::Tensor data = torch::zeros({1});
  if (rank == 0) pg->barrier();
}
void p2p(PG pg, std::vector<torch::Tensor> &t) {
  if (pg->getRank() == 0) pg->send(t, 1, 0); else pg->recv(t, 0, 0);
}
void world(PG pg, std::vector<torch::Tensor> &t) {
  if (pg->getSize() > 1) pg->allreduce(t);
}
)cc";
  TU tu(code);
  ModelBuilder mb(tu.ctx(), *tu.api);
  const core::Program &p = mb.program();
  CHECK(p.functions.size() == 4);
  core::RuleRunner an(p);
  auto fs = an.run(core::RuleId::DivergentCollective);
  REQUIRE(fs.size() == 1);
  CHECK(mb.locs().get(fs[0].loc).isValid());
  CHECK(tu.ctx().getSourceManager().getPresumedLineNumber(mb.locs().get(fs[0].loc)) == lineOf(code, "// BAD"));
  REQUIRE(fs[0].notes.size() == 1);
  CHECK(tu.ctx().getSourceManager().getPresumedLineNumber(mb.locs().get(fs[0].notes[0].loc)) ==
        lineOf(code, "// COND"));
}

TEST_CASE("end to end: a helper with a collective called under rank 0 is flagged at the call",
          "[model][e2e][interproc]") {
  const std::string code = R"cc(
void sync_grads(PG pg, std::vector<torch::Tensor> &t) { pg->allreduce(t); }
void train(PG pg, std::vector<torch::Tensor> &t) {
  if (pg->getRank() == 0)
    sync_grads(pg, t);        // CALL
}
)cc";
  TU tu(code);
  ModelBuilder mb(tu.ctx(), *tu.api);
  core::RuleRunner an(mb.program());
  auto fs = an.run(core::RuleId::DivergentCollective);
  REQUIRE(fs.size() == 1);
  CHECK(tu.ctx().getSourceManager().getPresumedLineNumber(mb.locs().get(fs[0].loc)) == lineOf(code, "// CALL"));
  CHECK(an.collectiveSummary(ModelBuilder::keyOf(tu.function("sync_grads"))) == std::vector<std::string>{"allreduce"});
}

TEST_CASE("end to end: early stop on the local loss, and on an agreed flag", "[model][e2e][loop]") {
  const std::string code = R"cc(
void bad(PG pg, std::vector<torch::Tensor> &grads, torch::Tensor loss) {
  for (int step = 0; step < 100; ++step) {
    pg->allreduce(grads);     // BAD
    if (loss.item<float>() < 0.01f) break;
  }
}
void good(PG pg, std::vector<torch::Tensor> &grads, torch::Tensor stop) {
  for (int step = 0; step < 100; ++step) {
    pg->allreduce(grads);
    std::vector<torch::Tensor> flag{stop};
    pg->allreduce(flag);
    if (stop.item<float>() > 0) break;
  }
}
)cc";
  TU tu(code);
  ModelBuilder mb(tu.ctx(), *tu.api);
  core::RuleRunner an(mb.program());
  auto fs = an.run(core::RuleId::DivergentCollective);
  REQUIRE(fs.size() == 1);
  CHECK(tu.ctx().getSourceManager().getPresumedLineNumber(mb.locs().get(fs[0].loc)) == lineOf(code, "// BAD"));
}

TEST_CASE("end to end: rank-0 checkpoint between barriers, and without them", "[model][e2e][save]") {
  const std::string code = R"cc(
void good(PG pg, torch::nn::Linear model) {
  pg->barrier();
  if (pg->getRank() == 0) torch::save(model, "ckpt.pt");
  pg->barrier();
}
void bad(PG pg, torch::nn::Linear model, std::vector<at::Tensor> &g) {
  if (pg->getRank() == 0) torch::save(model, "ckpt.pt");   // IF
  pg->allreduce(g);
}
void final_save(PG pg, torch::nn::Linear model, std::vector<at::Tensor> &g) {
  pg->allreduce(g);
  if (pg->getRank() == 0) torch::save(model, "final.pt");   // nothing after it: no finding
}
void every(PG pg, torch::nn::Linear model) {
  torch::save(model, "all.pt");   // SAVE
  torch::save(model, "r" + std::to_string(pg->getRank()) + ".pt");
}
)cc";
  TU tu(code);
  ModelBuilder mb(tu.ctx(), *tu.api);
  core::RuleRunner an(mb.program());
  auto &sm = tu.ctx().getSourceManager();
  // With RequireBarrierBefore (the default asks for the barrier after only).
  auto io = an.run(core::RuleId::Rank0IoBarrier,
                   core::RuleOptions::of(core::RuleId::Rank0IoBarrier, [](std::string_view name) {
                     return name == "RequireBarrierBefore" ? std::optional<std::string>("true")
                                                           : std::nullopt;
                   }));
  REQUIRE(io.size() == 1);
  CHECK(sm.getPresumedLineNumber(mb.locs().get(io[0].loc)) == lineOf(code, "// IF"));
  REQUIRE(io[0].fixes.size() == 2); // the barrier before and the one after
  CHECK(io[0].fixes[0].kind == core::FixKind::InsertBarrierBefore);
  CHECK(io[0].fixes[1].kind == core::FixKind::InsertBarrierAfter);
  REQUIRE(mb.stmtOf(io[0].fixes[0].node) != nullptr);
  CHECK(llvm::isa<clang::IfStmt>(mb.stmtOf(io[0].fixes[0].node)));
  auto saves = an.run(core::RuleId::UnguardedSave);
  REQUIRE(saves.size() == 1);
  CHECK(sm.getPresumedLineNumber(mb.locs().get(saves[0].loc)) == lineOf(code, "// SAVE"));
}

TEST_CASE("a member bool flag set from the rank in the constructor is a rank comparison", "[rank][member][flag]") {
  TU tu(R"cc(
struct Trainer {
  explicit Trainer(PG pg) : pg_(pg), is_main_(pg->getRank() == 0) {}
  void log() { if (is_main_) {} }
  PG pg_;
  bool is_main_;
};
)cc");
  Cond c = tu.deps->condOf(tu.ifCond("log"));
  CHECK(isRankCmp(c, CmpOp::EQ, 0));
  CHECK(core::isMainOnly(c));
}

TEST_CASE("an uncalled function's `rank` parameter next to a communicator is the rank", "[rank][param]") {
  TU tu(R"cc(
void run(int rank, PG pg) { if (rank == 0) {} }
int lora_scale(int rank) { if (rank > 4) return 2; return 1; }
)cc");
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("run")), CmpOp::EQ, 0));
  // No communicator, no collective: a plain integer named rank.
  CHECK(tu.deps->condOf(tu.ifCond("lora_scale")).dependence() == Dep::Uniform);
}

namespace {
// The source lines of a list of findings.
std::vector<unsigned> findingLines(TU &tu, ModelBuilder &mb, const std::vector<core::Finding> &fs) {
  std::vector<unsigned> out;
  for (const auto &f : fs)
    out.push_back(tu.ctx().getSourceManager().getPresumedLineNumber(mb.locs().get(f.loc)));
  std::sort(out.begin(), out.end());
  return out;
}
} // namespace

TEST_CASE("end to end: lambdas, ternaries, switches, else-if chains, loops", "[model][e2e]") {
  const std::string code = R"cc(
void lam(PG pg, std::vector<torch::Tensor> &t) {
  auto sync = [&] { pg->allreduce(t); };
  if (pg->getRank() == 0) sync();   // LAMBDA
}
void tern(PG pg, std::vector<torch::Tensor> &t) {
  auto w = pg->getRank() == 0 ? pg->allreduce(t) : pg->barrier();   // TERNARY
}
void sw(PG pg) {
  switch (pg->getRank()) {
  case 0: pg->barrier(); break;
  case 1: pg->barrier(); break;
  default: pg->barrier(); break;
  }
}
void sw_bad(PG pg, std::vector<torch::Tensor> &t) {
  switch (pg->getRank()) {
  case 0: pg->allreduce(t); break;   // SWITCH
  default: break;
  }
}
void chain(PG pg) {
  int r = pg->getRank();
  if (r == 0) pg->barrier(); else if (r == 1) pg->barrier(); else pg->barrier();
}
void ret_in_loop(PG pg, std::vector<torch::Tensor> &t) {
  for (int i = 0; i < 10; ++i) {
    if (pg->getRank() == 3) return;
    pg->allreduce(t);   // RETLOOP
  }
}
void rank_trip(PG pg) {
  for (int i = 0; i < pg->getRank(); ++i)
    pg->barrier();   // TRIP
}
void world_trip(PG pg) {
  for (int i = 0; i < pg->getSize(); ++i)
    pg->barrier();
}
void sampled(PG pg, std::vector<torch::Tensor> &t) {
  auto ds = torch::data::datasets::MNIST("x");
  auto dl = torch::data::make_data_loader(
      ds, torch::data::samplers::DistributedRandomSampler(ds.size(), 4, pg->getRank()), 4);
  for (auto &batch : *dl)
    pg->allreduce(t);
}
void p2p_ring(PG pg, std::vector<torch::Tensor> &t) {
  for (int i = 0; i < pg->getRank(); ++i)
    pg->send(t, 0, i);
}
)cc";
  TU tu(code);
  ModelBuilder mb(tu.ctx(), *tu.api);
  core::RuleRunner an(mb.program());
  std::vector<unsigned> want = {lineOf(code, "// LAMBDA"), lineOf(code, "// TERNARY"), lineOf(code, "// SWITCH"),
                                lineOf(code, "// RETLOOP"), lineOf(code, "// TRIP")};
  std::sort(want.begin(), want.end());
  CHECK(findingLines(tu, mb, an.run(core::RuleId::DivergentCollective)) == want);
}

// Known bug (reported): see core_tests' "[known-bug][save][loop]".
TEST_CASE("end to end: a rank-0 save in an epoch loop is not an unguarded save", "[fixed-bug][model][e2e][save]") {
  const std::string code = R"cc(
void train(PG pg, torch::nn::Linear model) {
  for (int epoch = 0; epoch < 3; ++epoch) {
    pg->barrier();
    if (pg->getRank() == 0)
      torch::save(model, "ckpt.pt");
    pg->barrier();
  }
}
)cc";
  TU tu(code);
  ModelBuilder mb(tu.ctx(), *tu.api);
  core::RuleRunner an(mb.program());
  CHECK(an.run(core::RuleId::UnguardedSave).empty());
  CHECK(an.run(core::RuleId::Rank0IoBarrier).empty());
}

// Known bug (reported): see core_tests' "[known-bug][limits]".
TEST_CASE("end to end: a rank-0 allreduce after ten uniform ifs is found", "[fixed-bug][model][e2e][limits]") {
  const std::string code = R"cc(
void train(PG pg, std::vector<torch::Tensor> &t, bool v0, bool v1, bool v2, bool v3, bool v4,
           bool v5, bool v6, bool v7, bool v8, bool v9) {
  if (v0) std::puts("0");
  if (v1) std::puts("1");
  if (v2) std::puts("2");
  if (v3) std::puts("3");
  if (v4) std::puts("4");
  if (v5) std::puts("5");
  if (v6) std::puts("6");
  if (v7) std::puts("7");
  if (v8) std::puts("8");
  if (v9) std::puts("9");
  if (pg->getRank() == 0)
    pg->allreduce(t);   // BAD
}
)cc";
  TU tu(code);
  ModelBuilder mb(tu.ctx(), *tu.api);
  core::RuleRunner an(mb.program());
  CHECK(findingLines(tu, mb, an.run(core::RuleId::DivergentCollective)) == std::vector<unsigned>{lineOf(code, "// BAD")});
}

// Known bug (reported): isRank() needs every definition of a variable to be a
// rank, so a placeholder value overwritten by the rank source (`int rank = 0;
// MPI_Comm_rank(..., &rank)`, or `int rank_ = -1;` assigned in the
// constructor body) makes `rank != 0` and `rank == 0` two unrelated opaque
// atoms: the main-process-first idiom is then reported twice (false positives).
TEST_CASE("end to end: main process first with a placeholder-initialised rank is not flagged",
          "[fixed-bug][model][e2e][rank]") {
  const std::string code = R"cc(
void prepare();
void mpi_style() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) MPI_Barrier(MPI_COMM_WORLD);
  prepare();
  if (rank == 0) MPI_Barrier(MPI_COMM_WORLD);
}
struct Member {
  explicit Member(PG pg) : pg_(pg) { rank_ = pg->getRank(); }
  void run() {
    if (rank_ != 0) pg_->barrier();
    prepare();
    if (rank_ == 0) pg_->barrier();
  }
  PG pg_;
  int rank_ = -1;
};
)cc";
  TU tu(code);
  ModelBuilder mb(tu.ctx(), *tu.api);
  core::RuleRunner an(mb.program());
  CHECK(findingLines(tu, mb, an.run(core::RuleId::DivergentCollective)).empty());
}

TEST_CASE("a member with a default initialiser, assigned the rank in the constructor, is the rank",
          "[fixed-bug][rank][member]") {
  TU tu(R"cc(
struct Member {
  explicit Member(PG pg) { rank_ = pg->getRank(); }
  void run() { if (rank_ == 0) {} }
  int rank_ = -1;
};
)cc");
  CHECK(isRankCmp(tu.deps->condOf(tu.ifCond("run")), CmpOp::EQ, 0));
}

// --- summaries across units (UnitSummary) ------------------------------------

namespace {
UnitSummary sampleSummary(const std::string &unit) {
  UnitSummary s;
  s.unit = unit;
  s.configKey = summaryConfigKey({});
  s.distributed = true;
  s.places = {{unit, 3, 5}, {unit, 4, 7}};
  core::Function f;
  f.key = "sync_if_main@1";
  f.name = "sync_if_main";
  f.loc = 1;
  Cond c = Cond::rankCmp(CmpOp::EQ, 0);
  c.text = "rank == 0";
  c.loc = 1;
  core::Node barrier = core::Node::makeEvent(core::EventKind::Barrier, "MPI_Barrier", 2);
  f.body = core::Node::block({core::Node::makeIf(c, core::Node::block({barrier}), core::Node::block(), 1)});
  s.functions.push_back(f);
  ExportedFunction e;
  e.symbol = "_Z12sync_if_mainv";
  e.key = f.key;
  e.name = f.name;
  e.predicate = Cond::negate(Cond::rankCmp(CmpOp::NE, 0));
  s.exports.push_back(e);
  s.rankGlobals.push_back("my_pe");
  return s;
}
} // namespace

TEST_CASE("a summary reads back as written; a truncated or altered one is refused", "[summary]") {
  const UnitSummary s = sampleSummary("/p/comm.cc");
  const std::string text = serializeSummary(s);
  std::string err;
  std::optional<UnitSummary> back = parseSummary(text, err);
  REQUIRE(back);
  CHECK(serializeSummary(*back) == text);
  REQUIRE(back->functions.size() == 1);
  const core::Node &iff = back->functions[0].body.kids.at(0);
  CHECK(iff.kind == core::Node::Kind::If);
  CHECK(iff.cond.kind == Cond::Kind::RankCmp);
  CHECK(iff.cond.text == "rank == 0");
  CHECK(iff.kids.at(0).kids.at(0).name == "MPI_Barrier");
  REQUIRE(back->exports.size() == 1);
  CHECK(back->exports[0].predicate->kind == Cond::Kind::Not);
  CHECK(back->rankGlobals == std::vector<std::string>{"my_pe"});
  // Every cut of the text is refused, never half read.
  for (size_t cut = 0; cut < text.size(); cut += 7)
    CHECK_FALSE(parseSummary(text.substr(0, cut), err));
  std::string altered = text;
  altered[altered.find("MPI_Barrier") - 3] = 'x';
  CHECK_FALSE(parseSummary(altered, err));
  CHECK_FALSE(parseSummary("ddplint-summary 0 old", err));
}

TEST_CASE("a summary is stale when a file it was made from changes", "[summary]") {
  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("ddplint-summary", dir));
  const std::string unit = std::string(dir) + "/comm.cc";
  auto writeFile = [&](const std::string &text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(unit, ec);
    os << text;
  };
  writeFile("void sync_if_main() {}\n");
  UnitSummary s = sampleSummary(unit);
  auto buf = llvm::MemoryBuffer::getFile(unit);
  REQUIRE(buf);
  llvm::sys::fs::file_status st;
  REQUIRE_FALSE(llvm::sys::fs::status(unit, st));
  s.inputs.push_back({unit, st.getSize(),
                      std::chrono::duration_cast<std::chrono::seconds>(
                          st.getLastModificationTime().time_since_epoch())
                          .count(),
                      contentHash((*buf)->getBuffer().str())});
  CHECK_FALSE(summaryIsStale(s));
  // Stored and read back, it is found by its symbol, but not for its own unit.
  SummaryStore store(std::string(dir) + "/summaries");
  REQUIRE(store.save(s));
  auto index = SummaryIndex::load(store, {unit, std::string(dir) + "/missing.cc"});
  REQUIRE(index->size() == 1);
  CHECK(index->find("_Z12sync_if_mainv", "/other.cc"));
  CHECK_FALSE(index->find("_Z12sync_if_mainv", unit));
  // Same size, new contents: the hash decides.
  writeFile("void sync_if_maim() {}\n");
  {
    int fd = -1;
    REQUIRE_FALSE(llvm::sys::fs::openFileForWrite(unit, fd, llvm::sys::fs::CD_OpenExisting));
    REQUIRE_FALSE(llvm::sys::fs::setLastAccessAndModificationTime(
        fd, st.getLastModificationTime() + std::chrono::seconds(10)));
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  std::string why;
  CHECK(summaryIsStale(s, &why));
  CHECK(why.find("comm.cc changed") != std::string::npos);
  auto stale = SummaryIndex::load(store, {unit});
  REQUIRE(stale->find("_Z12sync_if_mainv", "/other.cc"));
  CHECK(stale->find("_Z12sync_if_mainv", "/other.cc")->unit->stale);
  llvm::sys::fs::remove_directories(dir);
}
