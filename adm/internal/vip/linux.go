package vip

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Linux changes the host's addresses over netlink and sends ARP through a
// raw packet socket.
type Linux struct{}

func hostAddr(ip net.IP) *netlink.Addr {
	return &netlink.Addr{IPNet: &net.IPNet{IP: ip.To4(), Mask: net.CIDRMask(32, 32)}}
}

// Add implements Network.
func (Linux) Add(iface string, ip net.IP) error {
	link, err := netlink.LinkByName(iface)
	if err != nil {
		return fmt.Errorf("interface %s: %w", iface, err)
	}
	if err := netlink.AddrAdd(link, hostAddr(ip)); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("add %s/32 to %s: %w", ip, iface, err)
	}
	return nil
}

// Delete implements Network.
func (Linux) Delete(iface string, ip net.IP) error {
	link, err := netlink.LinkByName(iface)
	if err != nil {
		return fmt.Errorf("interface %s: %w", iface, err)
	}
	if err := netlink.AddrDel(link, hostAddr(ip)); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) {
		return fmt.Errorf("remove %s/32 from %s: %w", ip, iface, err)
	}
	return nil
}

// Announce implements Network: a gratuitous ARP request (sender and target
// both ip), broadcast, which makes neighbours update their caches.
func (Linux) Announce(iface string, ip net.IP) error {
	i, err := net.InterfaceByName(iface)
	if err != nil {
		return err
	}
	frame, err := GratuitousARP(i.HardwareAddr, ip)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ARP)))
	if err != nil {
		return fmt.Errorf("packet socket: %w", err)
	}
	defer unix.Close(fd)
	to := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ARP), Ifindex: i.Index, Halen: 6}
	copy(to.Addr[:], broadcast)
	if err := unix.Sendto(fd, frame, 0, to); err != nil {
		return fmt.Errorf("send ARP on %s: %w", iface, err)
	}
	return nil
}

var broadcast = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// GratuitousARP builds the Ethernet frame of a gratuitous ARP request for ip
// from mac.
func GratuitousARP(mac net.HardwareAddr, ip net.IP) ([]byte, error) {
	ip4 := ip.To4()
	if len(mac) != 6 || ip4 == nil {
		return nil, fmt.Errorf("gratuitous ARP needs an Ethernet address and an IPv4 address (%s, %s)", mac, ip)
	}
	f := make([]byte, 0, 42)
	f = append(f, broadcast...)
	f = append(f, mac...)
	f = binary.BigEndian.AppendUint16(f, unix.ETH_P_ARP)
	f = binary.BigEndian.AppendUint16(f, 1)             // hardware type: Ethernet
	f = binary.BigEndian.AppendUint16(f, unix.ETH_P_IP) // protocol type: IPv4
	f = append(f, 6, 4)                                 // address lengths
	f = binary.BigEndian.AppendUint16(f, 1)             // operation: request
	f = append(f, mac...)                               // sender hardware address
	f = append(f, ip4...)                               // sender protocol address
	f = append(f, 0, 0, 0, 0, 0, 0)                     // target hardware address
	return append(f, ip4...), nil                       // target protocol address
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
