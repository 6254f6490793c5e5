package defaults_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"trireme.dev/api/defaults"
	"trireme.dev/api/scheme"
)

// FuzzDefaulting decodes arbitrary JSON into a defaulted type (Pod,
// Deployment and Service among them; pick selects which) and defaults it
// through the shared scheme. Defaulting must not panic on any partial object
// and must be idempotent: the API server defaults objects again when it
// reads them back, and a second pass that changed them would make stored
// objects drift.
//
// Run with: go test ./defaults -run '^$' -fuzz FuzzDefaulting -fuzztime 60s
func FuzzDefaulting(f *testing.F) {
	types := defaults.Types()
	index := map[string]uint8{}
	for i, obj := range types {
		index[reflect.TypeOf(obj).Elem().Name()] = uint8(i)
	}
	seeds := []struct {
		kind string
		json string
	}{
		{"Pod", `{}`},
		{"Pod", `{"spec":{"containers":[{}],"initContainers":[{"resources":{"limits":{}}}],"ephemeralContainers":[{}],"volumes":[{}]}}`},
		{"Pod", `{"spec":{"hostNetwork":true,"containers":[{"image":"x:latest","ports":[{"containerPort":1}],"livenessProbe":{"grpc":{"port":1}},"env":[{"valueFrom":{}}],"lifecycle":{"preStop":{}}}],"resources":{"limits":{"cpu":"1"}}}}`},
		{"Pod", `{"spec":{"volumes":[{"projected":{"sources":[{},{"downwardAPI":{"items":[{}]}}]}},{"ephemeral":{}},{"image":{}}]},"status":{"containerStatuses":[{"resources":{}}]}}`},
		{"Deployment", `{"spec":{"strategy":{"type":"RollingUpdate"},"template":{"spec":{"containers":[{}]}}}}`},
		{"Deployment", `{"spec":{"strategy":{"type":"Recreate","rollingUpdate":{}}}}`},
		{"Service", `{"spec":{"type":"LoadBalancer","ports":[{}],"sessionAffinity":"ClientIP","sessionAffinityConfig":{}},"status":{"loadBalancer":{"ingress":[{"ip":"1.2.3.4"}]}}}`},
		{"Service", `{"spec":{"ports":[{"targetPort":""}],"externalIPs":["x"]}}`},
		{"StatefulSet", `{"spec":{"volumeClaimTemplates":[{}],"updateStrategy":{"rollingUpdate":{}}}}`},
		{"Job", `{"spec":{"podFailurePolicy":{"rules":[{"onPodConditions":[{}]}]},"backoffLimitPerIndex":1}}`},
		{"HorizontalPodAutoscaler", `{"spec":{"behavior":{"scaleUp":{"policies":[]},"scaleDown":{}}}}`},
		{"ResourceClaim", `{"spec":{"devices":{"requests":[{"exactly":{}},{"firstAvailable":[{}]}]}},"status":{"allocation":{}}}`},
		{"PodList", `{"items":[{},{"spec":{"containers":[{}]}}]}`},
	}
	for _, s := range seeds {
		i, ok := index[s.kind]
		if !ok {
			f.Fatalf("seed kind %s is not defaulted", s.kind)
		}
		f.Add(i, []byte(s.json))
	}
	f.Fuzz(func(t *testing.T, pick uint8, data []byte) {
		proto := types[int(pick)%len(types)]
		obj := proto.DeepCopyObject()
		if err := json.Unmarshal(data, obj); err != nil {
			return
		}
		scheme.Scheme.Default(obj)
		once := mustJSON(t, obj)
		scheme.Scheme.Default(obj)
		if twice := mustJSON(t, obj); !bytes.Equal(once, twice) {
			t.Errorf("defaulting %T twice changed it\nonce:  %s\ntwice: %s", obj, once, twice)
		}
	})
}

func mustJSON(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("marshal %T: %v", obj, err)
	}
	return data
}
