package consumertest

import (
	"reflect"
	"strings"
	"testing"
)

func TestDecodeAssignment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		raw     string
		levels  []string
		domains []Domain
		err     string
	}{
		{
			name:    "universal",
			raw:     `{"levels":["rack","host"],"slices":[{"domainCount":1,"valuesPerLevel":[{"universal":"r1"},{"universal":"n1"}],"podCounts":{"universal":2}}]}`,
			levels:  []string{"rack", "host"},
			domains: []Domain{{Values: []string{"r1", "n1"}, Pods: 2}},
		},
		{
			name: "individual with prefix and suffix, two slices",
			raw: `{"levels":["rack","host"],"slices":[
				{"domainCount":2,"valuesPerLevel":[{"universal":"r4"},{"individual":{"prefix":"gpu0","suffix":"-a","roots":["13","14"]}}],"podCounts":{"individual":[1,3]}},
				{"domainCount":1,"valuesPerLevel":[{"individual":{"roots":["r3"]}},{"individual":{"roots":["gpu009"]}}],"podCounts":{"universal":1}}]}`,
			levels: []string{"rack", "host"},
			domains: []Domain{
				{Values: []string{"r4", "gpu013-a"}, Pods: 1},
				{Values: []string{"r4", "gpu014-a"}, Pods: 3},
				{Values: []string{"r3", "gpu009"}, Pods: 1},
			},
		},
		{
			name: "too few values per level",
			raw:  `{"levels":["rack","host"],"slices":[{"domainCount":1,"valuesPerLevel":[{"universal":"r1"}],"podCounts":{"universal":1}}]}`,
			err:  "slices[0]: 1 valuesPerLevel for 2 levels",
		},
		{
			name: "roots shorter than domainCount",
			raw:  `{"levels":["host"],"slices":[{"domainCount":2,"valuesPerLevel":[{"individual":{"roots":["a"]}}],"podCounts":{"universal":1}}]}`,
			err:  "slices[0].valuesPerLevel[0]: no value for domain 1",
		},
		{
			name: "no pod count",
			raw:  `{"levels":["host"],"slices":[{"domainCount":1,"valuesPerLevel":[{"universal":"a"}],"podCounts":{}}]}`,
			err:  "slices[0].podCounts: no count for domain 0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			levels, domains, err := DecodeAssignment([]byte(tt.raw))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(levels, tt.levels) || !reflect.DeepEqual(domains, tt.domains) {
				t.Errorf("got %v %+v, want %v %+v", levels, domains, tt.levels, tt.domains)
			}
		})
	}
}
