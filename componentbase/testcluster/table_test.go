package testcluster

import (
	"fmt"
	"testing"
)

func TestParseTable(t *testing.T) {
	tests := []struct {
		name       string
		out        string
		wantHeader []string
		wantRows   []map[string]string
	}{
		{
			name:       "get namespaces",
			out:        "NAME          STATUS   AGE\ndefault       Active   5s\nkube-system   Active   5s\n",
			wantHeader: []string{"NAME", "STATUS", "AGE"},
			wantRows: []map[string]string{
				{"NAME": "default", "STATUS": "Active", "AGE": "5s"},
				{"NAME": "kube-system", "STATUS": "Active", "AGE": "5s"},
			},
		},
		{
			name:       "empty cells and a header with a space",
			out:        "NAME         SHORTNAMES   APIVERSION   NAMESPACED   KIND\nbindings                  v1           true         Binding\nconfigmaps   cm           v1           true         ConfigMap\n",
			wantHeader: []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"},
			wantRows: []map[string]string{
				{"NAME": "bindings", "SHORTNAMES": "", "APIVERSION": "v1", "NAMESPACED": "true", "KIND": "Binding"},
				{"NAME": "configmaps", "SHORTNAMES": "cm", "APIVERSION": "v1", "NAMESPACED": "true", "KIND": "ConfigMap"},
			},
		},
		{
			name:       "short last line",
			out:        "NAME   TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)\nweb    ClusterIP\n",
			wantHeader: []string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)"},
			wantRows: []map[string]string{
				{"NAME": "web", "TYPE": "ClusterIP", "CLUSTER-IP": "", "EXTERNAL-IP": "", "PORT(S)": ""},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := ParseTable(t, tt.out)
			tb.WantHeader(t, tt.wantHeader...)
			if fmt.Sprint(tb.Rows) != fmt.Sprint(tt.wantRows) {
				t.Errorf("rows = %v, want %v", tb.Rows, tt.wantRows)
			}
			first := tt.wantRows[0]
			if got := tb.Row(t, "NAME", first["NAME"]); fmt.Sprint(got) != fmt.Sprint(first) {
				t.Errorf("Row(NAME=%s) = %v, want %v", first["NAME"], got, first)
			}
		})
	}
}
