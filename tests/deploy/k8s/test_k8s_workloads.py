"""The collectors under deploy/k8s run as issue #30 says: one cluster-role Deployment per cluster, broker-role
collectors beside each broker (a sidecar) or on each broker node (a DaemonSet reading the kubelet's pod volumes
read-only), every one scraped once under the job the alert rules' ``up`` match names, in this version's image,
with no RBAC and no more privilege than reading files needs."""

from __future__ import annotations

import re

import yaml

import k8smanifests as m
from monitor.settings.config import Thresholds, load_config

ROLES = {"cluster", "broker"}


def test_every_collector_runs_in_a_role_with_this_versions_image():
    found = m.collectors()
    assert len(found) >= 3  # the cluster role, the DaemonSet, the sidecar
    for w, _, c in found:
        assert c["image"] == f"{m.IMAGE_REPOSITORY}:{m.version()}", (w["metadata"]["name"], c["image"])
        assert c["args"][0] == "collect" and m.arg(c, "--role") in ROLES, w["metadata"]["name"]
    text = "\n".join(p.read_text() for p in m.files())
    assert "ghcr.io/your-org" not in text and not re.search(r"image: \S+:latest\b", text)


def test_one_cluster_role_collector_per_cluster():
    cluster = [(w, c) for w, _, c in m.collectors() if m.arg(c, "--role") == "cluster"]
    (w, c), = cluster
    assert w["kind"] == "Deployment" and w["spec"]["replicas"] == 1
    assert w["spec"]["strategy"]["type"] == "Recreate"  # never two at once, each exporting every group
    brokers = {w["kind"] for w, _, c in m.collectors() if m.arg(c, "--role") == "broker"}
    assert {"DaemonSet", "StatefulSet"} <= brokers


def _selects(selector: dict, labels: dict) -> bool:
    if not (selector.get("matchLabels", {}).items() <= labels.items()):
        return False
    for e in selector.get("matchExpressions", []):
        present = e["key"] in labels
        ok = {"Exists": present, "DoesNotExist": not present,
              "In": present and labels[e["key"]] in e.get("values", []),
              "NotIn": not present or labels[e["key"]] not in e.get("values", [])}[e["operator"]]
        if not ok:
            return False
    return True


def _scrape_jobs() -> dict[str, list[str]]:
    """workload name -> the jobs Prometheus (Operator) scrapes its collector under, computed as the Operator
    names them: a ServiceMonitor's target gets the value of its Service's label ``jobLabel``, else the Service's
    name; a PodMonitor's the value of the pod's label ``jobLabel``, else <namespace>/<PodMonitor name>."""
    jobs: dict[str, list[str]] = {}
    services = m.of_kind("Service")
    for w, spec, c in m.collectors():
        labels = w["spec"]["template"]["metadata"]["labels"]
        ports = {p["name"] for p in c["ports"]}
        name = w["metadata"]["name"]
        for sm in m.of_kind("ServiceMonitor"):
            for svc in services:
                if _selects(sm["spec"]["selector"], svc["metadata"].get("labels", {})) \
                        and _selects({"matchLabels": svc["spec"]["selector"]}, labels):
                    targets = {p["targetPort"] for p in svc["spec"]["ports"]
                               if p["name"] in {e["port"] for e in sm["spec"]["endpoints"]}}
                    assert targets <= ports, (name, targets)
                    job_label = sm["spec"].get("jobLabel")
                    jobs.setdefault(name, []).append(svc["metadata"]["labels"][job_label] if job_label
                                                     else svc["metadata"]["name"])
        for pm in m.of_kind("PodMonitor"):
            if _selects(pm["spec"]["selector"], labels):
                assert {e["port"] for e in pm["spec"]["podMetricsEndpoints"]} <= ports, name
                job_label = pm["spec"].get("jobLabel")
                jobs.setdefault(name, []).append(labels.get(job_label) if job_label
                                                 else f"{pm['metadata'].get('namespace', '<ns>')}/{pm['metadata']['name']}")
    return jobs


def test_every_collector_is_scraped_once_under_the_job_the_alerts_watch():
    """CompactionMonitorDown matches ``up{job=thresholds.monitor_job}``: every collector's target must be in that
    job, or a collector that is down raises nothing; and in one scrape only, or its series come twice."""
    jobs = _scrape_jobs()
    rule = m.one("PrometheusRule", "kafka-compaction-monitor")
    exprs = [r["expr"] for g in rule["spec"]["groups"] for r in g["rules"] if r.get("alert") == "CompactionMonitorDown"]
    (watched,) = set(re.findall(r'\bup\{job="([^"]+)"\}', "\n".join(exprs)))
    assert watched == Thresholds().monitor_job
    for w, _, _ in m.collectors():
        assert jobs.get(w["metadata"]["name"]) == [watched], (w["metadata"]["name"], jobs.get(w["metadata"]["name"]))


def test_the_job_check_fails_without_the_job_label():
    """Without jobLabel the Operator names a PodMonitor's job <namespace>/<name>: the check sees it."""
    pm = m.one("PodMonitor", "kafka-compaction-monitor-broker")
    saved = pm["spec"].pop("jobLabel")
    try:
        jobs = _scrape_jobs()
    finally:
        pm["spec"]["jobLabel"] = saved
    assert jobs["kafka-compaction-monitor-broker"] != [Thresholds().monitor_job]


def test_the_daemonset_reads_the_kubelets_pod_volumes_read_only_with_least_privilege():
    ds = m.one("DaemonSet", "kafka-compaction-monitor-broker")
    spec = ds["spec"]["template"]["spec"]
    (c,) = spec["containers"]
    assert m.arg(c, "--role") == "broker"
    volumes = {v["name"]: v for v in spec["volumes"]}
    host = {v["hostPath"]["path"]: v for v in spec["volumes"] if "hostPath" in v}
    assert sorted(host) == ["/var/lib/compaction-monitor", "/var/lib/kubelet/pods"]
    (mount,) = [vm for vm in c["volumeMounts"] if vm["name"] == host["/var/lib/kubelet/pods"]["name"]]
    assert mount["readOnly"] is True and mount["mountPropagation"] == "HostToContainer"
    assert m.arg(c, "--log-dir") == mount["mountPath"]
    # the summary cache: the node's own dir, where the image's default state dir is, given to the image's user
    # by an init container that can chown and nothing else
    state = host["/var/lib/compaction-monitor"]
    (smount,) = [vm for vm in c["volumeMounts"] if vm["name"] == state["name"]]
    assert smount["mountPath"] == "/var/lib/compaction-monitor" and state["hostPath"]["type"] == "DirectoryOrCreate"
    (init,) = spec["initContainers"]
    assert init["command"] == ["chown", f"{spec['securityContext']['runAsUser']}:{spec['securityContext']['runAsGroup']}",
                               smount["mountPath"]]
    assert init["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["CHOWN"]}
    assert [vm["name"] for vm in init["volumeMounts"]] == [state["name"]]
    # every other mount is read-only or the scratch emptyDir
    for vm in c["volumeMounts"]:
        assert vm.get("readOnly") or "emptyDir" in volumes[vm["name"]] or vm is smount, vm
    pod_sc, sc = spec["securityContext"], c["securityContext"]
    assert pod_sc["runAsNonRoot"] is True and pod_sc["runAsUser"] not in (0, None)
    assert 0 in pod_sc["supplementalGroups"]  # the kubelet's pod dirs (root:root 0750), Strimzi's fsGroup 0
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]} and not sc.get("privileged")
    assert not any(spec.get(k) for k in ("hostNetwork", "hostPID", "hostIPC"))
    assert spec["nodeSelector"], "only on the nodes that host brokers: elsewhere log_dir_up 0 alerts"


def test_no_collector_has_rbac_or_a_service_account_token():
    """The collectors read files and Kafka, never the Kubernetes API: no Role, no binding, no token mounted."""
    kinds = {d["kind"] for _, d in m.documents()}
    assert not kinds & {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
    for w, spec, c in m.collectors():
        if w["kind"] != "StatefulSet":  # the sidecar's pod is the broker's: its token is the broker's business
            assert spec.get("automountServiceAccountToken") is False, w["metadata"]["name"]
        sc = {**spec.get("securityContext", {}), **c["securityContext"]}
        assert sc["runAsNonRoot"] and sc["readOnlyRootFilesystem"] and sc["capabilities"] == {"drop": ["ALL"]}
        assert c["resources"]["requests"] and c["resources"]["limits"]["memory"], w["metadata"]["name"]
    for sa in m.of_kind("ServiceAccount"):
        assert sa["automountServiceAccountToken"] is False


def test_the_sidecar_reads_its_brokers_volume_read_only():
    sts = m.one("StatefulSet", "kafka")
    containers = {c["name"]: c for c in sts["spec"]["template"]["spec"]["containers"]}
    side = containers["compaction-monitor"]
    assert m.arg(side, "--role") == "broker"
    (mount,) = [vm for vm in side["volumeMounts"] if vm["name"] not in ("tmp", "compaction-state")]
    assert mount["readOnly"] is True and m.arg(side, "--log-dir") == mount["mountPath"]
    # the summary cache on a claim of its own, where the image's default state dir is (its home)
    (state,) = [vm for vm in side["volumeMounts"] if vm["name"] == "compaction-state"]
    assert state["mountPath"] == "/var/lib/compaction-monitor" and not state.get("readOnly")
    assert "compaction-state" in {t["metadata"]["name"] for t in sts["spec"]["volumeClaimTemplates"]}
    broker_mounts = [vm for c in containers.values() if c is not side for vm in c.get("volumeMounts", [])]
    assert {"name": mount["name"], "mountPath": mount["mountPath"]} in broker_mounts  # the broker's own data
    assert "prometheus.io/scrape" not in sts["spec"]["template"]["metadata"].get("annotations", {})


def _monitor_yaml(configmap: dict) -> str:
    """The ConfigMap's monitor.yaml without its comment lines (examples of what to add)."""
    return "".join(ln for ln in configmap["data"]["monitor.yaml"].splitlines(keepends=True)
                   if not ln.lstrip().startswith("#"))


def test_the_configs_load_where_the_pods_mount_them(tmp_path):
    """Each collector's monitor.yaml loads, its secret references and CA file resolved against the files its pod
    mounts (here stand-ins): each reference names a key of a Secret the pod mounts where the reference looks."""
    for w, spec, c in m.collectors():
        config = m.arg(c, "--config")
        if config is None:
            continue
        mounts = {vm["mountPath"]: vm["name"] for vm in c["volumeMounts"]}
        volumes = {v["name"]: v for v in spec["volumes"]}
        cm = volumes[mounts[config.rsplit("/", 1)[0]]]["configMap"]["name"]
        text = _monitor_yaml(m.one("ConfigMap", cm))
        for directory, key in re.findall(r"\$\{directory:([^:}]+):([^}]+)\}", text):
            secret = volumes[mounts[directory]]["secret"]
            assert key in {i["path"] for i in secret.get("items", [{"path": key}])}, (cm, directory, key)
        for ca in re.findall(r"ssl\.ca\.location: (\S+)", text):
            assert "secret" in volumes[mounts[ca.rsplit("/", 1)[0]]], (cm, ca)
        local = tmp_path / w["metadata"]["name"]  # the pod's mounted files, as stand-ins
        refs = re.findall(r"\$\{directory:([^:}]+):([^}]+)\}", text)
        for path in [f"{d}/{k}" for d, k in refs] + re.findall(r"ssl\.ca\.location: (\S+)", text):
            (local / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            (local / path.lstrip("/")).write_text("stand-in\n")
        f = tmp_path / f"{w['metadata']['name']}.yaml"
        f.write_text(re.sub(r"(\$\{directory:|ssl\.ca\.location: )/", lambda mt: mt.group(1) + str(local) + "/", text))
        cfg = load_config(f, environ={})
        assert cfg.clusters and cfg.clusters[0].name, w["metadata"]["name"]


def _cluster_names(paths: set[str]) -> set[str]:
    names = set()
    for w, spec, c in m.collectors():
        src = next(str(p.relative_to(m.K8S)) for p, d in m.documents() if d is w)
        if src not in paths:
            continue
        if m.arg(c, "--cluster"):
            names.add(m.arg(c, "--cluster"))
        if m.arg(c, "--config"):
            vol = next(v for v in spec["volumes"] if v["name"] == "config")
            names.add(yaml.safe_load(_monitor_yaml(m.one("ConfigMap", vol["configMap"]["name"])))["clusters"][0]["name"])
    return names


def test_the_collectors_of_one_cluster_share_its_name():
    """The `cluster` label joins the roles' series (the rules join on it): the cluster role's name must be the
    broker role's."""
    assert len(_cluster_names({"cluster-role.yaml", "kafka-logdir-sidecar.yaml", "broker-daemonset.yaml"})) == 1


def test_every_collectors_arguments_parse_as_the_command_line_does():
    """Each container's args are ``compaction-monitor``'s own: every flag known, every value of its type."""
    import pytest

    from cli.main import build_parser

    parser = build_parser()
    for w, _, c in m.collectors():
        args, extra = parser.parse_known_args(c["args"])
        if extra[:1] == ["--role"] and not hasattr(args, "role"):
            pytest.skip("collect has no --role yet (issue #30's roles, built in parallel): checked once it has")
        assert extra == [], (w["metadata"]["name"], extra)
        assert args.role == m.arg(c, "--role") and args.port == 9690, w["metadata"]["name"]


def test_the_daemonset_finds_the_brokers_in_the_kubelets_layout(tmp_path):
    """What the DaemonSet's --log-dir holds on a Strimzi node (its hostPath is the kubelet's pod directory): a
    broker pod's CSI volume with its log dir (JBOD: two volumes, one broker), another pod's data volume and a
    Secret volume. Discovery (monitor.kafka.discovery, issue #30's `discover`, built in parallel) finds the
    broker's log dirs by their meta.properties, and nothing of the other pods."""
    import pytest

    discovery = pytest.importorskip("monitor.kafka.discovery", reason="monitor.kafka.discovery (issue #30's "
                                    "discover, built in parallel) is not merged yet: checked once it is")
    pods = tmp_path / "pods"  # the DaemonSet's mountPath of /var/lib/kubelet/pods
    broker = pods / "7f3c2a4e-broker" / "volumes" / "kubernetes.io~csi"
    for pv in ("pvc-data-0", "pvc-data-1"):
        log_dir = broker / pv / "mount" / "kafka-log3"
        (log_dir / "compacted-0").mkdir(parents=True)
        (log_dir / "compacted-0" / "00000000000000000000.log").write_bytes(b"")
        (log_dir / "meta.properties").write_text("version=1\nnode.id=3\ncluster.id=Nk0Yo5mCRmqHqzjwWvjv0w\n"
                                                 f"directory.id=AAAAAAAAAAAAAAAAAAAAA{pv[-1]}\n")
        (log_dir / "recovery-point-offset-checkpoint").write_text("0\n1\ncompacted 0 0\n")
    other = pods / "0b9d1e77-postgres" / "volumes"
    (other / "kubernetes.io~csi" / "pvc-pg" / "mount" / "pgdata").mkdir(parents=True)
    (other / "kubernetes.io~secret" / "creds").mkdir(parents=True)
    (other / "kubernetes.io~secret" / "creds" / "password").write_text("never read\n")
    found = discovery.discover_log_dirs(pods)
    assert sorted(d.path for d in found.log_dirs) == sorted(str(broker / pv / "mount" / "kafka-log3")
                                                            for pv in ("pvc-data-0", "pvc-data-1"))
    assert {(d.node_id, d.problem) for d in found.log_dirs} == {("3", None)}
