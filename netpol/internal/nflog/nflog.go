// Package nflog receives the packets the table logs to an NFLOG group
// (the denied flows, when the agent is asked to log them): their log
// prefix and the addresses and ports of their IPv4 header.
package nflog

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// From linux/netfilter/nfnetlink_log.h.
const (
	msgPacket      = 0
	msgConfig      = 1
	attrCfgCmd     = 1
	attrCfgMode    = 2
	attrPayload    = 9
	attrPrefix     = 10
	cmdBind        = 1
	copyPacket     = 2
	copyRange      = 64 // an IPv4 header and the start of TCP's or UDP's
	nfnetlinkV0    = 0
	ulogMsg        = unix.NFNL_SUBSYS_ULOG << 8
	nfgenmsgLength = 4
)

// Packet is one logged packet.
type Packet struct {
	// Prefix is the log prefix of the rule that logged it.
	Prefix   string
	Src, Dst netip.Addr
	// Protocol is the IP protocol number; SrcPort and DstPort are set for
	// TCP, UDP and SCTP.
	Protocol         uint8
	SrcPort, DstPort uint16
}

// Reader receives the packets of one NFLOG group.
type Reader struct {
	sock *nl.NetlinkSocket
}

// Open binds group in the current network namespace.
func Open(group uint16) (*Reader, error) {
	sock, err := nl.Subscribe(unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, fmt.Errorf("nflog socket: %w", err)
	}
	r := &Reader{sock: sock}
	cmd := nl.NewRtAttr(attrCfgCmd, []byte{cmdBind})
	mode := make([]byte, 6)
	binary.BigEndian.PutUint32(mode, copyRange)
	mode[4] = copyPacket
	for _, attr := range []*nl.RtAttr{cmd, nl.NewRtAttr(attrCfgMode, mode)} {
		req := nl.NewNetlinkRequest(ulogMsg|msgConfig, unix.NLM_F_REQUEST)
		// res_id is big-endian, and Serialize copies the struct as it is.
		resID := binary.NativeEndian.Uint16(binary.BigEndian.AppendUint16(nil, group))
		req.AddData(&nl.Nfgenmsg{NfgenFamily: unix.AF_UNSPEC, Version: nfnetlinkV0, ResId: resID})
		req.AddData(attr)
		if err := sock.Send(req); err != nil {
			sock.Close()
			return nil, fmt.Errorf("bind nflog group %d: %w", group, err)
		}
	}
	return r, nil
}

// Close stops receiving; a Read in progress returns an error.
func (r *Reader) Close() { r.sock.Close() }

// Read returns the next packets logged.
func (r *Reader) Read() ([]Packet, error) {
	msgs, _, err := r.sock.Receive()
	if err != nil {
		return nil, err
	}
	var out []Packet
	for _, m := range msgs {
		if m.Header.Type == unix.NLMSG_ERROR {
			if len(m.Data) >= 4 {
				if errno := int32(binary.LittleEndian.Uint32(m.Data)); errno != 0 {
					return out, fmt.Errorf("nflog: %w", unix.Errno(-errno))
				}
			}
			continue
		}
		if m.Header.Type != ulogMsg|msgPacket || len(m.Data) < nfgenmsgLength {
			continue
		}
		if p, ok := parse(m.Data[nfgenmsgLength:]); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// parse reads a packet message's attributes.
func parse(b []byte) (Packet, bool) {
	var p Packet
	var payload []byte
	for len(b) >= 4 {
		l := int(binary.LittleEndian.Uint16(b))
		typ := binary.LittleEndian.Uint16(b[2:]) & 0x7fff
		if l < 4 || l > len(b) {
			return p, false
		}
		data := b[4:l]
		switch typ {
		case attrPrefix:
			p.Prefix = strings.TrimRight(string(data), "\x00")
		case attrPayload:
			payload = data
		}
		b = b[min(len(b), (l+3)&^3):]
	}
	return p, ipv4(payload, &p)
}

// ipv4 reads the addresses, protocol and ports of an IPv4 packet.
func ipv4(b []byte, p *Packet) bool {
	if len(b) < 20 || b[0]>>4 != 4 {
		return false
	}
	p.Protocol = b[9]
	p.Src = netip.AddrFrom4([4]byte(b[12:16]))
	p.Dst = netip.AddrFrom4([4]byte(b[16:20]))
	hl := int(b[0]&0x0f) * 4
	switch p.Protocol {
	case unix.IPPROTO_TCP, unix.IPPROTO_UDP, unix.IPPROTO_SCTP:
		if len(b) >= hl+4 {
			p.SrcPort = binary.BigEndian.Uint16(b[hl:])
			p.DstPort = binary.BigEndian.Uint16(b[hl+2:])
		}
	}
	return true
}
