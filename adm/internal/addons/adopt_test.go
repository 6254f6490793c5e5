package addons

import (
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The adoption patch drops the earlier triremeadm's field ownership and
// keeps every other manager's; with none left it strips them all ([{}]).
func TestAdoptionPatch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		managers []string
		want     []string
	}{
		{name: "triremeadm and a controller", managers: []string{"triremeadm", "kube-controller-manager"}, want: []string{"kube-controller-manager"}},
		{name: "triremeadm alone", managers: []string{"triremeadm"}, want: []string{""}},
		{name: "none", want: []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fields []metav1.ManagedFieldsEntry
			for _, m := range tc.managers {
				fields = append(fields, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationApply})
			}
			data, err := adoptionPatch(fields)
			if err != nil {
				t.Fatal(err)
			}
			var patch struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal(data, &patch); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range patch.Metadata.ManagedFields {
				got = append(got, f.Manager)
			}
			if !slices.Equal(got, tc.want) || patch.Metadata.Labels[managedByLabel] != "Helm" || patch.Metadata.Annotations[releaseNameAnnotation] != ReleaseName {
				t.Errorf("patch %s: managers %q, want %q", data, got, tc.want)
			}
		})
	}
}
