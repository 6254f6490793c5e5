package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFieldSelectors covers the kind-specific selectable fields beyond
// metadata.name (which TestResources checks everywhere); pods and events
// have their own tests.
func TestFieldSelectors(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)

	t.Run("secrets by type", func(t *testing.T) {
		api := client.CoreV1().Secrets(ns)
		opaque := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("opaque")}, Type: corev1.SecretTypeOpaque}
		token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("dockercfg")}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}}
		for _, s := range []*corev1.Secret{opaque, token} {
			if _, err := api.Create(ctx, s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for selector, want := range map[string][]string{
			"type=Opaque":                         {opaque.Name},
			"type=kubernetes.io/dockerconfigjson": {token.Name},
			"type!=Opaque":                        {token.Name},
		} {
			list, err := api.List(ctx, metav1.ListOptions{FieldSelector: selector})
			if err != nil {
				t.Fatalf("%s: %v", selector, err)
			}
			var got []string
			for _, s := range list.Items {
				got = append(got, s.Name)
			}
			if !sameSet(got, want) {
				t.Errorf("secrets with %s = %v, want %v", selector, got, want)
			}
		}
	})

	t.Run("nodes by spec.unschedulable", func(t *testing.T) {
		api := client.CoreV1().Nodes()
		label := uniqueName("fs")
		cordoned := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("cordoned"), Labels: map[string]string{"fs": label}}, Spec: corev1.NodeSpec{Unschedulable: true}}
		open := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("open"), Labels: map[string]string{"fs": label}}}
		for _, n := range []*corev1.Node{cordoned, open} {
			if _, err := api.Create(ctx, n, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for selector, want := range map[string][]string{
			"spec.unschedulable=true":  {cordoned.Name},
			"spec.unschedulable=false": {open.Name},
		} {
			list, err := api.List(ctx, metav1.ListOptions{LabelSelector: "fs=" + label, FieldSelector: selector})
			if err != nil {
				t.Fatalf("%s: %v", selector, err)
			}
			var got []string
			for _, n := range list.Items {
				got = append(got, n.Name)
			}
			if !sameSet(got, want) {
				t.Errorf("nodes with %s = %v, want %v", selector, got, want)
			}
		}
	})

	t.Run("unsupported field is 400", func(t *testing.T) {
		_, err := client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{FieldSelector: "data.key=x"})
		wantStatus(t, err, 400)
	})
}
