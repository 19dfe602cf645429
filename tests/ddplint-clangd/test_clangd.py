#!/usr/bin/env python3
"""Drives build/bin/ddplint-clangd over LSP (stdio, Content-Length framing) on
a throwaway project and checks what an editor would show:

  1. the exact ddp diagnostics marked in train.cpp (`// EXPECT <check>`), with
     the rank-dependent condition as related information (`// NOTE`), one of
     them found only through a CheckOptions entry (.clangd or .clang-tidy);
  2. a quickfix code action for ddp-init-timeout whose edit, applied, gives
     the Gloo timeout fix-it the lit test expects;
  3. the compile command carries LLVM's own -resource-dir (RESOURCE-DIR, what
     `clang -print-resource-dir` says), which ddplint-clangd passes by default.

    test_clangd.py --clangd BIN --include DIR --resource-dir RESOURCE-DIR [--settings-in S]

S says where the checks and their options are set: `clangd` (all in .clangd)
or `clang-tidy` (a .clang-tidy file, which clangd merges; .clangd then holds
only FastCheckFilter, which .clang-tidy cannot express).

clangd is always killed and reaped, also on failure or timeout.
"""
import argparse
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
DIAG_TIMEOUT = 90  # parsing the mock headers takes a few seconds
REPLY_TIMEOUT = 30

SETTINGS = {
    "clangd": {".clangd": """\
Diagnostics:
  ClangTidy:
    Add: [ddp-*]
    CheckOptions:
      ddp-divergent-collective.RankFunctions: dist::my_rank
    # clangd drops checks it has no timing data for unless this is Loose or None.
    FastCheckFilter: Loose
"""},
    "clang-tidy": {".clang-tidy": """\
Checks: '-*,ddp-*'
CheckOptions:
  ddp-divergent-collective.RankFunctions: 'dist::my_rank'
""", ".clangd": """\
Diagnostics:
  ClangTidy:
    FastCheckFilter: Loose
"""},
}

# The Gloo fix-it of tests/lit/init-timeout.cpp (CHECK-FIXES), default 300 s.
FIXED_LINE = ("  return c10::make_intrusive<c10d::ProcessGroupGloo>(makeStore(), rank, size, "
              "c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(1800))); "
              "// EXPECT ddp-init-timeout")


class TestFailure(Exception):
    pass


class Client:
    def __init__(self, cmd, cwd, env, log):
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=log)
        self.inbox = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        self.inbox.put(None)
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                if length is None:
                    raise ValueError("message without Content-Length")
                self.inbox.put(json.loads(out.read(length)))
        except Exception as e:  # a broken stream ends the test, it must not hang it
            self.inbox.put({"reader_error": repr(e)})

    def send(self, msg):
        msg["jsonrpc"] = "2.0"
        body = json.dumps(msg).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"id": rid, "method": method, "params": params})
        return rid

    def wait_for(self, pred, timeout, what):
        """Returns the first message for which pred holds; answers server
        requests on the way so clangd never waits on us."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TestFailure(f"timed out after {timeout} s waiting for {what}")
            try:
                msg = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if msg is None:
                raise TestFailure(f"clangd exited (code {self.proc.poll()}) while waiting for {what}")
            if "reader_error" in msg:
                raise TestFailure(f"bad LSP stream from clangd: {msg['reader_error']}")
            if "method" in msg and "id" in msg:
                self.send({"id": msg["id"], "result": None})
                continue
            if pred(msg):
                return msg

    def reply(self, rid, what):
        msg = self.wait_for(lambda m: m.get("id") == rid and "method" not in m,
                            REPLY_TIMEOUT, what)
        if "error" in msg:
            raise TestFailure(f"{what} failed: {msg['error']}")
        return msg.get("result")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def uri_path(uri):
    return os.path.realpath(urllib.parse.unquote(urllib.parse.urlparse(uri).path))


def markers(text):
    expect, notes = [], []
    for i, line in enumerate(text.splitlines()):
        m = re.search(r"// EXPECT (ddp-[a-z0-9-]+)$", line)
        if m:
            expect.append((m.group(1), i))
        if line.endswith("// NOTE"):
            notes.append(i)
    return expect, notes


def apply_edits(text, edits):
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def offset(pos):  # ASCII file: UTF-16 code units are characters
        return offsets[pos["line"]] + pos["character"]

    for e in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        text = text[:offset(e["range"]["start"])] + e["newText"] + text[offset(e["range"]["end"]):]
    return text


def run(clangd, include, resource_dir, settings, project, log, log_path):
    src = project / "train.cpp"
    shutil.copy(HERE / "train.cpp", src)
    text = src.read_text(encoding="utf-8")
    for name, content in SETTINGS[settings].items():
        (project / name).write_text(content, encoding="utf-8")
    (project / "compile_commands.json").write_text(json.dumps([{
        "directory": str(project), "file": str(src),
        "arguments": ["clang++", "-std=c++17", "-isystem", include, "-c", str(src)],
    }]), encoding="utf-8")
    # A user config in ~/.config/clangd must not change what the test sees.
    env = dict(os.environ, XDG_CONFIG_HOME=str(project / "xdg"), HOME=str(project))
    cmd = [clangd, "--background-index=false", "--log=info", "--pch-storage=memory"]
    print("$ " + " ".join(cmd), flush=True)
    client = Client(cmd, str(project), env, log)
    try:
        uri = src.as_uri()
        rid = client.request("initialize", {
            "processId": os.getpid(),
            "rootUri": project.as_uri(),
            "capabilities": {
                "textDocument": {
                    "publishDiagnostics": {"relatedInformation": True},
                    "codeAction": {"codeActionLiteralSupport": {
                        "codeActionKind": {"valueSet": ["quickfix", "refactor"]}}},
                },
            },
        })
        client.reply(rid, "initialize")
        client.notify("initialized", {})
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "cpp", "version": 1, "text": text}})

        def diagnostics_for_source(m):
            if m.get("method") != "textDocument/publishDiagnostics":
                return False
            path = uri_path(m["params"]["uri"])
            if path != str(src.resolve()):
                # clangd also publishes for .clangd itself (config problems).
                print(f"(diagnostics for {path}: {m['params']['diagnostics']})")
                return False
            return True

        diags = client.wait_for(diagnostics_for_source, DIAG_TIMEOUT,
                                "publishDiagnostics for train.cpp")["params"]["diagnostics"]
        for d in diags:
            print(f"diagnostic: line {d['range']['start']['line'] + 1} "
                  f"[{d.get('code')}] {d['message']}")

        failures = []
        expect, notes = markers(text)
        got = sorted((str(d.get("code")), d["range"]["start"]["line"]) for d in diags)
        if got != sorted(expect):
            failures.append(f"diagnostics (check, 0-based line): expected {sorted(expect)}, got {got}")
        got_notes = sorted(r["location"]["range"]["start"]["line"]
                           for d in diags if d.get("code") == "ddp-divergent-collective"
                           for r in d.get("relatedInformation", []))
        if got_notes != sorted(notes):
            failures.append(f"condition notes on lines {got_notes}, expected {sorted(notes)}")
        for d in diags:
            if d.get("source") != "clang-tidy":
                failures.append(f"diagnostic not from clang-tidy: {d}")

        timeout_diags = [d for d in diags if d.get("code") == "ddp-init-timeout"]
        if not timeout_diags:
            raise TestFailure("; ".join(failures + ["no ddp-init-timeout diagnostic to ask a fix for"]))
        diag = timeout_diags[0]
        rid = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri},
            "range": diag["range"],
            "context": {"diagnostics": [diag]},
        })
        actions = client.reply(rid, "textDocument/codeAction") or []
        for a in actions:
            print(f"code action: [{a.get('kind')}] {a.get('title')}")
        fixes = [a for a in actions if a.get("kind") == "quickfix"]
        if len(fixes) != 1:
            failures.append(f"expected one quickfix for ddp-init-timeout, got {len(fixes)}: {actions}")
        else:
            edit = fixes[0].get("edit", {})
            edits = list(edit.get("changes", {}).get(uri, []))
            for dc in edit.get("documentChanges", []):
                if dc.get("textDocument", {}).get("uri") == uri:
                    edits += dc["edits"]
            if not edits:
                failures.append(f"the quickfix carries no edit for train.cpp: {fixes[0]}")
            else:
                before, after = text.split("\n"), apply_edits(text, edits).split("\n")
                line = diag["range"]["start"]["line"]
                if len(after) != len(before) or after[line] != FIXED_LINE:
                    failures.append(f"fixed line is {after[line]!r}, expected {FIXED_LINE!r}")
                changed = [i for i, (a, b) in enumerate(zip(before, after)) if a != b]
                if changed != [line]:
                    failures.append(f"the fix changes lines {changed}, expected only {line}")

        rid = client.request("shutdown", None)
        client.reply(rid, "shutdown")
        client.notify("exit", None)
        try:
            code = client.proc.wait(timeout=10)
            if code != 0:
                failures.append(f"clangd exited with {code} after shutdown/exit")
        except subprocess.TimeoutExpired:
            failures.append("clangd did not exit within 10 s of exit")
        client.close()
        # Debian's driver falls back to /usr/include/clang/<version> for a
        # missing resource dir, so compiling is no proof: read the command.
        # clangd logs "with command", then "[directory]", then the command line.
        commands = re.findall(r"with command *\n\[[^\n]*\]\n([^\n]*)",
                              log_path.read_text(errors="replace"))
        want = re.compile(r"(^|\s)-resource-dir=" + re.escape(resource_dir) + r"(\s|$)")
        if not commands or not all(want.search(c) for c in commands):
            failures.append(f"compile commands without -resource-dir={resource_dir}: {commands}")
        if failures:
            raise TestFailure("\n  ".join(failures))
    finally:
        client.close()


ACROSS_UNITS = {
    "comm.h": "#pragma once\n#include <mpi.h>\nbool is_main(void);\nvoid sync_all(void);\n",
    "comm.cc": ("#include \"comm.h\"\n"
                "static int world_rank(void) { int r = 0; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }\n"
                "bool is_main(void) { return world_rank() == 0; }\n"
                "void sync_all(void) { MPI_Barrier(MPI_COMM_WORLD); }\n"),
    "train.cc": ("#include \"comm.h\"\n"
                 "void step(float *w) {\n"
                 "  MPI_Allreduce(MPI_IN_PLACE, w, 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);\n"
                 "  if (is_main())\n"
                 "    sync_all();\n"
                 "}\n"),
}


def run_across_units(clangd, ddplint, include, project, log):
    """The summaries the CLI stored for the other units reach the editor: a
    barrier wrapper and a rank predicate defined in comm.cc, seen in train.cc."""
    for name, content in ACROSS_UNITS.items():
        (project / name).write_text(content, encoding="utf-8")
    (project / "compile_commands.json").write_text(json.dumps([{
        "directory": str(project), "file": str(project / u),
        "arguments": ["clang++", "-std=c++17", "-isystem", include, "-c", str(project / u)],
    } for u in ("comm.cc", "train.cc")]), encoding="utf-8")
    cache = project / "cache"
    subprocess.run([ddplint, "-p", str(project), "--cache-dir", str(cache), "--quiet"],
                   cwd=str(project), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    (project / ".clangd").write_text("Diagnostics:\n  ClangTidy:\n    Add: [ddp-*]\n    FastCheckFilter: Loose\n", encoding="utf-8")
    env = dict(os.environ, XDG_CONFIG_HOME=str(project / "xdg"), HOME=str(project),
               DDPLINT_CACHE_DIR=str(cache))
    client = Client([clangd, "--background-index=false", "--log=info", "--pch-storage=memory"],
                    str(project), env, log)
    try:
        src = project / "train.cc"
        uri = src.as_uri()
        rid = client.request("initialize", {"processId": os.getpid(), "rootUri": project.as_uri(),
                                            "capabilities": {}})
        client.reply(rid, "initialize")
        client.notify("initialized", {})
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "cpp", "version": 1, "text": ACROSS_UNITS["train.cc"]}})
        diags = client.wait_for(
            lambda m: m.get("method") == "textDocument/publishDiagnostics"
            and uri_path(m["params"]["uri"]) == str(src.resolve()),
            DIAG_TIMEOUT, "publishDiagnostics for train.cc")["params"]["diagnostics"]
        for d in diags:
            print(f"diagnostic: line {d['range']['start']['line'] + 1} [{d.get('code')}] {d['message']}")
        # Without relatedInformation in the capabilities, notes come as diagnostics of their own.
        ours = [d for d in diags if str(d.get("code", "")).startswith("ddp-")]
        got = [(d.get("code"), d["range"]["start"]["line"]) for d in ours]
        if got != [("ddp-divergent-collective", 4)] or "is_main()" not in ours[0]["message"]:
            raise TestFailure(f"expected one ddp-divergent-collective on line 5 naming is_main(), got {got}")
        rid = client.request("shutdown", None)
        client.reply(rid, "shutdown")
        client.notify("exit", None)
    finally:
        client.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--clangd", required=True)
    p.add_argument("--include", required=True)
    p.add_argument("--resource-dir", required=True)
    p.add_argument("--settings-in", choices=sorted(SETTINGS), default="clangd")
    p.add_argument("--across-units", metavar="DDPLINT",
                   help="instead: summaries stored by this ddplint CLI reach the editor")
    a = p.parse_args()
    if a.across_units:
        project = Path(tempfile.mkdtemp(prefix="ddplint-lsp-xtu-")).resolve()
        try:
            with open(project.with_suffix(".clangd.log"), "wb") as log:
                run_across_units(os.path.abspath(a.clangd), os.path.abspath(a.across_units),
                                 os.path.abspath(a.include), project, log)
            print("OK: ddplint-clangd reads the summaries of the other units")
            return 0
        except TestFailure as e:
            print(f"FAIL: {e}")
            return 1
        finally:
            shutil.rmtree(project, ignore_errors=True)
            project.with_suffix(".clangd.log").unlink(missing_ok=True)
    project = Path(tempfile.mkdtemp(prefix="ddplint-lsp-")).resolve()
    log_path = project.with_suffix(".clangd.log")
    ok = False
    try:
        with open(log_path, "wb") as log:
            run(os.path.abspath(a.clangd), os.path.abspath(a.include), a.resource_dir,
                a.settings_in, project, log, log_path)
        ok = True
        print(f"OK: ddplint-clangd diagnostics and quickfix (settings in {a.settings_in})")
    except TestFailure as e:
        print(f"FAIL: {e}")
    finally:
        if not ok and log_path.exists():
            tail = log_path.read_text(errors="replace").splitlines()[-40:]
            print("--- clangd log (last 40 lines) ---\n" + "\n".join(tail))
        shutil.rmtree(project, ignore_errors=True)
        log_path.unlink(missing_ok=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
