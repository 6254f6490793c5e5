package testcluster

import (
	"regexp"
	"strings"
	"testing"
)

// Table is kubectl's human-readable output, cells keyed by header.
type Table struct {
	// Header holds the column names in order.
	Header []string
	// Rows holds one map per line below the header, column name to cell.
	Rows []map[string]string
}

// headerName is one column name: words with single spaces between them
// (kubectl pads columns with at least three spaces).
var headerName = regexp.MustCompile(`\S+( \S+)*`)

// ParseTable reads kubectl's human-readable output, failing tb when there
// is none. Columns are found by where the header's names start, since
// cells may be empty (SHORTNAMES of api-resources).
func ParseTable(tb testing.TB, out string) Table {
	tb.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		tb.Fatalf("no table in output %q", out)
	}
	head := lines[0]
	var starts []int
	var t Table
	for _, loc := range headerName.FindAllStringIndex(head, -1) {
		starts = append(starts, loc[0])
		t.Header = append(t.Header, head[loc[0]:loc[1]])
	}
	for _, line := range lines[1:] {
		row := map[string]string{}
		for i, start := range starts {
			end := len(line)
			if i+1 < len(starts) {
				end = min(starts[i+1], len(line))
			}
			if start < end {
				row[t.Header[i]] = strings.TrimSpace(line[start:end])
			} else {
				row[t.Header[i]] = ""
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// WantHeader fails tb unless the table's columns are exactly names.
func (t Table) WantHeader(tb testing.TB, names ...string) {
	tb.Helper()
	if strings.Join(t.Header, "|") != strings.Join(names, "|") {
		tb.Fatalf("columns = %q, want %q", t.Header, names)
	}
}

// Row returns the row whose column key has value, failing tb if there is
// none.
func (t Table) Row(tb testing.TB, key, value string) map[string]string {
	tb.Helper()
	for _, r := range t.Rows {
		if r[key] == value {
			return r
		}
	}
	tb.Fatalf("no row with %s=%q in %v", key, value, t.Rows)
	return nil
}
