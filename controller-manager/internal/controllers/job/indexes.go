package job

import (
	"slices"
	"strconv"
	"strings"
)

// indexSet is a set of completion indexes, written as upstream writes
// completedIndexes and failedIndexes: "1,3-5,7".
type indexSet map[int]bool

func parseIndexes(s string, completions int) indexSet {
	set := indexSet{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := a; i <= b && (completions < 0 || i < completions); i++ {
			set[i] = true
		}
	}
	return set
}

func (s indexSet) String() string {
	keys := make([]int, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i := 0; i < len(keys); {
		j := i
		for j+1 < len(keys) && keys[j+1] == keys[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(keys[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(keys[j]))
		}
		i = j + 1
	}
	return b.String()
}
