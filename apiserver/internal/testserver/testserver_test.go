package testserver

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestStartRestartClose checks the helper's whole life cycle: a started
// server serves, a restart keeps the data and the address, and Close
// removes the directory it created.
func TestStartRestartClose(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := Start(ctx, Options{Verbose: testing.Verbose()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started in %v", time.Since(start))
	defer s.Close()
	client := kubernetes.NewForConfigOrDie(s.Config())

	t.Run("serves the bootstrap namespaces", func(t *testing.T) {
		if _, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}, Data: map[string]string{"k": "v"}}
	created, err := client.CoreV1().ConfigMaps(metav1.NamespaceDefault).Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("restart keeps objects and address", func(t *testing.T) {
		host := s.Config().Host
		start := time.Now()
		if err := s.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("restarted in %v", time.Since(start))
		if s.Config().Host != host {
			t.Errorf("host changed across restart: %s, then %s", host, s.Config().Host)
		}
		// The client built before the restart still works.
		got, err := client.CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, "kept", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.UID != created.UID || got.ResourceVersion != created.ResourceVersion {
			t.Errorf("after restart uid/rv = %s/%s, want %s/%s", got.UID, got.ResourceVersion, created.UID, created.ResourceVersion)
		}
	})

	t.Run("close removes the data dir", func(t *testing.T) {
		start := time.Now()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("stopped in %v", time.Since(start))
		if _, err := os.Stat(s.DataDir); !os.IsNotExist(err) {
			t.Errorf("data dir %s still there after Close (stat: %v)", s.DataDir, err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

// TestStartRefusesUnknownFlags: Args are the apiserver's own flags, and a
// misspelt one must fail the start rather than give a different server.
func TestStartRefusesUnknownFlags(t *testing.T) {
	s, err := Start(t.Context(), Options{Args: []string{"--service-cluster-ip-rnage=10.97.0.0/28"}})
	if err == nil {
		s.Close()
		t.Fatal("Start accepted an unknown flag")
	}
	if !strings.Contains(err.Error(), "service-cluster-ip-rnage") {
		t.Errorf("error %q does not name the unknown flag", err)
	}
}
