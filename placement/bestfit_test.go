package placement

import (
	"slices"
	"testing"
)

// Vectors 9.6.7 (Kueue BestFit), 9.6.8 (KAI domain choice) and 9.6.9
// (Slurm tree greedy) through the one best-fit descent.
func TestBestFitVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		caps []int
		need int
		want []int
	}{
		{"kueue-bestfit-3321-7", []int{3, 3, 2, 1}, 7, []int{3, 3, 0, 1}},
		{"kai-zone-5-vs-6-3gpu", []int{5, 6}, 3, []int{3, 0}},
		{"kai-rack-A1-then-A2", []int{2, 1, 1, 1}, 3, []int{2, 1, 0, 0}},
		{"slurm-tree-4234-6", []int{4, 2, 3, 4}, 6, []int{4, 2, 0, 0}},
		{"too-small", []int{1, 1}, 3, nil},
		{"zero", []int{1}, 0, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := BestFit(tc.caps, tc.need); !slices.Equal(got, tc.want) {
				t.Errorf("BestFit(%v, %d) = %v, want %v", tc.caps, tc.need, got, tc.want)
			}
		})
	}
}
