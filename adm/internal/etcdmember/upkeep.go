package etcdmember

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefragResult is one member's defragmentation.
type DefragResult struct {
	Member Member
	// Before and After are its database's size on disk; InUse is what it
	// held before, which Before approaches after a defragmentation.
	Before, After, InUse int64
	Took                 time.Duration
}

// DefragOrder returns the voting members in the order they are
// defragmented: the leader last, so that the cluster changes leader at most
// once while a member is busy (a member serves nothing while it
// defragments). Learners are left out: they cannot be asked.
func DefragOrder(list []Member, leader uint64) []Member {
	var out []Member
	for _, m := range list {
		if !m.IsLearner && len(m.ClientURLs) > 0 {
			out = append(out, m)
		}
	}
	slices.SortStableFunc(out, func(a, b Member) int {
		switch {
		case a.ID == leader && b.ID != leader:
			return 1
		case b.ID == leader && a.ID != leader:
			return -1
		}
		return 0
	})
	return out
}

// Defragment defragments every voting member, one at a time, waiting after
// each until it answers again, and calls done with each result.
func (c *Client) Defragment(ctx context.Context, timeout time.Duration, done func(DefragResult)) error {
	list, err := c.Members(ctx)
	if err != nil {
		return err
	}
	leader := uint64(0)
	for _, m := range list {
		if st, err := c.c.Status(ctx, m.ClientURLs[0]); err == nil {
			leader = st.Leader
			break
		}
	}
	for _, m := range DefragOrder(list, leader) {
		ep := m.ClientURLs[0]
		st, err := c.c.Status(ctx, ep)
		if err != nil {
			return fmt.Errorf("etcd member %s is not healthy; defragment no further: %w", m.Name, err)
		}
		start := time.Now()
		dctx, cancel := context.WithTimeout(ctx, timeout)
		_, err = c.c.Defragment(dctx, ep)
		cancel()
		if err != nil {
			return fmt.Errorf("defragment etcd member %s (%s): %w", m.Name, ep, err)
		}
		after, err := c.waitStatus(ctx, ep, timeout)
		if err != nil {
			return fmt.Errorf("etcd member %s after its defragmentation: %w", m.Name, err)
		}
		done(DefragResult{Member: m, Before: st.DbSize, InUse: st.DbSizeInUse, After: after.DbSize, Took: time.Since(start)})
	}
	return nil
}

// waitStatus waits until the member at ep answers.
func (c *Client) waitStatus(ctx context.Context, ep string, timeout time.Duration) (*clientv3.StatusResponse, error) {
	deadline := time.Now().Add(timeout)
	for {
		st, err := c.c.Status(ctx, ep)
		if err == nil {
			return st, nil
		}
		if time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// CompactAll compacts the keyspace up to the current revision, which frees
// every old version for a defragmentation to give back. It is what
// recovering from NOSPACE needs at once; the apiserver only compacts what
// is 5 minutes old. Watchers behind the revision get "compacted" and
// list again, as after any compaction.
func (c *Client) CompactAll(ctx context.Context) (int64, error) {
	// Any key answers with the store's revision in its header.
	resp, err := c.c.Get(ctx, "compact_rev_key", clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("read etcd's revision: %w", err)
	}
	rev := resp.Header.Revision
	if _, err := c.c.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		return 0, fmt.Errorf("compact etcd to revision %d: %w", rev, err)
	}
	return rev, nil
}

// Alarms lists the members' active alarms (NOSPACE: a member's database
// reached its quota, and the cluster refuses writes).
func (c *Client) Alarms(ctx context.Context) ([]*etcdserverpb.AlarmMember, error) {
	resp, err := c.c.AlarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list etcd alarms: %w", err)
	}
	return resp.Alarms, nil
}

// DisarmNoSpace clears every NOSPACE alarm and returns how many it cleared.
// A member still over its quota raises it again on the next write.
func (c *Client) DisarmNoSpace(ctx context.Context) (int, error) {
	alarms, err := c.Alarms(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, a := range alarms {
		if a.Alarm != etcdserverpb.AlarmType_NOSPACE {
			continue
		}
		if _, err := c.c.AlarmDisarm(ctx, (*clientv3.AlarmMember)(a)); err != nil {
			return n, fmt.Errorf("disarm NOSPACE of etcd member %x: %w", a.MemberID, err)
		}
		n++
	}
	return n, nil
}
