package nflog

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

func attr(typ uint16, data []byte) []byte {
	b := make([]byte, 4, 4+len(data)+3)
	binary.LittleEndian.PutUint16(b, uint16(4+len(data)))
	binary.LittleEndian.PutUint16(b[2:], typ)
	b = append(b, data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func TestParse(t *testing.T) {
	ip := make([]byte, 24)
	ip[0] = 0x45
	ip[9] = 6
	copy(ip[12:], []byte{10, 0, 0, 1})
	copy(ip[16:], []byte{10, 0, 0, 2})
	binary.BigEndian.PutUint16(ip[20:], 40000)
	binary.BigEndian.PutUint16(ip[22:], 80)
	msg := append(attr(1, []byte{0, 0, 8, 0, 1, 0}), attr(attrPrefix, []byte("np ingress prod/web\x00"))...)
	msg = append(msg, attr(attrPayload, ip)...)
	got, ok := parse(msg)
	want := Packet{Prefix: "np ingress prod/web", Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), Protocol: 6, SrcPort: 40000, DstPort: 80}
	if !ok || got != want {
		t.Errorf("parse = %+v, %v; want %+v", got, ok, want)
	}
	for _, bad := range [][]byte{nil, {1, 0}, attr(attrPayload, []byte{0x60, 0, 0}), {255, 255, 9, 0}} {
		if _, ok := parse(bad); ok {
			t.Errorf("parse(%v) succeeded", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte{8, 0, 10, 0, 'a', 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) { parse(b) })
}
