#!/usr/bin/env python3
"""End-to-end tests of the ddplint CLI: a real CMake project with a real
compile_commands.json, real config files, baselines, fix-its, launch files and
the pre-commit hook.  Every test works on a copy in a temporary folder.

    DDPLINT=build/bin/ddplint python3 -m unittest test_cli.ExitCodes -v
"""
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
DDPLINT = os.environ.get("DDPLINT", os.path.join(REPO, "build", "bin", "ddplint"))
MOCK_INCLUDE = os.path.join(REPO, "tests", "mock-headers")
VALIDATE_SARIF = os.path.join(REPO, "tests", "report", "validate_sarif.py")
TIMEOUT = 120

FINDING = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|note): "
                     r"(?P<msg>.*) \[(?P<rule>ddp-[a-z0-9-]+)\]$", re.M)


def run(args, cwd=None, env=None, input=None):
    p = subprocess.run([DDPLINT] + args, cwd=cwd, env=env, input=input, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    # A crash shows as a negative return code (a signal): never acceptable.
    assert p.returncode in (0, 1, 2), f"ddplint died: rc={p.returncode}\n{p.stderr}"
    return p


def findings(text):
    return [(m["file"], int(m["line"]), m["rule"], m["sev"]) for m in FINDING.finditer(text)]


def line_of(path, needle, nth=1):
    with open(path, encoding="utf-8") as f:
        hits = [i for i, l in enumerate(f, 1) if needle in l]
    return hits[nth - 1]


class Project(unittest.TestCase):
    """A fresh copy of tests/cli/project, configured with CMake."""

    configure = True

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddplint-cli-")
        self.src = os.path.join(self.tmp, "project")
        shutil.copytree(os.path.join(HERE, "project"), self.src)
        self.build = os.path.join(self.src, "build")
        if self.configure:
            p = subprocess.run(["cmake", "-S", self.src, "-B", self.build,
                                f"-DDDPLINT_MOCK_INCLUDE={MOCK_INCLUDE}"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=TIMEOUT)
            self.assertEqual(p.returncode, 0, p.stdout)
        self.train = os.path.join(self.src, "src", "train.cpp")
        self.eval = os.path.join(self.src, "src", "eval.cpp")
        self.clean = os.path.join(self.src, "src", "clean.cpp")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, rel, text):
        path = os.path.join(self.src, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))
        return path

    def expected_train(self):
        return sorted([
            ("src/train.cpp", line_of(self.train, "Options::create()"), "ddp-init-timeout", "warning"),
            ("src/train.cpp", line_of(self.train, "pg->allreduce(metrics)"), "ddp-divergent-collective", "error"),
            ("src/train.cpp", line_of(self.train, "NOLINT(ddp-init-timeout)"), "ddp-divergent-collective", "error"),
        ])


class ExitCodes(Project):
    def test_findings_exit_1_with_clang_style_lines(self):
        p = run(["-p", self.build, self.train], cwd=self.src)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(sorted(findings(p.stdout)), self.expected_train())
        # NOLINT and NOLINTNEXTLINE hide exactly the named check.
        self.assertNotIn(f"train.cpp:{line_of(self.train, '// NOLINT(ddp-divergent')}:", p.stdout)
        self.assertNotIn(f"train.cpp:{line_of(self.train, 'pg->broadcast(t)->wait();')}:", p.stdout)
        self.assertIn("note: rank-dependent condition here", p.stdout)

    def test_clean_file_exit_0(self):
        p = run(["-p", self.build, self.clean], cwd=self.src)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(findings(p.stdout), [])

    def test_fail_on(self):
        # train.cpp has errors and a warning; with only the warning left...
        self.write(".ddplint.yaml", "checks:\n  ddp-divergent-collective: off\n")
        self.assertEqual(run(["-p", self.build, self.train, "--fail-on", "error"]).returncode, 0)
        self.assertEqual(run(["-p", self.build, self.train, "--fail-on=warning"]).returncode, 1)
        self.assertEqual(run(["-p", self.build, self.train, "--fail-on", "never"]).returncode, 0)

    def test_usage_errors_exit_2(self):
        for args in (["--format", "xml", self.train], ["--no-such-flag"], ["--jobs", "0"],
                     ["--fail-on", "fatal"], ["check-launch"]):
            p = run(args, cwd=self.src)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn("ddplint: error:", p.stderr)

    def test_whole_database_when_no_paths(self):
        p = run(["-p", self.build], cwd=self.src)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(sorted(findings(p.stdout)), self.expected_train())
        self.assertIn("3 files", p.stderr)

    def test_database_found_above_the_file(self):
        # No -p: build/compile_commands.json next to an ancestor folder is found.
        p = run([self.train], cwd=self.tmp)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(len(findings(p.stdout)), 3)

    def test_flags_after_double_dash(self):
        p = run([self.train, "--", "-std=c++17", "-isystem", MOCK_INCLUDE], cwd=self.src)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(sorted(findings(p.stdout)), self.expected_train())

    def test_folder_argument_takes_its_database_files(self):
        p = run(["-p", self.build, os.path.join(self.src, "src")], cwd=self.src)
        self.assertIn("3 files", p.stderr)


class Formats(Project):
    def test_json(self):
        p = run(["-p", self.build, self.train, "--format=json"], cwd=self.src)
        self.assertEqual(p.returncode, 1)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["version"], 2)
        got = sorted((f["file"], f["line"], f["rule"], f["severity"]) for f in doc["findings"])
        self.assertEqual(got, self.expected_train())
        timeout = [f for f in doc["findings"] if f["rule"] == "ddp-init-timeout"][0]
        self.assertEqual(timeout["fixes"][0]["replacement"], "std::chrono::seconds(1800)")
        self.assertTrue(all(f["fingerprint"] for f in doc["findings"]))
        self.assertEqual(doc["toolErrors"], [])

    def test_sarif_validates_against_the_schema(self):
        out = os.path.join(self.tmp, "ddplint.sarif")
        p = run(["-p", self.build, self.train, self.eval, "--format", "sarif", "-o", out],
                cwd=self.src)
        self.assertEqual(p.returncode, 1, p.stderr)
        with open(out, encoding="utf-8") as f:
            log = json.load(f)
        run0 = log["runs"][0]
        rule_ids = {r["id"] for r in run0["tool"]["driver"]["rules"]}
        self.assertIn("ddp-divergent-collective", rule_ids)
        self.assertIn("ddp-launch-env", rule_ids)
        results = run0["results"]
        self.assertEqual(len(results), 3)
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
        self.assertEqual(uris, {"src/train.cpp"})
        self.assertTrue(any(r.get("fixes") for r in results))
        v = subprocess.run([sys.executable, VALIDATE_SARIF, out], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=300)
        self.assertEqual(v.returncode, 0, v.stdout)

    def test_color_only_when_asked(self):
        plain = run(["-p", self.build, self.train], cwd=self.src)
        self.assertNotIn("\x1b[", plain.stdout)
        colored = run(["-p", self.build, self.train, "--color=always"], cwd=self.src)
        self.assertIn("\x1b[", colored.stdout)

    def test_progress_on_a_tty(self):
        # stderr on a pseudo-terminal: a long run shows [i/N] progress.
        master, slave = pty.openpty()
        # The line waits for a run's first second (a fast run prints nothing): see it at once.
        env = dict(os.environ, DDPLINT_PROGRESS_DELAY_MS="0")
        p = subprocess.Popen([DDPLINT, "-p", self.build], cwd=self.src, stdout=subprocess.PIPE,
                             stderr=slave, env=env)
        os.close(slave)
        seen = b""
        while True:
            r, _, _ = select.select([master], [], [], TIMEOUT)
            if not r:
                p.kill()
                self.fail("no output on the tty")
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        p.communicate(timeout=TIMEOUT)
        os.close(master)
        self.assertIn(b"[3/3]", seen)

    def test_jobs_give_the_same_report(self):
        one = run(["-p", self.build, "--jobs", "1", "--format=json"], cwd=self.src)
        two = run(["-p", self.build, "-j2", "--format=json"], cwd=self.src)
        self.assertEqual(json.loads(one.stdout)["findings"], json.loads(two.stdout)["findings"])


class Baselines(Project):
    def test_baseline_survives_line_shifts_and_new_findings_fail(self):
        base = os.path.join(self.tmp, "baseline.json")
        p = run(["-p", self.build, self.train, "--write-baseline", base], cwd=self.src)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(base, encoding="utf-8") as f:
            self.assertEqual(len(json.load(f)["findings"]), 3)
        p = run(["-p", self.build, self.train, "--baseline", base], cwd=self.src)
        self.assertEqual((p.returncode, findings(p.stdout)), (0, []), p.stdout)
        self.assertIn("3 suppressed", p.stderr)

        # Unrelated lines above every finding: still all baselined.
        with open(self.train, encoding="utf-8") as f:
            text = f.read()
        shifted = text.replace("using PG =", "// a comment\n// another one\n\nusing PG =", 1)
        # ...and a new bug below them, which must still fail the gate.
        shifted += textwrap.dedent("""
            void newBug(PG pg, std::vector<at::Tensor> &t) {
              if (pg->getRank() == 0)
                pg->barrier()->wait();
            }
            """)
        with open(self.train, "w", encoding="utf-8") as f:
            f.write(shifted)
        p = run(["-p", self.build, self.train, "--baseline", base], cwd=self.src)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertEqual(findings(p.stdout),
                         [("src/train.cpp", line_of(self.train, "pg->barrier()->wait();"),
                           "ddp-divergent-collective", "error")])

    def test_root_holds_in_every_format_and_in_baselines_from_two_folders(self):
        # The same run from the project and from a folder inside it: with
        # --root every format names files alike, and a baseline written in one
        # place holds in the other.
        where = [self.src, os.path.join(self.src, "src"), self.tmp]
        common = ["-p", self.build, self.train, "--root", self.src]
        for fmt in ("text", "json", "sarif"):
            outs = []
            for cwd in where:
                p = run(common + ["--format", fmt], cwd=cwd)
                self.assertEqual(p.returncode, 1, p.stderr)
                if fmt == "json":
                    outs.append([(f["file"], [n["file"] for n in f["notes"]])
                                 for f in json.loads(p.stdout)["findings"]])
                elif fmt == "sarif":
                    outs.append([r["locations"] for r in json.loads(p.stdout)["runs"][0]["results"]])
                else:
                    outs.append(p.stdout)
            with self.subTest(fmt=fmt):
                self.assertEqual(outs[0], outs[1])
                self.assertEqual(outs[0], outs[2])
        self.assertEqual(findings(run(common, cwd=self.tmp).stdout), self.expected_train())
        base = os.path.join(self.tmp, "baseline.json")
        p = run(common + ["--write-baseline", base], cwd=os.path.join(self.src, "src"))
        self.assertEqual(p.returncode, 0, p.stderr)
        for cwd in where:
            p = run(common + ["--baseline", base], cwd=cwd)
            self.assertEqual((p.returncode, findings(p.stdout)), (0, []), (cwd, p.stdout))
            self.assertIn("3 suppressed", p.stderr)

    def test_malformed_baseline_is_an_error(self):
        base = self.write("bad-baseline.json", '{"version": 1,\n  "findings": [ {"rule": 3} ]\n}\n')
        p = run(["-p", self.build, self.train, "--baseline", base], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        self.assertRegex(p.stderr, r"bad-baseline\.json:2:\d+: error:")
        self.assertIn("not linting", p.stderr)  # found before any parsing
        self.assertEqual(findings(p.stdout), [])
        broken = self.write("broken.json", '{"version": 1, "findings": [\n')
        p = run(["-p", self.build, self.train, "--baseline", broken], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        self.assertRegex(p.stderr, r"broken\.json:\d+:\d+: error:")


class Configs(Project):
    def test_wrappers_reach_the_checks(self):
        p = run(["-p", self.build, self.eval], cwd=self.src)
        self.assertEqual(p.returncode, 0, p.stdout)  # dist::get_rank is unknown by default
        self.write(".ddplint.yaml", """\
            version: 1
            wrappers:
              rank_sources: [dist::get_rank]
            """)
        p = run(["-p", self.build, self.eval], cwd=self.src)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(findings(p.stdout),
                         [("src/eval.cpp", line_of(self.eval, "pg->allreduce(t)"),
                           "ddp-divergent-collective", "error")])

    def test_severities_checks_and_excludes(self):
        self.write(".ddplint.yaml", """\
            checks:
              ddp-divergent-collective: off
              ddp-init-timeout: error
            """)
        p = run(["-p", self.build, self.train], cwd=self.src)
        self.assertEqual(findings(p.stdout),
                         [("src/train.cpp", line_of(self.train, "Options::create()"),
                           "ddp-init-timeout", "error")])
        self.write(".ddplint.yaml", "exclude: ['src/train.cpp']\n")
        p = run(["-p", self.build], cwd=self.src)
        self.assertNotIn("train.cpp", p.stdout)
        self.assertIn("2 files", p.stderr)

    def test_nearest_config_wins(self):
        self.write(".ddplint.yaml", "checks:\n  ddp-init-timeout: off\n")
        self.write("src/.ddplint.yaml", "checks:\n  ddp-divergent-collective: off\n")
        p = run(["-p", self.build, self.train], cwd=self.src)
        self.assertEqual([r for _, _, r, _ in findings(p.stdout)], ["ddp-init-timeout"])

    def test_schema_errors_name_file_line_col(self):
        cases = {
            "checks:\n  ddp-no-such-check: error\n": r"\.ddplint\.yaml:2:3: error: unknown check 'ddp-no-such-check'",
            "checks:\n  ddp-init-timeout: loud\n": r"\.ddplint\.yaml:2:21: error: 'loud' is not a severity",
            "wrappers:\n  rank_source: [f]\n": r"\.ddplint\.yaml:2:3: error: unknown wrapper kind 'rank_source'",
            "verison: 1\n": r"\.ddplint\.yaml:1:1: error: unknown key 'verison'",
            "checks: [\n  a\n": r"\.ddplint\.yaml:\d+:\d+: error: malformed YAML",
            "options:\n  ddp-init-timeout.Timeout: 3\n": r"\.ddplint\.yaml:2:3: error: unknown option 'ddp-init-timeout.Timeout'",
        }
        for text, pattern in cases.items():
            self.write(".ddplint.yaml", text)
            p = run(["-p", self.build, self.train], cwd=self.src)
            self.assertEqual(p.returncode, 2, text)
            self.assertRegex(p.stderr, pattern)
            self.assertEqual(findings(p.stdout), [], "no lint with a broken config")

    def test_options_reach_the_fix(self):
        self.write(".ddplint.yaml", "options:\n  ddp-init-timeout.DefaultTimeoutSeconds: 120\n")
        p = run(["-p", self.build, self.train, "--format=json"], cwd=self.src)
        fix = [f for f in json.loads(p.stdout)["findings"] if f["rule"] == "ddp-init-timeout"][0]
        self.assertEqual(fix["fixes"][0]["replacement"], "std::chrono::seconds(120)")


class Fixes(Project):
    def test_fix_applies_the_fix_its(self):
        p = run(["-p", self.build, self.train, "--fix"], cwd=self.src)
        self.assertEqual(p.returncode, 1)
        self.assertIn("applied 1 fix-it", p.stderr)
        with open(self.train, encoding="utf-8") as f:
            self.assertIn("Options::create(std::chrono::seconds(1800));", f.read())
        p = run(["-p", self.build, self.train], cwd=self.src)
        self.assertNotIn("ddp-init-timeout", [r for _, _, r, _ in findings(p.stdout)])


class BadInputs(Project):
    def test_missing_compile_database(self):
        shutil.rmtree(self.build)
        p = run([self.train], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        self.assertIn("train.cpp: error: no compilation database", p.stderr + p.stdout)
        self.assertIn("-p BUILD_DIR", p.stderr + p.stdout)
        p = run(["-p", os.path.join(self.tmp, "nowhere"), self.train], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        self.assertIn("compile_commands.json", p.stdout + p.stderr)

    def test_malformed_compile_database(self):
        with open(os.path.join(self.build, "compile_commands.json"), "w") as f:
            f.write('[{"directory": "/x", "file": ')
        p = run(["-p", self.build, self.train], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        self.assertRegex(p.stdout + p.stderr, r"compile_commands\.json: error: cannot read the compilation database")

    def test_stale_database_entry(self):
        db_path = os.path.join(self.build, "compile_commands.json")
        with open(db_path, encoding="utf-8") as f:
            db = json.load(f)
        gone = dict(db[0])
        gone["file"] = os.path.join(self.src, "src", "gone.cpp")
        gone.pop("output", None)
        gone["command"] = gone["command"].replace(os.path.basename(db[0]["file"]), "gone.cpp")
        db.append(gone)
        with open(db_path, "w", encoding="utf-8") as f:
            json.dump(db, f)
        p = run(["-p", self.build], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        out = p.stdout + p.stderr
        self.assertEqual(out.count("gone.cpp"), 1, out)  # one clear error, not Clang's three
        self.assertIn("src/gone.cpp: error: listed in the compilation database but does not exist", out)
        self.assertEqual(sorted(findings(p.stdout)), self.expected_train())

    def test_database_entry_in_a_directory_that_is_gone(self):
        # A database generated on another machine, or its build folder
        # removed: Clang's tool would abort the whole process on entering it.
        db_path = os.path.join(self.build, "compile_commands.json")
        with open(db_path, encoding="utf-8") as f:
            db = json.load(f)
        for entry in db:
            entry["directory"] = os.path.join(self.tmp, "gone-build")
        with open(db_path, "w", encoding="utf-8") as f:
            json.dump(db, f)
        p = run(["-p", self.build, self.train], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        out = p.stdout + p.stderr
        self.assertNotIn("crashed", out)
        self.assertNotIn("LLVM ERROR", out)
        self.assertIn("train.cpp: error: the compilation database runs this file's compile command in", out)
        self.assertIn("gone-build", out)

    def test_translation_unit_that_does_not_compile_keeps_its_findings(self):
        with open(self.train, "a", encoding="utf-8") as f:
            f.write("\nvoid broken() { int x = ; }\n")
        p = run(["-p", self.build, self.train], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        err_line = line_of(self.train, "void broken()")
        self.assertRegex(p.stdout + p.stderr, rf"src/train\.cpp:{err_line}:\d+: error: expected expression")
        # The findings that could still be made are there.
        self.assertEqual(sorted(findings(p.stdout)), self.expected_train())

    def test_missing_and_binary_files(self):
        blob = os.path.join(self.src, "src", "weights.bin")
        with open(blob, "wb") as f:
            f.write(b"\x7fELF\x00\x01\x02" * 100)
        missing = os.path.join(self.src, "src", "nope.cpp")
        p = run(["-p", self.build, missing, blob, self.train], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        out = p.stdout + p.stderr
        self.assertIn("src/nope.cpp: error: no such file or directory", out)
        self.assertIn("src/weights.bin: error: binary file", out)
        self.assertEqual(sorted(findings(p.stdout)), self.expected_train())


class UnseenCode(unittest.TestCase):
    """What a program nobody here wrote does differently from the fixtures:
    C instead of C++, LibTorch on -I, a program that is not distributed."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddplint-unseen-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))
        return path

    def test_c_unit_is_analysed(self):
        src = self.write("ring.c", """\
            #include <mpi.h>
            void f(void) {
              int rank;
              MPI_Comm_rank(MPI_COMM_WORLD, &rank);
              if (rank == 0)
                MPI_Barrier(MPI_COMM_WORLD);
            }
            """)
        p = run([src, "--", "-xc", "-std=c11", "-isystem", MOCK_INCLUDE], cwd=self.tmp)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual([(f[1], f[2]) for f in findings(p.stdout)], [(6, "ddp-divergent-collective")])
        self.assertIn("1 file analyzed", p.stderr)

    def test_unit_no_check_applies_to_is_skipped_not_clean(self):
        src = self.write("plain.c", "int main(void) { return 0; }\n")
        cfg = self.write(".ddplint.yaml", """\
            version: 1
            checks:
              ddp-divergent-collective: off
              ddp-error-path-exit: off
              ddp-unguarded-save: off
              ddp-rank0-io-barrier: off
            """)
        p = run([src, "--", "-xc"], cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("skipped plain.c: no enabled check applies to C", p.stderr)
        self.assertIn("0 files analyzed, 1 skipped", p.stderr)
        os.remove(cfg)
        p = run([src, "--format", "json", "--", "-xc"], cwd=self.tmp)
        self.assertEqual(json.loads(p.stdout)["summary"]["filesAnalyzed"], 1)

    def test_excluded_file_named_on_the_command_line_is_reported(self):
        src = self.write("gen.cpp", "int g() { return 0; }\n")
        self.write(".ddplint.yaml", "version: 1\nexclude: [gen.cpp]\n")
        p = run([src, "--", "-std=c++17"], cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stderr, r"skipped gen\.cpp: excluded by .*\.ddplint\.yaml")

    def test_single_process_program_saves_where_it_likes(self):
        src = self.write("dcgan.cpp", """\
            #include <torch/torch.h>
            int main() {
              torch::nn::Linear model(4, 2);
              for (int epoch = 0; epoch < 3; ++epoch)
                torch::save(model, "checkpoint.pt");
            }
            """)
        p = run([src, "--", "-std=c++17", "-isystem", MOCK_INCLUDE], cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(findings(p.stdout), [])

    @unittest.skipUnless(os.path.exists("/usr/include/torch/csrc/api/include/torch/torch.h"),
                         "needs libtorch-dev (scripts/setup.sh installs it)")
    def test_torch_on_dash_I_no_crash_no_library_finding(self):
        src = self.write("train.cpp", """\
            #include <torch/torch.h>
            #include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
            #include <torch/csrc/distributed/c10d/FileStore.hpp>
            void train(int world) {
              auto store = c10::make_intrusive<c10d::FileStore>("/tmp/s", world);
              const int rank = std::stoi(std::getenv("RANK"));
              auto opts = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(30));
              auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, opts);
              std::vector<at::Tensor> t{torch::zeros({4})};
              if (rank == 0)
                pg->allreduce(t)->wait();
            }
            """)
        flags = ["-std=c++17", "-I/usr/include/torch/csrc/api/include", "-D_GLIBCXX_USE_CXX11_ABI=1",
                 "-DUSE_C10D_GLOO"]
        p = subprocess.run([DDPLINT, src, "--"] + flags, cwd=self.tmp, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        self.assertNotIn("crashed", p.stdout + p.stderr)
        # One finding, in the user's file; nothing inside torch's headers.
        self.assertEqual([(os.path.basename(f[0]), f[1], f[2]) for f in findings(p.stdout)],
                         [("train.cpp", 11, "ddp-divergent-collective")])


CLANG_TIDY = os.environ.get("DDPLINT_CLANG_TIDY", shutil.which("clang-tidy-19") or "clang-tidy")
PLUGIN = os.environ.get("DDPLINT_PLUGIN", os.path.join(REPO, "build", "lib", "ddplint-tidy.so"))

ACROSS_UNITS = {
    "src/comm.h": """\
        #pragma once
        #include <mpi.h>
        int world_rank(void);
        bool is_main(void);
        void sync_all(void);
        void save_on_main(const float *w, int n);
        void log_line(const char *s);
        template <typename T> void reduce_stats(T *v, int n, int rank);
        """,
    "src/comm.cc": """\
        #include "comm.h"
        #include <cstdio>

        int world_rank(void) {
          int r = 0;
          MPI_Comm_rank(MPI_COMM_WORLD, &r);
          return r;
        }

        bool is_main(void) { return world_rank() == 0; }

        void sync_all(void) { MPI_Barrier(MPI_COMM_WORLD); }

        void log_line(const char *s) { std::puts(s); }

        static void write_file(const char *path, const float *w, int n) {
          FILE *f = std::fopen(path, "wb");
          std::fwrite(w, sizeof(float), n, f);
          std::fclose(f);
        }

        void save_on_main(const float *w, int n) {
          if (is_main())
            write_file("ckpt.bin", w, n);
        }

        // Declared in the header, defined here, instantiated only here.
        template <typename T> void reduce_stats(T *v, int n, int rank) {
          if (rank == 0)
            MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        template void reduce_stats<float>(float *, int, int);
        """,
    "src/train.cc": """\
        #include "comm.h"

        int main(int argc, char **argv) {
          MPI_Init(&argc, &argv);
          float w[16] = {0};
          for (int epoch = 0; epoch < 10; ++epoch) {
            MPI_Allreduce(MPI_IN_PLACE, w, 16, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            if (is_main())
              sync_all();            // BUG: a barrier only rank 0 reaches
            save_on_main(w, 16);     // BUG: rank 0 writes while the others go on to the next allreduce
            if (is_main())
              log_line("epoch done"); // fine: no collective, no file
          }
          sync_all();                // fine: every rank
          MPI_Finalize();
          return 0;
        }
        """,
}


class AcrossUnits(unittest.TestCase):
    """Summaries across translation units (issue 16): helpers defined in
    another .cc of the database are followed, in a whole run, a one-file run,
    the clang-tidy plugin; a stale summary is said, never read as current."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddplint-xtu-")
        self.cache = os.path.join(self.tmp, "cache")
        for rel, text in ACROSS_UNITS.items():
            path = os.path.join(self.tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(textwrap.dedent(text))
        db = [{"directory": self.tmp, "file": f"src/{u}",
               "arguments": ["clang++", "-std=c++17", "-isystem", MOCK_INCLUDE, "-c", f"src/{u}"]}
              for u in ("comm.cc", "train.cc")]
        with open(os.path.join(self.tmp, "compile_commands.json"), "w") as f:
            json.dump(db, f)
        self.train = os.path.join(self.tmp, "src", "train.cc")
        self.comm = os.path.join(self.tmp, "src", "comm.cc")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def lint(self, *args):
        return run(["--cache-dir", self.cache, "-p", self.tmp, "--format", "json"] + list(args),
                   cwd=self.tmp)

    def expected(self):
        return sorted([
            ("src/comm.cc", line_of(self.comm, "MPI_Allreduce"), "ddp-divergent-collective"),
            ("src/train.cc", line_of(self.train, "sync_all();            // BUG"), "ddp-divergent-collective"),
            ("src/train.cc", line_of(self.train, "save_on_main(w, 16)"), "ddp-rank0-io-barrier"),
        ])

    @staticmethod
    def got(p):
        return sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])

    def test_helpers_in_another_unit_are_followed(self):
        p = self.lint()
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(self.got(p), self.expected())
        by_line = {(f["file"], f["line"]): f for f in json.loads(p.stdout)["findings"]}
        # is_main() in comm.cc is a rank predicate here: the message says so.
        sync = by_line[("src/train.cc", line_of(self.train, "sync_all();            // BUG"))]
        self.assertIn("'is_main()'", sync["message"])
        # The rank-0 write inside save_on_main: at the call, a note at the write's block.
        save = by_line[("src/train.cc", line_of(self.train, "save_on_main(w, 16)"))]
        self.assertIn("in 'save_on_main' (defined in comm.cc), reached from this call", save["message"])
        self.assertIn(("src/comm.cc", line_of(self.comm, "if (is_main())")),
                      [(n["file"], n["line"]) for n in save.get("notes", [])])
        # A cold run (summaries made in the run) and a warm one agree.
        self.assertEqual(self.got(self.lint()), self.expected())

    def test_one_file_run_uses_the_stored_summaries(self):
        self.lint()
        p = self.lint(self.train)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(self.got(p), [e for e in self.expected() if e[0] == "src/train.cc"])
        # The helper file alone: only its own finding (the callers' hazards are theirs).
        self.assertEqual(self.got(self.lint(self.comm)),
                         [e for e in self.expected() if e[0] == "src/comm.cc"])

    def test_a_stale_summary_is_said_and_not_read(self):
        self.lint()
        with open(self.comm, "a") as f:
            f.write("// edited after the summaries were stored\n")
        p = self.lint(self.train)
        doc = json.loads(p.stdout)
        self.assertEqual([f for f in doc["findings"] if f["file"] == "src/train.cc"], [], p.stdout)
        limits = doc.get("analysisLimits", [])
        self.assertTrue(any("out of date" in l["message"] and "comm.cc" in l["message"] for l in limits),
                        limits)
        # The run over the whole database refreshes it.
        self.assertEqual(self.got(self.lint()), self.expected())
        self.assertEqual(json.loads(self.lint(self.train).stdout).get("analysisLimits", []), [])

    def test_corrupt_summaries_are_made_again(self):
        self.lint()
        folder = os.path.join(self.cache, "summaries")
        names = os.listdir(folder)
        self.assertEqual(len(names), 2, names)
        for n in names:
            with open(os.path.join(folder, n), "w") as f:
                f.write("12:not a summary")
        p = self.lint()
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(self.got(p), self.expected())

    def test_clang_tidy_plugin_reads_the_stored_summaries(self):
        if not os.path.exists(PLUGIN):
            self.skipTest("the plugin is not built")
        self.lint()
        env = dict(os.environ, DDPLINT_CACHE_DIR=self.cache)
        p = subprocess.run([CLANG_TIDY, f"--load={PLUGIN}", "--checks=-*,ddp-*", "-p", self.tmp,
                            self.train], cwd=self.tmp, env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
        line = line_of(self.train, "sync_all();            // BUG")
        self.assertRegex(p.stdout, rf"train\.cc:{line}:\d+: warning: call to 'sync_all'.*is_main\(\)")
        self.assertRegex(p.stdout, r"comm\.cc:\d+:\d+: note: the code it is about, in 'save_on_main'")


RANK_GLOBAL_UNITS = {
    "main.c": """\
        #include <mpi.h>
        #include "amr.h"

        int my_pe, num_pes;

        int main(int argc, char **argv) {
          MPI_Init(&argc, &argv);
          MPI_Comm_rank(MPI_COMM_WORLD, &my_pe);
          MPI_Comm_size(MPI_COMM_WORLD, &num_pes);
          work();
          MPI_Finalize();
          return 0;
        }
        """,
    "amr.h": """\
        extern int my_pe, num_pes;
        void work(void);
        """,
    "work.c": """\
        #include <mpi.h>
        #include "amr.h"

        void work(void) {
          int x = 1, y = 0;
          if (!my_pe)   /* BUG: rank 0 alone */
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
          if (num_pes > 1)   /* fine: the world size, alike everywhere */
            MPI_Barrier(MPI_COMM_WORLD);
        }
        """,
}


class RankGlobalAcrossUnits(unittest.TestCase):
    """A rank kept in a global that another unit sets (miniAMR's `my_pe`,
    MPI_Comm_rank'd in main.c, tested in every other .c): the summary of the
    unit that writes it says so, and the units that read it see the rank, in
    a whole run (linted again once the summary is made) and in a one-file run
    on the stored summaries."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddplint-rankglobal-")
        self.cache = os.path.join(self.tmp, "cache")
        for rel, text in RANK_GLOBAL_UNITS.items():
            with open(os.path.join(self.tmp, rel), "w", encoding="utf-8") as f:
                f.write(textwrap.dedent(text))
        db = [{"directory": self.tmp, "file": u,
               "arguments": ["clang", "-isystem", MOCK_INCLUDE, "-c", u]} for u in ("main.c", "work.c")]
        with open(os.path.join(self.tmp, "compile_commands.json"), "w") as f:
            json.dump(db, f)
        self.work = os.path.join(self.tmp, "work.c")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def lint(self, *args):
        return run(["--cache-dir", self.cache, "-p", self.tmp, "--format", "json"] + list(args),
                   cwd=self.tmp)

    def test_a_rank_global_of_another_unit_is_the_rank(self):
        want = [("work.c", line_of(self.work, "MPI_Allreduce"), "ddp-divergent-collective")]
        p = self.lint()
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        self.assertEqual(got, want)
        p = self.lint(self.work)
        got = sorted((f["file"], f["line"], f["rule"]) for f in json.loads(p.stdout)["findings"])
        self.assertEqual(got, want, p.stdout)


class Rules(unittest.TestCase):
    def test_decision_table(self):
        ids = subprocess.run([os.path.join(os.path.dirname(DDPLINT), "..", "internal",
                                           "ddplint-gen-catalog"),
                              os.path.join(REPO, "rules", "catalog.yaml"),
                              os.path.join(REPO, "rules", "api.yaml"), "--ids"],
                             stdout=subprocess.PIPE, text=True, check=True).stdout.split()
        md = run(["rules", "--format", "markdown"])
        self.assertEqual(md.returncode, 0)
        self.assertIn("| rule | severity | trigger | root cause | guardrail | fix | harness scenario |",
                      md.stdout)
        rows = [l for l in md.stdout.splitlines() if l.startswith("| `ddp-")]
        self.assertEqual([re.match(r"\| `([^`]+)`", r).group(1) for r in rows], ids)
        self.assertIn("`rank0-only-collective`", md.stdout)
        js = json.loads(run(["rules", "--format=json"]).stdout)
        self.assertEqual([r["id"] for r in js["rules"]], ids)
        text = run(["rules"]).stdout
        self.assertIn("root cause:", text)


class CheckLaunch(Project):
    configure = False

    def test_findings_and_hard_negatives(self):
        bad = self.write("launch/job.yaml", """\
            apiVersion: batch/v1
            kind: Job
            metadata:
              name: train
            spec:
              template:
                spec:
                  containers:
                    - name: trainer
                      image: trainer:1
                      command: ["torchrun", "--nproc-per-node", "8", "train.py"]
                      env:
                        - name: NCCL_ASYNC_ERROR_HANDLING
                          value: "0"
                      resources:
                        limits:
                          nvidia.com/gpu: 8
            """)
        good = self.write("launch/run.sh", """\
            #!/bin/bash
            export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
            export PYTHONFAULTHANDLER=1
            torchrun --nproc-per-node 8 train.py
            """)
        # Not a torch job: an etcd container is nobody's NCCL launch.
        other = self.write("launch/etcd.yaml", """\
            apiVersion: v1
            kind: Pod
            metadata:
              name: etcd
            spec:
              containers:
                - name: etcd
                  image: quay.io/coreos/etcd:v3.5
            """)
        p = run(["check-launch", bad, good, other], cwd=self.src)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        got = findings(p.stdout)
        self.assertTrue(got and all(f == "launch/job.yaml" and r == "ddp-launch-env"
                                    for f, _, r, _ in got), p.stdout)
        # The hazard (async error handling off) is the warning; the missing
        # faulthandler is a policy note.
        self.assertIn(("launch/job.yaml", 13, "ddp-launch-env", "warning"), got)
        self.assertIn("turns NCCL async error handling off", p.stdout)
        self.assertIn(("launch/job.yaml", 9, "ddp-launch-env", "note"), got)
        self.assertIn("PYTHONFAULTHANDLER", p.stdout)
        self.assertEqual(run(["check-launch", good, other], cwd=self.src).returncode, 0)

    def test_version_from_config(self):
        script = self.write("launch/old.sh", """\
            #!/bin/bash
            export NCCL_ASYNC_ERROR_HANDLING=1
            export PYTHONFAULTHANDLER=1
            torchrun train.py
            """)
        # No version: 2.2 or newer is assumed, where the old name is deprecated (a note).
        p = run(["check-launch", "--fail-on", "note", script], cwd=self.src)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("deprecated", p.stdout)
        self.assertIn("assumed", p.stdout)
        self.write(".ddplint.yaml", "launch:\n  torch_version: '1.13'\n")
        p = run(["check-launch", "--fail-on", "note", script], cwd=self.src)
        self.assertEqual(p.returncode, 0, p.stdout)
        p = run(["check-launch", "--fail-on", "note", "--torch-version", "2.4", script], cwd=self.src)
        self.assertEqual(p.returncode, 1, p.stdout)

    def test_malformed_yaml(self):
        bad = self.write("launch/broken.yaml", "apiVersion: v1\nkind: Pod\nspec: [\n")
        p = run(["check-launch", bad], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        self.assertRegex(p.stdout + p.stderr, r"launch/broken\.yaml:\d+:\d+: error:")

    def test_missing_and_binary_launch_files_keep_the_other_findings(self):
        blob = os.path.join(self.src, "launch", "image.yaml")
        os.makedirs(os.path.dirname(blob), exist_ok=True)
        with open(blob, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n\x00\x00" * 50)
        script = self.write("launch/run.sh", "#!/bin/bash\ntorchrun train.py\n")
        p = run(["check-launch", os.path.join(self.src, "launch", "nope.yaml"), blob, script],
                cwd=self.src)
        self.assertEqual(p.returncode, 2)
        out = p.stdout + p.stderr
        self.assertIn("launch/nope.yaml", out)
        self.assertIn("launch/image.yaml", out)
        self.assertEqual({(f, l) for f, l, _, _ in findings(p.stdout)}, {("launch/run.sh", 2)})


class PreCommit(Project):
    """The hook of .pre-commit-hooks.yaml, run by the real pre-commit."""

    def test_hook_lints_only_staged_files(self):
        if shutil.which("pre-commit") is None:
            self.fail("pre-commit is not installed (scripts/setup.sh installs it)")
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(os.path.abspath(DDPLINT)) + os.pathsep + env["PATH"]
        env["PRE_COMMIT_HOME"] = os.path.join(self.tmp, "pre-commit-home")
        env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
        git = lambda *a: subprocess.run(["git", *a], cwd=self.src, env=env, check=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        timeout=TIMEOUT)
        git("init", "-q")
        with open(os.path.join(self.src, ".gitignore"), "w") as f:
            f.write("build/\n")
        self.write(".pre-commit-config.yaml", f"""\
            repos:
              - repo: {REPO}
                rev: HEAD
                hooks:
                  - id: ddplint
                    args: [-p, build]
            """)
        git("add", ".gitignore", ".pre-commit-config.yaml", "src/clean.cpp")
        # Only the clean file is staged: the hook passes although train.cpp has bugs.
        p = subprocess.run(["pre-commit", "try-repo", REPO, "ddplint", "--verbose"],
                           cwd=self.src, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("Passed", p.stdout)
        git("add", "src/train.cpp")
        p = subprocess.run(["pre-commit", "try-repo", REPO, "ddplint", "--verbose"],
                           cwd=self.src, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=300)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("Failed", p.stdout)
        self.assertIn("[ddp-divergent-collective]", p.stdout)
        self.assertNotIn("clean.cpp:", p.stdout)


def tty_stderr(args, cwd, env):
    """Runs ddplint with stderr on a pseudo-terminal; returns what it wrote there."""
    master, slave = pty.openpty()
    p = subprocess.Popen([DDPLINT] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        r, _, _ = select.select([master], [], [], TIMEOUT)
        if not r:
            p.kill()
            raise AssertionError("ddplint did not finish")
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    p.communicate(timeout=TIMEOUT)
    os.close(master)
    return seen


class Cache(Project):
    """Shared precompiled preambles and their cache (issue 10): the same report
    with no preamble, no cache, a cold and a warm cache; stale, corrupt and
    unwritable caches; flags from .ddplint.yaml when there is no database."""

    def setUp(self):
        super().setUp()
        self.cache = os.path.join(self.tmp, "cache")
        # A user header included at the top of a unit: inside its preamble, so
        # inside the PCH.  Its finding must survive.
        self.write("src/helpers.h", """\
            #pragma once
            #include <torch/torch.h>
            #include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
            #include <vector>
            inline void sync_metrics(c10::intrusive_ptr<c10d::ProcessGroup> pg,
                                     std::vector<at::Tensor> &m) {
              if (pg->getRank() == 0)
                pg->allreduce(m)->wait();
            }
            """)
        self.write("src/uses_helpers.cpp", """\
            // A unit whose preamble holds a user header with a finding.
            #include "helpers.h"

            void step(c10::intrusive_ptr<c10d::ProcessGroup> pg, std::vector<at::Tensor> &m) {
              sync_metrics(pg, m);
              if (pg->getRank() == 1)
                pg->barrier()->wait();
            }
            """)
        # A check macro #defined at the top of a unit is inside its preamble:
        # the notes "expanded from macro" must name the unit, as a whole parse does.
        self.write("src/macro_top.cpp", """\
            #include <torch/torch.h>
            #include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
            #include <vector>
            #define SYNC_IF_MAIN(pg, m) do { if ((pg)->getRank() == 0) (pg)->allreduce(m)->wait(); } while (0)

            void step2(c10::intrusive_ptr<c10d::ProcessGroup> pg, std::vector<at::Tensor> &m) {
              SYNC_IF_MAIN(pg, m);
            }
            """)
        self.units = [self.train, self.eval, self.clean,
                      os.path.join(self.src, "src", "uses_helpers.cpp"),
                      os.path.join(self.src, "src", "macro_top.cpp")]

    def lint(self, *extra, cache=True):
        args = ["-p", self.build, "--format", "json", "-v", "-j2", *self.units, *extra]
        if cache:
            args += ["--cache-dir", self.cache]
        p = run(args, cwd=self.src)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        return json.loads(p.stdout), p.stderr

    def report(self, out):
        # Everything a user sees: rule, severity, message, position, notes, fix-its.
        return out["findings"], out["toolErrors"], out["summary"]

    def test_no_preamble_no_cache_cold_and_warm_give_the_same_report(self):
        whole, _ = self.lint("--no-preamble", cache=False)
        nocache, err = self.lint("--no-cache")
        self.assertIn("not kept (--no-cache)", err)
        self.assertFalse(os.path.exists(self.cache))
        cold, err = self.lint()
        self.assertRegex(err, r"preambles: 0 reused .*, [1-9]\d* built")
        warm, err = self.lint()
        self.assertRegex(err, r"preambles: [1-9]\d* reused .*, 0 built, 0 rebuilt")
        self.assertEqual(self.report(whole), self.report(nocache))
        self.assertEqual(self.report(whole), self.report(cold))
        self.assertEqual(self.report(whole), self.report(warm))
        # The finding inside the user header of the preamble is there, once.
        in_header = [f for f in warm["findings"] if f["file"].endswith("helpers.h")]
        self.assertEqual([(f["line"], f["rule"]) for f in in_header], [(8, "ddp-divergent-collective")])
        # and the fixtures' own findings, fix-its included.
        self.assertTrue(any(f["fixes"] for f in warm["findings"]))
        # Notes inside the preamble's macro name the unit, with a line.
        macro = [f for f in warm["findings"] if f["file"].endswith("macro_top.cpp")]
        self.assertEqual(len(macro), 1, warm["findings"])
        self.assertTrue(macro[0]["notes"], macro[0])
        for n in macro[0]["notes"]:
            self.assertTrue(n["file"].endswith("macro_top.cpp") and n["line"] >= 1, n)

    def test_a_header_change_inside_the_preamble_is_seen_by_the_next_run(self):
        cold, _ = self.lint()
        self.assertTrue(any(f["file"].endswith("helpers.h") for f in cold["findings"]))
        # Fix the bug in the header: same size, so only the contents and mtime differ.
        path = os.path.join(self.src, "src", "helpers.h")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fixed = text.replace("if (pg->getRank() == 0)", "if (pg->getSize() >= 0)")
        self.assertEqual(len(fixed), len(text))
        with open(path, "w", encoding="utf-8") as f:
            f.write(fixed)
        st = os.stat(path)
        os.utime(path, (st.st_atime, st.st_mtime + 5))  # a different second, whatever the clock
        after, err = self.lint()
        self.assertRegex(err, r"[1-9]\d* rebuilt")
        self.assertFalse(any(f["file"].endswith("helpers.h") for f in after["findings"]),
                         after["findings"])
        whole, _ = self.lint("--no-preamble", cache=False)
        self.assertEqual(self.report(whole), self.report(after))

    def test_corrupt_and_truncated_entries_are_rebuilt_not_trusted(self):
        cold, _ = self.lint()
        pchs = sorted(f for f in os.listdir(self.cache) if f.endswith(".pch"))
        metas = sorted(f for f in os.listdir(self.cache) if f.endswith(".meta"))
        self.assertTrue(pchs and len(pchs) == len(metas), os.listdir(self.cache))
        # A PCH cut short, a PCH with flipped bytes, a manifest cut short.
        with open(os.path.join(self.cache, pchs[0]), "r+b") as f:
            f.truncate(4096)
        if len(pchs) > 1:
            with open(os.path.join(self.cache, pchs[1]), "r+b") as f:
                f.seek(100000)
                f.write(b"\xff" * 64)
        with open(os.path.join(self.cache, metas[-1]), "r+b") as f:
            f.truncate(50)
        after, err = self.lint()
        self.assertRegex(err, r"[1-9]\d* rebuilt")
        self.assertEqual(self.report(cold), self.report(after))
        again, err = self.lint()
        self.assertRegex(err, r"0 built, 0 rebuilt")
        self.assertEqual(self.report(cold), self.report(again))

    def test_unwritable_cache_folder_is_a_warning_and_the_run_goes_on(self):
        whole, _ = self.lint("--no-preamble", cache=False)
        blocker = os.path.join(self.tmp, "a-file")
        with open(blocker, "w") as f:
            f.write("x")
        p = run(["-p", self.build, "--format", "json", *self.units, "--cache-dir",
                 os.path.join(blocker, "cache")], cwd=self.src)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("warning: cannot create the cache folder", p.stderr)
        self.assertEqual(self.report(whole), self.report(json.loads(p.stdout)))

    def test_cache_stats_and_clear(self):
        self.lint()
        foreign = os.path.join(self.cache, "notes.txt")
        with open(foreign, "w") as f:
            f.write("not ddplint's")
        p = run(["cache", "stats", "--cache-dir", self.cache], cwd=self.src)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"preambles:\s+[1-9]")
        self.assertRegex(p.stdout, r"summaries:\s+[1-9]")
        self.assertIn(self.cache, p.stdout)
        p = run(["cache", "clear", "--cache-dir", self.cache], cwd=self.src)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"removed [1-9]\d* file")
        self.assertEqual(os.listdir(self.cache), ["notes.txt"])  # only its own files
        p = run(["cache", "stats", "--cache-dir", self.cache], cwd=self.src)
        self.assertRegex(p.stdout, r"preambles:\s+0")
        self.assertRegex(p.stdout, r"summaries:\s+0")
        p = run(["cache", "nonsense"], cwd=self.src)
        self.assertEqual(p.returncode, 2)

    def test_cache_folder_from_config_and_xdg(self):
        self.write(".ddplint.yaml", "version: 1\ncache: .ddplint-cache\n")
        p = run(["-p", self.build, self.train, "-v"], cwd=self.src)
        self.assertIn(os.path.join(self.src, ".ddplint-cache"), p.stderr)
        self.assertTrue(any(f.endswith(".pch") for f in os.listdir(os.path.join(self.src, ".ddplint-cache"))))
        self.write(".ddplint.yaml", "version: 1\ncache: off\n")
        p = run(["-p", self.build, self.train, "-v"], cwd=self.src)
        self.assertIn("not kept (--no-cache)", p.stderr)
        os.remove(os.path.join(self.src, ".ddplint.yaml"))
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(self.tmp, "xdg"))
        p = run(["-p", self.build, self.train, "-v"], cwd=self.src, env=env)
        self.assertIn(os.path.join(self.tmp, "xdg", "ddplint"), p.stderr)
        self.write(".ddplint.yaml", "version: 1\ncache: {size: 3}\n")
        p = run(["-p", self.build, self.train], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        self.assertRegex(p.stderr, r"\.ddplint\.yaml:2:\d+: error: unknown key 'cache\.size'")

    def test_flags_from_config_when_there_is_no_database(self):
        expected = findings(run(["-p", self.build, self.train], cwd=self.src).stdout)
        shutil.rmtree(self.build)  # a fresh clone: no build folder
        p = run([self.train], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        lines = [l for l in (p.stdout + p.stderr).splitlines() if "no compilation database" in l]
        self.assertEqual(len(lines), 1, p.stdout + p.stderr)
        self.assertIn("flags: in .ddplint.yaml", lines[0])
        self.write(".ddplint.yaml", f"""\
            version: 1
            flags: [-std=c++17, -isystem, {MOCK_INCLUDE}]
            """)
        p = run([self.train, "--cache-dir", self.cache], cwd=self.src)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(findings(p.stdout), expected)

    def test_version_macros_inside_the_preamble(self):
        # <torch/version.h> comes in through the PCH: no MacroDefined callback,
        # yet ddp-async-error-handling must know it is LibTorch 1.13.
        src = self.write("src/nccl.cpp", """\
            #include <torch/torch.h>
            #include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

            void make(c10::intrusive_ptr<c10d::Store> store, int rank, int size) {
              auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size);
            }
            """)
        flags = ["--", "-std=c++17", "-isystem", MOCK_INCLUDE]
        reports = []
        for extra in (["--no-preamble"], ["--cache-dir", self.cache], ["--cache-dir", self.cache]):
            p = run([src, "--format", "json", *extra, *flags], cwd=self.src)
            self.assertEqual(p.returncode, 1, p.stderr)
            reports.append(json.loads(p.stdout)["findings"])
        self.assertEqual(reports[0], reports[1])
        self.assertEqual(reports[0], reports[2])
        async_msgs = [f["message"] for f in reports[2] if f["rule"] == "ddp-async-error-handling"]
        self.assertEqual(len(async_msgs), 1, reports[2])
        self.assertIn("LibTorch 1.13 reads", async_msgs[0])

    def database_with_compiler(self, *compiler):
        """Rewrites the CMake database so each command starts with `compiler`
        (a bare name, a path, a wrapper and its compiler), as Meson and
        hand-written databases do."""
        path = os.path.join(self.build, "compile_commands.json")
        with open(path, encoding="utf-8") as f:
            entries = json.load(f)
        for e in entries:
            args = e.pop("arguments", None) or e.pop("command").split()
            e["arguments"] = list(compiler) + args[1:]
        with open(path, "w", encoding="utf-8") as f:
            json.dump(entries, f)

    def test_every_way_of_naming_the_compiler_reuses_the_cache(self):
        # A bare `c++` made Clang find libstdc++ through /bin/../include/c++/12;
        # folded as text that named nothing, so every entry was stale forever.
        reference, _ = self.lint("--no-preamble", cache=False)
        toolchain = os.path.join(self.tmp, "toolchain")
        os.makedirs(toolchain)
        os.symlink(shutil.which("c++") or "/usr/bin/c++", os.path.join(toolchain, "c++"))
        for compiler in (["c++"], ["clang++"], ["g++"], ["/usr/bin/c++"],
                         [os.path.join(toolchain, "c++")], ["ccache", "c++"]):
            with self.subTest(compiler=compiler):
                shutil.rmtree(self.cache, ignore_errors=True)
                self.database_with_compiler(*compiler)
                cold, err = self.lint()
                self.assertRegex(err, r"preambles: 0 reused .*, [1-9]\d* built, 0 rebuilt")
                warm, err = self.lint()
                self.assertRegex(err, r"preambles: [1-9]\d* reused .*, 0 built, 0 rebuilt", err)
                self.assertEqual(self.report(reference)[0], self.report(cold)[0])
                self.assertEqual(self.report(reference)[0], self.report(warm)[0])
                for meta in (f for f in os.listdir(self.cache) if f.endswith(".meta")):
                    with open(os.path.join(self.cache, meta), encoding="utf-8") as f:
                        inputs = [l.split(" ", 3)[3].rstrip("\n") for l in f if l.startswith("input ")]
                    self.assertTrue(inputs)
                    self.assertEqual([i for i in inputs if not os.path.exists(i)], [])

    def test_verbose_names_the_input_that_made_an_entry_stale(self):
        self.lint()
        helpers = os.path.join(self.src, "src", "helpers.h")
        st = os.stat(helpers)
        os.utime(helpers, (st.st_atime, st.st_mtime + 5))
        _, err = self.lint()
        self.assertRegex(err, r"ddplint: preamble [0-9a-f]{8} \(#include \"helpers.h\"\) rebuilt: "
                              + re.escape(os.path.realpath(helpers)) + r" changed \(size \d+ -> \d+, mtime")

    def test_compile_flags_txt_is_a_database(self):
        reference, _ = self.lint("--no-preamble", cache=False)
        shutil.rmtree(self.build)
        self.write("compile_flags.txt", f"-xc++\n-std=c++17\n-isystem\n{MOCK_INCLUDE}\n")
        # Found above the files, as clang tooling finds it; the same findings;
        # the cache holds across runs.
        cold, err = self.lint_without_p()
        self.assertRegex(err, r"preambles: 0 reused .*, [1-9]\d* built")
        warm, err = self.lint_without_p()
        self.assertRegex(err, r"preambles: [1-9]\d* reused .*, 0 built, 0 rebuilt")
        self.assertEqual(self.report(reference)[0], self.report(cold)[0])
        self.assertEqual(self.report(reference)[0], self.report(warm)[0])
        # A folder takes every unit under it; -p takes the folder of the file.
        p = run(["src", "--format", "json", "--no-cache"], cwd=self.src)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(json.loads(p.stdout)["summary"]["filesAnalyzed"], len(self.units))
        p = run(["-p", self.src, self.train, "--format", "json", "--no-cache"], cwd=self.tmp)
        self.assertEqual(p.returncode, 1, p.stderr)
        # No paths: the flags name no files, and ddplint says so.
        p = run([], cwd=self.src)
        self.assertEqual(p.returncode, 2)
        self.assertIn("compile_flags.txt gives flags, not files", p.stderr + p.stdout)

    def lint_without_p(self):
        p = run(["--format", "json", "-v", "-j2", *self.units, "--cache-dir", self.cache],
                cwd=self.src)
        self.assertIn(p.returncode, (0, 1), p.stderr)
        return json.loads(p.stdout), p.stderr

    def test_progress_only_after_a_second(self):
        env = dict(os.environ, DDPLINT_PROGRESS_DELAY_MS="600000")
        quiet = tty_stderr(["-p", self.build, self.train, "--cache-dir", self.cache], self.src, env)
        self.assertNotIn(b"[0/1]", quiet)
        self.assertNotIn(b"[1/1]", quiet)
        env["DDPLINT_PROGRESS_DELAY_MS"] = "0"
        shown = tty_stderr(["-p", self.build, self.train, "--cache-dir", self.cache], self.src, env)
        self.assertIn(b"[1/1]", shown)


class CacheTrainer(unittest.TestCase):
    """The same report with no preamble, no cache, a cold and a warm cache on
    the LibTorch example trainer (examples/trainer, real <torch/torch.h>)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="ddplint-cache-trainer-")
        self.src = os.path.join(self.tmp, "trainer")
        shutil.copytree(os.path.join(REPO, "examples", "trainer"), self.src,
                        ignore=shutil.ignore_patterns("build"))
        self.build = os.path.join(self.src, "build")
        p = subprocess.run(["cmake", "-S", self.src, "-B", self.build], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def lint(self, *extra):
        p = subprocess.run([DDPLINT, "-p", self.build, "-j2", "-v", "--format", "json",
                            "train.cpp", "model.cpp", *extra], cwd=self.src, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        self.assertEqual(p.returncode, 1, p.stderr)
        out = json.loads(p.stdout)
        return (out["findings"], out["toolErrors"], out["summary"]), p.stderr

    def test_trainer_same_report_every_way(self):
        cache = os.path.join(self.tmp, "cache")
        whole, _ = self.lint("--no-preamble")
        nocache, _ = self.lint("--no-cache")
        cold, err = self.lint("--cache-dir", cache)
        self.assertRegex(err, r"0 reused .*, 2 built")
        warm, err = self.lint("--cache-dir", cache)
        self.assertRegex(err, r"2 reused .*, 0 built, 0 rebuilt")
        self.assertEqual(whole, nocache)
        self.assertEqual(whole, cold)
        self.assertEqual(whole, warm)
        with open(os.path.join(self.src, "expected-findings.txt"), encoding="utf-8") as f:
            expected = sorted(l.strip() for l in f if l.strip() and not l.startswith("#"))
        got = sorted(f"{f['file']}:{f['line']}: {f['rule']}" for f in warm[0])
        self.assertEqual(got, expected)


if __name__ == "__main__":
    unittest.main()
