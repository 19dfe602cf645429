// Fingerprints and baselines: stable under unrelated edits, distinct where the
// finding differs, multiset matching, and errors that point into the file.
#include "Baseline.h"
#include "Sample.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <catch2/catch.hpp>

#include <fstream>

using namespace ddplint::cli;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

Finding finding(const std::string &rule, const std::string &file, unsigned line,
                const std::string &source, const std::string &message) {
  Finding f;
  f.ruleId = rule;
  f.severity = Severity::Error;
  f.location = ddplint::testing::loc(file, line, 5);
  f.sourceLine = source;
  f.message = message;
  return f;
}

std::string fingerprintOf(Finding f, const std::string &root = "/proj") {
  std::vector<Finding> v{std::move(f)};
  computeFingerprints(v, root);
  return v[0].fingerprint;
}

// A fresh folder per test, removed at the end.
struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> p;
    REQUIRE(!llvm::sys::fs::createUniqueDirectory("ddplint-baseline-test", p));
    path = std::string(p);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const std::string &name, const std::string &content = "") const {
    std::string f = path + "/" + name;
    if (!content.empty()) {
      std::ofstream out(f, std::ios::binary);
      out << content;
    }
    return f;
  }
};

std::string slurp(const std::string &path) {
  auto b = llvm::MemoryBuffer::getFile(path);
  REQUIRE(b);
  return (*b)->getBuffer().str();
}

std::string loadError(const TempDir &dir, const std::string &content) {
  std::string path = dir.file("baseline.json", content);
  Baseline b;
  std::string err;
  CHECK_FALSE(loadBaseline(path, b, err));
  return err;
}

const char *kMsg = "collective 'allreduce' is reached only by rank 0";

} // namespace

TEST_CASE("fingerprint: unrelated lines inserted above keep it", "[report][baseline]") {
  Finding before = finding("ddp-divergent-collective", "/proj/src/train.cpp", 12,
                           "    pg->allreduce(t);", "collective at line 12 diverges (see line 10)");
  Finding after = before;
  after.location.line = 40;
  after.location.column = 9;                  // re-indented
  after.sourceLine = "\t\tpg->allreduce(t);"; // tabs instead of spaces
  after.message = "collective at line 40 diverges (see line 38)";
  after.notes.push_back(ddplint::testing::note(ddplint::testing::loc("/proj/src/train.cpp", 38, 3), "branch at line 38"));
  CHECK(fingerprintOf(before) == fingerprintOf(after));
}

TEST_CASE("fingerprint: the same finding in another checkout matches", "[report][baseline]") {
  Finding here = finding("ddp-unguarded-save", "/home/a/proj/src/t.cpp", 7, "torch::save(m, p);",
                         "every rank writes /home/a/proj/ckpt.pt (see /home/a/proj/src/t.cpp:3:1)");
  Finding there = finding("ddp-unguarded-save", "/ci/work/src/t.cpp", 9, "torch::save(m, p);",
                          "every rank writes /ci/work/ckpt.pt (see /ci/work/src/t.cpp:5:1)");
  CHECK(fingerprintOf(here, "/home/a/proj") == fingerprintOf(there, "/ci/work"));
}

TEST_CASE("fingerprint: differs by rule, file, line text, message", "[report][baseline]") {
  Finding base = finding("ddp-divergent-collective", "/proj/a.cpp", 3, "pg->barrier();", kMsg);
  const std::string fp = fingerprintOf(base);
  Finding other = base;
  other.ruleId = "ddp-rank0-io-barrier";
  CHECK(fingerprintOf(other) != fp);
  other = base;
  other.location.file = "/proj/b.cpp";
  CHECK(fingerprintOf(other) != fp);
  other = base;
  other.sourceLine = "pg->allreduce(t);";
  CHECK(fingerprintOf(other) != fp);
  other = base;
  other.message = "collective 'broadcast' is reached only by rank 0";
  CHECK(fingerprintOf(other) != fp);
  // Numbers that are not positions still count.
  other = base;
  other.message = "collective 'allreduce' is reached only by rank 1";
  CHECK(fingerprintOf(other) != fp);
}

TEST_CASE("fingerprint: occurrence index separates identical findings, in line order",
          "[report][baseline]") {
  std::vector<Finding> v{
      finding("ddp-divergent-collective", "/proj/a.cpp", 30, "pg->barrier();", kMsg),
      finding("ddp-divergent-collective", "/proj/a.cpp", 10, "pg->barrier();", kMsg),
      finding("ddp-divergent-collective", "/proj/b.cpp", 10, "pg->barrier();", kMsg)};
  computeFingerprints(v, "/proj");
  CHECK(v[0].fingerprint != v[1].fingerprint);
  const std::string hash = v[1].fingerprint.substr(0, v[1].fingerprint.find(':'));
  CHECK(v[1].fingerprint == hash + ":1"); // line 10 comes first
  CHECK(v[0].fingerprint == hash + ":2");
  CHECK(v[2].fingerprint.substr(v[2].fingerprint.find(':')) == ":1"); // its own file
  CHECK(v[2].fingerprint.substr(0, v[2].fingerprint.find(':')) != hash);
}

TEST_CASE("normalisation helpers", "[report][baseline]") {
  CHECK(normaliseSourceLine("  \tfoo(  a,\tb );  \r") == "foo( a, b );");
  CHECK(normaliseMessage("see line 12, lines 3-5 and column 7", "") ==
        "see line #, lines # and column #");
  CHECK(normaliseMessage("declared at train.cpp:12:5 and util.h:3", "") ==
        "declared at train.cpp:# and util.h:#");
  CHECK(normaliseMessage("rank 0 and world size 4", "") == "rank 0 and world size 4");
  CHECK(normaliseMessage("/r/src/a.cpp:3: x", "/r") == "src/a.cpp:#: x");
}

TEST_CASE("baseline: write, load, round trip, stable bytes", "[report][baseline]") {
  TempDir dir;
  std::vector<Finding> v{
      finding("ddp-unguarded-save", "/proj/src/b.cpp", 9, "torch::save(m, p);", "every rank \"saves\""),
      finding("ddp-divergent-collective", "/proj/src/a.cpp", 20, "pg->barrier();", kMsg),
      finding("ddp-divergent-collective", "/proj/src/a.cpp", 10, "pg->barrier();", kMsg)};
  computeFingerprints(v, "/proj");
  std::string err;
  const std::string path = dir.file("base.json");
  REQUIRE(writeBaseline(path, v, "/proj", err));
  const std::string bytes = slurp(path);
  CHECK_THAT(bytes, StartsWith("{\n  \"version\": 1,\n  \"tool\": \"ddplint\",\n  \"findings\": ["));

  // Another order of the same findings writes the same file.
  std::vector<Finding> shuffled{v[2], v[0], v[1]};
  const std::string path2 = dir.file("base2.json");
  REQUIRE(writeBaseline(path2, shuffled, "/proj", err));
  CHECK(slurp(path2) == bytes);

  Baseline b;
  REQUIRE(loadBaseline(path, b, err));
  CHECK(b.path == path);
  REQUIRE(b.entries.size() == 3);
  CHECK(b.entries[0].file == "src/a.cpp");
  CHECK(b.entries[0].line == 10);
  CHECK(b.entries[1].line == 20);
  CHECK(b.entries[2].file == "src/b.cpp");
  CHECK(b.entries[2].rule == "ddp-unguarded-save");
  CHECK(b.entries[2].message == "every rank \"saves\"");
  CHECK(b.entries[2].fingerprint == v[0].fingerprint);
}

TEST_CASE("baseline: fingerprints are computed when missing", "[report][baseline]") {
  TempDir dir;
  std::vector<Finding> v{finding("ddp-x", "/proj/a.cpp", 1, "x();", "m")};
  std::string err;
  REQUIRE(writeBaseline(dir.file("b.json"), v, "/proj", err));
  Baseline b;
  REQUIRE(loadBaseline(dir.file("b.json"), b, err));
  REQUIRE(b.entries.size() == 1);
  CHECK(b.entries[0].fingerprint == fingerprintOf(v[0]));
}

TEST_CASE("baseline: suppresses recorded findings after a shift, keeps new ones",
          "[report][baseline]") {
  TempDir dir;
  std::vector<Finding> old{
      finding("ddp-divergent-collective", "/proj/a.cpp", 10, "pg->barrier();", kMsg),
      finding("ddp-unguarded-save", "/proj/a.cpp", 20, "torch::save(m, p);", "every rank writes")};
  computeFingerprints(old, "/proj");
  std::string err;
  REQUIRE(writeBaseline(dir.file("b.json"), old, "/proj", err));
  Baseline b;
  REQUIRE(loadBaseline(dir.file("b.json"), b, err));

  // Five lines inserted at the top, and a new finding.
  std::vector<Finding> now = old;
  for (Finding &f : now)
    f.location.line += 5;
  now.push_back(finding("ddp-divergent-collective", "/proj/a.cpp", 40, "pg->broadcast(t);", kMsg));
  computeFingerprints(now, "/proj");
  CHECK(applyBaseline(now, b) == 2);
  REQUIRE(now.size() == 1);
  CHECK(now[0].sourceLine == "pg->broadcast(t);");
}

TEST_CASE("baseline: multiset semantics", "[report][baseline]") {
  // One identical finding recorded, now there are two: the second is new.
  std::vector<Finding> old{finding("ddp-x", "/proj/a.cpp", 10, "pg->barrier();", kMsg)};
  computeFingerprints(old, "/proj");
  Baseline b;
  b.entries.push_back({"ddp-x", "a.cpp", old[0].fingerprint, kMsg, 10});

  std::vector<Finding> now{finding("ddp-x", "/proj/a.cpp", 10, "pg->barrier();", kMsg),
                           finding("ddp-x", "/proj/a.cpp", 30, "pg->barrier();", kMsg)};
  computeFingerprints(now, "/proj");
  CHECK(applyBaseline(now, b) == 1);
  REQUIRE(now.size() == 1);
  CHECK(now[0].location.line == 30);

  // An entry suppresses one finding, even when two carry its fingerprint.
  std::vector<Finding> twins{old[0], old[0]};
  CHECK(applyBaseline(twins, b) == 1);
  CHECK(twins.size() == 1);
  b.entries.push_back(b.entries[0]);
  twins = {old[0], old[0]};
  CHECK(applyBaseline(twins, b) == 2);
  CHECK(twins.empty());

  // The rule must match too, and no fingerprint never matches.
  std::vector<Finding> other{old[0]};
  other[0].ruleId = "ddp-y";
  CHECK(applyBaseline(other, b) == 0);
  std::vector<Finding> none{finding("ddp-x", "/proj/a.cpp", 10, "pg->barrier();", kMsg)};
  CHECK(applyBaseline(none, b) == 0);
}

TEST_CASE("baseline: malformed files are errors naming file:line:col", "[report][baseline]") {
  TempDir dir;
  const std::string path = dir.file("baseline.json");

  SECTION("syntax error") {
    std::string err = loadError(dir, "{\n  \"version\": 1,\n  \"findings\": [\n    {\"rule\" \"x\"}\n");
    CHECK_THAT(err, StartsWith(path + ":4:13: error: invalid baseline: malformed JSON"));
  }
  SECTION("truncated") {
    std::string err = loadError(dir, "{\"version\": 1, \"findings\": [");
    CHECK_THAT(err, StartsWith(path + ":1:29: error: invalid baseline: malformed JSON"));
  }
  SECTION("trailing garbage") {
    std::string err = loadError(dir, "{\"version\": 1, \"findings\": []}\nx");
    CHECK_THAT(err, StartsWith(path + ":2:1: error:"));
  }
  SECTION("wrong version") {
    std::string err = loadError(dir, "{\n  \"version\": 2,\n  \"findings\": []\n}\n");
    CHECK_THAT(err, StartsWith(path + ":2:14: error: invalid baseline: unsupported version 2"));
  }
  SECTION("version as a string") {
    std::string err = loadError(dir, "{\"version\": \"1\", \"findings\": []}");
    CHECK_THAT(err, StartsWith(path + ":1:13: error:"));
    CHECK_THAT(err, Contains("must be an integer, found a string"));
  }
  SECTION("missing version") {
    std::string err = loadError(dir, "\n {\"findings\": []}");
    CHECK_THAT(err, StartsWith(path + ":2:2: error:"));
    CHECK_THAT(err, Contains("missing \"version\""));
  }
  SECTION("findings not an array") {
    std::string err = loadError(dir, "{\"version\": 1,\n \"findings\": {}}");
    CHECK_THAT(err, StartsWith(path + ":2:14: error:"));
    CHECK_THAT(err, Contains("\"findings\" must be an array, found an object"));
  }
  SECTION("entry field of the wrong type") {
    std::string err = loadError(
        dir, "{\"version\": 1, \"findings\": [\n  {\"rule\": \"r\", \"file\": \"f\", \"fingerprint\": 7}]}");
    CHECK_THAT(err, StartsWith(path + ":2:45: error:"));
    CHECK_THAT(err, Contains("findings[0].fingerprint must be a string, found a number"));
  }
  SECTION("entry without a field") {
    std::string err = loadError(dir, "{\"version\": 1, \"findings\": [{}, {\"rule\": \"r\"}]}");
    CHECK_THAT(err, StartsWith(path + ":1:29: error:"));
    CHECK_THAT(err, Contains("findings[0] lacks \"rule\""));
  }
  SECTION("negative line") {
    std::string err = loadError(
        dir, "{\"version\": 1, \"findings\": [{\"rule\": \"r\", \"file\": \"f\", \"fingerprint\": \"p\", \"line\": -1}]}");
    CHECK_THAT(err, Contains("findings[0].line must be a non-negative integer, found -1"));
  }
  SECTION("another tool's file") {
    std::string err = loadError(dir, "{\"version\": 1, \"tool\": \"eslint\", \"findings\": []}");
    CHECK_THAT(err, StartsWith(path + ":1:24: error:"));
  }
  SECTION("duplicate key") {
    std::string err = loadError(dir, "{\"version\": 1, \"version\": 1, \"findings\": []}");
    CHECK_THAT(err, StartsWith(path + ":1:16: error:"));
    CHECK_THAT(err, Contains("duplicate key"));
  }
  SECTION("missing file") {
    Baseline b;
    std::string err;
    CHECK_FALSE(loadBaseline(dir.path + "/nope.json", b, err));
    CHECK_THAT(err, StartsWith(dir.path + "/nope.json: error: cannot read baseline"));
  }
  SECTION("escapes decode, unknown keys are ignored") {
    std::string p = dir.file(
        "ok.json", "{\"version\": 1, \"future\": [1, 2.5e3, null, true], \"findings\": [{\"rule\": \"r\", "
                   "\"file\": \"f\", \"fingerprint\": \"p\", \"message\": \"a\\u00e9\\ud83d\\ude00\\n\"}]}");
    Baseline b;
    std::string err;
    REQUIRE(loadBaseline(p, b, err));
    REQUIRE(b.entries.size() == 1);
    CHECK(b.entries[0].message == "a\xC3\xA9\xF0\x9F\x98\x80\n");
  }
}
