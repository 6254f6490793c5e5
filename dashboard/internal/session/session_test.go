package session

import (
	"strings"
	"testing"
	"time"
)

func TestSealOpen(t *testing.T) {
	key, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := s.Seal("secret-token")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewKey()
	o, _ := New(other, time.Hour)
	late, _ := New(key, time.Hour)
	late.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	flipped := []byte(sealed)
	flipped[len(flipped)/2] ^= 1
	for _, tc := range []struct {
		name   string
		sealer *Sealer
		value  string
		want   string
	}{
		{"round trip", s, sealed, "secret-token"},
		{"other key", o, sealed, ""},
		{"expired", late, sealed, ""},
		{"altered", s, string(flipped), ""},
		{"garbage", s, "not-base64!", ""},
		{"empty", s, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.sealer.Open(tc.value)
			if tc.want == "" && err == nil {
				t.Fatalf("Open = %q, want an error", got)
			}
			if got != tc.want {
				t.Fatalf("Open = %q, want %q", got, tc.want)
			}
		})
	}
	if strings.Contains(sealed, "secret-token") {
		t.Fatal("the sealed value holds the token in clear")
	}
}
