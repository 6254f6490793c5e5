package printers

import (
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ToTable renders obj, a single object or a list of a served kind (hub
// types), as a Table. Columns with Priority > 0 are the `-o wide` ones: like
// upstream's server-side table convertor, every column is returned and the
// client decides what to show. Each row's Object holds the item itself.
// Kinds without a printer get upstream's default Name and Created At columns.
func ToTable(obj runtime.Object, noHeaders bool) (*metav1.Table, error) {
	return render(obj, noHeaders, time.Now())
}

// render is ToTable with the clock passed in, so ages are reproducible.
func render(obj runtime.Object, noHeaders bool, now time.Time) (*metav1.Table, error) {
	list := meta.IsListType(obj)
	p := lookup(obj, list)
	t := &metav1.Table{}
	if !noHeaders {
		t.ColumnDefinitions = p.columns
	}
	if list {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, fmt.Errorf("table for %T: %w", obj, err)
		}
		if p.sort != nil {
			p.sort(items)
		}
		t.Rows = make([]metav1.TableRow, 0, len(items))
		for _, item := range items {
			row, err := p.row(item, now)
			if err != nil {
				return nil, fmt.Errorf("table row for %T: %w", item, err)
			}
			t.Rows = append(t.Rows, row)
		}
		if l, err := meta.ListAccessor(obj); err == nil {
			t.ResourceVersion = l.GetResourceVersion()
			t.Continue = l.GetContinue()
			t.RemainingItemCount = l.GetRemainingItemCount()
		}
		return t, nil
	}
	row, err := p.row(obj, now)
	if err != nil {
		return nil, fmt.Errorf("table row for %T: %w", obj, err)
	}
	t.Rows = []metav1.TableRow{row}
	if m, err := meta.CommonAccessor(obj); err == nil {
		t.ResourceVersion = m.GetResourceVersion()
	}
	return t, nil
}

// printer knows the columns of one Go type and how to fill a row for it.
type printer struct {
	// typ is the pointer type of a single object, the registry key.
	typ     reflect.Type
	columns []metav1.TableColumnDefinition
	// cells returns one value per column, in column order.
	cells func(obj runtime.Object, now time.Time) ([]any, error)
	// conditions, when set, marks rows (pods that ran to completion).
	conditions func(obj runtime.Object) []metav1.TableRowCondition
	// sort, when set, orders a list's items before printing them.
	sort func(items []runtime.Object)
}

func (p printer) row(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
	cells, err := p.cells(obj, now)
	if err != nil {
		return metav1.TableRow{}, err
	}
	row := metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}}
	if p.conditions != nil {
		row.Conditions = p.conditions(obj)
	}
	return row, nil
}

// kind builds the printer of T from its columns and a cells function that
// cannot fail.
func kind[T runtime.Object](columns []metav1.TableColumnDefinition, cells func(obj T, now time.Time) []any) printer {
	return kindErr(columns, func(obj T, now time.Time) ([]any, error) { return cells(obj, now), nil })
}

// kindErr builds the printer of T from its columns and a cells function that
// may refuse an object, which fails the whole table as upstream does.
func kindErr[T runtime.Object](columns []metav1.TableColumnDefinition, cells func(obj T, now time.Time) ([]any, error)) printer {
	return printer{
		typ:     reflect.TypeFor[T](),
		columns: columns,
		cells: func(obj runtime.Object, now time.Time) ([]any, error) {
			typed, ok := obj.(T)
			if !ok {
				return nil, fmt.Errorf("printer for %s got %T", reflect.TypeFor[T](), obj)
			}
			return cells(typed, now)
		},
	}
}

// withConditions adds row conditions to the printer of T.
func withConditions[T runtime.Object](p printer, conditions func(obj T) []metav1.TableRowCondition) printer {
	p.conditions = func(obj runtime.Object) []metav1.TableRowCondition {
		if typed, ok := obj.(T); ok {
			return conditions(typed)
		}
		return nil
	}
	return p
}

// sortedBy makes the printer of T print a list's items in the order less
// gives, for kinds whose upstream list printer sorts.
func sortedBy[T runtime.Object](p printer, less func(a, b T) bool) printer {
	p.sort = func(items []runtime.Object) {
		sortObjects(items, func(a, b runtime.Object) bool {
			ta, okA := a.(T)
			tb, okB := b.(T)
			return okA && okB && less(ta, tb)
		})
	}
	return p
}

// lookup finds the printer for obj, or for the items of obj when it is a
// list, falling back to the default Name and Created At columns.
func lookup(obj runtime.Object, list bool) printer {
	t := reflect.TypeOf(obj)
	if list {
		t = listItemType(t)
	}
	if p, ok := byType[t]; ok {
		return p
	}
	return defaultPrinter
}

// listItemType returns the pointer type of a typed list's items (nil when
// obj is not a struct with an Items slice), so empty lists get columns too.
func listItemType(t reflect.Type) reflect.Type {
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	f, ok := t.Elem().FieldByName("Items")
	if !ok || f.Type.Kind() != reflect.Slice {
		return nil
	}
	item := f.Type.Elem()
	if item.Kind() == reflect.Pointer {
		return item
	}
	return reflect.PointerTo(item)
}
