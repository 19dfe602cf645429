#!/usr/bin/env python3
"""Checks build/bin/ddplint-clang-tidy against the plugin in the stock clang-tidy.

    check_linked_tidy.py MODE --linked BIN --clang-tidy BIN --plugin SO

MODE is one of
  list-checks      the same ddp checks as the plugin, and every check of the
                   stock clang-tidy (its own modules are linked in too);
  dump-config      the same ddp check options as the plugin, and --config
                   values reach them;
  builtin-headers  without a -resource-dir from the user it uses LLVM's own
                   builtin headers; one given on the command line or in the
                   compile database wins.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

TIMEOUT = 60
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print(f"FAIL: {msg}", flush=True)


def run(cmd, cwd):
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=TIMEOUT)
    return proc.returncode, proc.stdout


def listed(out):
    return {line.strip() for line in out.splitlines() if re.fullmatch(r"\s+[a-z0-9.-]+", line)}


def list_checks(a, cwd):
    rc, linked_ddp = run([a.linked, "--checks=-*,ddp-*", "--list-checks"], cwd)
    check(rc == 0, f"ddplint-clang-tidy --list-checks exited {rc}")
    rc, plugin_ddp = run([a.clang_tidy, f"--load={a.plugin}", "--checks=-*,ddp-*", "--list-checks"], cwd)
    check(rc == 0, f"clang-tidy --load --list-checks exited {rc}")
    linked_ddp, plugin_ddp = listed(linked_ddp), listed(plugin_ddp)
    print(f"ddp checks: linked {sorted(linked_ddp)}\n            plugin {sorted(plugin_ddp)}")
    check("ddp-divergent-collective" in linked_ddp, "ddp-divergent-collective is not listed")
    check("ddp-init-timeout" in linked_ddp, "ddp-init-timeout is not listed")
    check(linked_ddp == plugin_ddp,
          f"ddp checks differ: only linked {sorted(linked_ddp - plugin_ddp)}, "
          f"only plugin {sorted(plugin_ddp - linked_ddp)}")

    rc, linked_all = run([a.linked, "--checks=*", "--list-checks"], cwd)
    check(rc == 0, f"ddplint-clang-tidy --checks=* --list-checks exited {rc}")
    rc, stock_all = run([a.clang_tidy, "--checks=*", "--list-checks"], cwd)
    check(rc == 0, f"clang-tidy --checks=* --list-checks exited {rc}")
    linked_all, stock_all = listed(linked_all), listed(stock_all)
    print(f"all checks: linked {len(linked_all)}, stock clang-tidy {len(stock_all)}")
    check("bugprone-use-after-move" in linked_all, "bugprone-use-after-move is not listed")
    check(len(stock_all) > 100, f"the stock clang-tidy lists only {len(stock_all)} checks")
    missing = stock_all - linked_all
    check(not missing, f"checks of the stock clang-tidy missing: {sorted(missing)[:10]}")
    extra = {c for c in linked_all - stock_all if not c.startswith("ddp-")}
    check(not extra, f"unexpected non-ddp checks: {sorted(extra)[:10]}")


def ddp_options(out):
    # clang-tidy 19 dumps `CheckOptions:` as a map: `  ddp-x.Opt: 'value'`.
    opts = {}
    for m in re.finditer(r"^\s+(ddp-[a-z0-9-]+\.[A-Za-z0-9]+):\s*(.*)$", out, re.M):
        opts[m.group(1)] = m.group(2).strip().strip("'\"")
    return opts


def dump_config(a, cwd):
    rc, linked = run([a.linked, "--checks=-*,ddp-*", "--dump-config"], cwd)
    check(rc == 0, f"ddplint-clang-tidy --dump-config exited {rc}")
    rc, plugin = run([a.clang_tidy, f"--load={a.plugin}", "--checks=-*,ddp-*", "--dump-config"], cwd)
    check(rc == 0, f"clang-tidy --load --dump-config exited {rc}")
    linked, plugin = ddp_options(linked), ddp_options(plugin)
    print(f"ddp options: linked {len(linked)}, plugin {len(plugin)}")
    check("ddp-divergent-collective.RankFunctions" in linked,
          "ddp-divergent-collective.RankFunctions is not in --dump-config")
    check("ddp-init-timeout.DefaultTimeoutSeconds" in linked,
          "ddp-init-timeout.DefaultTimeoutSeconds is not in --dump-config")
    check(linked == plugin, f"ddp options differ: linked {linked} vs plugin {plugin}")

    rc, out = run([a.linked, "--checks=-*,ddp-*", "--dump-config",
                   "--config={CheckOptions: {ddp-init-timeout.DefaultTimeoutSeconds: '60', "
                   "ddp-divergent-collective.RankFunctions: 'dist::get_rank'}}"], cwd)
    check(rc == 0, f"ddplint-clang-tidy --config --dump-config exited {rc}")
    opts = ddp_options(out)
    check(opts.get("ddp-init-timeout.DefaultTimeoutSeconds") == "60",
          f"--config did not set DefaultTimeoutSeconds: {opts.get('ddp-init-timeout.DefaultTimeoutSeconds')!r}")
    check(opts.get("ddp-divergent-collective.RankFunctions") == "dist::get_rank",
          f"--config did not set RankFunctions: {opts.get('ddp-divergent-collective.RankFunctions')!r}")


def search_list(out):
    """The <...> include search list that `-v` prints."""
    m = re.search(r"#include <\.\.\.> search starts here:\n(.*?)\nEnd of search list", out, re.S)
    return [line.strip() for line in m.group(1).splitlines()] if m else []


def builtin_headers(a, cwd):
    # Debian's driver falls back to /usr/include/clang/<version> when the
    # resource dir is missing, so compiling proves little: read the search list.
    rc, rdir = run([os.path.join(os.path.dirname(a.clang_tidy), "clang"), "-print-resource-dir"], cwd)
    rdir = rdir.strip()
    check(rc == 0 and os.path.isdir(rdir), f"clang -print-resource-dir gave {rdir!r} (exit {rc})")
    src = os.path.join(cwd, "builtins.cpp")
    with open(src, "w", encoding="utf-8") as f:
        # stddef.h and stdarg.h come only from clang's resource dir.
        f.write("#include <stddef.h>\n#include <stdarg.h>\n#include <cstdio>\n"
                "size_t n(va_list) { return sizeof(max_align_t); }\n")
    rc, out = run([a.linked, "--checks=-*,ddp-*", "--quiet", "--extra-arg=-v", src, "--", "-std=c++17"], cwd)
    check(rc == 0 and "error:" not in out, f"a file with builtin headers does not compile (exit {rc})")
    paths = search_list(out)
    check(os.path.join(rdir, "include") in paths,
          f"{rdir}/include is not on the default include search list: {paths}")

    # The user's own resource dir wins, from the command line or the database.
    mine = os.path.join(cwd, "my-resource-dir")
    os.makedirs(os.path.join(mine, "include"))
    with open(os.path.join(mine, "include", "stddef.h"), "w", encoding="utf-8") as f:
        f.write("#error the user's resource dir\n")
    rc, out = run([a.linked, "--checks=-*,ddp-*", "--quiet", f"--extra-arg=-resource-dir={mine}",
                   src, "--", "-std=c++17"], cwd)
    check(rc != 0 and "the user's resource dir" in out,
          f"--extra-arg=-resource-dir did not take over (exit {rc})")
    with open(os.path.join(cwd, "compile_commands.json"), "w", encoding="utf-8") as f:
        json.dump([{"directory": cwd, "file": src,
                    "arguments": ["clang++", "-std=c++17", f"-resource-dir={mine}", "-c", src]}], f)
    rc, out = run([a.linked, "--checks=-*,ddp-*", "--quiet", "-p", cwd, src], cwd)
    check(rc != 0 and "the user's resource dir" in out,
          f"-resource-dir in compile_commands.json did not take over (exit {rc})")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["list-checks", "dump-config", "builtin-headers"])
    p.add_argument("--linked", required=True)
    p.add_argument("--clang-tidy", required=True)
    p.add_argument("--plugin", required=True)
    a = p.parse_args()
    a.linked, a.clang_tidy, a.plugin = map(os.path.abspath, (a.linked, a.clang_tidy, a.plugin))
    # An empty folder: no .clang-tidy of the repository applies.
    with tempfile.TemporaryDirectory(prefix="ddplint-fe-") as cwd:
        try:
            {"list-checks": list_checks, "dump-config": dump_config,
             "builtin-headers": builtin_headers}[a.mode](a, cwd)
        except subprocess.TimeoutExpired as e:
            check(False, f"timed out after {e.timeout} s: {e.cmd}")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print(f"OK: {a.mode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
