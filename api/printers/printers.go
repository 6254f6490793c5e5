package printers

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ToTable renders obj, a single object or a list of a served kind (hub
// types), as a Table. Columns with Priority > 0 are the `-o wide` ones. Each
// row's Object holds the item itself.
func ToTable(obj runtime.Object, noHeaders bool) (*metav1.Table, error) {
	t := &metav1.Table{}
	if !noHeaders {
		t.ColumnDefinitions = []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name"},
			{Name: "Created At", Type: "date"},
		}
	}
	add := func(o runtime.Object) error {
		m, err := meta.Accessor(o)
		if err != nil {
			return fmt.Errorf("table row: %w", err)
		}
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells:  []any{m.GetName(), m.GetCreationTimestamp().UTC().Format("2006-01-02T15:04:05Z")},
			Object: runtime.RawExtension{Object: o},
		})
		return nil
	}
	if meta.IsListType(obj) {
		if err := meta.EachListItem(obj, add); err != nil {
			return nil, err
		}
		if l, err := meta.ListAccessor(obj); err == nil {
			t.ResourceVersion = l.GetResourceVersion()
			t.Continue = l.GetContinue()
			t.RemainingItemCount = l.GetRemainingItemCount()
		}
		return t, nil
	}
	if err := add(obj); err != nil {
		return nil, err
	}
	if m, err := meta.Accessor(obj); err == nil {
		t.ResourceVersion = m.GetResourceVersion()
	}
	return t, nil
}
