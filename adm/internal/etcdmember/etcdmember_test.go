package etcdmember

import "testing"

func TestInitialCluster(t *testing.T) {
	tests := []struct {
		name string
		list []Member
		self uint64
		want string
	}{
		{name: "first joiner", list: []Member{{ID: 1, Name: "cp1", PeerURLs: []string{"https://10.0.0.1:2380"}}, {ID: 2, PeerURLs: []string{"https://10.0.0.2:2380"}, IsLearner: true}},
			self: 2, want: "cp1=https://10.0.0.1:2380,cp2=https://10.0.0.2:2380"},
		{name: "another unstarted member is left out", list: []Member{{ID: 1, Name: "cp1", PeerURLs: []string{"https://10.0.0.1:2380"}}, {ID: 3, PeerURLs: []string{"https://10.0.0.3:2380"}},
			{ID: 2, PeerURLs: []string{"https://10.0.0.2:2380"}}}, self: 2, want: "cp1=https://10.0.0.1:2380,cp2=https://10.0.0.2:2380"},
		{name: "join run again", list: []Member{{ID: 2, Name: "cp2", PeerURLs: []string{"https://10.0.0.2:2380"}}, {ID: 1, Name: "cp1", PeerURLs: []string{"https://10.0.0.1:2380"}}},
			self: 2, want: "cp1=https://10.0.0.1:2380,cp2=https://10.0.0.2:2380"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InitialCluster(tt.list, tt.self, "cp2"); got != tt.want {
				t.Errorf("InitialCluster = %q, want %q", got, tt.want)
			}
		})
	}
}
