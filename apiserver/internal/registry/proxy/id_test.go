package proxy

import "testing"

func TestParseID(t *testing.T) {
	tests := []struct {
		name, id string
		want     objectID
		wantErr  bool
	}{
		{name: "name only", id: "web", want: objectID{Name: "web"}},
		{name: "name and port number", id: "web:8080", want: objectID{Name: "web", Port: "8080"}},
		{name: "name and port name", id: "web:http", want: objectID{Name: "web", Port: "http"}},
		{name: "scheme name port", id: "https:web:443", want: objectID{Scheme: "https", Name: "web", Port: "443"}},
		{name: "http scheme without port", id: "http:web:", want: objectID{Scheme: "http", Name: "web"}},
		{name: "unknown scheme", id: "ftp:web:21", wantErr: true},
		{name: "too many parts", id: "https:web:443:x", wantErr: true},
		{name: "empty name", id: ":80", wantErr: true},
		{name: "empty id", id: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseID("pod", tt.id)
			if tt.wantErr {
				if statusCode(err) != 400 {
					t.Fatalf("parseID(%q) error = %v, want a 400", tt.id, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseID(%q) = %+v, %v; want %+v", tt.id, got, err, tt.want)
			}
		})
	}
}
