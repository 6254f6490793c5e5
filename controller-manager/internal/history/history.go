// Package history keeps the ControllerRevisions of StatefulSets and
// DaemonSets: one per distinct pod template, named after the owner and a
// hash of the template, numbered in the order they became current, so
// `kubectl rollout history` and `undo` work on them.
package history

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/dump"

	"trireme.dev/controller-manager/internal/ownership"
)

// HashLabel labels every revision with its hash.
const HashLabel = "controller.kubernetes.io/hash"

// TemplatePatch returns the revision data for template: the strategic merge
// patch that puts it back into its owner's spec.template, as upstream
// stores it and kubectl rollout undo applies it.
func TemplatePatch(template any) (runtime.RawExtension, error) {
	raw, err := json.Marshal(template)
	if err != nil {
		return runtime.RawExtension{}, err
	}
	var t map[string]any
	if err := json.Unmarshal(raw, &t); err != nil {
		return runtime.RawExtension{}, err
	}
	t["$patch"] = "replace"
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"template": t}})
	return runtime.RawExtension{Raw: data}, err
}

// Hash returns the name-safe hash of a revision's data and the collision
// count, as upstream's HashControllerRevision computes it (FNV-1, not 1a,
// the count in decimal), so a StatefulSet's revisions keep their names
// when a cluster moves to this controller-manager.
func Hash(data []byte, collisionCount *int32) string {
	h := fnv.New32()
	h.Write(data)
	if collisionCount != nil {
		h.Write([]byte(strconv.FormatInt(int64(*collisionCount), 10)))
	}
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// PodTemplateHash is upstream's hash of a pod template, the
// pod-template-hash of a Deployment's ReplicaSets and the revision hash of
// a DaemonSet: FNV-1a over the template's deterministic dump
// (k8s.io/utils/dump.ForHash), then the collision count as 8
// little-endian bytes. Equal values to upstream's mean a cluster moved
// from kube-controller-manager keeps its ReplicaSets and pods.
func PodTemplateHash(t *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	h.Write([]byte(dump.ForHash(*t)))
	if collisionCount != nil {
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:], uint32(*collisionCount))
		h.Write(b[:])
	}
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// New returns a revision of owner (of kind) holding data, labelled with
// templateLabels and the hash.
func New(owner metav1.Object, kind schema.GroupVersionKind, templateLabels map[string]string, data runtime.RawExtension, revision int64, collisionCount *int32) *appsv1.ControllerRevision {
	return NewWithHash(owner, kind, templateLabels, data, revision, Hash(data.Raw, collisionCount), HashLabel)
}

// NewWithHash returns a revision of owner named after hash, which it
// carries under label key hashLabel besides templateLabels: upstream's
// DaemonSet controller names revisions after PodTemplateHash under
// controller-revision-hash instead of hashing their data.
func NewWithHash(owner metav1.Object, kind schema.GroupVersionKind, templateLabels map[string]string, data runtime.RawExtension, revision int64, hash, hashLabel string) *appsv1.ControllerRevision {
	l := maps.Clone(templateLabels)
	if l == nil {
		l = map[string]string{}
	}
	l[hashLabel] = hash
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            owner.GetName() + "-" + hash,
			Namespace:       owner.GetNamespace(),
			Labels:          l,
			OwnerReferences: []metav1.OwnerReference{ownership.Ref(owner, kind)},
		},
		Data:     data,
		Revision: revision,
	}
}

// Equal reports whether two revisions hold the same data.
func Equal(a, b *appsv1.ControllerRevision) bool {
	return jsonEqual(a.Data.Raw, b.Data.Raw)
}

func jsonEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// Sort orders revisions by number, then creation, then name.
func Sort(revs []*appsv1.ControllerRevision) {
	slices.SortStableFunc(revs, func(a, b *appsv1.ControllerRevision) int {
		if a.Revision != b.Revision {
			if a.Revision < b.Revision {
				return -1
			}
			return 1
		}
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return bytes.Compare([]byte(a.Name), []byte(b.Name))
	})
}

// Next returns the number the next revision gets.
func Next(revs []*appsv1.ControllerRevision) int64 {
	var n int64
	for _, r := range revs {
		n = max(n, r.Revision)
	}
	return n + 1
}

// Sync makes sure a revision equal to want exists as the newest and returns
// it with the collision count to store in status: an equal existing revision
// is renumbered to want's number unless it already is the newest, and a
// name taken by different data bumps collisionCount and retries.
func Sync(ctx context.Context, client kubernetes.Interface, revs []*appsv1.ControllerRevision, want *appsv1.ControllerRevision, rebuild func(collisionCount *int32) *appsv1.ControllerRevision, collisionCount int32) (*appsv1.ControllerRevision, int32, error) {
	Sort(revs)
	var equal []*appsv1.ControllerRevision
	for _, r := range revs {
		if Equal(r, want) {
			equal = append(equal, r)
		}
	}
	if n := len(equal); n > 0 {
		last := equal[n-1]
		if len(revs) > 0 && revs[len(revs)-1] == last {
			return last, collisionCount, nil
		}
		if last.Revision == want.Revision {
			return last, collisionCount, nil
		}
		upd := last.DeepCopy()
		upd.Revision = want.Revision
		got, err := client.AppsV1().ControllerRevisions(upd.Namespace).Update(ctx, upd, metav1.UpdateOptions{})
		if err != nil {
			return nil, collisionCount, fmt.Errorf("renumber revision %s: %w", upd.Name, err)
		}
		return got, collisionCount, nil
	}
	for range 10 {
		got, err := client.AppsV1().ControllerRevisions(want.Namespace).Create(ctx, want, metav1.CreateOptions{})
		if err == nil {
			return got, collisionCount, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, collisionCount, fmt.Errorf("create revision %s: %w", want.Name, err)
		}
		existing, gerr := client.AppsV1().ControllerRevisions(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
		if gerr != nil {
			return nil, collisionCount, fmt.Errorf("get revision %s: %w", want.Name, gerr)
		}
		if ref := metav1.GetControllerOf(existing); ref != nil && ref.UID == want.OwnerReferences[0].UID && Equal(existing, want) {
			return existing, collisionCount, nil
		}
		collisionCount++
		want = rebuild(&collisionCount)
	}
	return nil, collisionCount, fmt.Errorf("create revision: too many hash collisions")
}

// Truncate deletes the oldest revisions not in live beyond limit.
func Truncate(ctx context.Context, client kubernetes.Interface, revs []*appsv1.ControllerRevision, live map[string]bool, limit int32) error {
	Sort(revs)
	var dead []*appsv1.ControllerRevision
	for _, r := range revs {
		if !live[r.Name] {
			dead = append(dead, r)
		}
	}
	excess := len(dead) - int(limit)
	for i := 0; i < excess; i++ {
		err := client.AppsV1().ControllerRevisions(dead[i].Namespace).Delete(ctx, dead[i].Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete revision %s: %w", dead[i].Name, err)
		}
	}
	return nil
}
