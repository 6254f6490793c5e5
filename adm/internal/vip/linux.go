package vip

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Linux changes the host's addresses over netlink and announces them: ARP
// through a raw packet socket for IPv4, an unsolicited Neighbor
// Advertisement through an ICMPv6 socket for IPv6.
type Linux struct{}

// hostAddr is ip alone (/32, /128). An IPv6 address skips duplicate
// address detection: it would stay tentative, unusable as the source of
// the advertisement, for a second or more of the failover.
func hostAddr(ip net.IP) *netlink.Addr {
	if ip4 := ip.To4(); ip4 != nil {
		return &netlink.Addr{IPNet: &net.IPNet{IP: ip4, Mask: net.CIDRMask(32, 32)}}
	}
	return &netlink.Addr{IPNet: &net.IPNet{IP: ip.To16(), Mask: net.CIDRMask(128, 128)}, Flags: unix.IFA_F_NODAD}
}

func prefixLen(ip net.IP) int {
	if ip.To4() != nil {
		return 32
	}
	return 128
}

// Add implements Network.
func (Linux) Add(iface string, ip net.IP) error {
	link, err := netlink.LinkByName(iface)
	if err != nil {
		return fmt.Errorf("interface %s: %w", iface, err)
	}
	if err := netlink.AddrAdd(link, hostAddr(ip)); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("add %s/%d to %s: %w", ip, prefixLen(ip), iface, err)
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
		return fmt.Errorf("remove %s/%d from %s: %w", ip, prefixLen(ip), iface, err)
	}
	return nil
}

// Announce implements Network: a gratuitous ARP request (sender and target
// both ip), broadcast, which makes neighbours update their caches; for an
// IPv6 address an unsolicited Neighbor Advertisement to all nodes.
func (Linux) Announce(iface string, ip net.IP) error {
	i, err := net.InterfaceByName(iface)
	if err != nil {
		return err
	}
	if ip.To4() == nil {
		return advertise(i, ip)
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

// advertise sends UnsolicitedNA for ip from i to ff02::1, from ip itself,
// with the hop limit of 255 receivers require (RFC 4861 7.1.2); the kernel
// fills the ICMPv6 checksum of a raw ICMPv6 socket.
func advertise(i *net.Interface, ip net.IP) error {
	msg, err := UnsolicitedNA(i.HardwareAddr, ip)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMPV6)
	if err != nil {
		return fmt.Errorf("ICMPv6 socket: %w", err)
	}
	defer unix.Close(fd)
	for _, o := range []struct{ opt, v int }{{unix.IPV6_MULTICAST_HOPS, 255}, {unix.IPV6_UNICAST_HOPS, 255}, {unix.IPV6_MULTICAST_IF, i.Index}} {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, o.opt, o.v); err != nil {
			return fmt.Errorf("ICMPv6 socket option %d: %w", o.opt, err)
		}
	}
	from := &unix.SockaddrInet6{ZoneId: uint32(i.Index)}
	copy(from.Addr[:], ip.To16())
	if err := unix.Bind(fd, from); err != nil {
		return fmt.Errorf("bind to %s: %w", ip, err)
	}
	to := &unix.SockaddrInet6{ZoneId: uint32(i.Index)}
	copy(to.Addr[:], allNodes)
	if err := unix.Sendto(fd, msg, 0, to); err != nil {
		return fmt.Errorf("send Neighbor Advertisement on %s: %w", i.Name, err)
	}
	return nil
}

var allNodes = net.ParseIP("ff02::1")

// UnsolicitedNA builds the ICMPv6 message of an unsolicited Neighbor
// Advertisement of ip at mac: the override flag set, so that neighbours
// replace what they cached, and the target link-layer address option. The
// checksum is left zero for the kernel.
func UnsolicitedNA(mac net.HardwareAddr, ip net.IP) ([]byte, error) {
	if len(mac) != 6 || ip.To4() != nil || ip.To16() == nil {
		return nil, fmt.Errorf("a Neighbor Advertisement needs an Ethernet address and an IPv6 address (%s, %s)", mac, ip)
	}
	m := make([]byte, 0, 32)
	m = append(m, 136, 0, 0, 0)  // type: Neighbor Advertisement, code, checksum
	m = append(m, 0x20, 0, 0, 0) // flags: override
	m = append(m, ip.To16()...)  // target address
	m = append(m, 2, 1)          // option: target link-layer address, 8 bytes
	return append(m, mac...), nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
