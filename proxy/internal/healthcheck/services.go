package healthcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
)

// Service is what one healthCheckNodePort reports.
type Service struct {
	Name           types.NamespacedName
	LocalEndpoints int
}

// Services runs one HTTP server per healthCheckNodePort: 200 while the
// Service has local endpoints, 503 otherwise, so that an external load
// balancer only sends traffic to nodes that will not drop it.
type Services struct {
	// Host is the address to listen on ("" for all).
	Host string
	Log  logr.Logger

	mu      sync.Mutex
	servers map[int32]*server
}

type server struct {
	srv *http.Server
	svc Service
	mu  *sync.Mutex
}

// Sync makes the servers match want, a map of port to Service: it opens
// listeners for new ports, closes those no longer wanted, and updates the
// counts served. A port that cannot be bound is reported and retried on
// the next Sync.
func (s *Services) Sync(want map[int32]Service) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.servers == nil {
		s.servers = map[int32]*server{}
	}
	for port, srv := range s.servers {
		if _, ok := want[port]; !ok {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = srv.srv.Shutdown(ctx)
			cancel()
			delete(s.servers, port)
		}
	}
	var errs []error
	for port, svc := range want {
		if srv, ok := s.servers[port]; ok {
			srv.mu.Lock()
			srv.svc = svc
			srv.mu.Unlock()
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(s.Host, strconv.Itoa(int(port))))
		if err != nil {
			errs = append(errs, fmt.Errorf("health check port %d of %s: %w", port, svc.Name, err))
			continue
		}
		srv := &server{svc: svc, mu: &sync.Mutex{}}
		srv.srv = &http.Server{Handler: srv, ReadHeaderTimeout: 5 * time.Second}
		s.servers[port] = srv
		go func() {
			if err := srv.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.Log.Error(err, "Health check server stopped", "port", port)
			}
		}()
	}
	return errors.Join(errs...)
}

// Close stops every server.
func (s *Services) Close() {
	_ = s.Sync(nil)
}

func (srv *server) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	srv.mu.Lock()
	svc := srv.svc
	srv.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if svc.LocalEndpoints == 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"service":             map[string]string{"namespace": svc.Name.Namespace, "name": svc.Name.Name},
		"localEndpoints":      svc.LocalEndpoints,
		"serviceProxyHealthy": true,
	})
}
