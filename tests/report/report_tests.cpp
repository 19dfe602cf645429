// The report writers: clang-style text (exact lines, colour off and on),
// the JSON object, SARIF's structure, paths relative to the root.
#include "Report.h"
#include "Sample.h"

#include "ddplint/core/Catalog.h"

#include "llvm/Support/JSON.h"

#include <catch2/catch.hpp>

#include <set>
#include <sstream>

using namespace ddplint::cli;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

const std::string kRoot = "/proj";

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    out.push_back(l);
  return out;
}

RunResult only(const RunResult &r, size_t finding) {
  RunResult one;
  one.findings.push_back(r.findings.at(finding));
  return one;
}

llvm::json::Value parse(const std::string &text) {
  auto v = llvm::json::parse(text);
  if (!v) {
    FAIL("not JSON: " << llvm::toString(v.takeError()) << "\n" << text);
  }
  return std::move(*v);
}

const llvm::json::Object &obj(const llvm::json::Value &v) {
  const llvm::json::Object *o = v.getAsObject();
  REQUIRE(o != nullptr);
  return *o;
}

const llvm::json::Array &arr(const llvm::json::Value *v) {
  REQUIRE(v != nullptr);
  const llvm::json::Array *a = v->getAsArray();
  REQUIRE(a != nullptr);
  return *a;
}

std::string str(const llvm::json::Object &o, llvm::StringRef key) {
  auto s = o.getString(key);
  INFO("key " << key.str());
  REQUIRE(s.has_value());
  return s->str();
}

int64_t num(const llvm::json::Object &o, llvm::StringRef key) {
  auto n = o.getInteger(key);
  INFO("key " << key.str());
  REQUIRE(n.has_value());
  return *n;
}

const llvm::json::Object &sub(const llvm::json::Object &o, llvm::StringRef key) {
  const llvm::json::Object *s = o.getObject(key);
  INFO("key " << key.str());
  REQUIRE(s != nullptr);
  return *s;
}

ReportOptions plain() {
  ReportOptions o;
  o.baseDir = kRoot;
  o.version = "9.8.7";
  return o;
}

} // namespace

TEST_CASE("displayPath: relative under the root, absolute elsewhere", "[report][paths]") {
  CHECK(displayPath("/proj/src/a.cpp", "/proj") == "src/a.cpp");
  CHECK(displayPath("/proj/src/a.cpp", "/proj/") == "src/a.cpp");
  CHECK(displayPath("/proj/src/./x/../a.cpp", "/proj") == "src/a.cpp");
  // A sibling with the root as a name prefix is not under the root.
  CHECK(displayPath("/project2/a.cpp", "/proj") == "/project2/a.cpp");
  CHECK(displayPath("/proj/../other/a.cpp", "/proj") == "/other/a.cpp");
  CHECK(displayPath("/proj/a.cpp", "") == "/proj/a.cpp");
  CHECK(displayPath("rel/a.cpp", "/proj") == "rel/a.cpp");
}

TEST_CASE("text: a finding with its source line, caret and note", "[report][text]") {
  RunResult r = ddplint::testing::sampleRun(kRoot);
  std::vector<std::string> out = lines(renderText(only(r, 0), plain()));
  REQUIRE(out.size() == 4);
  CHECK(out[0] == "src/train.cpp:12:5: error: collective 'allreduce' is reached only by rank "
                  "0; the other ranks block in their next collective [ddp-divergent-collective]");
  CHECK(out[1] == "   12 |     pg->allreduce(tensors);");
  CHECK(out[2] == "      |     ^");
  CHECK(out[3] == "src/train.cpp:10:7: note: rank-dependent branch here");
}

TEST_CASE("text: tabs expand like clang's, fix-its under the caret or as notes",
          "[report][text]") {
  RunResult r = ddplint::testing::sampleRun(kRoot);
  // Column 2 is the 'i' right after the tab: display column 8.
  REQUIRE(r.findings[1].location.column == 2);
  std::vector<std::string> out = lines(renderText(only(r, 1), plain()));
  REQUIRE(out.size() == 5);
  CHECK(out[0] == "src/train.cpp:30:2: warning: rank 0 writes 'ckpt.pt' without a barrier "
                  "after it [ddp-rank0-io-barrier]");
  CHECK(out[1] == "   30 |         if (rank == 0) torch::save(model, \"ckpt.pt\");");
  CHECK(out[2] == "      |         ^");
  CHECK(out[3] == "      |         pg->barrier()->wait(); ");
  CHECK(out[4] == "src/train.cpp:31:1: note: fix-it: insert 'pg->barrier()->wait();' on a line "
                  "of its own");
  for (const auto &line : out)
    CHECK(line.find("\\n") == std::string::npos); // never an escaped newline
}

TEST_CASE("text: gutter widens for long files, caret past a short line", "[report][text]") {
  RunResult r;
  Finding f;
  f.ruleId = "ddp-x";
  f.severity = Severity::Warning;
  f.message = "m";
  f.location = ddplint::testing::loc("/proj/a.cpp", 123456, 4);
  f.sourceLine = "ab";
  r.findings.push_back(f);
  std::vector<std::string> out = lines(renderText(r, plain()));
  REQUIRE(out.size() == 3);
  CHECK(out[1] == " 123456 | ab");
  CHECK(out[2] == "        |    ^");
}

TEST_CASE("text: tool errors with and without a file, paths outside the root",
          "[report][text]") {
  RunResult r = ddplint::testing::sampleRun(kRoot);
  std::vector<std::string> out = lines(renderText(r, plain()));
  CHECK(out.at(0) == "src/broken.cpp:4:9: error: use of undeclared identifier 'foo'");
  CHECK(out.at(1) == "ddplint: error: no compile database found");
  CHECK(std::count(out.begin(), out.end(),
                   "/usr/include/outside/header.h:3:1: warning: a rule the catalog does not "
                   "know [ddp-launch-unknown]") == 1);
  CHECK(std::count(out.begin(), out.end(),
                   "src/my data/load er.cpp:7:14: note: data loader created inside the epoch "
                   "loop [ddp-dataloader-recreated]") == 1);

  RunResult wholeFile;
  wholeFile.errors.push_back(ddplint::testing::toolError(ddplint::testing::loc("/proj/compile_commands.json", 0, 0), "not valid JSON"));
  CHECK(renderText(wholeFile, plain()) == "compile_commands.json: error: not valid JSON\n");
}

TEST_CASE("text: no colour unless asked; clang's colours when asked", "[report][text]") {
  RunResult r = ddplint::testing::sampleRun(kRoot);
  CHECK(renderText(r, plain()).find('\033') == std::string::npos);

  ReportOptions c = plain();
  c.color = true;
  std::vector<std::string> out = lines(renderText(only(r, 0), c));
  REQUIRE(out.size() == 4);
  CHECK(out[0] == "\033[1msrc/train.cpp:12:5: \033[0m\033[0;1;31merror: \033[0m\033[1m"
                  "collective 'allreduce' is reached only by rank 0; the other ranks block in "
                  "their next collective [ddp-divergent-collective]\033[0m");
  CHECK(out[1] == "   12 |     pg->allreduce(tensors);");
  CHECK(out[2] == "      | \033[0;1;32m    ^\033[0m");
  CHECK(out[3] == "\033[1msrc/train.cpp:10:7: \033[0m\033[0;1;36mnote: \033[0m"
                  "rank-dependent branch here\033[0m");

  std::string warning = renderText(only(r, 1), c);
  CHECK_THAT(warning, Contains("\033[0;1;35mwarning: \033[0m"));
  CHECK_THAT(warning, Contains("\033[0;32m")); // the fix-it line
}

TEST_CASE("summary line", "[report][text]") {
  RunResult r = ddplint::testing::sampleRun(kRoot);
  CHECK(summaryLine(r) == "4 findings (1 error, 2 warnings, 1 note), 1 suppressed by "
                          "baseline, 2 tool errors, 3 files analyzed");
  RunResult one = only(r, 0);
  one.filesAnalyzed = 1;
  CHECK(summaryLine(one) == "1 finding (1 error), 1 file analyzed");
  CHECK(summaryLine(RunResult{}) == "no findings, 0 files analyzed");
}

TEST_CASE("JSON: documented fields, relative paths", "[report][json]") {
  RunResult r = ddplint::testing::sampleRun(kRoot);
  llvm::json::Value v = parse(renderJson(r, plain()));
  const llvm::json::Object &top = obj(v);
  CHECK(num(top, "version") == 2);
  CHECK(str(sub(top, "tool"), "name") == "ddplint");
  CHECK(str(sub(top, "tool"), "version") == "9.8.7");

  const llvm::json::Array &findings = arr(top.get("findings"));
  REQUIRE(findings.size() == r.findings.size());
  const llvm::json::Object &a = obj(findings[0]);
  CHECK(str(a, "rule") == "ddp-divergent-collective");
  CHECK(str(a, "severity") == "error");
  CHECK(str(a, "message") == r.findings[0].message);
  CHECK(str(a, "file") == "src/train.cpp");
  CHECK(num(a, "line") == 12);
  CHECK(num(a, "column") == 5);
  CHECK(str(a, "fingerprint") == r.findings[0].fingerprint);
  CHECK(str(a, "sourceLine") == r.findings[0].sourceLine);
  const llvm::json::Array &notes = arr(a.get("notes"));
  REQUIRE(notes.size() == 1);
  CHECK(str(obj(notes[0]), "file") == "src/train.cpp");
  CHECK(num(obj(notes[0]), "line") == 10);
  CHECK(num(obj(notes[0]), "column") == 7);
  CHECK(str(obj(notes[0]), "message") == "rank-dependent branch here");
  CHECK(arr(a.get("fixes")).empty());

  const llvm::json::Array &fixes = arr(obj(findings[1]).get("fixes"));
  REQUIRE(fixes.size() == 2);
  const llvm::json::Object &fix = obj(fixes[0]);
  CHECK(str(fix, "file") == "src/train.cpp");
  CHECK(num(fix, "offset") == 400);
  CHECK(num(fix, "length") == 0);
  CHECK(str(fix, "replacement") == "pg->barrier()->wait(); ");
  CHECK(num(fix, "line") == 30);
  CHECK(num(fix, "column") == 2);
  CHECK(num(fix, "endLine") == 30);
  CHECK(num(fix, "endColumn") == 2);

  CHECK(str(obj(findings[3]), "file") == "/usr/include/outside/header.h");

  const llvm::json::Array &errors = arr(top.get("toolErrors"));
  REQUIRE(errors.size() == 2);
  CHECK(str(obj(errors[0]), "file") == "src/broken.cpp");
  CHECK(num(obj(errors[0]), "line") == 4);
  CHECK(obj(errors[1]).get("file")->kind() == llvm::json::Value::Null);
  CHECK(str(obj(errors[1]), "message") == "no compile database found");

  const llvm::json::Object &summary = sub(top, "summary");
  CHECK(num(summary, "findings") == 4);
  CHECK(num(summary, "errors") == 1);
  CHECK(num(summary, "warnings") == 2);
  CHECK(num(summary, "notes") == 1);
  CHECK(num(summary, "toolErrors") == 2);
  CHECK(num(summary, "suppressedByBaseline") == 1);
  CHECK(num(summary, "filesAnalyzed") == 3);
}

TEST_CASE("JSON: output is byte-stable", "[report][json]") {
  RunResult r = ddplint::testing::sampleRun(kRoot);
  CHECK(renderJson(r, plain()) == renderJson(r, plain()));
  // Sorted keys: "column" before "file" before "line" in every object.
  std::string s = renderJson(only(r, 0), plain());
  CHECK(s.find("\"column\"") < s.find("\"file\""));
}

TEST_CASE("sortFindings orders by file, line, column, rule", "[report]") {
  std::vector<Finding> f(3);
  f[0].location = ddplint::testing::loc("/b.cpp", 1, 1);
  f[1].location = ddplint::testing::loc("/a.cpp", 9, 1);
  f[2].location = ddplint::testing::loc("/a.cpp", 2, 7);
  sortFindings(f);
  CHECK(f[0].location.line == 2);
  CHECK(f[1].location.line == 9);
  CHECK(f[2].location.file == "/b.cpp");
}

TEST_CASE("SARIF: rules from the catalog with GitHub's required fields", "[report][sarif]") {
  RunResult r = ddplint::testing::sampleRun(kRoot);
  llvm::json::Value v = parse(renderSarif(r, plain()));
  const llvm::json::Object &top = obj(v);
  CHECK(str(top, "version") == "2.1.0");
  CHECK_THAT(str(top, "$schema"), Contains("sarif-2.1.0"));
  const llvm::json::Array &runs = arr(top.get("runs"));
  REQUIRE(runs.size() == 1);
  const llvm::json::Object &run = obj(runs[0]);
  const llvm::json::Object &driver = sub(sub(run, "tool"), "driver");
  CHECK(str(driver, "name") == "ddplint");
  CHECK(str(driver, "version") == "9.8.7");
  CHECK(str(driver, "semanticVersion") == "9.8.7");

  const auto &catalog = ddplint::core::builtinRules();
  REQUIRE(!catalog.empty());
  const llvm::json::Array &rules = arr(driver.get("rules"));
  // Every catalog rule, plus a stub for the finding whose rule is not in it.
  REQUIRE(rules.size() == catalog.size() + 1);
  for (size_t i = 0; i < catalog.size(); ++i) {
    const llvm::json::Object &rule = obj(rules[i]);
    INFO(catalog[i].id);
    CHECK(str(rule, "id") == catalog[i].id);
    CHECK(str(rule, "name") == sarifRuleName(catalog[i].id));
    CHECK_THAT(str(sub(rule, "shortDescription"), "text"), StartsWith(catalog[i].summary.substr(0, 20)));
    CHECK_THAT(str(sub(rule, "fullDescription"), "text"), StartsWith(catalog[i].trigger.substr(0, 20)));
    CHECK_THAT(str(sub(rule, "help"), "text"), Contains(catalog[i].rootCause));
    CHECK_THAT(str(sub(rule, "help"), "markdown"), Contains(catalog[i].fix));
    for (const std::string &scenario : catalog[i].harness)
      CHECK_THAT(str(sub(rule, "help"), "markdown"), Contains("`" + scenario + "`"));
    CHECK(str(sub(rule, "defaultConfiguration"), "level") == catalog[i].severity);
    const llvm::json::Object &props = sub(rule, "properties");
    CHECK(arr(props.get("tags")).size() >= 2);
    CHECK(str(props, "precision") == "high");
    CHECK(props.getString("problem.severity").has_value());
  }
  const llvm::json::Object &stub = obj(rules.back());
  CHECK(str(stub, "id") == "ddp-launch-unknown");
  CHECK(sub(stub, "help").getString("text").has_value());
}

TEST_CASE("SARIF: results, locations, notes, fixes, fingerprints", "[report][sarif]") {
  RunResult r = ddplint::testing::sampleRun(kRoot);
  llvm::json::Value v = parse(renderSarif(r, plain()));
  const llvm::json::Object &run = obj(arr(obj(v).get("runs"))[0]);
  const llvm::json::Array &rules = arr(sub(sub(run, "tool"), "driver").get("rules"));

  CHECK(str(sub(sub(run, "originalUriBaseIds"), "%SRCROOT%"), "uri") == "file:///proj/");

  const llvm::json::Array &results = arr(run.get("results"));
  REQUIRE(results.size() == r.findings.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const llvm::json::Object &res = obj(results[i]);
    int64_t index = num(res, "ruleIndex");
    REQUIRE(index >= 0);
    REQUIRE(static_cast<size_t>(index) < rules.size());
    CHECK(str(obj(rules[index]), "id") == str(res, "ruleId"));
    CHECK(str(res, "level") == severityName(r.findings[i].severity));
  }

  const llvm::json::Object &a = obj(results[0]);
  CHECK(str(sub(a, "message"), "text") == r.findings[0].message + ".");
  const llvm::json::Object &phys = sub(obj(arr(a.get("locations"))[0]), "physicalLocation");
  CHECK(str(sub(phys, "artifactLocation"), "uri") == "src/train.cpp");
  CHECK(str(sub(phys, "artifactLocation"), "uriBaseId") == "%SRCROOT%");
  CHECK(num(sub(phys, "region"), "startLine") == 12);
  CHECK(num(sub(phys, "region"), "startColumn") == 5);
  CHECK(str(sub(sub(phys, "region"), "snippet"), "text") == "pg->allreduce(tensors);");
  CHECK(str(sub(sub(phys, "contextRegion"), "snippet"), "text") == r.findings[0].sourceLine);
  const llvm::json::Array &related = arr(a.get("relatedLocations"));
  REQUIRE(related.size() == 1);
  CHECK(num(obj(related[0]), "id") == 1);
  CHECK(str(sub(obj(related[0]), "message"), "text") == "rank-dependent branch here.");
  CHECK(num(sub(sub(obj(related[0]), "physicalLocation"), "region"), "startLine") == 10);
  CHECK(str(sub(a, "partialFingerprints"), "ddplint/v1") == r.findings[0].fingerprint);
  CHECK(a.get("fixes") == nullptr);

  const llvm::json::Object &b = obj(results[1]);
  const llvm::json::Array &fixes = arr(b.get("fixes"));
  REQUIRE(fixes.size() == 1);
  CHECK(sub(obj(fixes[0]), "description").getString("text").has_value());
  const llvm::json::Array &changes = arr(obj(fixes[0]).get("artifactChanges"));
  REQUIRE(changes.size() == 1); // both edits are in one file
  CHECK(str(sub(obj(changes[0]), "artifactLocation"), "uri") == "src/train.cpp");
  const llvm::json::Array &reps = arr(obj(changes[0]).get("replacements"));
  REQUIRE(reps.size() == 2);
  const llvm::json::Object &deleted = sub(obj(reps[1]), "deletedRegion");
  CHECK(num(deleted, "startLine") == 31);
  CHECK(num(deleted, "startColumn") == 1);
  CHECK(num(deleted, "endLine") == 31);
  CHECK(num(deleted, "endColumn") == 1);
  CHECK(str(sub(obj(reps[1]), "insertedContent"), "text") == "\n  pg->barrier()->wait();");
  // No fingerprint computed: no partialFingerprints rather than an empty one.
  CHECK(b.get("partialFingerprints") == nullptr);

  auto uriOf = [&](size_t i) {
    const llvm::json::Object &res = obj(results[i]);
    return sub(sub(obj(arr(res.get("locations"))[0]), "physicalLocation"), "artifactLocation");
  };
  CHECK(str(uriOf(2), "uri") == "src/my%20data/load%20er.cpp");
  CHECK(str(uriOf(3), "uri") == "file:///usr/include/outside/header.h");
  CHECK(uriOf(3).get("uriBaseId") == nullptr);
}

TEST_CASE("SARIF: tool errors become failed-execution notifications", "[report][sarif]") {
  RunResult r = ddplint::testing::sampleRun(kRoot);
  llvm::json::Value v = parse(renderSarif(r, plain()));
  const llvm::json::Object &run = obj(arr(obj(v).get("runs"))[0]);
  const llvm::json::Object &inv = obj(arr(run.get("invocations"))[0]);
  CHECK(inv.getBoolean("executionSuccessful") == false);
  const llvm::json::Array &notes = arr(inv.get("toolExecutionNotifications"));
  REQUIRE(notes.size() == 2);
  CHECK(str(obj(notes[0]), "level") == "error");
  CHECK(str(sub(obj(notes[0]), "message"), "text") == "use of undeclared identifier 'foo'.");
  const llvm::json::Object &loc =
      sub(obj(arr(obj(notes[0]).get("locations"))[0]), "physicalLocation");
  CHECK(str(sub(loc, "artifactLocation"), "uri") == "src/broken.cpp");
  CHECK(num(sub(loc, "region"), "startLine") == 4);
  CHECK(obj(notes[1]).get("locations") == nullptr);

  RunResult clean = only(r, 0);
  llvm::json::Value cv = parse(renderSarif(clean, plain()));
  const llvm::json::Object &cinv =
      obj(arr(obj(arr(obj(cv).get("runs"))[0]).get("invocations"))[0]);
  CHECK(cinv.getBoolean("executionSuccessful") == true);
  CHECK(cinv.get("toolExecutionNotifications") == nullptr);
}

TEST_CASE("SARIF: no root means absolute file URIs and no base id", "[report][sarif]") {
  RunResult r = only(ddplint::testing::sampleRun(kRoot), 0);
  ReportOptions o = plain();
  o.baseDir.clear();
  llvm::json::Value v = parse(renderSarif(r, o));
  const llvm::json::Object &run = obj(arr(obj(v).get("runs"))[0]);
  CHECK(run.get("originalUriBaseIds") == nullptr);
  const llvm::json::Object &res = obj(arr(run.get("results"))[0]);
  const llvm::json::Object &art =
      sub(sub(obj(arr(res.get("locations"))[0]), "physicalLocation"), "artifactLocation");
  CHECK(str(art, "uri") == "file:///proj/src/train.cpp");
}

// Where the analysis stopped short is said in every format: a note in the
// text, a count in the summary line (per function, not per limit), an entry
// and a count in JSON, a note-level notification in SARIF that does not fail
// the run.
TEST_CASE("analysis limits: every format says where a finding may be missing", "[report]") {
  RunResult r = only(ddplint::testing::sampleRun(kRoot), 0);
  r.filesAnalyzed = 1;
  const std::string file = std::string(kRoot) + "/src/train.cpp";
  r.analysisLimits.push_back({ddplint::testing::loc(file, 5, 5),
                              "analysis limit: 'main' has more than 512 paths"});
  r.analysisLimits.push_back({ddplint::testing::loc(file, 5, 5),
                              "analysis limit: calls from 'main' go deeper than 16 functions"});

  const std::string text = renderText(r, plain());
  CHECK_THAT(text, Contains("src/train.cpp:5:5: note: analysis limit: 'main' has more than 512 paths"));
  CHECK(text.find("analysis limit") > text.find("[ddp-")); // after the findings
  CHECK(summaryLine(r) == "1 finding (1 error), 1 file analyzed, analysis limited in 1 function");

  llvm::json::Value jv = parse(renderJson(r, plain()));
  const llvm::json::Object &top = obj(jv);
  const llvm::json::Array &limits = arr(top.get("analysisLimits"));
  REQUIRE(limits.size() == 2);
  CHECK(str(obj(limits[0]), "file") == "src/train.cpp");
  CHECK(num(obj(limits[0]), "line") == 5);
  CHECK(num(sub(top, "summary"), "analysisLimits") == 2);
  CHECK(arr(top.get("toolErrors")).empty());

  llvm::json::Value sv = parse(renderSarif(r, plain()));
  const llvm::json::Object &inv =
      obj(arr(obj(arr(obj(sv).get("runs"))[0]).get("invocations"))[0]);
  CHECK(inv.getBoolean("executionSuccessful") == true);
  const llvm::json::Array &notes = arr(inv.get("toolExecutionNotifications"));
  REQUIRE(notes.size() == 2);
  CHECK(str(obj(notes[0]), "level") == "note");
  CHECK(str(sub(obj(notes[0]), "descriptor"), "id") == "analysis-limit");
  CHECK(str(sub(sub(obj(arr(obj(notes[0]).get("locations"))[0]), "physicalLocation"),
                "artifactLocation"),
            "uri") == "src/train.cpp");

  CHECK(summaryLine(only(r, 0)).find("analysis limited") == std::string::npos);
}

TEST_CASE("sarifRuleName and fileUri", "[report][sarif]") {
  CHECK(sarifRuleName("ddp-divergent-collective") == "DivergentCollective");
  CHECK(sarifRuleName("ddp-rank0-io-barrier") == "Rank0IoBarrier");
  CHECK(sarifRuleName("launch-missing-env") == "LaunchMissingEnv");
  std::set<std::string> names;
  for (const auto &r : ddplint::core::builtinRules())
    names.insert(sarifRuleName(r.id));
  CHECK(names.size() == ddplint::core::builtinRules().size());
  CHECK(fileUri("/a b/#c/ü") == "file:///a%20b/%23c/%C3%BC");
  CHECK(fileUri("/proj/") == "file:///proj/");
}

TEST_CASE("text relative to the working directory, SARIF to the source root", "[report][paths]") {
  RunResult r = only(ddplint::testing::sampleRun(kRoot), 0);
  ReportOptions o = plain();
  o.baseDir = "/proj/src";
  o.sourceRoot = "/proj";
  CHECK_THAT(renderText(r, o), StartsWith("train.cpp:12:5: error:"));
  const llvm::json::Value j = parse(renderJson(r, o));
  CHECK(str(obj(arr(obj(j).get("findings"))[0]), "file") == "train.cpp");

  llvm::json::Value v = parse(renderSarif(r, o));
  const llvm::json::Object &run = obj(arr(obj(v).get("runs"))[0]);
  CHECK(str(sub(sub(run, "originalUriBaseIds"), "%SRCROOT%"), "uri") == "file:///proj/");
  const llvm::json::Object &res = obj(arr(run.get("results"))[0]);
  CHECK(str(sub(sub(obj(arr(res.get("locations"))[0]), "physicalLocation"), "artifactLocation"),
            "uri") == "src/train.cpp");

  // A working directory outside the project: absolute paths in the text.
  o.baseDir = "/elsewhere";
  CHECK_THAT(renderText(r, o), StartsWith("/proj/src/train.cpp:12:5: error:"));
}
