package crilist

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func containersReply() *runtimeapi.ListContainersResponse {
	return &runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{
		{
			Id: "c1", PodSandboxId: "s1", State: runtimeapi.ContainerState_CONTAINER_RUNNING,
			Metadata:    &runtimeapi.ContainerMetadata{Name: "app", Attempt: 2},
			Image:       &runtimeapi.ImageSpec{Image: "busybox"},
			Labels:      map[string]string{"io.kubernetes.container.name": "app", PodUIDLabel: "uid-1", "z": "y"},
			Annotations: map[string]string{PodUIDLabel: "not-a-label"},
			CreatedAt:   42,
		},
		{Id: "c2", State: runtimeapi.ContainerState_CONTAINER_EXITED, Labels: map[string]string{"other": "x"}},
		{Id: "c3"},
	}}
}

func TestDecode(t *testing.T) {
	sandboxes := &runtimeapi.ListPodSandboxResponse{Items: []*runtimeapi.PodSandbox{
		{Id: "s1", State: runtimeapi.PodSandboxState_SANDBOX_READY, Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Uid: "uid-1"}, Labels: map[string]string{PodUIDLabel: "uid-1"}, RuntimeHandler: "runc"},
		{Id: "s2", State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, Annotations: map[string]string{"a": "b"}},
	}}
	for _, tc := range []struct {
		name   string
		msg    proto.Message
		fields Fields
		want   []Entry
	}{
		{"containers", containersReply(), ContainerFields, []Entry{
			{ID: "c1", State: int32(runtimeapi.ContainerState_CONTAINER_RUNNING), PodUID: "uid-1"},
			{ID: "c2", State: int32(runtimeapi.ContainerState_CONTAINER_EXITED)},
			{ID: "c3", State: int32(runtimeapi.ContainerState_CONTAINER_CREATED)},
		}},
		{"sandboxes", sandboxes, SandboxFields, []Entry{
			{ID: "s1", State: int32(runtimeapi.PodSandboxState_SANDBOX_READY), PodUID: "uid-1"},
			{ID: "s2", State: int32(runtimeapi.PodSandboxState_SANDBOX_NOTREADY)},
		}},
		{"empty", &runtimeapi.ListContainersResponse{}, ContainerFields, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := proto.Marshal(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(b, tc.fields)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeMalformed(t *testing.T) {
	b, err := proto.Marshal(containersReply())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"truncated", b[:len(b)-3]},
		{"bad tag", []byte{0x80}},
		{"length past the end", []byte{0x0a, 0x10, 0x0a}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode(tc.b, ContainerFields); err == nil {
				t.Error("no error")
			}
		})
	}
}

// FuzzDecode checks Decode against the generated CRI messages: whatever
// protobuf accepts, Decode reads the same entries from; nothing panics.
func FuzzDecode(f *testing.F) {
	b, _ := proto.Marshal(containersReply())
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x02, 0x30, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Decode(b, ContainerFields)
		var msg runtimeapi.ListContainersResponse
		if proto.Unmarshal(b, &msg) != nil {
			return
		}
		if err != nil {
			t.Fatalf("protobuf reads it, Decode fails: %v", err)
		}
		var want []Entry
		for _, c := range msg.Containers {
			want = append(want, Entry{ID: c.Id, State: int32(c.State), PodUID: c.Labels[PodUIDLabel]})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("entries (-protobuf +Decode):\n%s", diff)
		}
	})
}
