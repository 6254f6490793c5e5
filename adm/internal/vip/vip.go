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
	"sync/atomic"
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
	// ShuttingDown, when set, says whether this node's apiserver is
	// shutting down. From SIGTERM on an apiserver says so while it still
	// serves for its --shutdown-delay-duration: the holder hands the
	// address over in that time, rather than let it die with the server and
	// leave the others to wait the Lease out.
	ShuttingDown func(context.Context) (bool, error)
}

// DrainPoll is how often a holder asks whether its apiserver is shutting down.
const DrainPoll = 250 * time.Millisecond

// Manager holds the virtual IP while its lease lasts.
type Manager struct {
	cfg    Config
	client kubernetes.Interface
	net    Network
	log    logr.Logger
	status *status
	// handingOver is set while the holder gives the address up because its
	// apiserver is shutting down.
	handingOver atomic.Bool
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
					// Stopped or handing over, this manager has released
					// the Lease itself; one that lost it must let go at once.
					m.release(ctx.Err() != nil || m.handingOver.Load())
				}
			},
		}, func(ctx context.Context) error {
			m.lead(ctx)
			return nil
		})
		if m.handingOver.Swap(false) {
			// Standing again at once could win the Lease back.
			m.awaitServing(ctx)
		}
		// A lost lease is no reason to stop: stand again.
		if err != nil && !errors.Is(err, leaderelection.ErrLeadershipLost) {
			return err
		}
	}
	return nil
}

// shuttingDown says whether this node's apiserver says it is shutting
// down; an apiserver that does not answer is not known to be.
func (m *Manager) shuttingDown(ctx context.Context) bool {
	if m.cfg.ShuttingDown == nil {
		return false
	}
	down, err := m.cfg.ShuttingDown(ctx)
	return err == nil && down
}

// awaitServing waits until this node's apiserver no longer says it is
// shutting down: the old process has gone (nothing answers) or a new one
// serves.
func (m *Manager) awaitServing(ctx context.Context) {
	t := time.NewTicker(DrainPoll)
	defer t.Stop()
	for m.shuttingDown(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// lead adds and announces the address, then keeps announcing it now and then
// so that neighbours that missed the first announcements learn it too. It
// returns, ending the lead, when this node's apiserver starts shutting down.
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
	announce := time.NewTimer(0)
	defer announce.Stop()
	var drain <-chan time.Time
	if m.cfg.ShuttingDown != nil {
		t := time.NewTicker(DrainPoll)
		defer t.Stop()
		drain = t.C
	}
	for i := 0; ; {
		select {
		case <-ctx.Done():
			return
		case <-announce.C:
			if err := m.net.Announce(m.cfg.Interface, m.cfg.VIP); err != nil {
				m.status.failures.WithLabelValues("announce").Inc()
				m.log.Error(err, "Could not announce the virtual IP", "vip", m.cfg.VIP)
			}
			wait := time.Second
			if i >= m.cfg.Announcements {
				wait = 30 * time.Second
			}
			i++
			announce.Reset(wait)
		case <-drain:
			if m.shuttingDown(ctx) {
				m.log.Info("This node's apiserver is shutting down: handing the virtual IP over", "vip", m.cfg.VIP)
				m.handingOver.Store(true)
				return
			}
		}
	}
}

// awaitSuccessor waits, at most a lease's duration, until the Lease names
// another holder: a holder handing the address over (it stops, or its
// apiserver does) keeps it until then, so that it is never on no node.
func (m *Manager) awaitSuccessor() {
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.Lease.LeaseDuration.Duration)
	defer cancel()
	leases := m.client.CoordinationV1().Leases(m.cfg.Lease.ResourceNamespace)
	t := time.NewTicker(DrainPoll / 2)
	defer t.Stop()
	for {
		l, err := leases.Get(ctx, m.cfg.Lease.ResourceName, metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" && *l.Spec.HolderIdentity != m.cfg.Identity {
			m.log.Info("Handed the virtual IP over", "vip", m.cfg.VIP, "to", *l.Spec.HolderIdentity)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// release takes the address off this node, once another holder has it
// when handOver is set.
func (m *Manager) release(handOver bool) {
	if handOver && m.status.held.Load() {
		m.awaitSuccessor()
	}
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
