package charts_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/cmd/toposcope/agentcmd"
	"github.com/toposcope/toposcope/cmd/toposcope/cli"
	"github.com/toposcope/toposcope/cmd/toposcope/logflags"
	"github.com/toposcope/toposcope/testenv/helmtest"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/testenv/proctest"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// get returns the status of GET u, or 0 when nothing answers.
func get(ctx context.Context, u string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// waitStatus polls GET u until it answers want; it fails the test when
// done closes first (the process behind u ended) or ctx ends.
func waitStatus(ctx context.Context, t *testing.T, u string, want int, done <-chan error) {
	t.Helper()
	last := 0
	for {
		if last = get(ctx, u); last == want {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("GET %s: the process ended (%v) before answering %d", u, err, want)
		case <-ctx.Done():
			t.Fatalf("GET %s: last answer %d, want %d", u, last, want)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestAgentProbes runs toposcope-agent with the DaemonSet's rendered
// arguments (its health address moved to loopback, and a kubeconfig and
// node name in place of the pod's) against the real apiserver, and asks
// the paths and port of the rendered probes: liveness answers 200, and
// readiness 200 once the agent annotated its Node.
//
// Not parallel: it creates a Node while TestInstallUpgradeUninstall and
// TestGettingStarted own the cluster's Nodes.
func TestAgentProbes(t *testing.T) {
	c := kube.Require(t)
	h := helmtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	port := freePort(t)
	ds := mustKind(t, renderObjects(t, h, "--set", "agent.enabled=true", "--set", "agent.metadata=none",
		"--set", "agent.nvidiaSMI=", "--set", "agent.sysfs=", "--set", "agent.healthPort="+strconv.Itoa(port)), "DaemonSet", "agent")
	ctr := containerOf(t, podSpec(ds), "agent")
	named := map[string]int{}
	for _, p := range asList(ctr["ports"]) {
		m := p.(map[string]any)
		n, _ := strconv.Atoi(fmt.Sprint(m["containerPort"]))
		named[fmt.Sprint(m["name"])] = n
	}
	probeURL := func(probe string) string {
		hg, _ := at(ctr, probe, "httpGet").(map[string]any)
		if hg == nil {
			t.Fatalf("the agent container has no %s httpGet", probe)
		}
		p, ok := named[fmt.Sprint(hg["port"])]
		if !ok {
			t.Fatalf("%s port %v is no port of the container (%v)", probe, hg["port"], named)
		}
		return fmt.Sprintf("http://127.0.0.1:%d%s", p, hg["path"])
	}
	live, ready := probeURL("livenessProbe"), probeURL("readinessProbe")

	var args []string
	for _, a := range asList(ctr["args"]) {
		s := a.(string)
		if addr, ok := strings.CutPrefix(s, "--health-listen="); ok {
			if addr != ":"+strconv.Itoa(port) {
				t.Fatalf("--health-listen=%s, want :%d (agent.healthPort)", addr, port)
			}
			s = "--health-listen=127.0.0.1" + addr
		}
		args = append(args, s)
	}
	node := c.Prefix(t) + "-agent-probes"
	if err := c.CreateNodes(ctx, kubetest.NodeObjects([]string{node}, nil), 1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Core().CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{})
	})
	kc := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := kubetest.WriteKubeconfig(kc, c.AdminConfig()); err != nil {
		t.Fatal(err)
	}
	args = append(args, "--kubeconfig="+kc, "--node="+node)

	var logs logflags.Flags
	out := &proctest.Output{}
	cmd := agentcmd.New("toposcope-agent", io.Discard, func() (*slog.Logger, error) { return logs.Logger(out) })
	logs.Register(cmd.Flags())
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(runCtx) }()
	defer func() { stop(); <-done }()

	waitStatus(ctx, t, live, http.StatusOK, done)
	waitStatus(ctx, t, ready, http.StatusOK, done)
	if _, err := c.Core().CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("the agent ended with %v\n%s", err, out.String())
	}
	done <- nil // for the deferred receive
	if code := get(ctx, live); code != 0 {
		t.Errorf("after the agent ended, %s still answers %d", live, code)
	}
}

// TestHelmTestHook installs the chart with the real helm: the test Pod is
// stored as the release's test hook, not created by the install; `helm
// test` creates it. No kubelet runs here, so the test plays it: it runs
// the Pod's command (the toposcope CLI, in process) against a real
// `toposcope serve` on loopback in place of the Service address the Pod
// names, and writes the outcome as the Pod's phase. helm test passes
// when the command found a topology, and fails when nothing answered.
// The namespace's default ServiceAccount is made by the test, as the
// controller-manager would.
func TestHelmTestHook(t *testing.T) {
	t.Parallel()
	c := kube.Require(t)
	h := helmtest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	// The controller-manager, absent here, makes each namespace's default
	// ServiceAccount, which the test Pod runs as.
	if _, err := c.Core().CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := kubetest.WriteKubeconfig(kc, c.AdminConfig()); err != nil {
		t.Fatal(err)
	}
	helm := func(args ...string) (string, error) {
		return h.Run(ctx, append(args, "--namespace", ns, "--kubeconfig", kc)...)
	}
	const rel = "hooked"
	if out, err := helm("install", rel, chartDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	hooks, err := helm("get", "hooks", rel)
	if err != nil {
		t.Fatal(err)
	}
	var hook struct{ Name string }
	for _, o := range decode(t, hooks) {
		if o.GetKind() == "Pod" && o.GetAnnotations()["helm.sh/hook"] == "test" {
			hook.Name = o.GetName()
		}
	}
	if hook.Name == "" {
		t.Fatalf("the release stores no test hook Pod:\n%s", hooks)
	}
	if _, err := c.Core().CoreV1().Pods(ns).Get(ctx, hook.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("helm install created the test Pod %s (want it only on helm test): %v", hook.Name, err)
	}
	manifest, err := helm("get", "manifest", rel)
	if err != nil {
		t.Fatal(err)
	}
	svc := mustKind(t, decode(t, manifest), "Service", "serve")
	svcPort := fmt.Sprint(at(svc.Object, "spec", "ports", 0, "port"))

	// playKubelet waits for the test Pod, runs its command with the
	// Service's address replaced by base, and sets the Pod's phase from
	// the exit code; it returns the code.
	playKubelet := func(base string, errc chan error) int {
		t.Helper()
		var pod *corev1.Pod
		for pod == nil {
			p, err := c.Core().CoreV1().Pods(ns).Get(ctx, hook.Name, metav1.GetOptions{})
			switch {
			case err == nil && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodPending:
				pod = p
			case err != nil && !apierrors.IsNotFound(err):
				t.Fatal(err)
			case ctx.Err() != nil:
				t.Fatalf("helm test did not create the Pod %s", hook.Name)
			default:
				select {
				case err := <-errc:
					t.Fatalf("helm test ended before it created the Pod %s: %v", hook.Name, err)
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
		args := append([]string(nil), pod.Spec.Containers[0].Args...)
		for i, a := range args {
			if s, ok := strings.CutPrefix(a, "--server="); ok {
				u, err := url.Parse(s)
				if err != nil {
					t.Fatal(err)
				}
				if want := svc.GetName() + "." + ns + ".svc:" + svcPort; u.Host != want {
					t.Errorf("the test Pod asks %s, want the Service %s", u.Host, want)
				}
				args[i] = "--server=" + base
			}
		}
		var stdout, stderr bytes.Buffer
		code := cli.Main(ctx, args, cli.Env{Stdout: &stdout, Stderr: &stderr})
		pod.Status.Phase = corev1.PodSucceeded
		if code != 0 {
			pod.Status.Phase = corev1.PodFailed
		}
		if _, err := c.Core().CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("set the test Pod's phase: %v", err)
		}
		return code
	}
	helmTest := func() error {
		_, err := helm("test", rel, "--timeout", "2m")
		return err
	}

	// Nothing answers at the address: the command fails, so does helm test.
	closed := "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	errc := make(chan error, 1)
	go func() { errc <- helmTest() }()
	if code := playKubelet(closed, errc); code == 0 {
		t.Error("the test command passed with no service at its address")
	}
	if err := <-errc; err == nil || !strings.Contains(err.Error(), hook.Name) {
		t.Errorf("helm test with a failed Pod: want an error naming %s, got %v", hook.Name, err)
	}

	// A running service with a topology: the command and helm test pass,
	// and the Pod is deleted (hook-delete-policy hook-succeeded).
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	serveCtx, stopServe := context.WithCancel(ctx)
	served := make(chan struct{})
	serveOut := &proctest.Output{}
	go func() {
		defer close(served)
		cli.Main(serveCtx, []string{"serve", "--listen", addr, "--store", filepath.Join(t.TempDir(), "s.db"), "--interval", "1h", "--allow-root"},
			cli.Env{Stdout: serveOut, Stderr: serveOut})
	}()
	defer func() { stopServe(); <-served }()
	waitStatus(ctx, t, "http://"+addr+"/readyz", http.StatusOK, nil)
	go func() { errc <- helmTest() }()
	if code := playKubelet("http://"+addr, errc); code != 0 {
		t.Errorf("the test command against a running service: exit %d\n%s", code, serveOut.String())
	}
	if err := <-errc; err != nil {
		t.Errorf("helm test with a passing Pod: %v", err)
	}
	if _, err := c.Core().CoreV1().Pods(ns).Get(ctx, hook.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the passed test Pod was not deleted (hook-succeeded): %v", err)
	}
}
