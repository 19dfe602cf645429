// Unit tests of the Clang FactsBuilder: the facts it reports for small snippets
// parsed against the mock headers in tests/mock-headers, and the core rules'
// decisions on them (the same functions the Python frontend calls).
#include "clang-frontend/ApiMatcher.h"
#include "clang-frontend/FactsBuilder.h"
#include "ddplint/core/Catalog.h"
#include "ddplint/core/Rules.h"

#include "clang/AST/ASTContext.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

using namespace ddplint;

namespace {

const char *kFactsPrelude = R"cc(
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>
using namespace torch;
)cc";

struct FactsTU {
  std::unique_ptr<clang::ASTUnit> ast;
  std::unique_ptr<clangfe::ApiMatcher> api;
  std::unique_ptr<clangfe::FactsBuilder> facts;
  core::Program program;

  explicit FactsTU(const std::string &code) {
    std::vector<std::string> args = {"-std=c++17", "-isystem", DDPLINT_TEST_INCLUDE_DIR,
                                     "-resource-dir", DDPLINT_TEST_RESOURCE_DIR,
                                     "-Wno-unused-value"};
    ast = clang::tooling::buildASTFromCodeWithArgs(std::string(kFactsPrelude) + code, args,
                                                   "input.cc");
    REQUIRE(ast != nullptr);
    REQUIRE_FALSE(ast->getDiagnostics().hasErrorOccurred());
    api = std::make_unique<clangfe::ApiMatcher>(core::builtinApi(), clangfe::UserApi{});
    facts = std::make_unique<clangfe::FactsBuilder>(ast->getASTContext(), *api);
  }
  // The line of a fact's position in the snippet (the prelude's lines included).
  unsigned line(core::Loc l) {
    const auto &sm = ast->getASTContext().getSourceManager();
    return sm.getSpellingLineNumber(facts->locs().get(l));
  }
  unsigned lineOf(const std::string &code, const std::string &marker) {
    // 1-based line of `marker` in the snippet, counted after the prelude.
    const std::string all = std::string(kFactsPrelude) + code;
    const auto at = all.find(marker);
    REQUIRE(at != std::string::npos);
    unsigned n = 1;
    for (size_t i = 0; i < at; ++i)
      n += all[i] == '\n';
    return n;
  }
};

} // namespace

TEST_CASE("facts: process groups, options and where a timeout goes", "[facts-builder]") {
  const std::string code = R"cc(
void f(c10::intrusive_ptr<c10d::Store> store) {
  auto g = c10::make_intrusive<c10d::ProcessGroupGloo>(store, 0, 2); // GLOO
  auto o = c10d::ProcessGroupGloo::Options::create(); // GOPTS
  auto n = c10d::ProcessGroupNCCL::Options::create(); // NOPTS
  n->timeout = std::chrono::seconds(60);
  auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, 0, 2, n); // NCCL
}
struct Trainer {
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> pg_;
  Trainer(c10::intrusive_ptr<c10d::Store> s) : pg_(c10::make_intrusive<c10d::ProcessGroupNCCL>(s, 0, 2)) {} // INIT
};
)cc";
  FactsTU tu(code);
  tu.facts->addProcessGroups(tu.program.facts);
  const auto &pgs = tu.program.facts.processGroups;
  REQUIRE(pgs.size() == 5);
  using K = core::ProcessGroupCreation::Kind;
  CHECK(pgs[0].kind == K::Group);
  CHECK(pgs[0].api == "ProcessGroupGloo");
  CHECK(pgs[0].backend == "gloo");
  CHECK(pgs[0].acceptsOptions);
  CHECK_FALSE(pgs[0].optionsGiven);
  CHECK(pgs[0].optionsTakeTimeoutArg);
  CHECK(pgs[0].optionsApi == "c10d::ProcessGroupGloo::Options");
  CHECK(pgs[0].fixAnchor != 0);
  CHECK(tu.line(pgs[0].loc) == tu.lineOf(code, "GLOO"));
  CHECK(pgs[1].kind == K::Options);
  CHECK_FALSE(pgs[1].timeoutGiven);
  CHECK_FALSE(pgs[1].timeoutAssignedLater);
  CHECK(pgs[1].optionsVar == "o");
  CHECK(pgs[2].kind == K::Options);
  CHECK(pgs[2].backend == "nccl");
  CHECK(pgs[2].timeoutAssignedLater);
  CHECK_FALSE(pgs[2].optionsTakeTimeoutArg);
  CHECK(pgs[3].kind == K::Group);
  CHECK(pgs[3].optionsGiven);
  // A group created in a constructor's member initialiser is a creation too.
  CHECK(pgs[4].backend == "nccl");
  CHECK(tu.line(pgs[4].loc) == tu.lineOf(code, "INIT"));
  // The core's decision on these facts.
  auto fs = core::RuleRunner(tu.program).run(core::RuleId::InitTimeout);
  REQUIRE(fs.size() == 3); // the Gloo group, the Gloo options, the member-initialised NCCL group
  CHECK(fs[0].loc == pgs[0].loc);
  CHECK(fs[1].loc == pgs[1].loc);
  CHECK(fs[2].loc == pgs[4].loc);
  CHECK(fs[0].fixes.size() == 1); // Gloo: options with a timeout appended
  CHECK(fs[1].fixes.size() == 1); // Gloo options: the timeout argument
  CHECK(fs[2].fixes.empty());     // NCCL options take no timeout argument
}

TEST_CASE("facts: environment settings and the version", "[facts-builder]") {
  const std::string code = R"cc(
void g(const char *computed) {
  setenv("NCCL_ASYNC_ERROR_HANDLING", "1", 1);
  putenv(const_cast<char *>("TORCH_NCCL_ASYNC_ERROR_HANDLING=0"));
  setenv(computed, "1", 1);
  setenv(c10d::NCCL_ASYNC_ERROR_HANDLING, "1", 1);
  const char *v = std::getenv("RANK");
}
)cc";
  FactsTU tu(code);
  tu.facts->addEnvironment(tu.program.facts);
  const auto &env = tu.program.facts.env;
  REQUIRE(env.size() == 5);
  CHECK(env[0].name == "NCCL_ASYNC_ERROR_HANDLING");
  CHECK(env[0].isSet);
  CHECK(env[0].valueKnown);
  CHECK(env[0].value == "1");
  CHECK(env[0].nameLoc != 0);
  CHECK(env[0].renameFixable);
  CHECK(env[1].name == "TORCH_NCCL_ASYNC_ERROR_HANDLING");
  CHECK(env[1].value == "0");
  CHECK_FALSE(env[2].nameKnown);
  // Through a constant: the name is known, but no literal is written here.
  CHECK(env[3].name == "NCCL_ASYNC_ERROR_HANDLING");
  CHECK(env[3].nameLoc == 0);
  CHECK(env[4].name == "RANK");
  CHECK_FALSE(env[4].isSet);

  tu.facts->addVersions(tu.program.facts, 2, 1);
  CHECK(tu.program.facts.versions.torchBasis == core::TargetVersions::Basis::Exact);
  CHECK(tu.program.facts.versions.torch() == 201);
  // Without macros: the mock headers declare no c10d::Backend.
  core::Facts inferred;
  tu.facts->addVersions(inferred, std::nullopt, std::nullopt);
  CHECK(inferred.versions.torchBasis == core::TargetVersions::Basis::AtMost);
  CHECK(inferred.versions.torch() == 113);
  CHECK(inferred.versions.torchEvidence == "the headers declare no c10d::Backend");
}

TEST_CASE("facts: data loaders, their loops and helpers", "[facts-builder]") {
  const std::string code = R"cc(
using Loader = std::unique_ptr<data::DataLoader<std::vector<data::Example<>>>>;
Loader helper() { return data::make_data_loader(data::datasets::MNIST("d")); } // HELPER
void train(int epochs, const std::vector<data::datasets::MNIST> &sets) {
  for (int e = 0; e < epochs; ++e) {
    auto l = data::make_data_loader(data::datasets::MNIST("d")); // EPOCH
    auto h = helper(); // CALL
  }
  for (size_t i = 0; i < sets.size(); ++i)
    auto l = data::make_data_loader(sets[i]); // PERINPUT
  std::vector<Loader> all;
  for (int k = 0; k < 3; ++k)
    all.push_back(data::make_data_loader(data::datasets::MNIST("d"))); // STORED
}
)cc";
  FactsTU tu(code);
  tu.facts->addDataLoaders(tu.program.facts, core::builtinApi().dataLoaderFactories);
  const auto &dls = tu.program.facts.dataLoaders;
  REQUIRE(dls.size() == 4);
  CHECK(dls[0].api == "make_data_loader");
  CHECK(dls[0].loops.empty());
  CHECK(dls[1].loops.size() == 1);
  CHECK_FALSE(dls[1].loops[0].datasetDependsOnLoop);
  CHECK(dls[2].loops.size() == 1);
  CHECK(dls[2].loops[0].datasetDependsOnLoop);
  CHECK(dls[3].storedInContainer);
  CHECK(dls[0].function != dls[1].function);
  REQUIRE(tu.program.facts.calls.size() == 1);
  CHECK(tu.program.facts.calls[0].calleeName == "helper");
  CHECK(tu.program.facts.calls[0].callee == dls[0].function);
  auto fs = core::RuleRunner(tu.program).run(core::RuleId::DataloaderRecreated);
  REQUIRE(fs.size() == 2);
  CHECK(tu.line(fs[0].loc) == tu.lineOf(code, "EPOCH"));
  CHECK(tu.line(fs[1].loc) == tu.lineOf(code, "CALL"));
  CHECK(fs[1].message.find("'helper' builds a data loader (via 'make_data_loader')") == 0);
}

TEST_CASE("facts: forward() branches, their arms and nesting", "[facts-builder]") {
  const std::string code = R"cc(
struct NetImpl : nn::Module {
  nn::Linear fc{nullptr}, head{nullptr};
  Tensor forward(Tensor x, bool flag) {
    if (x.size(0) > 8) { // SHAPE
      x = head(x);
      if (flag) // NESTED
        x = fc(x);
    }
    if (flag) // FLAG
      x = fc(x);
    return fc(x);
  }
};
)cc";
  FactsTU tu(code);
  tu.facts->addForwards(tu.program.facts);
  REQUIRE(tu.program.facts.forwards.size() == 1);
  const auto &fm = tu.program.facts.forwards[0];
  CHECK(fm.className == "NetImpl");
  REQUIRE(fm.branches.size() == 3);
  const auto &shape = fm.branches[0];
  CHECK(shape.onShape);
  CHECK(shape.shapeExpr == "x.size(0)");
  CHECK(shape.condText == "x.size(0) > 8");
  CHECK(shape.parent == -1);
  REQUIRE(shape.arms.size() == 2);
  CHECK(shape.arms[0].own.modules == std::vector<std::string>{"fc", "head"});
  CHECK(shape.arms[1].own.modules.empty());
  // The else arm falls through to what follows the branch.
  CHECK(shape.arms[1].effective.modules == std::vector<std::string>{"fc"});
  CHECK(fm.branches[1].parent == 0);
  CHECK_FALSE(fm.branches[1].onShape);
  CHECK_FALSE(fm.branches[1].onValues);
  CHECK_FALSE(fm.branches[1].onRank);
  CHECK(fm.branches[2].parent == -1);
  auto fs = core::RuleRunner(tu.program).run(core::RuleId::ForwardShapeBranch);
  REQUIRE(fs.size() == 1);
  CHECK(tu.line(fs[0].loc) == tu.lineOf(code, "SHAPE"));
  CHECK(fs[0].message.find("runs submodule 'head' on some ranks only") != std::string::npos);
}
