package reset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"trireme.dev/adm/internal/etcdmember"
	"trireme.dev/adm/internal/staticpod"
)

// etcdRemoveTimeout bounds removing this node's etcd member.
const etcdRemoveTimeout = 15 * time.Second

// RemoveEtcdMember removes this node's member from a stacked etcd cluster, as
// its etcd static pod describes it, before reset stops it: the remaining
// members then keep their quorum. It reports false when there is no local
// member, or it is the cluster's last.
func RemoveEtcdMember(in Inputs) (bool, error) {
	pod, err := staticpod.Read(staticpod.Path(in.Paths.ManifestsDir(), staticpod.Etcd))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	args := pod.Spec.Containers[0].Command
	peerURL, ok := staticpod.Flag(args, "initial-advertise-peer-urls")
	clientURL, ok2 := staticpod.Flag(args, "advertise-client-urls")
	if !ok || !ok2 {
		return false, fmt.Errorf("%s names no peer or client URL", staticpod.Etcd)
	}
	c, err := etcdmember.New([]string{clientURL}, in.PKIDir)
	if err != nil {
		return false, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), etcdRemoveTimeout)
	defer cancel()
	return c.RemoveByPeerURL(ctx, peerURL)
}
