//! deploy/kubernetes/ against a real Kubernetes control plane (scripts/kube.sh: kube-apiserver
//! and kube-controller-manager over etcd, no nodes) and real HBase through Thrift2.
//!
//! The tests drive `deploy/kubernetes/tallrow-k8s.sh` as a user would (it applies the
//! manifests server-side, so the API validates every field, and waits for the Jobs) and play
//! the node meanwhile: [`Node`] lists the pods the Job controller creates, runs each pod's
//! container command here as the pod spec resolves it, and writes the pod's phase back
//! through the API, so that the real Job controller decides completion, retries and failure.
//! What a container runtime would give, the node gives as follows:
//! - the image: the `tallrow` binary under test, for the entrypoint the Dockerfile's last
//!   stage names, in a folder of its own for the Dockerfile's WORKDIR;
//! - volumes: a ConfigMap's keys as files, a PersistentVolumeClaim as one temporary folder per
//!   claim shared by every pod, an emptyDir as a folder per pod; arguments that name a path
//!   under a mount point name the folder instead;
//! - the network: each pod has its own in Kubernetes; here a container port's address in an
//!   argument (`0.0.0.0:9464`) becomes a free port on loopback, so that the shards' metrics
//!   endpoints do not collide;
//! - the environment: only what the container's `env` gives (values, the pod's own fields and
//!   labels, ConfigMap keys), with Kubernetes' `$(VAR)` expansion in the arguments.
//!
//! Not enforced, as no scheduler or kubelet runs: the spread over nodes, requests and limits
//! and the security context (the API validates them; the pods run as this test's user).

use crate::common::{PrefixedSchemaTables, RealHBaseHarness, SAMPLE, real_hbase, real_hbase_there, tallrow};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// The control plane scripts/kube.sh started: its API and kubectl. When there is none, the
/// calling test is counted as not run (or fails, in a strict suite).
struct Cluster {
    agent: ureq::Agent,
    server: String,
    token: String,
    kubeconfig: String,
    kubectl: String,
}

fn cluster() -> Option<Cluster> {
    let var = |v: &str| std::env::var(v).ok().filter(|s| !s.is_empty());
    let (Some(server), Some(ca), Some(token), Some(kubeconfig), Some(kubectl)) = (
        var("TALLROW_KUBE_SERVER"),
        var("TALLROW_KUBE_CA"),
        var("TALLROW_KUBE_TOKEN"),
        var("TALLROW_KUBECONFIG"),
        var("TALLROW_KUBECTL"),
    ) else {
        tallrow::testkit::absent(
            "the Kubernetes control plane",
            "TALLROW_KUBE_SERVER is not set (scripts/kube.sh start, or scripts/test.sh)",
        );
        return None;
    };
    let pem = std::fs::read(&ca).unwrap();
    let certs: Vec<_> = ureq::tls::parse_pem(&pem)
        .filter_map(|i| match i.unwrap() {
            ureq::tls::PemItem::Certificate(c) => Some(c),
            _ => None,
        })
        .collect();
    let tls = ureq::tls::TlsConfig::builder()
        .provider(ureq::tls::TlsProvider::Rustls)
        .root_certs(ureq::tls::RootCerts::Specific(Arc::new(certs)))
        .build();
    let agent = ureq::Agent::config_builder()
        .tls_config(tls)
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    Some(Cluster {
        agent,
        server,
        token,
        kubeconfig,
        kubectl,
    })
}

impl Cluster {
    fn auth(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// GET `path`: the object, or `None` for 404.
    fn get(&self, path: &str) -> Option<Value> {
        let mut r = self
            .agent
            .get(format!("{}{path}", self.server))
            .header("Authorization", self.auth())
            .call()
            .unwrap();
        let body = r.body_mut().read_to_string().unwrap();
        match r.status().as_u16() {
            200 => Some(serde_json::from_str(&body).unwrap()),
            404 => None,
            s => panic!("GET {path}: {s} {body}"),
        }
    }

    /// A merge patch of a pod's status.
    fn patch_status(&self, ns: &str, pod: &str, status: Value) {
        let path = format!("/api/v1/namespaces/{ns}/pods/{pod}/status");
        let mut r = self
            .agent
            .patch(format!("{}{path}", self.server))
            .header("Authorization", self.auth())
            .header("Content-Type", "application/merge-patch+json")
            .send(json!({ "status": status }).to_string())
            .unwrap();
        let body = r.body_mut().read_to_string().unwrap();
        // A pod deleted meanwhile (its Job replaced) has no status to write.
        assert!(
            matches!(r.status().as_u16(), 200 | 404),
            "PATCH {path}: {} {body}",
            r.status()
        );
    }

    fn delete_namespace(&self, ns: &str) {
        let _ = self
            .agent
            .delete(format!("{}/api/v1/namespaces/{ns}", self.server))
            .header("Authorization", self.auth())
            .call();
    }

    /// `deploy/kubernetes/tallrow-k8s.sh ARGS` against this cluster.
    fn script(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(Path::new(REPO).join("deploy/kubernetes/tallrow-k8s.sh"))
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECTL", &self.kubectl)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
    }
}

/// What the image runs: the entrypoint and working folder of the Dockerfile's last stage.
fn image() -> (Vec<String>, String) {
    let text = std::fs::read_to_string(Path::new(REPO).join("Dockerfile")).unwrap();
    let last = text.rsplit("\nFROM ").next().unwrap();
    let line = |k: &str| {
        last.lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap_or_else(|| panic!("the Dockerfile's last stage has no {k}"))
            .trim()
            .to_string()
    };
    let entrypoint: Vec<String> = serde_json::from_str(&line("ENTRYPOINT ")).expect("ENTRYPOINT in exec form");
    (entrypoint, line("WORKDIR "))
}

/// What the node does with a pod instead of just running it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    /// Runs it.
    None,
    /// Kills the container (SIGKILL, as the OOM killer or a lost node would) once its load
    /// has acknowledged rows, read from its own metrics endpoint.
    KillWhenWriting,
    /// Starts the container only after its `TALLROW_START_AT` has passed (a pod that was
    /// scheduled or pulled its image late).
    StartLate,
}

/// A pod as the node ran it.
#[derive(Clone, Debug)]
struct Ran {
    job: String,
    index: u64,
    /// When the node started its container.
    started: Instant,
    args: Vec<String>,
    code: i32,
    stdout: String,
    stderr: String,
}

/// The node: runs the pods of one namespace until dropped.
struct Node {
    stop: Arc<AtomicBool>,
    ran: Arc<Mutex<Vec<Ran>>>,
    volumes: PathBuf,
    thread: Option<JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

/// The fault for (job, completion index, tries of that index before, run id).
type Faults = fn(&str, u64, u64, &str) -> Fault;

impl Node {
    fn start(ns: &str, faults: Faults) -> Node {
        let dir = tempfile::tempdir().unwrap();
        let volumes = dir.path().join("claims");
        std::fs::create_dir(&volumes).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let ran = Arc::new(Mutex::new(Vec::new()));
        let (s, r, v, root, ns) = (
            stop.clone(),
            ran.clone(),
            volumes.clone(),
            dir.path().to_path_buf(),
            ns.to_string(),
        );
        let thread = std::thread::spawn(move || {
            let api = Arc::new(cluster().expect("the cluster"));
            let mut seen = HashSet::new();
            let mut running: Vec<JoinHandle<()>> = Vec::new();
            while !s.load(Ordering::Relaxed) {
                if let Some(list) = api.get(&format!("/api/v1/namespaces/{ns}/pods")) {
                    for pod in list["items"].as_array().unwrap() {
                        let uid = pod["metadata"]["uid"].as_str().unwrap().to_string();
                        let pending = pod["status"]["phase"].as_str().unwrap_or("Pending") == "Pending";
                        if pending && pod["metadata"]["deletionTimestamp"].is_null() && seen.insert(uid) {
                            let (api, pod, ran, v, root) =
                                (api.clone(), pod.clone(), r.clone(), v.clone(), root.clone());
                            running.push(std::thread::spawn(move || {
                                let done = run_pod(&api, &pod, &v, &root, faults);
                                ran.lock().unwrap().push(done);
                            }));
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            for t in running {
                t.join().expect("a pod's thread");
            }
        });
        Node {
            stop,
            ran,
            volumes,
            thread: Some(thread),
            _dir: dir,
        }
    }

    /// The pods run so far.
    fn ran(&self) -> Vec<Ran> {
        self.ran.lock().unwrap().clone()
    }

    /// The folder standing for the PersistentVolumeClaim `claim`.
    fn claim(&self, claim: &str) -> PathBuf {
        self.volumes.join(claim)
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Kubernetes' `$(VAR)` expansion: a defined variable's value, `$$` for `$`, anything else
/// as written.
fn expand(s: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(r) = after.strip_prefix('$') {
            out.push('$');
            rest = r;
        } else if let Some(body) = after.strip_prefix('(')
            && let Some(end) = body.find(')')
            && let Some(v) = env.get(&body[..end])
        {
            out.push_str(v);
            rest = &body[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// A pod field a `fieldRef` names: `metadata.name`, `metadata.namespace`, `metadata.uid`,
/// `metadata.labels['KEY']`, `metadata.annotations['KEY']`.
fn field(pod: &Value, path: &str) -> String {
    let meta = &pod["metadata"];
    let keyed = |what: &str| {
        path.strip_prefix(&format!("metadata.{what}['"))
            .and_then(|k| k.strip_suffix("']"))
            .map(|k| meta[what][k].as_str().unwrap_or("").to_string())
    };
    match path {
        "metadata.name" | "metadata.namespace" | "metadata.uid" => {
            meta[&path["metadata.".len()..]].as_str().unwrap().to_string()
        }
        _ => keyed("labels")
            .or_else(|| keyed("annotations"))
            .unwrap_or_else(|| panic!("the test's node does not resolve fieldRef {path}")),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether the load behind `metrics` (HOST:PORT) has had rows acknowledged.
fn writing(metrics: &str) -> bool {
    let Ok(mut s) = std::net::TcpStream::connect(metrics) else {
        return false;
    };
    use std::io::Write;
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n").is_err() {
        return false;
    }
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    text.lines().any(|l| {
        l.starts_with("tallrow_load_row_writes_total{")
            && l.rsplit(' ')
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .is_some_and(|v| v > 0.0)
    })
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// Runs one pod's container as the node, writing its phase back.
fn run_pod(api: &Cluster, pod: &Value, claims: &Path, root: &Path, faults: Faults) -> Ran {
    let ns = pod["metadata"]["namespace"].as_str().unwrap();
    let name = pod["metadata"]["name"].as_str().unwrap();
    let labels = &pod["metadata"]["labels"];
    let job = labels["job-name"].as_str().unwrap_or("").to_string();
    let index: u64 = labels["batch.kubernetes.io/job-completion-index"]
        .as_str()
        .map_or(0, |i| i.parse().unwrap());
    let tries: u64 = pod["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"]
        .as_str()
        .map_or(0, |i| i.parse().unwrap());
    let spec = &pod["spec"];
    let containers = spec["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1, "{name}: one container");
    let c = &containers[0];
    assert!(
        spec["initContainers"].is_null(),
        "{name}: the test's node runs no init containers"
    );
    assert!(c["envFrom"].is_null(), "{name}: the test's node does not do envFrom");
    let image_ref = c["image"].as_str().unwrap();
    let repo = image_ref.split('@').next().unwrap();
    let repo = repo
        .rsplit_once(':')
        .filter(|(_, t)| !t.contains('/'))
        .map_or(repo, |(r, _)| r);
    assert!(repo.ends_with("tallrow"), "{name}: image {image_ref} is not tallrow's");

    let pod_dir = root.join("pods").join(name);
    std::fs::create_dir_all(&pod_dir).unwrap();
    // Volumes, then mount points to folders, the longest first.
    let mut folders: BTreeMap<String, PathBuf> = BTreeMap::new();
    for v in spec["volumes"].as_array().into_iter().flatten() {
        let vname = v["name"].as_str().unwrap();
        let path = if let Some(cm) = v["configMap"]["name"].as_str() {
            let map = api
                .get(&format!("/api/v1/namespaces/{ns}/configmaps/{cm}"))
                .unwrap_or_else(|| panic!("{name}: ConfigMap {cm} missing"));
            let dir = pod_dir.join("volumes").join(vname);
            std::fs::create_dir_all(&dir).unwrap();
            for (k, text) in map["data"].as_object().unwrap() {
                std::fs::write(dir.join(k), text.as_str().unwrap()).unwrap();
            }
            dir
        } else if let Some(claim) = v["persistentVolumeClaim"]["claimName"].as_str() {
            assert!(
                api.get(&format!("/api/v1/namespaces/{ns}/persistentvolumeclaims/{claim}"))
                    .is_some(),
                "{name}: PersistentVolumeClaim {claim} missing"
            );
            claims.join(claim)
        } else if v.get("emptyDir").is_some() {
            pod_dir.join("volumes").join(vname)
        } else {
            panic!("{name}: the test's node does not mount volume {v}")
        };
        std::fs::create_dir_all(&path).unwrap();
        folders.insert(vname.to_string(), path);
    }
    let mut mounts: Vec<(String, PathBuf)> = c["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let v = m["name"].as_str().unwrap();
            (m["mountPath"].as_str().unwrap().to_string(), folders[v].clone())
        })
        .collect();
    mounts.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));

    // The environment, in order, each value expanded against those before it.
    let mut env = BTreeMap::new();
    for e in c["env"].as_array().into_iter().flatten() {
        let key = e["name"].as_str().unwrap().to_string();
        let value = if let Some(v) = e["value"].as_str() {
            expand(v, &env)
        } else if let Some(f) = e["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
            field(pod, f)
        } else if let Some(r) = e["valueFrom"]["configMapKeyRef"].as_object() {
            let (cm, k) = (r["name"].as_str().unwrap(), r["key"].as_str().unwrap());
            let map = api
                .get(&format!("/api/v1/namespaces/{ns}/configmaps/{cm}"))
                .unwrap_or_else(|| panic!("{name}: ConfigMap {cm} missing"));
            map["data"][k]
                .as_str()
                .unwrap_or_else(|| panic!("{name}: ConfigMap {cm} has no key {k}"))
                .to_string()
        } else {
            panic!("{name}: the test's node does not resolve env {e}")
        };
        env.insert(key, value);
    }

    // The command line: the image's entrypoint unless the spec gives a command, then args.
    let (entrypoint, workdir) = image();
    let mut argv: Vec<String> = match c["command"].as_array() {
        Some(cmd) => cmd.iter().map(|a| expand(a.as_str().unwrap(), &env)).collect(),
        None => entrypoint,
    };
    argv.extend(
        c["args"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| expand(a.as_str().unwrap(), &env)),
    );
    let ports: Vec<u64> = c["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p["containerPort"].as_u64().unwrap())
        .collect();
    let mut metrics = None;
    let args: Vec<String> = argv[1..]
        .iter()
        .map(|a| {
            for p in &ports {
                if *a == format!("0.0.0.0:{p}") {
                    let local = format!("127.0.0.1:{}", free_port());
                    metrics = Some(local.clone());
                    return local;
                }
            }
            for (at, folder) in &mounts {
                if a == at {
                    return folder.display().to_string();
                }
                if let Some(rest) = a.strip_prefix(&format!("{at}/")) {
                    return folder.join(rest).display().to_string();
                }
            }
            a.clone()
        })
        .collect();
    assert_eq!(argv[0], "tallrow", "{name}: the image's program");
    let work = pod_dir.join(workdir.trim_start_matches('/'));
    std::fs::create_dir_all(&work).unwrap();

    let fault = faults(&job, index, tries, env.get("TALLROW_RUN_ID").map_or("", |s| s.as_str()));
    if fault == Fault::StartLate {
        let at = humantime::parse_rfc3339_weak(&env["TALLROW_START_AT"]).unwrap();
        while SystemTime::now() < at + Duration::from_secs(1) {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let started_at = Instant::now();
    let started = now_rfc3339();
    api.patch_status(
        ns,
        name,
        json!({
            "phase": "Running",
            "startTime": started,
            "containerStatuses": [{
                "name": c["name"], "image": image_ref, "imageID": "", "ready": true,
                "restartCount": 0, "started": true,
                "state": {"running": {"startedAt": started}},
            }],
        }),
    );
    let log = |s: &str| pod_dir.join(s);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tallrow"))
        .args(&args)
        .current_dir(&work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &work)
        .envs(&env)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(log("stdout")).unwrap())
        .stderr(std::fs::File::create(log("stderr")).unwrap())
        .spawn()
        .unwrap();
    let status = if fault == Fault::KillWhenWriting {
        let addr = metrics.clone().expect("a metrics port to watch");
        // The deadline guards against a hang only.
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(s) = child.try_wait().unwrap() {
                panic!("{name}: the load ended ({s}) before it could be killed partway");
            }
            if writing(&addr) {
                child.kill().unwrap();
                break child.wait().unwrap();
            }
            assert!(Instant::now() < deadline, "{name}: no rows written within 120 s");
            std::thread::sleep(Duration::from_millis(20));
        }
    } else {
        child.wait().unwrap()
    };
    use std::os::unix::process::ExitStatusExt;
    let code = status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    let finished = now_rfc3339();
    api.patch_status(
        ns,
        name,
        json!({
            "phase": if code == 0 { "Succeeded" } else { "Failed" },
            "containerStatuses": [{
                "name": c["name"], "image": image_ref, "imageID": "", "ready": false,
                "restartCount": 0, "started": false,
                "state": {"terminated": {
                    "exitCode": code, "reason": if code == 0 { "Completed" } else { "Error" },
                    "startedAt": started, "finishedAt": finished,
                }},
            }],
        }),
    );
    let read = |s: &str| std::fs::read_to_string(log(s)).unwrap();
    Ran {
        job,
        index,
        started: started_at,
        args,
        code,
        stdout: read("stdout"),
        stderr: read("stderr"),
    }
}

/// A namespace of its own for a test, deleted after it.
struct Namespace<'a>(&'a Cluster, String);

impl Drop for Namespace<'_> {
    fn drop(&mut self) {
        self.0.delete_namespace(&self.1);
    }
}

/// The hbase.toml fixture with a short `[run]`: the data (and so the digest) the same.
/// The hbase fixture with a short run, its tables under `prefix`.
fn workload(dir: &Path, prefix: &str) -> PathBuf {
    let text = std::fs::read_to_string(Path::new(REPO).join("tests/fixtures/hbase.toml")).unwrap();
    let path = dir.join("hbase.toml");
    std::fs::write(
        &path,
        format!(
            "{text}\n[run]\nthreads = 2\nwarmup = \"1s\"\nduration = \"3s\"\n\n[storage]\ntable_prefix = \"{prefix}\"\n"
        ),
    )
    .unwrap();
    path
}

fn summary(dir: &Path) -> Value {
    let report = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("summary.json").is_file())
        .unwrap_or_else(|| panic!("no report under {}", dir.display()));
    serde_json::from_str(&std::fs::read_to_string(report.join("summary.json")).unwrap()).unwrap()
}

/// Load in 3 shards with one shard killed partway and retried, verify, then a run in 3
/// shards merged; then a run whose third shard starts late, which fails the Job, and a
/// merge that names the missing shard, then merges without it when asked.
#[test]
fn a_sharded_load_and_run_as_indexed_jobs() {
    let Some(api) = cluster() else { return };
    if !real_hbase_there() {
        return;
    }
    // The workload's tables under a prefix of this test's own, dropped before and after.
    let tables = PrefixedSchemaTables::new(RealHBaseHarness::thrift2());
    let url = format!("hbase://{}?api=thrift2", real_hbase("TALLROW_HBASE_THRIFT2").unwrap());
    let ns = format!("tallrow-it-{}", std::process::id());
    let _ns = Namespace(&api, ns.clone());
    let dir = tempfile::tempdir().unwrap();
    let wl = workload(dir.path(), tables.prefix());
    let wl = wl.to_str().unwrap();
    let node = Node::start(&ns, |job, index, tries, run| match (job, index, tries, run) {
        ("tallrow-load", 1, 0, _) => Fault::KillWhenWriting,
        ("tallrow-run", 2, _, "run-2") => Fault::StartLate,
        _ => Fault::None,
    });
    let common = [
        "--namespace",
        &ns,
        "--backend",
        &url,
        "--workload",
        wl,
        "--metrics-linger",
        "0s",
    ];
    let script = |step: &str, run: &str, more: &[&str]| {
        let mut args = vec![step, "--run-id", run];
        args.extend(more);
        if step != "merge" {
            args.extend(common);
        } else {
            args.extend(["--namespace", &ns]);
        }
        api.script(&args)
    };

    // The load: index 1's first pod is killed with rows written; the controller retries it.
    let asked = Instant::now();
    let (code, out, err) = script("load", "load-1", &["--shards", "3"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("job/tallrow-load: succeeded 3, failed 1, active 0"),
        "{out}"
    );
    let job = api
        .get(&format!("/apis/batch/v1/namespaces/{ns}/jobs/tallrow-load"))
        .unwrap();
    assert_eq!(job["status"]["succeeded"], 3);
    assert_eq!(job["status"]["failed"], 1);
    assert_eq!(job["status"]["completedIndexes"], "0-2");
    let loads: Vec<Ran> = node.ran().into_iter().filter(|r| r.job == "tallrow-load").collect();
    assert_eq!(loads.len(), 4, "{loads:?}");
    let killed: Vec<&Ran> = loads.iter().filter(|r| r.code != 0).collect();
    assert_eq!(killed.len(), 1);
    assert_eq!((killed[0].index, killed[0].code), (1, 137));
    for r in loads.iter().filter(|r| r.code == 0) {
        let index = r.index.to_string();
        assert!(
            r.args.windows(2).any(|w| w == ["--shard-index", index.as_str()])
                && r.args.windows(2).any(|w| w == ["--shard-count", "3"]),
            "{:?}",
            r.args
        );
        assert!(r.stdout.contains(&format!("(shard {}/3,", r.index + 1)), "{}", r.stdout);
    }
    // How long this machine took from the script's start to each index's first pod: the
    // run's lead (the time every pod has to start before --start-at) is three times the
    // slowest, and at least 10 s, so that a busy machine makes no shard late by chance
    // (the late shard below is made late on purpose).
    let first_start = |i: u64| {
        loads
            .iter()
            .filter(|r| r.index == i)
            .map(|r| r.started - asked)
            .min()
            .unwrap()
    };
    let slowest = (0..3).map(first_start).max().unwrap();
    let lead = (3 * slowest.as_secs() + 3).max(10).to_string();
    let volume = node.claim("tallrow-reports");
    assert_eq!(
        std::fs::read_dir(volume.join("load-1/load")).unwrap().count(),
        3,
        "a load manifest per shard"
    );
    let verify = tallrow(dir.path(), &["verify", wl, "--backend", &url, "--sample", SAMPLE]);
    assert_eq!(verify.code, 0, "{}{}", verify.stdout, verify.stderr);
    assert!(
        verify
            .stdout
            .contains("OK: the store holds exactly the workload's data"),
        "{}",
        verify.stdout
    );
    // The monitoring kustomization went along: the API took the PodMonitor.
    let pm = api
        .get(&format!(
            "/apis/monitoring.coreos.com/v1/namespaces/{ns}/podmonitors/tallrow"
        ))
        .expect("the PodMonitor");
    assert_eq!(pm["spec"]["podMetricsEndpoints"][0]["port"], "metrics");

    // The run: three shards measuring from one --start-at; the merge adds them up exactly.
    let (code, out, err) = script("run", "run-1", &["--shards", "3", "--lead", &lead]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("job/tallrow-run: succeeded 3, failed 0, active 0"),
        "{out}"
    );
    let (code, out, err) = script("merge", "run-1", &[]);
    assert_eq!(code, 0, "{out}{err}");
    let shards: Vec<Value> = (0..3)
        .map(|i| summary(&volume.join(format!("run-1/shards/{i}"))))
        .collect();
    let merged_dir = volume.join("run-1/merged");
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(merged_dir.join("summary.json")).unwrap()).unwrap();
    let starts: HashSet<&str> = shards.iter().map(|s| s["config"]["shard"].as_str().unwrap()).collect();
    assert_eq!(starts, HashSet::from(["1/3", "2/3", "3/3"]));
    for (i, s) in shards.iter().enumerate() {
        assert_eq!(s["config"]["shard_index"], i);
        assert_eq!(s["config"]["shard_count"], 3);
    }
    assert_eq!(merged["config"]["shard"], "3 merged");
    assert_eq!(merged["valid"], true, "{}", merged["invalid_reason"]);
    let ops = merged["ops"].as_array().unwrap();
    assert!(!ops.is_empty());
    for op in ops {
        let name = op["op"].as_str().unwrap();
        let of = |s: &Value| s["ops"].as_array().unwrap().iter().find(|o| o["op"] == name).cloned();
        let parts: Vec<Value> = shards.iter().filter_map(of).collect();
        let sum = |f: &str| parts.iter().map(|p| p[f].as_u64().unwrap()).sum::<u64>();
        assert_eq!(op["count"].as_u64().unwrap(), sum("count"), "{name}");
        assert_eq!(op["errors"].as_u64().unwrap(), sum("errors"), "{name}");
        let mut want = tallrow::stats::histogram();
        for p in &parts {
            want.add(tallrow::stats::decode(p["response_histogram"].as_str().unwrap()).unwrap())
                .unwrap();
        }
        let got = tallrow::stats::decode(op["response_histogram"].as_str().unwrap()).unwrap();
        assert_eq!(got, want, "{name}: the merged histogram is the shards' added up");
    }
    let total = |s: &Value| s["all"]["count"].as_u64().unwrap();
    assert_eq!(total(&merged), shards.iter().map(total).sum::<u64>());
    assert!(total(&merged) > 0);
    // The shards measured one period: each began after the --start-at and its 1 s warm-up,
    // and their measured periods overlap.
    let run1: Vec<Ran> = node
        .ran()
        .into_iter()
        .filter(|r| r.args.iter().any(|a| a.contains("/run-1/shards/")))
        .collect();
    assert_eq!(run1.len(), 3);
    let start_at = run1[0].args.windows(2).find(|w| w[0] == "--start-at").unwrap()[1].clone();
    assert!(
        run1.iter().all(|r| r.args.contains(&start_at)),
        "one --start-at for all"
    );
    let start_ms = humantime::parse_rfc3339_weak(&start_at)
        .unwrap()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let ms = |s: &Value, f: &str| s[f].as_i64().unwrap();
    for s in &shards {
        assert!(
            ms(s, "started_ms") >= start_ms + 1000,
            "{} began before {start_at} + 1 s",
            s["started"]
        );
    }
    let latest_start = shards.iter().map(|s| ms(s, "started_ms")).max().unwrap();
    let earliest_end = shards.iter().map(|s| ms(s, "finished_ms")).min().unwrap();
    assert!(latest_start < earliest_end, "the shards' measured periods overlap");

    // A run whose third shard starts after --start-at: it exits 3, its index fails, the Job
    // fails; the merge names the missing shard, then merges the two with --partial.
    let (code, out, err) = script("run", "run-2", &["--shards", "3", "--lead", &lead]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("job/tallrow-run failed: FailedIndexes"), "{err}");
    assert!(err.contains("(failed indexes: 2)"), "{err}");
    let late: Vec<Ran> = node
        .ran()
        .into_iter()
        .filter(|r| r.job == "tallrow-run" && r.index == 2 && r.args.iter().any(|a| a.contains("/run-2/shards/")))
        .collect();
    assert_eq!(late.len(), 1, "never retried: {late:?}");
    assert_eq!(late[0].code, 3);
    assert_eq!(late[0].stderr.lines().count(), 1, "{}", late[0].stderr);
    assert!(
        late[0]
            .stderr
            .contains("a run that starts late would not measure the same period"),
        "{}",
        late[0].stderr
    );
    assert!(
        !volume.join("run-2/shards/2").exists()
            || std::fs::read_dir(volume.join("run-2/shards/2")).unwrap().count() == 0
    );
    let (code, out, err) = script("merge", "run-2", &[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("job/tallrow-merge failed"), "{err}");
    let merge = node.ran().into_iter().rev().find(|r| r.job == "tallrow-merge").unwrap();
    assert_eq!(merge.code, 1);
    assert!(
        merge.stderr.contains("shard 3/3 missing (found 1/3, 2/3)"),
        "{}",
        merge.stderr
    );
    let (code, out, err) = script("merge", "run-2", &["--partial"]);
    assert_eq!(code, 0, "{out}{err}");
    let partial: Value =
        serde_json::from_str(&std::fs::read_to_string(volume.join("run-2/merged/summary.json")).unwrap()).unwrap();
    assert_eq!(partial["missing_shards"], json!(["3/3"]));
    assert_eq!(partial["config"]["shard"], "2 of 3 merged");
    assert_eq!(partial["valid"], false);
}

/// Every step's manifests as `--dry-run` prints them (the report step's pod included, which
/// the node cannot serve: `kubectl cp` needs a kubelet), validated by the API server side
/// with strict field validation, in a namespace of their own.
#[test]
fn every_steps_manifests_pass_the_apis_validation() {
    let Some(api) = cluster() else { return };
    let ns = format!("tallrow-dry-{}", std::process::id());
    let _ns = Namespace(&api, ns.clone());
    let create = Command::new(&api.kubectl)
        .args(["--kubeconfig", &api.kubeconfig, "create", "namespace", &ns])
        .output()
        .unwrap();
    assert!(create.status.success(), "{}", String::from_utf8_lossy(&create.stderr));
    for step in ["load", "run", "merge", "report"] {
        let mut args = vec![step, "--namespace", &ns, "--run-id", "dry-1", "--dry-run"];
        if matches!(step, "load" | "run") {
            args.extend([
                "--backend",
                "hbase://hbase-thrift.hbase:9090?api=thrift2",
                "--shards",
                "5",
            ]);
        }
        if step == "merge" {
            args.push("--partial");
        }
        args.extend(["--image", "registry.example:5000/team/tallrow:v1"]);
        let (code, yaml, err) = api.script(&args);
        assert_eq!(code, 0, "{step}: {err}");
        if step == "run" {
            assert!(
                yaml.contains("completions: 5") && yaml.contains("parallelism: 5"),
                "{yaml}"
            );
            assert!(yaml.contains("backoffLimitPerIndex: 0"), "{yaml}");
            assert!(yaml.contains("start-at: \"20"), "a start time: {yaml}");
        }
        if step == "merge" {
            assert!(yaml.contains("- --partial"), "{yaml}");
        }
        assert!(yaml.contains("registry.example:5000/team/tallrow:v1"), "{yaml}");
        let mut child = Command::new(&api.kubectl)
            .args([
                "--kubeconfig",
                &api.kubeconfig,
                "apply",
                "--server-side",
                "--dry-run=server",
            ])
            .args(["--validate=strict", "--field-manager", "tallrow-test", "-f", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(yaml.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{step}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("(server dry run)"), "{step}: {said}");
    }
    // Bad arguments: one line, exit 2, nothing applied.
    for (args, want) in [
        (vec!["load", "--shards", "0"], "--shards 0: not a count from 1 to 10000"),
        (
            vec!["run", "--workload", "nowhere.toml", "--backend", "memory:"],
            "--workload nowhere.toml: no such file",
        ),
        (vec!["load"], "load needs --backend URL"),
        (
            vec!["run", "--backend", "memory:", "--lead", "soon"],
            "--lead soon: not a whole number of seconds",
        ),
        (vec!["deploy"], "usage: tallrow-k8s.sh load|run|merge|report"),
    ] {
        let (code, out, err) = api.script(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// The workload the manifests ship is the capacity workload, kept the same.
#[test]
fn the_shipped_workload_is_workloads_capacity() {
    let read = |p: &str| std::fs::read_to_string(Path::new(REPO).join(p)).unwrap();
    assert_eq!(
        read("deploy/kubernetes/base/workload.toml"),
        read("workloads/capacity.toml"),
        "copy workloads/capacity.toml to deploy/kubernetes/base/workload.toml"
    );
}
