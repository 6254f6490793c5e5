package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"trireme.dev/componentbase/testcluster"
)

// localPathDir is a node's directory of local-path volumes below its root, as
// triremeadm reset removes it.
func localPathDir(root string) string { return filepath.Join(root, "var/lib/trireme/local-path") }

const storageWorkload = `apiVersion: v1
kind: Namespace
metadata: {name: storage}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: storage}
spec:
  clusterIP: None
  selector: {app: web}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: storage}
spec:
  serviceName: web
  replicas: 3
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm:
              topologyKey: kubernetes.io/hostname
              labelSelector: {matchLabels: {app: web}}
      containers:
      - name: main
        image: %[1]s
        # The first start writes the pod's name and a nonce; later starts keep it.
        command: ["sh", "-c", "[ -s /data/id ] || echo $(hostname)-$RANDOM$RANDOM > /data/id; exec sleep 3600"]
        readinessProbe: {exec: {command: [test, -s, /data/id]}, periodSeconds: 1}
        volumeMounts: [{name: data, mountPath: /data}]
  # No storageClassName: the claims take the cluster's default class.
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 16Mi}}
`

// TestStorage: the local-path addon's StorageClass is the default one; on the
// nodes of the multi-node test, each with its own directory in nodePathMap, a
// StatefulSet of 3 with a volumeClaimTemplate binds (WaitForFirstConsumer:
// each volume on the node its pod was scheduled to), writes, keeps its data
// when its pods are deleted and come back, each PV carries node affinity to
// the node whose directory holds it, and a deleted claim's directory is
// removed (reclaim Delete).
func TestStorage(t *testing.T) {
	begin(t)
	sc := must(t, "get", "storageclass", "local-path", "-o",
		`jsonpath={.metadata.annotations.storageclass\.kubernetes\.io/is-default-class} {.volumeBindingMode} {.reclaimPolicy} {.provisioner}`)
	if want := "true WaitForFirstConsumer Delete rancher.io/local-path"; sc != want {
		t.Fatalf("StorageClass local-path: %q, want %q", sc, want)
	}
	// Each node's volumes go below its own root: the nodes share this
	// machine's file system.
	dirs := map[string]string{nodeName: localPathDir(suite.root)}
	for _, w := range workers {
		dirs[w.Name] = localPathDir(w.Root)
	}
	setNodePaths(t, dirs)

	apply(t, storageWorkload)
	defer func() { _, _ = kubectl("delete", "namespace", "storage", "--wait=false") }()
	start := time.Now()
	rollout := func() {
		t.Helper()
		if _, err := kubectl("-n", "storage", "rollout", "status", "statefulset/web", "--timeout=180s"); err != nil {
			out, _ := kubectl("-n", "storage", "get", "pods,pvc", "-o", "wide")
			events, _ := kubectl("get", "events", "-A", "--sort-by=.lastTimestamp")
			t.Fatalf("%s\n%s\n%v", testcluster.Tail(events, 30), out, err)
		}
	}
	rollout()
	fmt.Printf("e2e/cluster: StatefulSet of 3 with local-path volumes Ready: %s\n", time.Since(start).Round(100*time.Millisecond))

	before := claimVolumes(t, dirs)
	nodes := map[string]bool{}
	for _, v := range before {
		nodes[v.node] = true
	}
	if ready := len(readyNodeNames(t)); ready > 1 && len(nodes) < 2 {
		t.Errorf("the StatefulSet's pods all went to %v with %d nodes Ready", nodes, ready)
	}

	// Deleted pods come back on their volumes' nodes with their data.
	must(t, "-n", "storage", "delete", "pods", "-l", "app=web", "--wait=true")
	rollout()
	after := claimVolumes(t, dirs)
	for pod, v := range before {
		if a := after[pod]; a != v {
			t.Errorf("%s after its deletion: %+v, before: %+v", pod, a, v)
		}
	}

	// Deleting the claims deletes the volumes and their directories.
	must(t, "-n", "storage", "delete", "statefulset", "web", "--wait=true")
	must(t, "-n", "storage", "delete", "pvc", "--all", "--wait=true")
	for pod, v := range before {
		slowly.ForNil(t, 90*time.Second, "PV and directory of "+pod+" removed", func() error {
			if out, _ := kubectl("get", "pv", v.pv, "--ignore-not-found", "-o", "name"); out != "" {
				return fmt.Errorf("PV %s still there", v.pv)
			}
			if _, err := os.Stat(v.path); err == nil {
				return fmt.Errorf("%s still there", v.path)
			}
			return nil
		})
	}
	must(t, "delete", "namespace", "storage", "--wait=true", "--timeout=60s")
	// Its work done, the provisioner is idle again.
	fmt.Printf("e2e/cluster: idle RSS %-28s %6.1f MiB\n", "local-path-provisioner", idleRSSMiB(t, "local-path-provisioner"))
}

// setNodePaths gives each node its own directory with `helm upgrade` of the
// addons' release (every other value kept) and waits for the provisioner to
// run with it.
func setNodePaths(t *testing.T, dirs map[string]string) {
	t.Helper()
	type entry struct {
		Node  string   `json:"node"`
		Paths []string `json:"paths"`
	}
	m := []entry{{Node: "DEFAULT_PATH_FOR_NON_LISTED_NODES", Paths: []string{dirs[nodeName]}}}
	for n, d := range dirs {
		m = append(m, entry{Node: n, Paths: []string{d}})
	}
	js, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	upgradeAddons(t, "local-path.nodePathMap="+string(js))
	must(t, "-n", "local-path-storage", "rollout", "status", "deployment/local-path-provisioner", "--timeout=120s")
}

// volume is what a StatefulSet pod's volume is: its PV, node, directory on
// the node and the id its pod wrote there.
type volume struct {
	pv, node, path, id string
}

// claimVolumes checks each pod of the storage StatefulSet: its claim is bound to a
// hostPath PV whose node affinity names the pod's node and whose directory is
// below that node's directory, holding the id the pod reads.
func claimVolumes(t *testing.T, dirs map[string]string) map[string]volume {
	t.Helper()
	out := map[string]volume{}
	for i := 0; i < 3; i++ {
		pod := fmt.Sprintf("web-%d", i)
		node := must(t, "-n", "storage", "get", "pod", pod, "-o", "jsonpath={.spec.nodeName}")
		pvName := must(t, "-n", "storage", "get", "pvc", "data-"+pod, "-o", "jsonpath={.spec.volumeName}")
		raw := must(t, "get", "pv", pvName, "-o", "json")
		var pv struct {
			Spec struct {
				HostPath     *struct{ Path string } `json:"hostPath"`
				NodeAffinity struct {
					Required struct {
						NodeSelectorTerms []struct {
							MatchExpressions []struct {
								Key, Operator string
								Values        []string
							} `json:"matchExpressions"`
						} `json:"nodeSelectorTerms"`
					} `json:"required"`
				} `json:"nodeAffinity"`
				ReclaimPolicy string `json:"persistentVolumeReclaimPolicy"`
			} `json:"spec"`
		}
		if err := json.Unmarshal([]byte(raw), &pv); err != nil {
			t.Fatal(err)
		}
		if pv.Spec.HostPath == nil {
			t.Fatalf("PV %s of %s is not a hostPath volume: %s", pvName, pod, raw)
		}
		terms := pv.Spec.NodeAffinity.Required.NodeSelectorTerms
		if len(terms) != 1 || len(terms[0].MatchExpressions) != 1 || terms[0].MatchExpressions[0].Key != "kubernetes.io/hostname" ||
			terms[0].MatchExpressions[0].Operator != "In" || strings.Join(terms[0].MatchExpressions[0].Values, ",") != node {
			t.Errorf("PV %s of %s (on %s): node affinity %+v", pvName, pod, node, terms)
		}
		if pv.Spec.ReclaimPolicy != "Delete" {
			t.Errorf("PV %s: reclaim policy %q", pvName, pv.Spec.ReclaimPolicy)
		}
		path := pv.Spec.HostPath.Path
		if filepath.Dir(path) != dirs[node] {
			t.Errorf("PV %s of %s on %s is at %s, not below the node's %s", pvName, pod, node, path, dirs[node])
		}
		id, err := execIn("storage", pod, "cat /data/id")
		if err != nil {
			t.Fatal(err)
		}
		onDisk, err := os.ReadFile(filepath.Join(path, "id"))
		if err != nil || string(onDisk) != id || !strings.HasPrefix(id, pod+"-") {
			t.Errorf("%s read %q; %s/id holds %q (%v)", pod, id, path, onDisk, err)
		}
		out[pod] = volume{pv: pvName, node: node, path: path, id: id}
	}
	return out
}
