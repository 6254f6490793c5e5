package proxy

import (
	"fmt"
	"net"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// objectID is a parsed proxy id: "name", "name:port" or "scheme:name:port",
// where scheme is http or https and port a number or a port name.
type objectID struct {
	Scheme, Name, Port string
}

// parseID splits id; kind names the object in the error ("pod").
func parseID(kind, id string) (objectID, error) {
	scheme, name, port, ok := utilnet.SplitSchemeNamePort(id)
	if !ok {
		return objectID{}, apierrors.NewBadRequest(fmt.Sprintf("invalid %s request %q", kind, id))
	}
	return objectID{Scheme: scheme, Name: name, Port: port}, nil
}

// portNumber parses a numeric port; ok is false for a port name.
func portNumber(port string) (n int32, ok bool, err error) {
	v, perr := strconv.ParseInt(port, 10, 32)
	if perr != nil {
		return 0, false, nil
	}
	if v < 1 || v > 65535 {
		return 0, true, apierrors.NewBadRequest(fmt.Sprintf("invalid port %q", port))
	}
	return int32(v), true, nil
}

// hostPort joins an address and a port, leaving the port off when it is
// unknown so the scheme's default applies.
func hostPort(host string, port int32) string {
	if port == 0 {
		if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
			return "[" + host + "]"
		}
		return host
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// proxyable reports whether the apiserver may connect to ip on a user's
// behalf. Loopback, link-local and multicast addresses are refused, as
// upstream refuses them, so that a pod or node object cannot point the
// apiserver at its own host's services (the embedded etcd listens on
// loopback).
func proxyable(ip net.IP) error {
	if ip == nil || !ip.IsGlobalUnicast() {
		return apierrors.NewBadRequest("address not allowed")
	}
	return nil
}
