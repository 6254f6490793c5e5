package queue

import "container/heap"

// keyedHeap is a heap of items with an index by key, so that items can be
// updated or removed in O(log n).
type keyedHeap[T any] struct {
	items []T
	keys  map[string]int
	key   func(T) string
	less  func(a, b T) bool
}

func newKeyedHeap[T any](key func(T) string, less func(a, b T) bool) *keyedHeap[T] {
	return &keyedHeap[T]{keys: map[string]int{}, key: key, less: less}
}

func (h *keyedHeap[T]) Len() int           { return len(h.items) }
func (h *keyedHeap[T]) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *keyedHeap[T]) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.keys[h.key(h.items[i])] = i
	h.keys[h.key(h.items[j])] = j
}
func (h *keyedHeap[T]) Push(x any) {
	it := x.(T)
	h.keys[h.key(it)] = len(h.items)
	h.items = append(h.items, it)
}
func (h *keyedHeap[T]) Pop() any {
	n := len(h.items) - 1
	it := h.items[n]
	var zero T
	h.items[n] = zero
	h.items = h.items[:n]
	delete(h.keys, h.key(it))
	return it
}

// AddOrUpdate inserts it, replacing an item with the same key.
func (h *keyedHeap[T]) AddOrUpdate(it T) {
	if i, ok := h.keys[h.key(it)]; ok {
		h.items[i] = it
		heap.Fix(h, i)
		return
	}
	heap.Push(h, it)
}

// Get returns the item with key k.
func (h *keyedHeap[T]) Get(k string) (T, bool) {
	if i, ok := h.keys[k]; ok {
		return h.items[i], true
	}
	var zero T
	return zero, false
}

// Delete removes the item with key k.
func (h *keyedHeap[T]) Delete(k string) (T, bool) {
	i, ok := h.keys[k]
	if !ok {
		var zero T
		return zero, false
	}
	return heap.Remove(h, i).(T), true
}

// Peek returns the first item.
func (h *keyedHeap[T]) Peek() (T, bool) {
	if len(h.items) == 0 {
		var zero T
		return zero, false
	}
	return h.items[0], true
}

// PopFirst removes and returns the first item.
func (h *keyedHeap[T]) PopFirst() (T, bool) {
	if len(h.items) == 0 {
		var zero T
		return zero, false
	}
	return heap.Pop(h).(T), true
}
