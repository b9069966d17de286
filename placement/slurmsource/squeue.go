package slurmsource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrOutput is wrapped when squeue's output cannot be read.
var ErrOutput = errors.New("unreadable squeue output")

// response is the part of `squeue --json` that the source reads. It
// accepts both the OpenAPI v0.0.38 shape of Slurm 22.05 (plain numbers,
// job_state a string) and the data_parser shape of 23.02 and later
// (numbers as {"set","infinite","number"}, job_state a list).
type response struct {
	Errors []json.RawMessage `json:"errors"`
	Jobs   []job             `json:"jobs"`
}

type job struct {
	JobID        number   `json:"job_id"`
	Account      string   `json:"account"`
	WCKey        string   `json:"wckey"`
	QOS          string   `json:"qos"`
	Partition    string   `json:"partition"`
	User         string   `json:"user_name"`
	Cluster      string   `json:"cluster"`
	State        states   `json:"job_state"`
	SubmitTime   number   `json:"submit_time"`
	StartTime    number   `json:"start_time"`
	EndTime      number   `json:"end_time"`
	TimeMinimum  number   `json:"time_minimum"` // minutes
	Nodes        string   `json:"nodes"`
	NodeCount    number   `json:"node_count"`
	GresDetail   []string `json:"gres_detail"`
	TresPerNode  string   `json:"tres_per_node"`
	TresPerJob   string   `json:"tres_per_job"`
	TresAllocStr string   `json:"tres_alloc_str"`
	Requeue      bool     `json:"requeue"`
	Priority     number   `json:"priority"`
}

// number is a Slurm integer: plain, or {"set": …, "infinite": …,
// "number": …}; unset, infinite and null read as 0.
type number int64

// UnmarshalJSON implements json.Unmarshaler.
func (n *number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*n = 0
		return nil
	case len(b) > 0 && b[0] == '{':
		var o struct {
			Set      bool  `json:"set"`
			Infinite bool  `json:"infinite"`
			Number   int64 `json:"number"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		*n = 0
		if o.Set && !o.Infinite {
			*n = number(o.Number)
		}
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	*n = number(v)
	return nil
}

// states is job_state: one string, or a list of flags.
type states []string

// UnmarshalJSON implements json.Unmarshaler.
func (s *states) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = states{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("job_state is neither a string nor a list of strings: %s", b)
	}
	*s = many
	return nil
}

func (s states) has(name string) bool { return slices.Contains(s, name) }

// parse decodes squeue's output; errors it reports are returned.
func parse(out []byte) (*response, error) {
	var r response
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOutput, err)
	}
	if len(r.Errors) > 0 {
		msgs := make([]string, len(r.Errors))
		for i, e := range r.Errors {
			msgs[i] = string(e)
		}
		return nil, fmt.Errorf("%w: squeue reported errors: %s", ErrOutput, strings.Join(msgs, "; "))
	}
	return &r, nil
}

// gpus returns the job's GPUs: what gres_detail says each node was given,
// else the allocated TRES (gres/gpu=N), else the request per node times
// the nodes, else the request per job. A finished job keeps only its
// request, so the later fields stand in for it.
func (j *job) gpus() (int, error) {
	if len(j.GresDetail) > 0 {
		total := 0
		for _, d := range j.GresDetail {
			n, err := gresCount(d)
			if err != nil {
				return 0, err
			}
			total += n
		}
		return total, nil
	}
	for _, kv := range strings.Split(j.TresAllocStr, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == "gres/gpu" { // the total; typed entries (gres/gpu:a100=N) repeat it
			n, err := strconv.Atoi(v)
			if err != nil {
				return 0, fmt.Errorf("tres_alloc_str %q: %w", j.TresAllocStr, err)
			}
			return n, nil
		}
	}
	perNode, err := tresGPUs(j.TresPerNode)
	if err != nil {
		return 0, fmt.Errorf("tres_per_node: %w", err)
	}
	if perNode > 0 {
		return perNode * max(1, int(j.NodeCount)), nil
	}
	perJob, err := tresGPUs(j.TresPerJob)
	if err != nil {
		return 0, fmt.Errorf("tres_per_job: %w", err)
	}
	return perJob, nil
}

// gresCount reads one node's gres_detail entry, "gpu:4(IDX:0-3)" or
// "gpu:a100:4(IDX:0-3)"; entries of other GRES count 0.
func gresCount(d string) (int, error) {
	name, _, _ := strings.Cut(d, "(")
	parts := strings.Split(name, ":")
	if parts[0] != "gpu" {
		return 0, nil
	}
	if len(parts) < 2 {
		return 0, fmt.Errorf("gres_detail %q has no count", d)
	}
	n, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil {
		return 0, fmt.Errorf("gres_detail %q: %w", d, err)
	}
	return n, nil
}

// tresGPUs reads the GPUs of a TRES request list such as "gres:gpu:4",
// "gres/gpu:a100:2" or "gres/gpu=4" (0 when no GPU is asked for).
func tresGPUs(s string) (int, error) {
	total := 0
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		rest, ok := strings.CutPrefix(item, "gres:gpu")
		if !ok {
			rest, ok = strings.CutPrefix(item, "gres/gpu")
		}
		if !ok || rest == "" {
			continue
		}
		if rest[0] != ':' && rest[0] != '=' {
			continue // another GRES whose name starts with gpu
		}
		fields := strings.FieldsFunc(rest, func(r rune) bool { return r == ':' || r == '=' })
		if len(fields) == 0 {
			return 0, fmt.Errorf("%q has no count", item)
		}
		n, err := strconv.Atoi(fields[len(fields)-1])
		if err != nil {
			return 0, fmt.Errorf("%q: %w", item, err)
		}
		total += n
	}
	return total, nil
}
