package prober

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	critesting "k8s.io/cri-api/pkg/apis/testing"

	"trireme.dev/componentbase/freeport"
)

func TestProbeHandlers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	host, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	closedPort := freeport.For(t)
	c := &corev1.Container{Name: "c", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}
	m := New(critesting.NewFakeRuntimeService(), logr.Discard(), nil)
	tests := []struct {
		name    string
		probe   corev1.ProbeHandler
		wantErr bool
	}{
		{"http ok by port name", corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}, false},
		{"http 500", corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/bad", Port: intstr.FromInt32(int32(port))}}, true},
		{"tcp open", corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}, false},
		{"tcp closed", corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(closedPort))}}, true},
		{"exec through the runtime", corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, false},
		{"unknown port name", corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("nope")}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := m.probeOnce(context.Background(), c, "id", &corev1.Probe{ProbeHandler: tc.probe}, host, time.Second)
			if tc.wantErr != (err != nil) {
				t.Errorf("err %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
}

func TestVerdictsBeforeAnyProbe(t *testing.T) {
	m := New(critesting.NewFakeRuntimeService(), logr.Discard(), nil)
	if m.Ready("x") || m.Started("x") || m.LivenessFailed("x") {
		t.Error("before its first probe a container is neither ready nor started, and not failed")
	}
}
