// Kubernetes manifests: every container of the pod templates of Pod, Job,
// PyTorchJob, RayJob and RayCluster objects, one YAML document at a time so a
// malformed document does not hide the findings of the others.
#include "Internal.h"

#include <yaml-cpp/yaml.h>

#include <cstring>
#include <sstream>

namespace ddplint::launch::detail {
namespace {

struct Doc {
  std::string text;
  unsigned firstLine = 0; // 0-based line of the chunk in the file
};

bool startsMarker(const std::string &line, const char *marker) {
  return line.compare(0, 3, marker) == 0 &&
         (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r');
}

// Cut at document markers ourselves: yaml-cpp's LoadAll gives up on the whole
// stream at the first error.  A marker at column 0 ends any block scalar in
// YAML, so this cut agrees with the parser.
std::vector<Doc> splitDocuments(const std::string &text) {
  std::vector<Doc> docs(1);
  std::istringstream in(text);
  std::string line;
  unsigned n = 0;
  while (std::getline(in, line)) {
    if (startsMarker(line, "---") && !docs.back().text.empty()) {
      docs.push_back({});
      docs.back().firstLine = n;
    }
    docs.back().text += line + "\n";
    if (startsMarker(line, "...")) {
      docs.push_back({});
      docs.back().firstLine = n + 1;
    }
    ++n;
  }
  return docs;
}

class ManifestChecker {
public:
  ManifestChecker(const Options &opts, Sink &sink, std::vector<Error> &errors)
      : opts_(opts), sink_(sink), errors_(errors), watched_(watchedNames(opts)) {}

  bool finish() {
    if (objects_ > 0)
      for (const auto &e : notObjects_)
        sink_.skip(e.line, e.column, "this document", e.message);
    return objects_ > 0;
  }
  bool helmUnparsed() const { return helmUnparsed_; }

  // {{ ... }} directives become a plain scalar; a line that is only a
  // directive ({{- if .Values.x }}, {{ end }}) is dropped.
  static std::string maskTemplate(const std::string &text) {
    std::istringstream in(text);
    std::string out, line;
    while (std::getline(in, line)) {
      size_t b = line.find_first_not_of(" \t");
      if (b != std::string::npos && line.compare(b, 2, "{{") == 0) {
        size_t e = line.find("}}", b);
        if (e != std::string::npos && line.find_first_not_of(" \t\r", e + 2) == std::string::npos) {
          out += "\n";
          continue;
        }
      }
      std::string masked;
      for (size_t i = 0; i < line.size();) {
        if (line.compare(i, 2, "{{") == 0) {
          size_t e = line.find("}}", i + 2);
          if (e == std::string::npos)
            break;
          masked += "HELM";
          i = e + 2;
        } else {
          masked += line[i++];
        }
      }
      out += masked + "\n";
    }
    return out;
  }

  void document(const Doc &doc) {
    doc_ = &doc;
    std::vector<YAML::Node> nodes;
    try {
      nodes = YAML::LoadAll(doc.text);
    } catch (const YAML::ParserException &e) {
      // A Helm template: parse it again with its {{ ... }} directives masked.
      bool masked = false;
      if (doc.text.find("{{") != std::string::npos) {
        try {
          nodes = YAML::LoadAll(maskTemplate(doc.text));
          masked = true;
          sink_.skip(doc.firstLine + 1, 0, "this document",
                     "Helm template: checked with its {{ ... }} directives masked; values "
                     "that come from them are not judged");
        } catch (const YAML::Exception &) {
          masked = false; // not YAML even masked: handled below as unparsed
        }
      }
      if (!masked) {
        if (doc.text.find("{{") != std::string::npos) {
          // A Helm template that does not parse even masked: a note, not exit 2.
          helmUnparsed_ = true;
          sink_.skip(lineOf(e.mark), colOf(e.mark), "this document",
                     "Helm template that does not parse with its {{ ... }} directives masked: "
                     "not checked; run check-launch on the output of helm template",
                     /*visible=*/true);
          return;
        }
        error(e.mark, "malformed YAML: " + e.msg);
        return;
      }
    }
    for (const YAML::Node &n : nodes) {
      if (!n || n.IsNull())
        continue;
      try {
        object(n);
      } catch (const YAML::Exception &e) {
        // Type surprises the walker did not guard against: report, do not crash.
        error(e.mark, std::string("cannot read this document: ") + e.msg);
      }
    }
  }

private:
  const Options &opts_;
  Sink &sink_;
  std::vector<Error> &errors_;
  std::vector<std::string> watched_;
  const Doc *doc_ = nullptr;
  int objects_ = 0;
  bool runtimeUnknown_ = false; // a RayJob's runtimeEnvYAML we could not read
  bool helmUnparsed_ = false;   // a Helm template that did not parse even masked
  std::vector<Error> notObjects_;

  unsigned lineOf(const YAML::Mark &m) const {
    return m.line < 0 ? doc_->firstLine + 1 : doc_->firstLine + static_cast<unsigned>(m.line) + 1;
  }
  static unsigned colOf(const YAML::Mark &m) {
    return m.column < 0 ? 1 : static_cast<unsigned>(m.column) + 1;
  }

  void error(const YAML::Mark &m, std::string message) {
    errors_.push_back({sink_.file(), lineOf(m), colOf(m), std::move(message)});
  }

  static YAML::Node child(const YAML::Node &n, const char *key) {
    if (!n || !n.IsMap())
      return YAML::Node(YAML::NodeType::Undefined);
    return n[key];
  }

  static std::string scalar(const YAML::Node &n, const std::string &fallback = "") {
    return n && n.IsScalar() ? n.Scalar() : fallback;
  }

  // The mark of a key (the `name:` of `- name: trainer`), or of the map itself.
  static YAML::Mark keyMark(const YAML::Node &map, const char *key) {
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == key)
        return it->first.Mark();
    return map.Mark();
  }

  void object(const YAML::Node &n) {
    const std::string apiVersion = scalar(child(n, "apiVersion")), kind = scalar(child(n, "kind"));
    if (apiVersion.empty() || kind.empty()) {
      // Only an error beside real objects; alone it means "not a manifest".
      notObjects_.push_back({sink_.file(), lineOf(n.Mark()), colOf(n.Mark()),
                             "not a Kubernetes object (no apiVersion and kind)"});
      return;
    }
    ++objects_;
    YAML::Node meta = child(n, "metadata");
    std::string name = scalar(child(meta, "name"), scalar(child(meta, "generateName"), "<unnamed>"));
    const std::string what = kind + " '" + name + "'";
    YAML::Node spec = child(n, "spec");
    if (kind == "List") {
      YAML::Node items = child(n, "items");
      if (items && items.IsSequence())
        for (const auto &item : items)
          object(item);
    } else if (kind == "Pod") {
      podSpec(spec, what, "", Select::All, {});
    } else if (kind == "Job") {
      podSpec(child(child(spec, "template"), "spec"), what, "", Select::All, {});
    } else if (kind == "PyTorchJob") {
      workload_ = {};
      workload_.torchKind = true;
      YAML::Node replicas = child(spec, "pytorchReplicaSpecs");
      if (replicas && replicas.IsMap())
        for (auto it = replicas.begin(); it != replicas.end(); ++it)
          podSpec(child(child(it->second, "template"), "spec"), what,
                  "(" + scalar(it->first) + ")", Select::PyTorchContainer, {});
    } else if (kind == "TrainJob") {
      trainJob(n, spec, what);
    } else if (kind == "ClusterTrainingRuntime" || kind == "TrainingRuntime") {
      trainingRuntime(n, spec, what);
    } else if (kind == "RayCluster") {
      workload_ = {};
      workload_.ray = true;
      rayCluster(spec, what, {});
    } else if (kind == "RayJob") {
      workload_ = {};
      workload_.ray = true;
      workload_.text = scalar(child(spec, "entrypoint")) + "\n" +
                       scalar(child(spec, "runtimeEnvYAML"));
      Env runtime;
      bool runtimeUnknown = false;
      YAML::Node rt = child(spec, "runtimeEnvYAML");
      if (rt && rt.IsScalar())
        runtimeEnv(rt, what, runtime, runtimeUnknown);
      runtimeUnknown_ = runtimeUnknown;
      rayCluster(child(spec, "rayClusterSpec"), what, &runtime);
      runtimeUnknown_ = false;
    }
    workload_ = {};
  }

  // Kubeflow Trainer: the TrainJob's trainer (command, args, env, resources)
  // runs in the runtime's `node` containers, which this file may not show; it
  // is judged as one container at spec.trainer.
  void trainJob(const YAML::Node &n, const YAML::Node &spec, const std::string &what) {
    YAML::Node trainer = child(spec, "trainer");
    YAML::Node ref = child(spec, "runtimeRef");
    const std::string runtime = scalar(child(ref, "name"));
    workload_ = {};
    workload_.torchKind = runtime.find("torch") != std::string::npos || runtime.empty();
    const std::string where = what + " (trainer)";
    if (!workload_.torchKind) {
      sink_.skip(lineOf(n.Mark()), colOf(n.Mark()), what,
                 "runtime '" + runtime + "' is not a torch runtime: no NCCL finding");
      return;
    }
    if (!trainer || !trainer.IsMap()) {
      sink_.skip(lineOf(n.Mark()), colOf(n.Mark()), what,
                 "no spec.trainer: the command and env come from runtime '" + runtime +
                     "', which is checked where it is defined");
      return;
    }
    workload_.gpu = requestsGpu(child(trainer, "resourcesPerNode"));
    container(trainer, what, "(trainer)", nullptr);
    (void)where;
  }

  // A training runtime runs torch only with mlPolicy.torch.
  void trainingRuntime(const YAML::Node &n, const YAML::Node &spec, const std::string &what) {
    YAML::Node policy = child(spec, "mlPolicy");
    workload_ = {};
    if (!child(policy, "torch")) {
      sink_.skip(lineOf(n.Mark()), colOf(n.Mark()), what,
                 std::string("mlPolicy is not torch (") +
                     (child(policy, "mpi") ? "mpi" : "another framework") +
                     "): no torch distributed job, no NCCL finding");
      return;
    }
    workload_.torchKind = true;
    YAML::Node jobs = child(child(child(spec, "template"), "spec"), "replicatedJobs");
    if (jobs && jobs.IsSequence())
      for (const auto &j : jobs)
        podSpec(child(child(child(child(j, "template"), "spec"), "template"), "spec"), what,
                "(replicated job '" + scalar(child(j, "name"), "<unnamed>") + "')", Select::All,
                nullptr);
  }

  void rayCluster(const YAML::Node &rcs, const std::string &what, const Env *runtime) {
    podSpec(child(child(child(rcs, "headGroupSpec"), "template"), "spec"), what, "(head group)",
            Select::First, runtime);
    YAML::Node workers = child(rcs, "workerGroupSpecs");
    if (workers && workers.IsSequence())
      for (const auto &g : workers)
        podSpec(child(child(g, "template"), "spec"), what,
                "(worker group '" + scalar(child(g, "groupName"), "<unnamed>") + "')", Select::First,
                runtime);
  }

  // Ray's runtime_env env_vars reach every worker process of the job.  The
  // string is YAML inside YAML: positions map back exactly for a literal block
  // scalar (`|`), whose lines are the file's lines minus the indentation.
  void runtimeEnv(const YAML::Node &rt, const std::string &what, Env &out, bool &unknown) {
    const YAML::Mark outer = rt.Mark();
    std::vector<std::string> lines;
    {
      std::istringstream in(doc_->text);
      for (std::string l; std::getline(in, l);)
        lines.push_back(l);
    }
    bool literal = outer.line >= 0 && static_cast<size_t>(outer.line) < lines.size() &&
                   static_cast<size_t>(outer.column) < lines[outer.line].size() &&
                   lines[outer.line][outer.column] == '|';
    unsigned indent = 0;
    if (literal) {
      for (size_t i = outer.line + 1; i < lines.size(); ++i) {
        size_t nonblank = lines[i].find_first_not_of(' ');
        if (nonblank != std::string::npos) {
          indent = static_cast<unsigned>(nonblank);
          break;
        }
      }
    }
    auto place = [&](const YAML::Mark &inner, unsigned &line, unsigned &col) {
      if (!literal || inner.line < 0) {
        line = lineOf(outer);
        col = colOf(outer);
        return;
      }
      line = lineOf(outer) + 1 + static_cast<unsigned>(inner.line);
      col = indent + colOf(inner);
    };
    YAML::Node root;
    try {
      root = YAML::Load(rt.Scalar());
    } catch (const YAML::ParserException &e) {
      Error err{sink_.file(), 0, 0, "runtimeEnvYAML of " + what + " is malformed YAML: " + e.msg};
      place(e.mark, err.line, err.column);
      errors_.push_back(err);
      unknown = true;
      return;
    }
    YAML::Node vars = child(root, "env_vars");
    if (!vars || !vars.IsMap())
      return;
    for (auto it = vars.begin(); it != vars.end(); ++it) {
      if (!it->first.IsScalar())
        continue;
      Setting st;
      st.value = scalar(it->second);
      // Ray expands ${VAR} from the worker's environment at run time.
      st.known = it->second.IsScalar() && st.value.find("${") == std::string::npos;
      place(it->first.Mark(), st.line, st.column);
      out[it->first.Scalar()] = st;
    }
    Subject s;
    s.name = "the runtimeEnvYAML of " + what;
    s.context = "in " + s.name;
    s.mayInherit = true; // only wrong values here; missing is judged per container
    evaluate(out, s, opts_, sink_);
    for (auto &kv : out)
      kv.second.report = false;
  }

  enum class Select { All, First, PyTorchContainer };

  // What the object around a pod template says about its workload.
  struct Workload {
    bool torchKind = false;  // PyTorchJob, TrainJob, a torch training runtime
    bool ray = false;
    std::string text;        // RayJob entrypoint and runtime env, TrainJob trainer command
    bool gpu = false;        // GPUs requested outside the container (TrainJob resourcesPerNode)
    Env env;                 // env from outside the container (TrainJob trainer.env)
  };
  Workload workload_;

  static bool requestsGpu(const YAML::Node &resources) {
    for (const char *k : {"limits", "requests"}) {
      YAML::Node m = child(resources, k);
      if (!m || !m.IsMap())
        continue;
      for (auto it = m.begin(); it != m.end(); ++it)
        if (it->first.IsScalar() && it->first.Scalar().find("gpu") != std::string::npos &&
            scalar(it->second) != "0")
          return true;
    }
    return false;
  }

  static std::string lowerCopy(std::string t) {
    for (char &c : t)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  }

  // "gloo" or "mpi" when the text selects that backend and never nccl.
  static std::string nonNcclBackend(const std::string &lowered) {
    if (lowered.find("nccl") != std::string::npos)
      return "";
    for (const char *b : {"gloo", "mpi"}) {
      for (size_t at = lowered.find("backend"); at != std::string::npos;
           at = lowered.find("backend", at + 1)) {
        size_t v = lowered.find_first_not_of(" =:\"'", at + 7);
        if (v != std::string::npos && lowered.compare(v, std::strlen(b), b) == 0)
          return b;
      }
    }
    return "";
  }

  void podSpec(const YAML::Node &spec, const std::string &what, const std::string &role, Select sel,
               const Env *runtime) {
    YAML::Node containers = child(spec, "containers");
    if (!containers || !containers.IsSequence())
      return;
    std::vector<YAML::Node> chosen;
    for (const auto &c : containers)
      if (c.IsMap())
        chosen.push_back(c);
    if (sel == Select::First && chosen.size() > 1)
      // KubeRay runs Ray in the first container; the others are sidecars.
      chosen.resize(1);
    if (sel == Select::PyTorchContainer) {
      // The training operator treats the container named `pytorch` as the
      // trainer (it gets MASTER_ADDR, RANK, ...); others are sidecars then.
      std::vector<YAML::Node> named;
      for (const auto &c : chosen)
        if (scalar(child(c, "name")) == "pytorch")
          named.push_back(c);
      if (!named.empty())
        chosen = named;
    }
    for (const auto &c : chosen)
      container(c, what, role, runtime);
  }

  void container(const YAML::Node &c, const std::string &what, const std::string &role,
                 const Env *runtime) {
    Env env;
    YAML::Node list = child(c, "env");
    if (list && list.IsSequence()) {
      for (const auto &e : list) {
        std::string name = scalar(child(e, "name"));
        if (name.empty())
          continue;
        Setting st;
        YAML::Node value = child(e, "value");
        st.value = scalar(value);
        // valueFrom (a Secret, a field) and $(VAR) references are resolved at run time.
        st.known = !child(e, "valueFrom") && (!value || value.IsNull() || value.IsScalar()) &&
                   st.value.find("$(") == std::string::npos;
        YAML::Mark m = keyMark(e, "name");
        st.line = lineOf(m);
        st.column = colOf(m);
        env[name] = st; // the last entry of a name wins, as in the kubelet
      }
    }
    // A script in command/args may export the variable itself; we do not parse it.
    for (const char *key : {"command", "args"}) {
      YAML::Node words = child(c, key);
      if (!words || !words.IsSequence())
        continue;
      for (const auto &w : words)
        for (const std::string &name : watched_)
          if (w.IsScalar() && mentions(w.Scalar(), name) && !env.count(name)) {
            Setting st;
            st.known = false;
            st.report = false;
            env[name] = st;
          }
    }
    if (runtime)
      for (const auto &kv : *runtime)
        env[kv.first] = kv.second; // runtime_env overrides the pod's env for Ray workers
    YAML::Node envFrom = child(c, "envFrom");
    const std::string cname = scalar(child(c, "name"), role == "(trainer)" ? "trainer" : "<unnamed>");
    Subject s;
    s.name = (role == "(trainer)" ? "the trainer of " + what
                                  : "container '" + cname + "' in " + what +
                                        (role.empty() ? "" : " " + role));

    // Is this a torch distributed workload that uses NCCL?
    std::string cmd;
    for (const char *key : {"command", "args"}) {
      YAML::Node words = child(c, key);
      if (words && words.IsSequence())
        for (const auto &w : words)
          if (w.IsScalar())
            cmd += w.Scalar() + " ";
    }
    std::string envText;
    for (const auto &kv : env)
      envText += kv.first + "=" + kv.second.value + " ";
    const std::string all = lowerCopy(cmd + " " + workload_.text + " " + envText);
    const core::LauncherExport *launcher = launcherIn(cmd + " " + workload_.text);
    const bool gpu = requestsGpu(child(c, "resources")) || workload_.gpu;
    const bool nccl = all.find("nccl") != std::string::npos;
    const bool python = mentions(all, "python") || mentions(all, "python3") ||
                        all.find(".py") != std::string::npos;
    const std::string backend = nonNcclBackend(all);
    const bool ray = workload_.ray;
    const bool torchWords = all.find("torch") != std::string::npos;
    std::string skipReason;
    if (!backend.empty())
      skipReason = "selects the " + backend + " backend and never nccl: no NCCL finding";
    else if (workload_.torchKind && !gpu && !nccl && !launcher)
      skipReason = "requests no GPU and names no nccl backend or launcher: a CPU job, NCCL is not used";
    else if (ray && !(launcher || (torchWords && (gpu || nccl))))
      skipReason = "no torch distributed workload in this Ray group (no torchrun/torch.distributed, "
                   "or torch with a GPU request or nccl)";
    else if (!ray && !workload_.torchKind && !launcher && !((gpu || nccl) && python))
      skipReason = "no torch distributed workload (no torchrun/torch.distributed/accelerate/"
                   "deepspeed in its command or args, no GPU request or nccl next to a python "
                   "entrypoint)";
    YAML::Mark nameMark = keyMark(c, "name");
    if (!skipReason.empty()) {
      sink_.skip(lineOf(nameMark), colOf(nameMark), s.name, skipReason);
      return;
    }
    if (launcher) {
      s.launcherId = launcher->id;
    } else if (ray && torchWords) {
      s.launcherId = "ray-train"; // Ray Train starts the torch workers of a Ray job
    }
    s.command = cmd;
    s.image = scalar(child(c, "image"));
    s.imageVersion = imageTorchVersion(s.image);
    for (const auto &kv : workload_.env)
      if (!env.count(kv.first))
        env[kv.first] = kv.second;
    s.context = "in " + s.name;
    s.missingVerb = " does not set";
    YAML::Mark m = keyMark(c, "name");
    s.line = lineOf(m);
    s.column = colOf(m);
    // envFrom may bring the variable from a ConfigMap or Secret we cannot see.
    // An unreadable runtimeEnvYAML may set them for the Ray workers.
    s.mayInherit = (envFrom && !(envFrom.IsSequence() && envFrom.size() == 0)) || runtimeUnknown_;
    s.fix = [](const std::string &name, const std::string &value) {
      return "add env " + name + "=" + value;
    };
    evaluate(env, s, opts_, sink_);
  }
};

} // namespace

bool checkManifest(const std::string &text, const Options &opts, Sink &sink,
                   std::vector<Error> &errors, bool &helmUnparsed) {
  ManifestChecker checker(opts, sink, errors);
  for (const Doc &d : splitDocuments(text))
    checker.document(d);
  helmUnparsed = checker.helmUnparsed();
  return checker.finish();
}

} // namespace ddplint::launch::detail
