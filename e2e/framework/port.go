package framework

import (
	"fmt"
	"net"
)

// FreePort returns a TCP port on 127.0.0.1 that nothing listened on a moment
// ago. Another process may take it before the caller binds it; callers that
// start servers retry on "address already in use".
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
