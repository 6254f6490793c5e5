package vip

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"trireme.dev/componentbase/netns"
)

// TestLinuxAnnounce puts an IPv4 and an IPv6 address on one end of a veth
// pair between two network namespaces and checks what the other end
// receives: the gratuitous ARP, and an unsolicited Neighbor Advertisement
// from the address itself with hop limit 255 and a valid checksum (the
// receiving kernel would drop it otherwise).
func TestLinuxAnnounce(t *testing.T) {
	if testing.Short() {
		t.Skip("creates network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	a, b := fmt.Sprintf("vipa%d", os.Getpid()), fmt.Sprintf("vipb%d", os.Getpid())
	for _, ns := range []string{a, b} {
		netns.IP(t, "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	}
	netns.IP(t, "-n", a, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", b)
	netns.IP(t, "-n", a, "link", "set", "eth0", "up")
	netns.IP(t, "-n", b, "link", "set", "eth0", "up")
	netns.IP(t, "-n", a, "addr", "add", "192.0.2.1/24", "dev", "eth0")

	for _, tc := range []struct {
		name  string
		ip    string
		proto uint16
		check func(frame []byte) error
	}{
		{name: "IPv4: gratuitous ARP", ip: "192.0.2.100", proto: unix.ETH_P_ARP, check: func(f []byte) error {
			if len(f) < 42 || !bytes.Equal(f[28:32], net.ParseIP("192.0.2.100").To4()) || !bytes.Equal(f[38:42], net.ParseIP("192.0.2.100").To4()) {
				return fmt.Errorf("not a gratuitous ARP for the address: %x", f)
			}
			return nil
		}},
		{name: "IPv6: unsolicited Neighbor Advertisement", ip: "fd00:50::10", proto: unix.ETH_P_IPV6, check: func(f []byte) error {
			ip6 := f[14:]
			if len(ip6) < 40+32 || ip6[6] != unix.IPPROTO_ICMPV6 || ip6[40] != 136 {
				return errSkip
			}
			switch {
			case ip6[7] != 255:
				return fmt.Errorf("hop limit %d, want 255", ip6[7])
			case !net.IP(ip6[8:24]).Equal(net.ParseIP("fd00:50::10")):
				return fmt.Errorf("source %s, want the address", net.IP(ip6[8:24]))
			case !net.IP(ip6[24:40]).Equal(net.ParseIP("ff02::1")):
				return fmt.Errorf("destination %s, want ff02::1", net.IP(ip6[24:40]))
			case !net.IP(ip6[48:64]).Equal(net.ParseIP("fd00:50::10")) || ip6[44]&0x20 == 0:
				return fmt.Errorf("not an overriding advertisement of the address: %x", ip6[40:])
			case icmp6Checksum(ip6) != 0:
				return fmt.Errorf("bad checksum: %x", ip6[40:])
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ip := net.ParseIP(tc.ip)
			got := make(chan error, 1)
			if err := netns.Run(b, func() error { return capture(tc.proto, tc.check, got) }); err != nil {
				t.Fatal(err)
			}
			if err := netns.Run(a, func() error {
				if err := (Linux{}).Add("eth0", ip); err != nil {
					return err
				}
				return Linux{}.Announce("eth0", ip)
			}); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-got:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("nothing received")
			}
			if err := netns.Run(a, func() error { return Linux{}.Delete("eth0", ip) }); err != nil {
				t.Fatal(err)
			}
		})
	}
}

var errSkip = errors.New("another packet")

// capture opens a packet socket for proto in the calling thread's
// namespace and reports, in the background, check's verdict on the first
// frame it does not skip.
func capture(proto uint16, check func([]byte) error, got chan<- error) error {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, int(htons(proto)))
	if err != nil {
		return err
	}
	go func() {
		defer unix.Close(fd)
		buf := make([]byte, 2048)
		deadline := time.Now().Add(5 * time.Second)
		tv := unix.NsecToTimeval(int64(time.Second))
		_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		for time.Now().Before(deadline) {
			n, _, err := unix.Recvfrom(fd, buf, 0)
			if err != nil {
				continue
			}
			if err := check(buf[:n]); !errors.Is(err, errSkip) {
				got <- err
				return
			}
		}
	}()
	return nil
}

// icmp6Checksum sums the ICMPv6 message of the IPv6 packet p with its
// pseudo-header: 0 when the checksum in it is right.
func icmp6Checksum(p []byte) uint16 {
	body := p[40:]
	var sum uint32
	add := func(b []byte) {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint32(b[i])<<8 | uint32(b[i+1])
		}
		if len(b)%2 == 1 {
			sum += uint32(b[len(b)-1]) << 8
		}
	}
	add(p[8:40])
	sum += uint32(len(body)) + unix.IPPROTO_ICMPV6
	add(body)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
