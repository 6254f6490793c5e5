// Package vip is the control plane's virtual-IP manager, after kube-vip: on
// every control-plane node a static pod takes part in a leader election (a
// Lease in kube-system, through the node's own apiserver); the holder puts the
// virtual IP (/32) on the interface carrying the node's address and announces
// it with gratuitous ARP, and takes it off when it loses the lease or stops.
// A holder whose apiserver dies cannot renew the lease, so the address moves
// to a node whose apiserver still answers.
package vip

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	componentbaseconfig "k8s.io/component-base/config/v1alpha1"

	"trireme.dev/componentbase/leaderelection"
)

// DefaultLeaseName is the Lease in kube-system the managers elect through.
const DefaultLeaseName = "trireme-vip"

// Network puts addresses on interfaces and announces them; Linux is the real one.
type Network interface {
	// Add puts ip/32 on iface; an address already there is no error.
	Add(iface string, ip net.IP) error
	// Delete takes ip off iface; an address not there is no error.
	Delete(iface string, ip net.IP) error
	// Announce sends a gratuitous ARP for ip from iface.
	Announce(iface string, ip net.IP) error
}

// Config is a manager's configuration.
type Config struct {
	// VIP is the virtual IP; Interface carries it.
	VIP       net.IP
	Interface string
	// Identity is this manager's name in the Lease: the node name, which
	// tells triremeadm and operators where the address is.
	Identity string
	// Lease names the Lease (DefaultLeaseName in kube-system when empty)
	// and holds the election's timings.
	Lease componentbaseconfig.LeaderElectionConfiguration
	// Announcements is how many gratuitous ARPs a new holder sends, a second apart.
	Announcements int
}

// Manager holds the virtual IP while its lease lasts.
type Manager struct {
	cfg    Config
	client kubernetes.Interface
	net    Network
	log    logr.Logger
	status *status
}

// New returns a manager; c must reach this node's own apiserver.
func New(cfg Config, c kubernetes.Interface, n Network, log logr.Logger) *Manager {
	if cfg.Lease.ResourceName == "" {
		cfg.Lease.ResourceName = DefaultLeaseName
	}
	if cfg.Lease.ResourceNamespace == "" {
		cfg.Lease.ResourceNamespace = metav1.NamespaceSystem
	}
	return &Manager{cfg: cfg, client: c, net: n, log: log, status: newStatus()}
}

// Run takes part in the election until ctx ends, holding the address while
// leading; it takes the address off before it returns.
func (m *Manager) Run(ctx context.Context) error {
	// A manager that was killed while leading may have left the address behind.
	if err := m.net.Delete(m.cfg.Interface, m.cfg.VIP); err != nil {
		return fmt.Errorf("remove a stale %s from %s: %w", m.cfg.VIP, m.cfg.Interface, err)
	}
	ctx = logr.NewContext(ctx, m.log)
	for ctx.Err() == nil {
		err := leaderelection.Run(ctx, leaderelection.Config{
			Lease: m.cfg.Lease, Identity: m.cfg.Identity, Client: m.client, Watchdog: m.status.watchdog,
			Leading: func(on bool) {
				if !on {
					m.release()
				}
			},
		}, func(ctx context.Context) error {
			m.lead(ctx)
			return nil
		})
		// A lost lease is no reason to stop: stand again.
		if err != nil && !errors.Is(err, leaderelection.ErrLeadershipLost) {
			return err
		}
	}
	return nil
}

// lead adds and announces the address, then keeps announcing it now and then
// so that neighbours that missed the first announcements learn it too.
func (m *Manager) lead(ctx context.Context) {
	if err := m.net.Add(m.cfg.Interface, m.cfg.VIP); err != nil {
		m.status.failures.WithLabelValues("add").Inc()
		m.log.Error(err, "Could not add the virtual IP", "vip", m.cfg.VIP, "interface", m.cfg.Interface)
		return
	}
	m.status.held.Store(true)
	m.status.holding.Set(1)
	m.status.transitions.WithLabelValues("acquired").Inc()
	m.log.Info("Holding the virtual IP", "vip", m.cfg.VIP, "interface", m.cfg.Interface)
	for i := 0; ; i++ {
		if err := m.net.Announce(m.cfg.Interface, m.cfg.VIP); err != nil {
			m.status.failures.WithLabelValues("announce").Inc()
			m.log.Error(err, "Could not announce the virtual IP", "vip", m.cfg.VIP)
		}
		wait := time.Second
		if i >= m.cfg.Announcements {
			wait = 30 * time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func (m *Manager) release() {
	if err := m.net.Delete(m.cfg.Interface, m.cfg.VIP); err != nil {
		m.status.failures.WithLabelValues("delete").Inc()
		m.log.Error(err, "Could not remove the virtual IP", "vip", m.cfg.VIP, "interface", m.cfg.Interface)
		return
	}
	if m.status.held.Swap(false) {
		// OnStoppedLeading runs whenever an election ends, held or not.
		m.status.holding.Set(0)
		m.status.transitions.WithLabelValues("released").Inc()
	}
	m.log.Info("Released the virtual IP", "vip", m.cfg.VIP, "interface", m.cfg.Interface)
}

// InterfaceOf returns the name of the interface holding ip.
func InterfaceOf(ip net.IP) (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	for _, i := range ifaces {
		addrs, err := i.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return i.Name, nil
			}
		}
	}
	return "", fmt.Errorf("no interface holds %s", ip)
}

// InterfaceOn returns the name of the interface with an address whose
// network holds ip (an interface of the LoadBalancer pool's subnet), and
// false when none has.
func InterfaceOn(ip net.IP) (string, bool) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", false
	}
	for _, i := range ifaces {
		addrs, err := i.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			// A host address (/32, /128: an announced one) is no network.
			if ones, bits := n.Mask.Size(); ones < bits && n.Contains(ip) {
				return i.Name, true
			}
		}
	}
	return "", false
}
