// Package prober runs containers' startup, liveness and readiness probes
// (exec through CRI ExecSync, httpGet, tcpSocket, grpc) with every timing
// field, one goroutine per container and probe, and keeps their verdicts.
package prober

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	cri "k8s.io/cri-api/pkg/apis"
	"trireme.dev/kubelet/internal/podconfig"
)

// Kind is a probe kind.
type Kind string

// The probe kinds.
const (
	Startup   Kind = "startup"
	Liveness  Kind = "liveness"
	Readiness Kind = "readiness"
)

// Manager runs probe workers and answers with their results.
type Manager struct {
	runtime cri.RuntimeService
	log     logr.Logger
	// onChange wakes the pod's worker when a verdict changes.
	onChange func(uid types.UID)

	mu      sync.Mutex
	workers map[key]*worker
	results map[key]bool
	// failedHard marks verdicts that failed past the failure threshold.
	failedHard map[key]bool
}

type key struct {
	containerID string
	kind        Kind
}

// New returns a manager probing through runtime; onChange is called with
// the pod's UID when a verdict changes.
func New(runtime cri.RuntimeService, log logr.Logger, onChange func(types.UID)) *Manager {
	return &Manager{runtime: runtime, log: log, onChange: onChange, workers: map[key]*worker{}, results: map[key]bool{}, failedHard: map[key]bool{}}
}

// SetOnChange sets the function called when a verdict changes.
func (m *Manager) SetOnChange(f func(types.UID)) { m.onChange = f }

type worker struct {
	cancel context.CancelFunc
	uid    types.UID
}

// UpdatePod starts workers for the running containers' probes and stops
// those of containers that are gone.
func (m *Manager) UpdatePod(pod *corev1.Pod, status *corev1.PodStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[key]bool{}
	podIP := status.PodIP
	all := append(append([]corev1.ContainerStatus(nil), status.InitContainerStatuses...), status.ContainerStatuses...)
	for _, cs := range all {
		if cs.State.Running == nil || cs.ContainerID == "" {
			continue
		}
		c := podconfig.FindContainer(pod, cs.Name)
		if c == nil {
			continue
		}
		id := stripRuntime(cs.ContainerID)
		for kind, p := range map[Kind]*corev1.Probe{Startup: c.StartupProbe, Liveness: c.LivenessProbe, Readiness: c.ReadinessProbe} {
			if p == nil {
				continue
			}
			k := key{id, kind}
			want[k] = true
			if _, ok := m.workers[k]; ok {
				continue
			}
			ctx, cancel := context.WithCancel(context.Background())
			m.workers[k] = &worker{cancel: cancel, uid: pod.UID}
			go m.run(ctx, pod, c.DeepCopy(), k, p.DeepCopy(), podIP)
		}
	}
	for k, w := range m.workers {
		if w.uid == pod.UID && !want[k] {
			w.cancel()
			delete(m.workers, k)
			delete(m.results, k)
			delete(m.failedHard, k)
		}
	}
}

// RemovePod stops every worker of the pod.
func (m *Manager) RemovePod(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, w := range m.workers {
		if w.uid == uid {
			w.cancel()
			delete(m.workers, k)
			delete(m.results, k)
			delete(m.failedHard, k)
		}
	}
}

func (m *Manager) has(k key) bool {
	_, ok := m.workers[k]
	return ok
}

// Ready reports the readiness probe's verdict for a container that has
// one: false until the probe first succeeds (or before its worker runs).
func (m *Manager) Ready(containerID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.results[key{containerID, Readiness}]
}

// Started reports the startup probe's verdict for a container that has
// one: false until the probe succeeds.
func (m *Manager) Started(containerID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.results[key{containerID, Startup}]
}

// LivenessFailed reports a liveness failure, or a startup probe that
// failed its threshold.
func (m *Manager) LivenessFailed(containerID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, kind := range []Kind{Liveness, Startup} {
		k := key{containerID, kind}
		if v, ok := m.results[k]; ok && !v && m.failedHard[k] {
			return true
		}
	}
	return false
}

// run probes until ctx ends, as the probe's timing fields say.
func (m *Manager) run(ctx context.Context, pod *corev1.Pod, c *corev1.Container, k key, p *corev1.Probe, podIP string) {
	log := m.log.WithValues("pod", types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, "container", c.Name, "probe", k.kind)
	period := time.Duration(max(p.PeriodSeconds, 1)) * time.Second
	timeout := time.Duration(max(p.TimeoutSeconds, 1)) * time.Second
	success := int(max(p.SuccessThreshold, 1))
	failure := int(max(p.FailureThreshold, 1))
	if p.InitialDelaySeconds > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(p.InitialDelaySeconds) * time.Second):
		}
	}
	// Liveness starts out "alive"; readiness and startup start out "no".
	m.mu.Lock()
	if k.kind == Liveness {
		m.results[k] = true
	}
	m.mu.Unlock()
	okRun, failRun := 0, 0
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		if k.kind != Startup && !m.startedLocked(k.containerID) {
			// Other probes wait for the startup probe.
		} else {
			err := m.probeOnce(ctx, c, k.containerID, p, podIP, timeout)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				okRun, failRun = okRun+1, 0
			} else {
				failRun, okRun = failRun+1, 0
				log.V(2).Info("Probe failed", "err", err.Error(), "failures", failRun)
			}
			switch {
			case okRun >= success:
				m.set(k, true, false, pod.UID)
				m.mu.Lock()
				delete(m.failedHard, k)
				m.mu.Unlock()
				if k.kind == Startup {
					return
				}
			case failRun >= failure:
				if k.kind != Readiness {
					log.Info("Probe failed past its threshold", "err", err.Error())
				}
				m.set(k, false, true, pod.UID)
				if k.kind == Startup || k.kind == Liveness {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (m *Manager) startedLocked(containerID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := key{containerID, Startup}
	if !m.has(k) {
		return true
	}
	return m.results[k]
}

func (m *Manager) set(k key, v, hard bool, uid types.UID) {
	m.mu.Lock()
	if !m.has(k) {
		m.mu.Unlock()
		return
	}
	old, had := m.results[k]
	m.results[k] = v
	if hard {
		m.failedHard[k] = true
	}
	m.mu.Unlock()
	if (!had || old != v || hard) && m.onChange != nil {
		m.onChange(uid)
	}
}

func (m *Manager) probeOnce(ctx context.Context, c *corev1.Container, containerID string, p *corev1.Probe, podIP string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case p.Exec != nil:
		stdout, stderr, err := m.runtime.ExecSync(ctx, containerID, p.Exec.Command, timeout)
		if err != nil {
			return fmt.Errorf("exec %v: %w: %s", p.Exec.Command, err, strings.TrimSpace(string(stdout)+string(stderr)))
		}
		return nil
	case p.HTTPGet != nil:
		return httpProbe(ctx, c, p.HTTPGet, podIP)
	case p.TCPSocket != nil:
		host := p.TCPSocket.Host
		if host == "" {
			host = podIP
		}
		port, err := resolvePort(p.TCPSocket.Port, c)
		if err != nil {
			return err
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	case p.GRPC != nil:
		conn, err := grpc.NewClient(net.JoinHostPort(podIP, strconv.Itoa(int(p.GRPC.Port))), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		defer conn.Close()
		resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: ptrString(p.GRPC.Service)})
		if err != nil {
			return err
		}
		if resp.Status != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("grpc health: %s", resp.Status)
		}
		return nil
	}
	return fmt.Errorf("probe has no handler")
}

func ptrString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// httpTransport does not keep connections: a probe opens one each time,
// as upstream's prober does, so a hung keep-alive never hides a failure.
var httpTransport = &http.Transport{
	DisableKeepAlives: true,
	TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // probes do not verify, as upstream's
}

func httpProbe(ctx context.Context, c *corev1.Container, g *corev1.HTTPGetAction, podIP string) error {
	host := g.Host
	if host == "" {
		host = podIP
	}
	port, err := resolvePort(g.Port, c)
	if err != nil {
		return err
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := g.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	url := fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(host, strconv.Itoa(port)), path)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/1.37")
	req.Header.Set("Accept", "*/*")
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	client := &http.Client{Transport: httpTransport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<10))
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
	}
	return nil
}

func resolvePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	if p.Type == intstr.Int {
		return p.IntValue(), nil
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("port %q not found in container %s", p.StrVal, c.Name)
}

func stripRuntime(id string) string {
	if _, after, ok := strings.Cut(id, "://"); ok {
		return after
	}
	return id
}
