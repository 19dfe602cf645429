// ddp-dataloader-recreated: a data loader built inside a loop (the epoch loop),
// so its worker threads are started and joined on every iteration.  Facts:
// clangfe::FactsBuilder::addDataLoaders; decision and message:
// core::dataLoaderRecreatedFindings.
#pragma once

#include "tidy/CheckSupport.h"

#include <string>
#include <vector>

namespace ddplint::tidy {

class DataloaderRecreatedCheck : public FactBasedCheck {
public:
  DataloaderRecreatedCheck(llvm::StringRef name, clang::tidy::ClangTidyContext *context);

protected:
  void run(core::Program &program, clangfe::FactsBuilder &facts, clang::ASTContext &ctx) override;

private:
  std::vector<std::string> factories_; // catalog + DataLoaderFactories
};

} // namespace ddplint::tidy
