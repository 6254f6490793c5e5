package reset

import (
	"errors"
	"fmt"
	"net"
	"os"

	"trireme.dev/adm/internal/staticpod"
	"trireme.dev/adm/internal/vip"
)

// RemoveVIP takes the control plane's virtual IP off this node if its VIP
// manager held it: removing the manager's container kills it before it can
// let go. It reports whether the address was configured here.
func RemoveVIP(in Inputs, n vip.Network) (bool, error) {
	pod, err := staticpod.Read(staticpod.Path(in.Paths.ManifestsDir(), staticpod.VIPManager))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	args := pod.Spec.Containers[0].Command
	addr, _ := staticpod.Flag(args, "vip")
	ip := net.ParseIP(addr)
	if ip == nil {
		return false, fmt.Errorf("%s names no virtual IP", staticpod.VIPManager)
	}
	iface, ok := staticpod.Flag(args, "interface")
	if !ok {
		nodeIP, _ := staticpod.Flag(args, "node-ip")
		if iface, err = vip.InterfaceOf(net.ParseIP(nodeIP)); err != nil {
			return false, err
		}
	}
	return true, n.Delete(iface, ip)
}
