package server_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/strictjson"
)

// procKB reads a "VmRSS:"-style line of /proc/PID/status, in KiB.
func procKB(t *testing.T, pid int, key string) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("%s: %q", key, line)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", key, pid)
	return 0
}

// nested is a JSON value of depth objects around a string, each under a
// key of keyLen bytes.
func nested(depth, keyLen int) string {
	key := `"` + strings.Repeat("k", keyLen) + `":`
	return strings.Repeat("{"+key, depth) + `"x"` + strings.Repeat("}", depth)
}

// hostileBodies are bodies within the size caps (server.maxBodyBytes
// 8 MiB, an agent report 16 KiB) shaped to cost memory: nested as deep
// as allowed and past it, with long keys, in a pod's annotations, a
// placement and an agent report, and as wide as the caps allow.
func hostileBodies() [][2]string {
	const capBytes = 8 << 20
	names := make([]string, 0, capBytes/12)
	for i := 0; len(names)*12 < capBytes-64; i++ {
		names = append(names, fmt.Sprintf(`"n%08d"`, i))
	}
	annotations := make([]string, 0, capBytes/120)
	for i := 0; len(annotations)*122 < capBytes-512; i++ {
		annotations = append(annotations, fmt.Sprintf(`"a%07d%s":"%s"`, i, strings.Repeat("k", 50), strings.Repeat("v", 58)))
	}
	deepPod := func(depth int) string {
		return `{"Pod":{"metadata":{"name":"p","annotations":{"a":` + nested(depth, 100) + `}}},"NodeNames":["gpu001"]}`
	}
	return [][2]string{
		{"/v1/extender/filter", deepPod(strictjson.MaxDepth - 6)},
		{"/v1/extender/filter", deepPod(5000)},
		{"/v1/extender/filter", `{"Pod":null,"NodeNames":[` + strings.Join(names, ",") + `]}`},
		{"/v1/extender/prioritize", `{"Pod":{"metadata":{"name":"p","annotations":{` + strings.Join(annotations, ",") + `}}},"NodeNames":["gpu001"]}`},
		{"/v1/placements", `{"account":"a","gpus":8,"within":` + nested(strictjson.MaxDepth-2, 100) + `}`},
		{"/v1/placements", `{"account":"` + strings.Repeat("a", capBytes-64) + `","gpus":8}`},
		{"/v1/placements", `{"account":"a","gpus":8,"within":` + nested(40000, 100)[:capBytes/2] + `}`},
		{"/v1/agents/gpu001", `{"node":"gpu001","hcas":` + nested(200, 100)[:16<<10-40] + `}`},
		{"/v1/agents/gpu001", `{"node":"gpu001","fabric":[` + strings.Repeat(`"s",`, 4000) + `"s"]}`},
	}
}

// TestBodyMemoryUnderLoad: eight callers with a read token (the agent
// reports with the write token) send the hostile bodies to a real
// `toposcope serve` with the extender on, at once and again. Every answer
// is a 2xx or 4xx (429 among them), and the service's peak resident
// memory stays within 100 MB of its resident memory when idle (before:
// a pod's annotations nested 5,000 deep with 100-character keys, 525 KB,
// killed the service under a 1 GiB limit).
func TestBodyMemoryUnderLoad(t *testing.T) {
	t.Parallel()
	svc := startSmall(t, t.TempDir(), "", "placement: {extender: {enabled: true}}\ndiscovery: {interval: 0s}\n")
	bodies := hostileBodies()
	send := func(target, body string) int {
		req, err := http.NewRequest(http.MethodPost, svc.base+target, strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return 0
		}
		token := readToken
		if strings.HasPrefix(target, "/v1/agents/") {
			req.Method, token = http.MethodPut, writeToken
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s: %v", target, err)
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for _, b := range bodies { // warm up: every route once, alone
		send(b[0], `{}`)
	}
	pid := svc.cmd.Process.Pid
	time.Sleep(time.Second)
	idle := procKB(t, pid, "VmRSS")
	reset := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) // peak := current
	var mu sync.Mutex
	codes := map[string]map[int]int{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for k := range 3 * len(bodies) {
				b := bodies[(w+k)%len(bodies)]
				code := send(b[0], b[1])
				mu.Lock()
				if codes[b[0]] == nil {
					codes[b[0]] = map[int]int{}
				}
				codes[b[0]][code]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	peak := procKB(t, pid, "VmHWM")
	t.Logf("idle RSS %d MiB, peak RSS %d MiB (peak reset before the load: %v), %d MiB above idle; answers by route and status: %v",
		idle>>10, peak>>10, reset == nil, (peak-idle)>>10, codes)
	for route, byCode := range codes {
		for code, n := range byCode {
			if code < 200 || code >= 500 {
				t.Errorf("%s: %d answers were %d", route, n, code)
			}
		}
	}
	if over := peak - idle; over > 100<<10 {
		t.Errorf("peak resident memory %d MiB above idle (%d MiB), want at most 100 MB", over>>10, idle>>10)
	}
	if code, _ := svc.call(http.MethodGet, "/readyz", ""); code != http.StatusOK {
		t.Errorf("readyz after the load = %d", code)
	}
}
