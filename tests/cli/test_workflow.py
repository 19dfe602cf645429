#!/usr/bin/env python3
"""Runs the `run:` steps of examples/ci/ddplint.yml (the GitHub Actions gate)
locally, on a copy of examples/trainer standing in for the user's checkout:
the steps' shell commands as written, with DDPLINT_HOME pointing at this
build.  Skipped steps: `uses:` actions (checkout, upload-sarif: the SARIF they
would upload is validated instead) and the ddplint clone/build step (it needs
the network and is what scripts/build.sh already does here).

    DDPLINT=build/bin/ddplint python3 -m unittest test_workflow -v
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml  # python3-yaml, a dependency of pre-commit

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
WORKFLOW = os.path.join(REPO, "examples", "ci", "ddplint.yml")
DDPLINT = os.path.abspath(os.environ.get("DDPLINT", os.path.join(REPO, "build", "bin", "ddplint")))
VALIDATE_SARIF = os.path.join(REPO, "tests", "report", "validate_sarif.py")


class Workflow(unittest.TestCase):
    def setUp(self):
        with open(WORKFLOW, encoding="utf-8") as f:
            self.wf = yaml.safe_load(f)
        self.tmp = tempfile.mkdtemp(prefix="ddplint-wf-")
        self.home = os.path.join(self.tmp, "ddplint")  # what the clone step makes
        os.makedirs(os.path.join(self.home, "build", "bin"))
        os.symlink(DDPLINT, os.path.join(self.home, "build", "bin", "ddplint"))
        self.work = os.path.join(self.tmp, "checkout")
        shutil.copytree(os.path.join(REPO, "examples", "trainer"), self.work,
                        ignore=shutil.ignore_patterns("build"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_steps(self):
        job = self.wf["jobs"]["ddplint"]
        env = dict(os.environ)
        env.update({k: str(v) for k, v in job.get("env", {}).items()})
        env["DDPLINT_HOME"] = self.home
        ran, rc = [], 0
        for step in job["steps"]:
            if "uses" in step or step.get("name") == "Build ddplint":
                continue
            p = subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=self.work,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=600)
            ran.append((step["name"], p.returncode, p.stdout))
            if p.returncode != 0:
                rc = p.returncode
                break
        return ran, rc

    def test_gate_fails_on_findings_and_writes_valid_sarif(self):
        ran, rc = self.run_steps()
        self.assertEqual([n for n, *_ in ran], ["Compile database", "ddplint (gate)"])
        self.assertEqual(rc, 1, ran[-1][2])  # the example's planted bugs fail the gate
        sarif = os.path.join(self.work, "ddplint.sarif")
        with open(sarif, encoding="utf-8") as f:
            results = json.load(f)["runs"][0]["results"]
        self.assertEqual(len(results), 7)
        v = subprocess.run([sys.executable, VALIDATE_SARIF, sarif], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=300)
        self.assertEqual(v.returncode, 0, v.stdout)
        # The upload step runs even when the gate fails, and uploads that file.
        upload = [s for s in self.wf["jobs"]["ddplint"]["steps"]
                  if s.get("uses", "").startswith("github/codeql-action/upload-sarif")]
        self.assertEqual(len(upload), 1)
        self.assertEqual(upload[0]["if"], "always()")
        self.assertEqual(upload[0]["with"]["sarif_file"], "ddplint.sarif")
        self.assertIn("security-events", self.wf["permissions"])

    def test_baseline_lets_the_gate_pass(self):
        p = subprocess.run(["cmake", "-S", ".", "-B", "build", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                           cwd=self.work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout)
        p = subprocess.run([DDPLINT, "-p", "build", "--write-baseline", ".ddplint-baseline.json"],
                           cwd=self.work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout)
        ran, rc = self.run_steps()
        self.assertEqual(rc, 0, ran[-1][2])
        with open(os.path.join(self.work, "ddplint.sarif"), encoding="utf-8") as f:
            self.assertEqual(json.load(f)["runs"][0]["results"], [])


if __name__ == "__main__":
    unittest.main()
