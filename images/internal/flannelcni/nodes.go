package flannelcni

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// AnnotationPrefix is the prefix of the node annotations flanneld keeps its
// state in (its --kube-annotation-prefix default).
const AnnotationPrefix = "flannel.alpha.coreos.com"

// HealthGetter fetches a URL; tests substitute it.
type HealthGetter func(ctx context.Context, url string) error

// HTTPHealth gets url with a short timeout and wants 200.
func HTTPHealth(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// CheckNodes checks flannel on every node from inside a pod: each node has a
// pod range (spec.podCIDR), flanneld's annotations for it (backend type and
// the address other nodes reach it at) and its NetworkUnavailable condition
// False. With the vxlan backend it also gets each node's flanneld /healthz at
// the node's VXLAN device address (its range's first address), which from a
// pod on another node crosses the overlay both ways. It returns every
// problem found, one per node.
func CheckNodes(ctx context.Context, c kubernetes.Interface, healthzPort int, get HealthGetter) error {
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	if len(nodes.Items) == 0 {
		return errors.New("no nodes")
	}
	var errs []error
	for _, n := range nodes.Items {
		if err := checkNode(ctx, n, healthzPort, get); err != nil {
			errs = append(errs, fmt.Errorf("node %s: %w", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

func checkNode(ctx context.Context, n corev1.Node, healthzPort int, get HealthGetter) error {
	if n.Spec.PodCIDR == "" {
		return errors.New("no spec.podCIDR")
	}
	cidr, err := netip.ParsePrefix(n.Spec.PodCIDR)
	if err != nil {
		return fmt.Errorf("spec.podCIDR: %w", err)
	}
	backend := n.Annotations[AnnotationPrefix+"/backend-type"]
	if backend == "" || n.Annotations[AnnotationPrefix+"/public-ip"] == "" {
		return fmt.Errorf("no %s/backend-type or public-ip annotation: flanneld has not registered the node", AnnotationPrefix)
	}
	up := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeNetworkUnavailable && c.Status == corev1.ConditionFalse {
			up = true
		}
	}
	if !up {
		return errors.New("condition NetworkUnavailable is not False")
	}
	if backend != "vxlan" {
		return nil
	}
	url := "http://" + net.JoinHostPort(cidr.Masked().Addr().String(), strconv.Itoa(healthzPort)) + "/healthz"
	if err := get(ctx, url); err != nil {
		return fmt.Errorf("flanneld through the overlay: %w", err)
	}
	return nil
}
