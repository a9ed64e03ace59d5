//! deploy/kubernetes/ parsed as YAML: the shards run as one Indexed Job
//! (completions = parallelism = the SHARDS its pods pass to --shard, no
//! per-index retries), each pod maps JOB_COMPLETION_INDEX to `--shard`, all
//! share one --start-at and write their logs to the volume the merge Job
//! reads; the merge merges exactly those logs.

#![allow(clippy::unwrap_used)]

use serde_yaml::Value;

fn manifest(name: &str) -> Value {
    let path = format!(
        "{}/../../deploy/kubernetes/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(v, |v, k| match k.parse::<usize>() {
        Ok(i) => &v[i],
        Err(_) => &v[k],
    })
}

fn env(container: &Value, name: &str) -> String {
    container["env"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|e| e["name"].as_str() == Some(name))
        .and_then(|e| e["value"].as_str())
        .unwrap_or_else(|| panic!("no {name} in env"))
        .to_string()
}

fn script(container: &Value) -> String {
    let words = |k: &str| {
        container[k]
            .as_sequence()
            .map(|s| {
                s.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
    };
    format!("{} {}", words("command"), words("args"))
}

/// The volume mounted at `path` in a pod spec, by its claim.
fn claim_at(spec: &Value, container: &Value, path: &str) -> String {
    let mount = container["volumeMounts"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|m| m["mountPath"].as_str() == Some(path))
        .unwrap_or_else(|| panic!("nothing mounted at {path}"));
    let volume = spec["volumes"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .unwrap();
    at(volume, "persistentVolumeClaim.claimName")
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn shards_run_as_one_indexed_job() {
    let job = manifest("shards-job.yaml");
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["apiVersion"], "batch/v1");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(
        spec["backoffLimitPerIndex"], 0,
        "a re-run shard corrupts the window"
    );
    let n = spec["completions"].as_u64().unwrap();
    assert_eq!(spec["parallelism"].as_u64(), Some(n), "all shards at once");
    let pod = at(spec, "template.spec");
    assert_eq!(pod["restartPolicy"], "Never");
    let c = at(pod, "containers.0");
    assert_eq!(
        env(c, "SHARDS"),
        n.to_string(),
        "--shard I/N with N = completions"
    );
    assert_eq!(
        env(c, "START_AT"),
        "${START_AT}",
        "set once, when the Job is created"
    );
    let s = script(c);
    for part in [
        "$((JOB_COMPLETION_INDEX + 1))",
        "--shard \"$shard/$SHARDS\"",
        "--start-at \"$START_AT\"",
        "--hdr-log \"/logs/shard-$shard.hlog\"",
        "--remote",
    ] {
        assert!(s.contains(part), "shard command lacks {part}: {s}");
    }
    let claim = claim_at(pod, c, "/logs");
    let pvc = manifest("logs-pvc.yaml");
    assert_eq!(pvc["kind"], "PersistentVolumeClaim");
    assert_eq!(at(&pvc, "metadata.name").as_str(), Some(claim.as_str()));
    assert_eq!(
        at(&pvc, "spec.accessModes.0"),
        "ReadWriteMany",
        "every pod writes to it"
    );

    let merge = manifest("merge-job.yaml");
    assert_eq!(merge["kind"], "Job");
    let mpod = at(&merge, "spec.template.spec");
    let mc = at(mpod, "containers.0");
    assert_eq!(claim_at(mpod, mc, "/logs"), claim);
    assert!(script(mc).contains("shootout merge -o json /logs/shard-*.hlog"));

    let run = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/kubernetes/run.sh"
    ))
    .unwrap();
    assert!(
        run.contains("s/\\${START_AT}/${start_at}/"),
        "run.sh fills in START_AT"
    );
}
