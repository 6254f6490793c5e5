// Package crilist lists the runtime's containers and pod sandboxes for the
// kubelet's relist, which polls them every second: it reads only each
// one's ID, state and pod UID, straight from the CRI's wire format, into
// a buffer it keeps. Decoding the whole reply into CRI messages (every
// label and annotation a map entry) and a fresh receive buffer for it
// each time were most of the CPU an idle kubelet with 100 pods spent.
package crilist

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	criutil "k8s.io/cri-client/pkg/util"
)

// PodUIDLabel is the label naming the pod a sandbox or container belongs
// to, as upstream's kubelet spells it.
const PodUIDLabel = "io.kubernetes.pod.uid"

// Entry is one container or pod sandbox: its ID, its CRI state
// (runtimeapi.ContainerState or runtimeapi.PodSandboxState) and the pod
// UID its labels name ("" when they name none).
type Entry struct {
	ID     string
	State  int32
	PodUID string
}

// Lister lists over a connection of its own to the runtime.
type Lister struct {
	conn *grpc.ClientConn

	mu  sync.Mutex
	buf []byte // the last reply, kept for the next
}

// maxReply bounds a reply, as the CRI client bounds its own.
const maxReply = 16 << 20

// Dial connects to the CRI runtime at endpoint (unix:///path). The
// connection is made lazily, on the first list.
func Dial(endpoint string) (*Lister, error) {
	addr, dialer, err := criutil.GetAddressAndDialer(endpoint)
	if err != nil {
		return nil, fmt.Errorf("runtime endpoint %q: %w", endpoint, err)
	}
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithAuthority("localhost"),
		grpc.WithContextDialer(dialer),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxReply)))
	if err != nil {
		return nil, fmt.Errorf("connect to the runtime at %s: %w", endpoint, err)
	}
	return &Lister{conn: conn}, nil
}

// Close closes the connection.
func (l *Lister) Close() error { return l.conn.Close() }

// Containers lists every container.
func (l *Lister) Containers(ctx context.Context) ([]Entry, error) {
	return l.list(ctx, "/runtime.v1.RuntimeService/ListContainers", &runtimeapi.ListContainersRequest{}, ContainerFields)
}

// Sandboxes lists every pod sandbox.
func (l *Lister) Sandboxes(ctx context.Context) ([]Entry, error) {
	return l.list(ctx, "/runtime.v1.RuntimeService/ListPodSandbox", &runtimeapi.ListPodSandboxRequest{}, SandboxFields)
}

func (l *Lister) list(ctx context.Context, method string, req any, f Fields) ([]Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	reply := rawReply{b: l.buf[:0]}
	if err := l.conn.Invoke(ctx, method, req, &reply, grpc.ForceCodecV2(rawCodec{})); err != nil {
		return nil, err
	}
	l.buf = reply.b
	return Decode(reply.b, f)
}

// Fields are the field numbers Decode reads: the list's repeated item,
// and within an item its ID, state and labels.
type Fields struct {
	Items, ID, State, Labels protowire.Number
}

// ContainerFields are runtime.v1's ListContainersResponse and Container;
// SandboxFields are its ListPodSandboxResponse and PodSandbox.
var (
	ContainerFields = Fields{Items: 1, ID: 1, State: 6, Labels: 8}
	SandboxFields   = Fields{Items: 1, ID: 1, State: 3, Labels: 5}
)

// Decode reads the entries of a list reply in protobuf wire format,
// skipping every other field.
func Decode(b []byte, f Fields) ([]Entry, error) {
	var out []Entry
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != f.Items || typ != protowire.BytesType {
			return nil
		}
		e, err := decodeItem(v, f)
		if err != nil {
			return fmt.Errorf("item %d: %w", len(out), err)
		}
		out = append(out, e)
		return nil
	})
	return out, err
}

func decodeItem(b []byte, f Fields) (Entry, error) {
	var e Entry
	err := walk(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch {
		case num == f.ID && typ == protowire.BytesType:
			e.ID = string(v)
		case num == f.State && typ == protowire.VarintType:
			e.State = int32(n)
		case num == f.Labels && typ == protowire.BytesType:
			uid, err := labelValue(v, PodUIDLabel)
			if err != nil {
				return fmt.Errorf("labels: %w", err)
			}
			if uid != nil {
				e.PodUID = string(uid)
			}
		}
		return nil
	})
	return e, err
}

// labelValue returns the value of a map entry (key 1, value 2) if its key
// is key, else nil.
func labelValue(b []byte, key string) ([]byte, error) {
	var k, v []byte
	err := walk(b, func(num protowire.Number, typ protowire.Type, val []byte, _ uint64) error {
		if typ == protowire.BytesType {
			switch num {
			case 1:
				k = val
			case 2:
				v = val
			}
		}
		return nil
	})
	if err != nil || string(k) != key {
		return nil, err
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// walk calls fn with each field of a message: its number, its wire type,
// and its bytes (length-delimited fields) or its value (varints).
func walk(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var (
			bytes []byte
			value uint64
		)
		switch typ {
		case protowire.BytesType:
			bytes, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			value, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, bytes, value); err != nil {
			return err
		}
	}
	return nil
}

// rawReply holds a reply's bytes as they came.
type rawReply struct{ b []byte }

// rawCodec marshals requests as protobuf and keeps replies raw. Its name
// is "proto", so the runtime sees an ordinary CRI call.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2("proto").Marshal(v)
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*rawReply)
	if !ok {
		return fmt.Errorf("crilist: cannot unmarshal into %T", v)
	}
	for _, buf := range data {
		r.b = append(r.b, buf.ReadOnlyData()...)
	}
	return nil
}

func (rawCodec) Name() string { return "proto" }
