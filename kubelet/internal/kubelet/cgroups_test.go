package kubelet

import (
	"reflect"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
)

func TestRemovePodCgroups(t *testing.T) {
	tests := []struct {
		name   string
		driver string
		parent string
		want   []string
	}{
		{"cgroupfs default root", "cgroupfs", "", []string{"/kubepods/poduid1", "/kubepods/burstable/poduid1", "/kubepods/besteffort/poduid1"}},
		{"cgroupfs own root", "cgroupfs", "/trireme-w1/kubepods", []string{"/trireme-w1/kubepods/poduid1", "/trireme-w1/kubepods/burstable/poduid1", "/trireme-w1/kubepods/besteffort/poduid1"}},
		{"systemd leaves slices to systemd", "systemd", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			k := New(Config{CgroupDriver: tt.driver, CgroupParent: tt.parent, RemoveCgroups: func(p ...string) error {
				got = append(got, p...)
				return nil
			}}, logr.Discard())
			if err := k.removePodCgroups(types.UID("uid1")); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("removed %q, want %q", got, tt.want)
			}
		})
	}
}
