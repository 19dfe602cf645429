// Build-time generator: reads rules/catalog.yaml (through CatalogReader),
// rules/api.yaml and rules/nccl-async-error.yaml, validates them and turns
// them into C++ data (the rule table and registry, the rule ids, the
// clang-tidy check list, the API catalogs) and into the docs index.  A schema
// error names file:line:col and fails the build, so a broken catalog never ships.
//
//   gen_catalog CATALOG API --cpp OUT.cpp --checklist OUT.inc --rulelist OUT.inc
//   gen_catalog CATALOG API --ids            (one rule id per line, every rule)
//   gen_catalog CATALOG API --ids-runner R   (the ids of the rules runner R decides: program|launch)
//   gen_catalog CATALOG API --ids-language L (the ids of the rules for language L)
//   gen_catalog CATALOG API --json           (the validated rule catalog, for the tests)
//   gen_catalog CATALOG API --implicit-json  (python.implicit_collectives and the python lists, for the tests)
//   gen_catalog CATALOG API --docs-index     (markdown table for docs/checks)
//   gen_catalog CATALOG API --api-names      (the API's classes: CLASS function|method NAME)
//
// A rule's `runner:` says what it is decided on: program (the default: a
// program's model, through the registry; a clang-tidy check when it applies
// to C or C++) or launch (checks/launch: launch files).
#include "CatalogReader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using ddplint::catalog::CatalogError;
using namespace ddplint::catalog::yaml;
using Rule = ddplint::core::RuleInfo;

std::string cxx(const std::string &s) {
  std::string o = "R\"ddp(";
  o += s;
  o += ")ddp\"";
  return o;
}

std::string cxxList(const std::vector<std::string> &v) {
  std::string o = "{";
  for (size_t i = 0; i < v.size(); ++i)
    o += (i ? ", " : "") + cxx(v[i]);
  return o + "}";
}

// ddp-divergent-collective -> DivergentCollectiveCheck
std::string className(const std::string &id) {
  std::string o;
  bool up = true;
  for (size_t i = 4; i < id.size(); ++i) {
    if (id[i] == '-') {
      up = true;
      continue;
    }
    o += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(id[i]))) : id[i];
    up = false;
  }
  return o + "Check";
}

std::string upperCamel(const std::string &id) {
  std::string c = className(id);
  return c.substr(0, c.size() - 5); // without "Check"
}

std::vector<std::pair<std::string, int>> fnArgs(const std::string &file, const YAML::Node &n,
                                                const char *argKey) {
  std::vector<std::pair<std::string, int>> out;
  if (!n)
    return out;
  if (!n.IsSequence())
    fail(file, n, "expected a list of {name, " + std::string(argKey) + "}");
  for (const auto &e : n)
    out.emplace_back(str(file, e, "name"), intOf(file, e, argKey));
  return out;
}

std::string fnArgList(const std::vector<std::pair<std::string, int>> &v) {
  std::string o = "{";
  for (const auto &[name, arg] : v)
    o += "{" + cxx(name) + ", " + std::to_string(arg) + "}, ";
  return o + "}";
}

// The API's classes.  Every MPI/NCCL function and c10d method the catalog knows
// is in exactly one (functions and methods are separate name spaces).
struct ApiClass {
  const char *key;   // the section in api.yaml
  const char *label; // in messages and in --api-names
  bool methods;      // the section may list c10d methods
};
const ApiClass kApiClasses[] = {
    {"collectives", "collective", true}, {"barriers", "barrier", true},
    {"point_to_point", "point_to_point", true}, {"one_sided", "one_sided", false},
    {"requests", "requests", false},         {"file_io", "file_io", false},
    {"local", "local", true},                {"query", "query", true},
    {"exits", "exit", false}};

// YAML::Node's copy can throw (allocation); the generator is a build step
// that dies with a message on any exception, so the implicit operator= may too.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct ClassEntry {
  std::string label;
  YAML::Node node;
};

struct BufferEntry {
  std::string name;
  bool method = false;
  std::vector<int> send, recv, inout, agreed;
  int request = -1;
};

struct ApiClasses {
  // label -> names, in file order
  std::map<std::string, std::vector<std::string>> functions, methods;
  std::map<std::string, ClassEntry> functionClass, methodClass; // name -> class
  std::vector<BufferEntry> buffers;
};

std::vector<int> indexList(const std::string &file, const YAML::Node &entry, const char *key) {
  std::vector<int> out;
  YAML::Node n = entry[key];
  if (!n)
    return out;
  if (!n.IsSequence())
    fail(file, n, std::string("'") + key + "' must be a list of argument indices");
  for (const auto &e : n) {
    int v = -1;
    try {
      v = e.as<int>();
    } catch (const YAML::Exception &) {
      fail(file, e, std::string("entries of '") + key + "' must be integers");
    }
    if (v < 0)
      fail(file, e, "argument indices start at 0");
    for (int prev : out)
      if (prev == v)
        fail(file, e, "index " + std::to_string(v) + " is listed twice in '" + key + "'");
    out.push_back(v);
  }
  return out;
}

bool hasIndex(const std::vector<int> &v, int i) {
  for (int x : v)
    if (x == i)
      return true;
  return false;
}

ApiClasses loadApiClasses(const std::string &file, const YAML::Node &root) {
  ApiClasses c;
  for (const ApiClass &k : kApiClasses) {
    YAML::Node sec = need(file, root, k.key, YAML::NodeType::Map);
    for (const auto &kv : sec) {
      const std::string key = kv.first.as<std::string>();
      if (key != "functions" && !(k.methods && key == "methods"))
        fail(file, kv.first,
             std::string("unknown key '") + key + "' in '" + k.key + "' (expected functions" +
                 (k.methods ? " and methods)" : ")"));
    }
    for (const char *kind : {"functions", "methods"}) {
      const bool isMethod = std::string(kind) == "methods";
      YAML::Node list = sec[kind];
      if (!list)
        continue;
      if (!list.IsSequence())
        fail(file, list, std::string("key '") + kind + "' must be a list");
      auto &byName = isMethod ? c.methodClass : c.functionClass;
      auto &names = (isMethod ? c.methods : c.functions)[k.label];
      for (const auto &e : list) {
        if (!e.IsScalar())
          fail(file, e, std::string("entries of '") + kind + "' must be strings");
        const std::string name = e.as<std::string>();
        auto it = byName.find(name);
        if (it != byName.end())
          fail(file, e,
               "'" + name + "' is listed in two classes: " + it->second.label + " (" +
                   where(file, it->second.node) + ") and " + k.label);
        byName[name] = {k.label, e};
        names.push_back(name);
      }
    }
  }
  // The matcher's legacy stop list may not contradict a class.
  if (YAML::Node nc = root["not_collectives"]; nc && nc["functions"])
    for (const auto &e : nc["functions"]) {
      auto it = c.functionClass.find(e.as<std::string>());
      if (it != c.functionClass.end() &&
          (it->second.label == std::string("collective") || it->second.label == std::string("barrier") ||
           it->second.label == std::string("point_to_point")))
        fail(file, e, "'" + e.as<std::string>() + "' is in not_collectives but is a " +
                          it->second.label + " (" + where(file, it->second.node) + ")");
    }

  std::map<std::string, YAML::Node> seen; // "f:name" / "m:name" -> entry
  for (const auto &e : need(file, root, "collective_buffers", YAML::NodeType::Sequence)) {
    if (!e.IsMap())
      fail(file, e, "a collective_buffers entry is a mapping {name|method, send, recv, inout, agreed, request}");
    for (const auto &kv : e) {
      const std::string key = kv.first.as<std::string>();
      if (key != "name" && key != "method" && key != "send" && key != "recv" && key != "inout" &&
          key != "agreed" && key != "request")
        fail(file, kv.first, "unknown key '" + key +
                                 "' (expected name or method, send, recv, inout, agreed, request)");
    }
    BufferEntry b;
    if (e["name"] && e["method"])
      fail(file, e, "an entry names a function (name) or a method (method), not both");
    if (!e["name"] && !e["method"])
      fail(file, e, "an entry needs 'name' (a function) or 'method' (a c10d method)");
    b.method = static_cast<bool>(e["method"]);
    const char *nameKey = b.method ? "method" : "name";
    b.name = str(file, e, nameKey);
    const auto &byName = b.method ? c.methodClass : c.functionClass;
    auto cls = byName.find(b.name);
    if (cls == byName.end())
      fail(file, e[nameKey], "'" + b.name + "' is not a collective or barrier " +
                                 (b.method ? "method" : "function") + " of the catalog");
    if (cls->second.label != std::string("collective") && cls->second.label != std::string("barrier"))
      fail(file, e[nameKey], "'" + b.name + "' is not a collective or barrier (it is " +
                                 cls->second.label + ")");
    const std::string id = (b.method ? "m:" : "f:") + b.name;
    if (seen.count(id))
      fail(file, e[nameKey], "a second collective_buffers entry for '" + b.name + "' (first at " +
                                 where(file, seen[id]) + ")");
    seen[id] = e[nameKey];
    b.send = indexList(file, e, "send");
    b.recv = indexList(file, e, "recv");
    b.inout = indexList(file, e, "inout");
    if (!e["agreed"])
      fail(file, e, "missing key 'agreed' (write 'agreed: []' when the call agrees on nothing)");
    b.agreed = indexList(file, e, "agreed");
    for (int i : b.send)
      if (hasIndex(b.recv, i) || hasIndex(b.inout, i))
        fail(file, e, "argument " + std::to_string(i) + " has two directions");
    for (int i : b.recv)
      if (hasIndex(b.inout, i))
        fail(file, e, "argument " + std::to_string(i) + " has two directions");
    for (const auto &a : e["agreed"])
      if (!hasIndex(b.recv, a.as<int>()) && !hasIndex(b.inout, a.as<int>()))
        fail(file, a, "agreed index " + a.as<std::string>() +
                          " is not a recv or inout index: only what the call writes is agreed");
    if (e["request"]) {
      b.request = intOf(file, e, "request");
      if (b.request < 0 || hasIndex(b.send, b.request) || hasIndex(b.recv, b.request) ||
          hasIndex(b.inout, b.request))
        fail(file, e["request"], "'request' is the index of the request argument, not a buffer");
    }
    c.buffers.push_back(b);
  }
  for (const auto &[byName, prefix] :
       {std::pair{&c.functionClass, "f:"}, std::pair{&c.methodClass, "m:"}})
    for (const auto &[name, ce] : *byName)
      if ((ce.label == "collective" || ce.label == "barrier") && !seen.count(prefix + name))
        fail(file, ce.node, ce.label + " '" + name + "' has no entry in collective_buffers");
  return c;
}

std::string cxxInts(const std::vector<int> &v) {
  std::string o = "{";
  for (size_t i = 0; i < v.size(); ++i)
    o += (i ? ", " : "") + std::to_string(v[i]);
  return o + "}";
}

std::string apiClassesCpp(const std::string &file, const YAML::Node &root) {
  ApiClasses c = loadApiClasses(file, root);
  std::ostringstream o;
  o << "  a.collectiveBuffers = {\n";
  for (const auto &b : c.buffers)
    o << "    {" << cxx(b.name) << ", " << (b.method ? "true" : "false") << ", " << cxxInts(b.send)
      << ", " << cxxInts(b.recv) << ", " << cxxInts(b.inout) << ", " << cxxInts(b.agreed) << ", "
      << b.request << "},\n";
  o << "  };\n";
  o << "  a.oneSidedFunctions = " << cxxList(c.functions["one_sided"]) << ";\n";
  o << "  a.requestFunctions = " << cxxList(c.functions["requests"]) << ";\n";
  o << "  a.fileIoFunctions = " << cxxList(c.functions["file_io"]) << ";\n";
  o << "  a.localApiFunctions = " << cxxList(c.functions["local"]) << ";\n";
  o << "  a.localApiMethods = " << cxxList(c.methods["local"]) << ";\n";
  o << "  a.queryFunctions = " << cxxList(c.functions["query"]) << ";\n";
  o << "  a.queryMethods = " << cxxList(c.methods["query"]) << ";\n";
  return o.str();
}

// --api-names: "CLASS function|method NAME" per line, for the header test.
std::string apiNames(const std::string &file) {
  ApiClasses c = loadApiClasses(file, load(file));
  std::ostringstream o;
  for (const ApiClass &k : kApiClasses) {
    for (const auto &n : c.functions[k.label])
      o << k.label << " function " << n << "\n";
    for (const auto &n : c.methods[k.label])
      o << k.label << " method " << n << "\n";
  }
  return o.str();
}

std::string apiCpp(const std::string &file) {
  YAML::Node root = load(file);
  if (!root.IsMap() || intOf(file, root, "version") != 1)
    fail(file, root, "the API catalog must be a mapping with 'version: 1'");
  auto sub = [&](const char *k) { return need(file, root, k, YAML::NodeType::Map); };
  std::ostringstream o;
  o << "  a.processGroupClasses = " << cxxList(strList(file, root, "process_group_classes"))
    << ";\n";
  o << "  a.collectiveMethods = " << cxxList(strList(file, sub("collectives"), "methods")) << ";\n";
  o << "  a.collectiveFunctions = " << cxxList(strList(file, sub("collectives"), "functions"))
    << ";\n";
  {
    // Set-up collectives are collectives first.
    const std::vector<std::string> all = strList(file, sub("collectives"), "functions");
    for (const auto &e : need(file, root, "collective_setup", YAML::NodeType::Sequence))
      if (std::find(all.begin(), all.end(), e.as<std::string>()) == all.end())
        fail(file, e, "'" + e.as<std::string>() + "' in collective_setup is not a collective function");
    o << "  a.collectiveSetupFunctions = " << cxxList(strList(file, root, "collective_setup"))
      << ";\n";
  }
  o << "  a.barrierMethods = " << cxxList(strList(file, sub("barriers"), "methods")) << ";\n";
  o << "  a.barrierFunctions = " << cxxList(strList(file, sub("barriers"), "functions")) << ";\n";
  o << "  a.pointToPointMethods = " << cxxList(strList(file, sub("point_to_point"), "methods"))
    << ";\n";
  o << "  a.pointToPointFunctions = "
    << cxxList(strList(file, sub("point_to_point"), "functions")) << ";\n";
  o << "  a.notCollectiveFunctions = "
    << cxxList(strList(file, sub("not_collectives"), "functions")) << ";\n";
  o << "  a.exitFunctions = " << cxxList(strList(file, sub("exits"), "functions")) << ";\n";
  o << "  a.checkpointWriters = "
    << fnArgList(fnArgs(file, need(file, root, "checkpoint_writers", YAML::NodeType::Sequence),
                        "path_arg"))
    << ";\n";
  o << "  a.fileWriterClasses = " << cxxList(strList(file, sub("file_writers"), "classes"))
    << ";\n";
  o << "  a.fileWriterFunctions = " << cxxList(strList(file, sub("file_writers"), "functions"))
    << ";\n";
  YAML::Node rs = sub("rank_sources");
  o << "  a.rankMethods = " << cxxList(strList(file, rs, "methods")) << ";\n";
  o << "  a.rankEnvVars = " << cxxList(strList(file, rs, "env_vars")) << ";\n";
  o << "  a.envFunctions = " << cxxList(strList(file, rs, "env_functions")) << ";\n";
  o << "  a.rankOutParams = " << fnArgList(fnArgs(file, rs["out_params"], "arg")) << ";\n";
  YAML::Node ws = sub("world_size_sources");
  o << "  a.worldSizeMethods = " << cxxList(strList(file, ws, "methods")) << ";\n";
  o << "  a.worldSizeEnvVars = " << cxxList(strList(file, ws, "env_vars")) << ";\n";
  o << "  a.worldSizeOutParams = " << fnArgList(fnArgs(file, ws["out_params"], "arg")) << ";\n";
  YAML::Node ls = sub("rank_local_sources");
  o << "  a.localFunctions = " << cxxList(strList(file, ls, "functions")) << ";\n";
  o << "  a.localClasses = " << cxxList(strList(file, ls, "classes")) << ";\n";
  o << "  a.localMethods = " << cxxList(strList(file, ls, "methods")) << ";\n";
  o << "  a.localOutParams = " << fnArgList(fnArgs(file, ls["out_params"], "arg")) << ";\n";
  o << "  a.processGroups = {";
  for (const auto &pg : need(file, root, "process_groups", YAML::NodeType::Sequence))
    o << "{" << cxx(str(file, pg, "class")) << ", " << cxx(str(file, pg, "backend")) << ", "
      << intOf(file, pg, "options_arg") << "}, ";
  o << "};\n";
  o << "  a.processGroupOptions = {";
  for (const auto &pg : need(file, root, "process_group_options", YAML::NodeType::Sequence))
    o << "{" << cxx(str(file, pg, "name")) << ", " << cxx(str(file, pg, "backend")) << ", "
      << intOf(file, pg, "timeout_arg") << "}, ";
  o << "};\n";
  o << "  a.dataLoaderFactories = " << cxxList(strList(file, root, "data_loader_factories"))
    << ";\n";
  o << "  a.distributedSamplers = " << cxxList(strList(file, root, "distributed_samplers"))
    << ";\n";
  YAML::Node env = sub("nccl_async_error_env");
  o << "  a.asyncErrorEnv = " << cxx(str(file, env, "current")) << ";\n";
  o << "  a.asyncErrorEnvDeprecated = " << cxx(str(file, env, "deprecated")) << ";\n";
  o << "  a.asyncErrorEnvRenamedIn = " << intOf(file, env, "renamed_in") << ";\n";
  o << apiClassesCpp(file, root);
  return o.str();
}

// api.yaml's `python` section: every key is one set of PythonApi (Catalog.h).
struct PythonKey {
  const char *key, *member;
};
const PythonKey kPythonKeys[] = {
    {"collectives", "collectives"},
    {"barriers", "barriers"},
    {"point_to_point", "pointToPoint"},
    {"collective_functions", "collectiveFunctions"},
    {"barrier_functions", "barrierFunctions"},
    {"wrapper_collectives", "wrapperCollectives"},
    {"wrapper_barriers", "wrapperBarriers"},
    {"fsdp_collective_functions", "fsdpCollectiveFunctions"},
    {"agreeing_methods", "agreeingMethods"},
    {"agreeing_functions", "agreeingFunctions"},
    {"ddp_classes", "ddpClasses"},
    {"fsdp_classes", "fsdpClasses"},
    {"accelerator_classes", "acceleratorClasses"},
    {"zero_classes", "zeroClasses"},
    {"data_loader_classes", "dataLoaderClasses"},
    {"metric_classes", "metricClasses"},
    {"rank_functions", "rankFunctions"},
    {"local_rank_functions", "localRankFunctions"},
    {"device_mesh_rank_methods", "deviceMeshRankMethods"},
    {"rank_env_vars", "rankEnvVars"},
    {"local_rank_env_vars", "localRankEnvVars"},
    {"rank_attributes", "rankAttributes"},
    {"local_rank_attributes", "localRankAttributes"},
    {"main_process_attributes", "mainProcessAttributes"},
    {"local_main_process_attributes", "localMainProcessAttributes"},
    {"main_process_functions", "mainProcessFunctions"},
    {"local_main_process_functions", "localMainProcessFunctions"},
    {"main_only_decorators", "mainOnlyDecorators"},
    {"rank_parameters", "rankParameters"},
    {"local_rank_parameters", "localRankParameters"},
    {"world_size_functions", "worldSizeFunctions"},
    {"initialized_functions", "initializedFunctions"},
    {"world_size_attributes", "worldSizeAttributes"},
    {"local_functions", "localFunctions"},
    {"local_methods", "localMethods"},
    {"file_read_methods", "fileReadMethods"},
    {"file_probes", "fileProbes"},
    {"checkpoint_writers", "checkpointWriters"},
    {"rank_argument_checkpoint_writers", "rankArgumentCheckpointWriters"},
    {"file_writers", "fileWriters"},
    {"file_write_methods", "fileWriteMethods"},
    {"image_writers", "imageWriters"},
    {"image_write_methods", "imageWriteMethods"},
    {"checkpoint_write_methods", "checkpointWriteMethods"},
    {"accelerator_checkpoint_methods", "acceleratorCheckpointMethods"},
    {"checkpoint_saver_classes", "checkpointSaverClasses"},
    {"checkpoint_saver_methods", "checkpointSaverMethods"},
    {"main_process_checkpointer_classes", "mainProcessCheckpointerClasses"},
    {"main_process_checkpointer_methods", "mainProcessCheckpointerMethods"},
    {"every_rank_checkpointer_classes", "everyRankCheckpointerClasses"},
    {"wrapping_checkpointer_classes", "wrappingCheckpointerClasses"},
    {"step_hook_bases", "stepHookBases"},
    {"step_hook_methods", "stepHookMethods"},
    {"step_checkpoint_hook_classes", "stepCheckpointHookClasses"},
    {"save_state_hook_registrars", "saveStateHookRegistrars"},
    {"per_process_ids", "perProcessIds"},
    {"exit_functions", "exitFunctions"},
    {"buffer_free_modules", "bufferFreeModules"},
    {"rank_launchers", "rankLaunchers"},
    {"main_process_override_bases", "mainProcessOverrideBases"},
    {"main_process_override_methods", "mainProcessOverrideMethods"},
    {"lightning_module_hooks", "lightningModuleHooks"},
    {"lightning_1_markers", "lightning1Markers"},
    {"lightning_2_removed_hooks", "lightning2RemovedHooks"},
};

std::string jsonString(const std::string &s) {
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
    case '"': o += "\\\""; break;
    case '\\': o += "\\\\"; break;
    case '\n': o += "\\n"; break;
    case '\t': o += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        snprintf(buf, sizeof buf, "\\u%04x", c);
        o += buf;
      } else {
        o += c;
      }
    }
  }
  return o + "\"";
}

std::string jsonList(const std::vector<std::string> &v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i)
    o += (i ? ", " : "") + jsonString(v[i]);
  return o + "]";
}

// The Python frontend's vocabulary for an implicit collective's `match`
// (checks/python-frontend/PyModelBuilder.cpp knows each of these by name).
const char *const kImplicitObjects[] = {"ddp",         "fsdp",           "prepared",
                                        "metric",      "accelerator",    "lightning_self", "lightning_trainer",
                                        "fsdp_full_state", "deepspeed_engine", "loss_scaler", "any"};
const char *const kImplicitConditions[] = {"program_wraps_ddp", "outside_no_sync", "no_gradient_argument",
                                           "sync_dist", "module_has_buffers", "module_names_sharding",
                                           "prepares_a_model", "lightning_2"};

template <size_t N> bool oneOf(const std::string &v, const char *const (&list)[N]) {
  for (const char *x : list)
    if (v == x)
      return true;
  return false;
}

struct Implicit {
  std::string id, api, receiver, collective, when, package, since, proof, evidence, coveredBy;
  bool hasMatch = false, callsObject = false;
  std::vector<std::string> methods, requires;
  std::string object, event;
};

// python.implicit_collectives, validated.  `covered_by` names a list of the
// section (or none); `match` says how the Python frontend models the call.
std::vector<Implicit> readImplicit(const std::string &file, const YAML::Node &py) {
  std::vector<Implicit> out;
  YAML::Node list = need(file, py, "implicit_collectives", YAML::NodeType::Sequence);
  static const char *const kKeys[] = {"id",      "api",   "receiver", "collective", "when",
                                      "package", "since", "proof",    "evidence",   "match",
                                      "covered_by"};
  for (const auto &e : list) {
    if (!e.IsMap())
      fail(file, e, "an implicit collective is a mapping (id, api, receiver, ...)");
    for (const auto &kv : e)
      if (!oneOf(kv.first.as<std::string>(), kKeys))
        fail(file, kv.first, "unknown key '" + kv.first.as<std::string>() + "' in an implicit collective");
    Implicit ic;
    ic.id = str(file, e, "id");
    for (const auto &prev : out)
      if (prev.id == ic.id)
        fail(file, e["id"], "duplicate implicit collective '" + ic.id + "'");
    ic.api = str(file, e, "api");
    ic.receiver = str(file, e, "receiver");
    ic.collective = str(file, e, "collective");
    ic.when = str(file, e, "when");
    ic.package = str(file, e, "package");
    if (!e["since"])
      fail(file, e, "missing key 'since' (a quoted version, or null)");
    ic.since = e["since"].IsNull() ? "" : e["since"].as<std::string>();
    ic.proof = str(file, e, "proof");
    if (e["evidence"])
      ic.evidence = str(file, e, "evidence");
    if (static_cast<bool>(e["match"]) == static_cast<bool>(e["covered_by"]))
      fail(file, e, "an implicit collective has either 'match' (how the frontend models it) or "
                    "'covered_by' (the list that makes it a collective, or none)");
    if (e["covered_by"]) {
      ic.coveredBy = str(file, e, "covered_by");
      if (ic.coveredBy != "none" && !(py[ic.coveredBy] && py[ic.coveredBy].IsSequence()))
        fail(file, e["covered_by"], "covered_by names a list of the python section, or none");
      out.push_back(std::move(ic));
      continue;
    }
    YAML::Node m = need(file, e, "match", YAML::NodeType::Map);
    for (const auto &kv : m) {
      const std::string k = kv.first.as<std::string>();
      if (k != "call" && k != "object" && k != "requires" && k != "event")
        fail(file, kv.first, "unknown key '" + k + "' in match (call, object, requires, event)");
    }
    ic.hasMatch = true;
    YAML::Node call = m["call"];
    if (call && call.IsScalar() && call.as<std::string>() == "object")
      ic.callsObject = true;
    else if (call && call.IsSequence() && call.size() > 0)
      ic.methods = strList(file, m, "call");
    else
      fail(file, call ? call : m, "match.call is `object` (the object is called) or a list of methods");
    ic.object = str(file, m, "object");
    if (!oneOf(ic.object, kImplicitObjects))
      fail(file, m["object"], "match.object '" + ic.object + "' is not a kind the Python frontend knows");
    ic.requires = strList(file, m, "requires");
    for (const auto &r : ic.requires)
      if (!oneOf(r, kImplicitConditions))
        fail(file, m["requires"], "match.requires '" + r + "' is not a condition the Python frontend knows");
    ic.event = str(file, m, "event");
    for (size_t at = ic.event.find('{'); at != std::string::npos; at = ic.event.find('{', at + 1)) {
      const std::string ph = ic.event.substr(at, ic.event.find('}', at) - at + 1);
      if (ph != "{object}" && ph != "{receiver}" && ph != "{method}")
        fail(file, m["event"], "match.event uses " + ph + " (only {object}, {receiver}, {method})");
    }
    out.push_back(std::move(ic));
  }
  return out;
}

// --implicit-json: the implicit collectives as the build reads them, for the tests.
std::string implicitJson(const std::string &file) {
  YAML::Node py = need(file, load(file), "python", YAML::NodeType::Map);
  std::ostringstream o;
  o << "{\"implicit_collectives\": [\n";
  const std::vector<Implicit> all = readImplicit(file, py);
  for (size_t i = 0; i < all.size(); ++i) {
    const Implicit &ic = all[i];
    o << "  {\"id\": " << jsonString(ic.id) << ", \"api\": " << jsonString(ic.api)
      << ", \"receiver\": " << jsonString(ic.receiver) << ", \"collective\": "
      << jsonString(ic.collective) << ", \"when\": " << jsonString(ic.when)
      << ", \"package\": " << jsonString(ic.package) << ", \"since\": "
      << (ic.since.empty() ? std::string("null") : jsonString(ic.since))
      << ", \"proof\": " << jsonString(ic.proof) << ", \"evidence\": "
      << (ic.evidence.empty() ? std::string("null") : jsonString(ic.evidence))
      << ", \"covered_by\": " << (ic.hasMatch ? std::string("null") : jsonString(ic.coveredBy))
      << ", \"match\": ";
    if (!ic.hasMatch)
      o << "null";
    else
      o << "{\"call\": " << (ic.callsObject ? std::string("\"object\"") : jsonList(ic.methods))
        << ", \"object\": " << jsonString(ic.object) << ", \"requires\": " << jsonList(ic.requires)
        << ", \"event\": " << jsonString(ic.event) << "}";
    o << "}" << (i + 1 < all.size() ? "," : "") << "\n";
  }
  o << "],\n\"lists\": {";
  // The python section's name lists, for the test that every library entry is exercised.
  bool first = true;
  for (const auto &k : kPythonKeys) {
    o << (first ? "\n" : ",\n") << "  " << jsonString(k.key) << ": "
      << jsonList(strList(file, py, k.key));
    first = false;
  }
  o << "}}\n";
  return o.str();
}

std::string pythonApiCpp(const std::string &file) {
  YAML::Node root = load(file);
  YAML::Node py = need(file, root, "python", YAML::NodeType::Map);
  std::ostringstream o;
  for (const auto &kv : py) {
    const std::string key = kv.first.as<std::string>();
    const PythonKey *k = nullptr;
    for (const auto &c : kPythonKeys)
      if (key == c.key)
        k = &c;
    if (!k && key != "implicit_collectives" && key != "process_group_inits")
      fail(file, kv.first, "unknown key '" + key + "' in 'python'");
  }
  for (const auto &k : kPythonKeys)
    o << "  p." << k.member << " = " << cxxList(strList(file, py, k.key)) << ";\n";
  o << "  p.processGroupInits = {\n";
  for (const auto &e : need(file, py, "process_group_inits", YAML::NodeType::Sequence)) {
    for (const auto &kv : e) {
      const std::string k = kv.first.as<std::string>();
      if (k != "name" && k != "backend" && k != "timeout" && k != "world_size" && k != "collective")
        fail(file, kv.first, "unknown key '" + k + "' in a process_group_inits entry (name, "
                             "backend, timeout, world_size, collective)");
    }
    const std::string coll = str(file, e, "collective");
    if (coll != "true" && coll != "false")
      fail(file, e["collective"], "'collective' is true or false");
    o << "    {" << cxx(str(file, e, "name")) << ", " << intOf(file, e, "backend") << ", "
      << intOf(file, e, "timeout") << ", " << intOf(file, e, "world_size") << ", " << coll
      << "},\n";
  }
  o << "  };\n";
  o << "  p.implicitCollectives = {\n";
  for (const Implicit &ic : readImplicit(file, py))
    if (ic.hasMatch)
      o << "    {" << cxx(ic.id) << ", " << (ic.callsObject ? "true" : "false") << ", "
        << cxxList(ic.methods) << ", " << cxx(ic.object) << ", " << cxxList(ic.requires) << ", "
        << cxx(ic.event) << ", " << (ic.collective == "barrier" ? "true" : "false") << "},\n";
  o << "  };\n";
  return o.str();
}

// rules/nccl-async-error.yaml, next to the API catalog: the NCCL async error
// handling facts (ddplint/core/AsyncErrorFacts.h).  `apiEnv` is api.yaml's
// nccl_async_error_env, which must agree with the newest range.
std::string asyncFactsCpp(const std::string &file, const YAML::Node &apiEnv,
                          const std::string &apiFile) {
  YAML::Node root = load(file);
  if (!root.IsMap() || intOf(file, root, "version") != 1)
    fail(file, root, "the NCCL async error facts must be a mapping with 'version: 1'");
  std::ostringstream o;
  o << "  f.modes = {";
  for (const auto &m : need(file, root, "modes", YAML::NodeType::Sequence)) {
    YAML::Node on = need(file, m, "on", YAML::NodeType::Scalar);
    if (on.Scalar() != "true" && on.Scalar() != "false")
      fail(file, on, "'on' must be true or false");
    o << "{" << intOf(file, m, "value") << ", " << cxx(str(file, m, "name")) << ", "
      << on.Scalar() << ", " << cxx(str(file, m, "effect")) << "}, ";
  }
  o << "};\n  f.versions = {";
  int prevUntil = -1, newestFrom = 0;
  std::string newestRead;
  const YAML::Node versions = need(file, root, "versions", YAML::NodeType::Sequence);
  for (const auto &v : versions) {
    const int from = intOf(file, v, "from"), until = intOf(file, v, "until");
    if (prevUntil >= 0 && from != prevUntil)
      fail(file, v["from"], "version ranges must follow each other without gaps");
    if (until != 0 && until <= from)
      fail(file, v["until"], "'until' must be after 'from' (or 0 for an open range)");
    prevUntil = until;
    const auto reads = strList(file, v, "reads");
    newestFrom = from;
    newestRead = reads.empty() ? "" : reads.front();
    o << "{" << from << ", " << until << ", " << cxxList(reads) << ", "
      << cxxList(strList(file, v, "deprecated")) << ", " << intOf(file, v, "default") << ", "
      << cxx(str(file, v, "source")) << "}, ";
  }
  if (prevUntil != 0)
    fail(file, versions, "the last version range must be open (until: 0)");
  o << "};\n  f.launchers = {";
  for (const auto &l : need(file, root, "launchers", YAML::NodeType::Sequence)) {
    const std::string exports = str(file, l, "exports");
    if (exports != "read_name" && exports != "none")
      fail(file, l["exports"], "'exports' must be read_name or none");
    o << "{" << cxx(str(file, l, "id")) << ", " << cxx(str(file, l, "name")) << ", "
      << cxxList(strList(file, l, "commands")) << ", " << intOf(file, l, "since") << ", "
      << (exports == "read_name" ? "true" : "false") << ", " << cxx(str(file, l, "value")) << ", "
      << intOf(file, l, "keeps_existing_since") << ", " << cxx(str(file, l, "source")) << "}, ";
  }
  o << "};\n  f.assumedVersion = " << intOf(file, root, "assumed_version") << ";\n";
  // api.yaml's nccl_async_error_env is an older spelling of the same facts.
  if (str(apiFile, apiEnv, "current") != newestRead ||
      intOf(apiFile, apiEnv, "renamed_in") != newestFrom)
    fail(apiFile, apiEnv, "nccl_async_error_env disagrees with " + file +
                              " (newest range: " + newestRead + " from " +
                              std::to_string(newestFrom) + ")");
  return "const AsyncErrorFacts &builtinAsyncErrorFacts() {\n  static const AsyncErrorFacts facts = [] {\n"
         "  AsyncErrorFacts f;\n" + o.str() + "  return f;\n  }();\n  return facts;\n}\n\n";
}

void writeFile(const std::string &path, const std::string &text) {
  // Rewrite only on change so an edit to the YAML does not rebuild the world.
  std::ifstream in(path);
  std::stringstream old;
  old << in.rdbuf();
  if (in && old.str() == text)
    return;
  std::ofstream out(path);
  out << text;
  if (!out)
    throw CatalogError(path + ": error: cannot write");
}

bool hasLanguage(const Rule &r, const std::string &l) {
  for (const auto &x : r.languages)
    if (x == l)
      return true;
  return false;
}

// A clang-tidy check exists for the program rules that apply to C or C++.
bool hasTidyCheck(const Rule &r) {
  return r.runner == "program" && (hasLanguage(r, "c") || hasLanguage(r, "c++"));
}

// --json: the validated catalog, for the tests (no second YAML reader there).
std::string rulesJson(const std::vector<Rule> &rules) {
  std::ostringstream o;
  o << "{\"rules\": [\n";
  for (size_t i = 0; i < rules.size(); ++i) {
    const Rule &r = rules[i];
    o << "  {\"id\": " << jsonString(r.id) << ", \"severity\": " << jsonString(r.severity)
      << ", \"runner\": " << jsonString(r.runner) << ", \"languages\": " << jsonList(r.languages)
      << ", \"class\": " << jsonString(hasTidyCheck(r) ? className(r.id) : "")
      << ", \"summary\": " << jsonString(r.summary) << ", \"harness\": " << jsonList(r.harness)
      << ", \"options\": [";
    for (size_t k = 0; k < r.options.size(); ++k)
      o << (k ? ", " : "") << "{\"name\": " << jsonString(r.options[k].name)
        << ", \"default\": " << jsonString(r.options[k].defaultValue)
        << ", \"doc\": " << jsonString(r.options[k].doc) << "}";
    o << "]}" << (i + 1 < rules.size() ? "," : "") << "\n";
  }
  o << "]}\n";
  return o.str();
}

// The rule registry (ddplint/core/Rules.h): each program rule's definition
// is `rules::<Name>` in checks/core/rules/<Name>.cpp.
std::string registryCpp(const std::vector<Rule> &rules) {
  std::ostringstream o;
  o << "namespace rules {\n";
  for (const auto &r : rules)
    if (r.runner == "program")
      o << "extern const RuleDefinition " << upperCamel(r.id) << "; // rules/" << upperCamel(r.id)
        << ".cpp\n";
  o << "} // namespace rules\n\n"
       "const std::vector<RuleSpec> &ruleRegistry() {\n"
       "  static const std::vector<RuleSpec> specs = [] {\n"
       "    const std::vector<RuleInfo> &info = builtinRules();\n"
       "    return std::vector<RuleSpec>{\n";
  for (size_t i = 0; i < rules.size(); ++i)
    o << "      {RuleId::" << upperCamel(rules[i].id) << ", " << cxx(rules[i].id) << ", &info[" << i
      << "], " << (rules[i].runner == "program" ? "&rules::" + upperCamel(rules[i].id) : "nullptr")
      << "},\n";
  o << "    };\n  }();\n  return specs;\n}\n\n";
  return o.str();
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::cerr << "usage: gen_catalog CATALOG.yaml API.yaml (--cpp OUT --checklist OUT --rulelist OUT"
                 " | --ids | --ids-runner program|launch | --ids-language c|c++|python | --json"
                 " | --docs-index | --api-names)\n";
    return 2;
  }
  const std::string catalogFile = argv[1], apiFile = argv[2];
  try {
    std::vector<Rule> rules = ddplint::catalog::readRules(catalogFile);
    std::string api = apiCpp(apiFile);
    const std::string factsFile =
        (apiFile.find('/') == std::string::npos ? std::string(".")
                                                : apiFile.substr(0, apiFile.rfind('/'))) +
        "/nccl-async-error.yaml";
    const std::string facts =
        asyncFactsCpp(factsFile, load(apiFile)["nccl_async_error_env"], apiFile);
    std::string mode = argv[3];
    if (mode == "--api-names") {
      std::cout << apiNames(apiFile);
      return 0;
    }
    if (mode == "--json") {
      std::cout << rulesJson(rules);
      return 0;
    }
    if (mode == "--implicit-json") {
      std::cout << implicitJson(apiFile);
      return 0;
    }
    if (mode == "--ids") {
      for (const auto &r : rules)
        std::cout << r.id << "\n";
      return 0;
    }
    if (mode == "--ids-runner") {
      // A typo here would silently list nothing and let a consistency test pass.
      const std::string runner = argc == 5 ? argv[4] : "";
      if (runner != "program" && runner != "launch") {
        std::cerr << "gen_catalog: --ids-runner takes program or launch\n";
        return 2;
      }
      for (const auto &r : rules)
        if (r.runner == runner)
          std::cout << r.id << "\n";
      return 0;
    }
    if (mode == "--ids-language") {
      const std::string lang = argc == 5 ? argv[4] : "";
      if (lang != "c" && lang != "c++" && lang != "python") {
        std::cerr << "gen_catalog: --ids-language takes c, c++ or python\n";
        return 2;
      }
      for (const auto &r : rules)
        if (hasLanguage(r, lang))
          std::cout << r.id << "\n";
      return 0;
    }
    if (mode == "--docs-index") {
      std::cout << "# ddplint checks\n\n"
                   "Generated from `rules/catalog.yaml`; do not edit by hand.\n\n"
                   "| check | severity | runs on | languages | summary |\n"
                   "|---|---|---|---|---|\n";
      for (const auto &r : rules) {
        std::string langs;
        for (const auto &l : r.languages)
          langs += (langs.empty() ? "" : ", ") + l;
        std::cout << "| [" << r.id << "](" << r.id << ".md) | " << r.severity << " | "
                  << (r.runner == "launch" ? "launch files" : "programs") << " | "
                  << (langs.empty() ? "launch files" : langs) << " | " << r.summary << " |\n";
      }
      return 0;
    }
    if (mode != "--cpp" || argc != 9 || std::string(argv[5]) != "--checklist" ||
        std::string(argv[7]) != "--rulelist") {
      std::cerr << "gen_catalog: unknown mode\n";
      return 2;
    }
    std::ostringstream cpp;
    cpp << "// Generated by checks/catalog/gen_catalog.cpp from rules/; do not edit.\n"
           "#include \"ddplint/core/AsyncErrorFacts.h\"\n#include \"ddplint/core/Catalog.h\"\n"
           "#include \"ddplint/core/Rules.h\"\n\nnamespace ddplint::core {\n\n"
           "const std::vector<RuleInfo> &builtinRules() {\n"
           "  static const std::vector<RuleInfo> rules = {\n";
    for (const auto &r : rules) {
      cpp << "    {" << cxx(r.id) << ", " << cxx(r.severity) << ", " << cxx(r.summary) << ",\n     "
          << cxx(r.trigger) << ",\n     " << cxx(r.rootCause) << ",\n     " << cxx(r.guardrail)
          << ",\n     " << cxx(r.fix) << ",\n     " << cxxList(r.harness) << ",\n     {";
      for (const auto &o : r.options)
        cpp << "{" << cxx(o.name) << ", " << cxx(o.defaultValue) << ", " << cxx(o.doc) << "}, ";
      cpp << "},\n     " << cxx(r.runner) << ", " << cxxList(r.languages) << "},\n";
    }
    cpp << "  };\n  return rules;\n}\n\n"
        << registryCpp(rules)
        << "const ApiCatalog &builtinApi() {\n  static const ApiCatalog api = [] {\n"
           "  ApiCatalog a;\n"
        << api << "  return a;\n  }();\n  return api;\n}\n\n"
        << "const PythonApi &builtinPythonApi() {\n  static const PythonApi api = [] {\n"
           "  PythonApi p;\n"
        << pythonApiCpp(apiFile) << "  return p;\n  }();\n  return api;\n}\n\n"
        << facts << "} // namespace ddplint::core\n";
    // The rule ids, for the RuleId enum: DDPLINT_RULE(Name, "ddp-name").
    std::ostringstream ids;
    ids << "// Generated from rules/catalog.yaml; do not edit.\n";
    for (const auto &r : rules)
      ids << "DDPLINT_RULE(" << upperCamel(r.id) << ", \"" << r.id << "\")\n";
    // The clang-tidy checks: one class per rule that applies to C or C++,
    // named as clang-tidy names checks (<Name>Check), each the generic
    // RuleCheck bound to its rule (checks/tidy/RuleCheck.h).
    std::ostringstream list;
    list << "// Generated from rules/catalog.yaml; do not edit.\n";
    for (const auto &r : rules)
      if (hasTidyCheck(r))
        list << "DDPLINT_CHECK(\"" << r.id << "\", " << className(r.id) << ", "
             << upperCamel(r.id) << ")\n";
    writeFile(argv[4], cpp.str());
    writeFile(argv[6], list.str());
    writeFile(argv[8], ids.str());
  } catch (const CatalogError &e) {
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const YAML::Exception &e) {
    std::cerr << catalogFile << ": error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
