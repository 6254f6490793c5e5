// Package etcdmember changes the membership of the cluster's stacked etcd as
// kubeadm does for control-plane nodes: a joining node is added as a learner
// (which cannot cost the cluster its quorum while it catches up) and promoted
// to a voting member once it is in sync; a node being reset removes its own
// member first. It talks to the members with the etcd healthcheck client
// certificate.
package etcdmember

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"trireme.dev/adm/internal/pki"
)

// dialTimeout bounds connecting to the members.
const dialTimeout = 5 * time.Second

// Client is a connection to the etcd cluster.
type Client struct {
	c *clientv3.Client
}

// New connects to endpoints (https URLs) with the healthcheck client
// certificate and the etcd CA below pkiDir.
func New(endpoints []string, pkiDir string) (*Client, error) {
	kp, err := pki.Load(pkiDir, "etcd/healthcheck-client")
	if err != nil {
		return nil, fmt.Errorf("etcd client certificate: %w", err)
	}
	caPEM, err := os.ReadFile(pki.CertPath(pkiDir, pki.EtcdCA))
	if err != nil {
		return nil, fmt.Errorf("etcd CA: %w", err)
	}
	ca, err := pki.ParseCert(caPEM)
	if err != nil {
		return nil, fmt.Errorf("etcd CA: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	tlsCfg := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}},
		RootCAs:      pool,
		MinVersion:   tls.VersionTLS12,
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: tlsCfg, DialTimeout: dialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("connect to etcd %s: %w", strings.Join(endpoints, ","), err)
	}
	return &Client{c: c}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

// Member is one etcd member.
type Member struct {
	ID                   uint64
	Name                 string
	PeerURLs, ClientURLs []string
	IsLearner            bool
}

// Members lists the cluster's members.
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	resp, err := c.c.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list etcd members: %w", err)
	}
	return members(resp.Members), nil
}

func members(in []*etcdserverpb.Member) []Member {
	out := make([]Member, 0, len(in))
	for _, m := range in {
		out = append(out, Member{ID: m.ID, Name: m.Name, PeerURLs: m.PeerURLs, ClientURLs: m.ClientURLs, IsLearner: m.IsLearner})
	}
	return out
}

// AddLearner adds the member name at peerURL as a learner, unless a member
// with that peer URL exists already (a join run again), and returns its ID and
// the --initial-cluster the new member starts with.
func (c *Client) AddLearner(ctx context.Context, name, peerURL string) (uint64, string, error) {
	list, err := c.Members(ctx)
	if err != nil {
		return 0, "", err
	}
	var id uint64
	if i := slices.IndexFunc(list, func(m Member) bool { return slices.Contains(m.PeerURLs, peerURL) }); i >= 0 {
		id = list[i].ID
	} else {
		resp, err := c.addLearner(ctx, peerURL)
		if err != nil {
			return 0, "", fmt.Errorf("add etcd learner %s: %w", peerURL, err)
		}
		id, list = resp.Member.ID, members(resp.Members)
	}
	return id, InitialCluster(list, id, name), nil
}

// unhealthyRetry bounds how long a member add waits out etcd's "unhealthy
// cluster": etcd refuses to change membership until its leader has been
// connected to a quorum for 5 s, so a join right after another one's
// promotion is refused for a few seconds.
const unhealthyRetry = 30 * time.Second

func (c *Client) addLearner(ctx context.Context, peerURL string) (*clientv3.MemberAddResponse, error) {
	deadline := time.Now().Add(unhealthyRetry)
	for {
		resp, err := c.c.MemberAddAsLearner(ctx, []string{peerURL})
		if err == nil || !errors.Is(err, rpctypes.ErrUnhealthy) || time.Now().After(deadline) {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// InitialCluster renders --initial-cluster: every member as name=peerURL, the
// member self (not started yet, so nameless) under name.
func InitialCluster(list []Member, self uint64, name string) string {
	var parts []string
	for _, m := range list {
		n := m.Name
		if m.ID == self {
			n = name
		}
		if n == "" {
			// Another member that has not started yet: it cannot be named.
			continue
		}
		for _, u := range m.PeerURLs {
			parts = append(parts, n+"="+u)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Promote makes the learner id a voting member, retrying while it catches up
// with the leader, until timeout.
func (c *Client) Promote(ctx context.Context, id uint64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := c.c.MemberPromote(ctx, id)
		if err == nil {
			return nil
		}
		if strings.Contains(err.Error(), "not a learner") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("promote etcd learner %x within %s: %w", id, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// RemoveByPeerURL removes the member at peerURL. It reports false when there
// is no such member, or it is the last one (which etcd cannot remove; the data
// directory goes with it).
func (c *Client) RemoveByPeerURL(ctx context.Context, peerURL string) (bool, error) {
	list, err := c.Members(ctx)
	if err != nil {
		return false, err
	}
	i := slices.IndexFunc(list, func(m Member) bool { return slices.Contains(m.PeerURLs, peerURL) })
	if i < 0 || len(list) == 1 {
		return false, nil
	}
	// Ask the other members: the one removed stops as soon as it applies
	// its removal, often before it answers ("etcdserver: server stopped").
	var others []string
	for j, m := range list {
		if j != i {
			others = append(others, m.ClientURLs...)
		}
	}
	if len(others) > 0 {
		c.c.SetEndpoints(others...)
	}
	if _, err := c.c.MemberRemove(ctx, list[i].ID); err != nil {
		return false, fmt.Errorf("remove etcd member %s: %w", list[i].Name, err)
	}
	return true, nil
}
