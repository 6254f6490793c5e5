package printers

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"trireme.dev/api/events"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func TestToTableList(t *testing.T) {
	remaining := int64(7)
	list := &corev1.PodList{
		ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next", RemainingItemCount: &remaining},
		Items:    []corev1.Pod{{ObjectMeta: objMeta("a")}, {ObjectMeta: objMeta("b")}},
	}
	tbl, err := ToTable(list, false)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.ResourceVersion != "42" || tbl.Continue != "next" || tbl.RemainingItemCount == nil || *tbl.RemainingItemCount != 7 {
		t.Errorf("list meta = %+v", tbl.ListMeta)
	}
	if !reflect.DeepEqual(tbl.ColumnDefinitions, podColumns) {
		t.Errorf("columns = %v", tbl.ColumnDefinitions)
	}
	if len(tbl.Rows) != 2 {
		t.Fatalf("rows = %d", len(tbl.Rows))
	}
	for i, row := range tbl.Rows {
		if row.Object.Object != &list.Items[i] {
			t.Errorf("row %d object = %p, want the list item %p", i, row.Object.Object, &list.Items[i])
		}
		if row.Cells[0] != list.Items[i].Name {
			t.Errorf("row %d name = %v", i, row.Cells[0])
		}
	}
}

func TestToTableSingleObject(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: objMeta("a")}
	pod.ResourceVersion = "9"
	tbl, err := ToTable(pod, true)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.ColumnDefinitions != nil {
		t.Errorf("noHeaders still returned columns")
	}
	if tbl.ResourceVersion != "9" || tbl.Continue != "" || tbl.RemainingItemCount != nil {
		t.Errorf("table meta = %+v", tbl.ListMeta)
	}
	if len(tbl.Rows) != 1 || tbl.Rows[0].Object.Object != pod {
		t.Errorf("rows = %+v", tbl.Rows)
	}
}

func TestToTableEmptyListHasColumns(t *testing.T) {
	for _, tt := range []struct {
		name string
		list runtime.Object
		want []metav1.TableColumnDefinition
	}{
		{"empty deployment list", &appsv1.DeploymentList{}, deploymentColumns},
		{"empty event hub list", &events.EventList{}, eventColumns},
		{"empty limitrange list", &corev1.LimitRangeList{}, defaultPrinter.columns},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tbl, err := ToTable(tt.list, false)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tbl.ColumnDefinitions, tt.want) || len(tbl.Rows) != 0 {
				t.Errorf("table = %+v", tbl)
			}
		})
	}
}

func TestToTableUnknownTypeFallsBack(t *testing.T) {
	cr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr", CreationTimestamp: metav1.NewTime(now)}}
	tbl, err := render(cr, false, now)
	if err != nil {
		t.Fatal(err)
	}
	names := columnNames(tbl.ColumnDefinitions)
	if names != "Name,Created At" || tbl.ColumnDefinitions[1].Type != "date" {
		t.Errorf("columns = %s", names)
	}
	if want := []any{"lr", "2026-03-04T12:00:00Z"}; !reflect.DeepEqual(tbl.Rows[0].Cells, want) {
		t.Errorf("cells = %v, want %v", tbl.Rows[0].Cells, want)
	}
}

func TestToTableRejectsObjectsWithoutMetadata(t *testing.T) {
	if _, err := ToTable(&metav1.Status{}, false); err == nil {
		t.Error("want an error for an object without object metadata")
	}
}

func TestToTableControllerRevisionBadOwnerFails(t *testing.T) {
	cr := &appsv1.ControllerRevision{ObjectMeta: objMeta("x")}
	cr.OwnerReferences = []metav1.OwnerReference{{APIVersion: "a/b/c", Kind: "K", Name: "n", Controller: ptr(true)}}
	if _, err := ToTable(cr, false); err == nil {
		t.Error("want an error for an unparsable owner apiVersion")
	}
}

func TestFlowSchemaListSortedByPrecedence(t *testing.T) {
	fs := func(name string, precedence int32) flowcontrolv1.FlowSchema {
		return flowcontrolv1.FlowSchema{ObjectMeta: objMeta(name), Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: precedence}}
	}
	list := &flowcontrolv1.FlowSchemaList{Items: []flowcontrolv1.FlowSchema{fs("global-default", 9900), fs("b", 1000), fs("exempt", 1), fs("a", 1000)}}
	tbl, err := ToTable(list, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range tbl.Rows {
		got = append(got, r.Cells[0].(string))
	}
	if want := []string{"exempt", "a", "b", "global-default"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	if list.Items[0].Name != "global-default" {
		t.Error("sorting the table reordered the caller's list")
	}
}

// TestColumnsGolden pins every kind's columns (name, type, format,
// priority) to testdata/columns.golden, reviewed against upstream's
// printers. Run with -update after a deliberate change.
func TestColumnsGolden(t *testing.T) {
	var lines []string
	for _, p := range printers {
		lines = append(lines, fmt.Sprintf("%s: %s", typeName(p), describeColumns(p.columns)))
	}
	sort.Strings(lines)
	lines = append(lines, "default: "+describeColumns(defaultPrinter.columns))
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "columns.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if got != string(want) {
		t.Errorf("columns differ from %s; got:\n%s", path, got)
	}
}

func TestEveryColumnHasADescriptionOrUpstreamHasNone(t *testing.T) {
	// Upstream leaves exactly this description empty.
	emptyOK := map[string]bool{"node/v1.RuntimeClass Handler": true}
	for _, p := range printers {
		for _, c := range p.columns {
			if c.Description == "" && !emptyOK[typeName(p)+" "+c.Name] {
				t.Errorf("%s column %q has no description", p.typ, c.Name)
			}
		}
	}
}

func describeColumns(cs []metav1.TableColumnDefinition) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		s := c.Name + "(" + c.Type
		if c.Format != "" {
			s += "," + c.Format
		}
		if c.Priority != 0 {
			s += ",wide"
		}
		parts[i] = s + ")"
	}
	return strings.Join(parts, " ")
}

func columnNames(cs []metav1.TableColumnDefinition) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}

// typeName names a printer's Go type by its API package, e.g. apps/v1.Deployment.
func typeName(p printer) string {
	t := p.typ.Elem()
	pkg := strings.TrimPrefix(strings.TrimPrefix(t.PkgPath(), "k8s.io/api/"), "trireme.dev/api/")
	return pkg + "." + t.Name()
}
