// Writes the sample run (Sample.h) in one of the report formats, so the SARIF
// validator can judge exactly what the writers produce.
//   sarif_driver --format sarif|json|text --root DIR OUTPUT
#include "Report.h"
#include "Sample.h"

#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <iostream>

int main(int argc, char **argv) {
  std::string format = "sarif", root, output;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--format") && i + 1 < argc)
      format = argv[++i];
    else if (!std::strcmp(argv[i], "--root") && i + 1 < argc)
      root = argv[++i];
    else
      output = argv[i];
  }
  if (root.empty() || output.empty()) {
    std::cerr << "usage: sarif_driver [--format sarif|json|text] --root DIR OUTPUT\n";
    return 2;
  }
  ddplint::cli::RunResult run = ddplint::testing::sampleRun(root);
  // A limit notification too: the validators must accept its shape.
  run.analysisLimits.push_back({ddplint::testing::loc(root + "/src/train.cpp", 5, 5),
                                "analysis limit: 'main' has more than 512 paths"});
  ddplint::cli::ReportOptions options;
  options.baseDir = root;
  options.sourceRoot = root;
  std::error_code ec;
  llvm::raw_fd_ostream out(output, ec);
  if (ec) {
    std::cerr << "sarif_driver: cannot write " << output << ": " << ec.message() << "\n";
    return 2;
  }
  if (format == "sarif")
    ddplint::cli::writeSarif(out, run, options);
  else if (format == "json")
    ddplint::cli::writeJson(out, run, options);
  else
    ddplint::cli::writeText(out, run, options);
  return 0;
}
