package kubetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/toposcope/toposcope/internal/kubeclient"
)

// startAttempts is how often Start retries when a port it picked was
// taken in the meantime.
const startAttempts = 3

// readyTimeout bounds the wait for /readyz (2 busy cores can be slow).
const readyTimeout = 90 * time.Second

// Cluster is a running etcd + kube-apiserver pair.
type Cluster struct {
	opts     Options
	dir      string
	etcdDir  string
	etcd     *process
	api      *process
	extra    processes // started against the cluster; stopped first
	host     string
	caFile   string
	token    string
	seq      atomic.Int64
	admin    *rest.Config
	core     kubernetes.Interface
	kube     *kubeclient.Core
	dyn      dynamic.Interface
	stopOnce atomic.Bool
}

// Start runs etcd and kube-apiserver from FindBinaries.
func Start(ctx context.Context) (*Cluster, error) {
	b, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	return StartWith(ctx, b)
}

// StartWith runs the given binaries on free loopback ports and waits until
// the apiserver answers /readyz. Stop it with Stop.
func StartWith(ctx context.Context, b Binaries) (*Cluster, error) {
	return StartOptions(ctx, b, Options{})
}

// StartOptions is StartWith with Options (extra apiserver flags).
func StartOptions(ctx context.Context, b Binaries, opts Options) (*Cluster, error) {
	var errs []error
	for range startAttempts {
		c, err := start(ctx, b, opts)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

func start(ctx context.Context, b Binaries, opts Options) (_ *Cluster, err error) {
	dir, err := os.MkdirTemp("", "toposcope-kubetest-")
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	c := &Cluster{dir: dir, opts: opts}
	defer func() {
		if err != nil {
			c.Stop() // the processes started so far, and the folders
		}
	}()
	// etcd syncs every write; on tmpfs that costs nothing.
	c.etcdDir, err = os.MkdirTemp(shmOr(dir), "toposcope-etcd-")
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	ports, err := FreePorts(3)
	if err != nil {
		return nil, err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	c.etcd, err = startProcess(dir, "etcd", b.Etcd,
		"--name=default", "--data-dir="+filepath.Join(c.etcdDir, "data"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL, "--log-level=warn")
	if err != nil {
		return nil, err
	}
	if err := c.writeCredentials(); err != nil {
		return nil, err
	}
	c.api, err = startProcess(dir, "kube-apiserver", b.APIServer, append([]string{
		"--etcd-servers=" + clientURL,
		"--secure-port=" + strconv.Itoa(ports[2]), "--bind-address=127.0.0.1",
		"--cert-dir=" + filepath.Join(dir, "certs"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--profiling=false"}, opts.APIServerFlags...)...)
	if err != nil {
		return nil, err
	}
	c.host = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	c.caFile = filepath.Join(dir, "certs", "apiserver.crt")
	if err := c.waitReady(ctx); err != nil {
		return nil, err
	}
	c.admin = c.config(c.token)
	if c.core, err = kubernetes.NewForConfig(c.admin); err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	if c.dyn, err = dynamic.NewForConfig(c.admin); err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	clients, err := kubeclient.NewClients(c.admin)
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	c.kube = clients.Core
	return c, nil
}

// writeCredentials writes the service-account signing key and the static
// token file with one admin token in system:masters.
func (c *Cluster) writeCredentials() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("kubetest: service account key: %w", err)
	}
	der := x509.MarshalPKCS1PrivateKey(key)
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der})
	if err := os.WriteFile(filepath.Join(c.dir, "sa.key"), pemKey, 0o600); err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	c.token = hex.EncodeToString(raw)
	line := c.token + `,admin,admin-uid,"system:masters"` + "\n"
	if err := os.WriteFile(filepath.Join(c.dir, "tokens.csv"), []byte(line), 0o600); err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	return nil
}

// config returns a client configuration with the given bearer token that
// trusts the apiserver's self-signed CA. Rate limits are off: tests set
// their own.
func (c *Cluster) config(token string) *rest.Config {
	return &rest.Config{
		Host:            c.host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: c.caFile},
		QPS:             -1,
		UserAgent:       "toposcope-kubetest",
	}
}

func (c *Cluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	var last error
	for {
		if exited, err := c.api.exited(); exited {
			return fmt.Errorf("kubetest: kube-apiserver exited: %w\n%s", err, c.api.tail())
		}
		if exited, err := c.etcd.exited(); exited {
			return fmt.Errorf("kubetest: etcd exited: %w\n%s", err, c.etcd.tail())
		}
		if _, err := os.Stat(c.caFile); err == nil {
			last = c.probe(ctx)
			if last == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubetest: kube-apiserver not ready after %v: %w\n%s", readyTimeout, errors.Join(last, ctx.Err()), c.api.tail())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c *Cluster) probe(ctx context.Context) error {
	hc, err := rest.HTTPClientFor(c.config(c.token))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.host+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s: %s", resp.Status, body.String())
	}
	return nil
}

// Stop ends kube-apiserver, then etcd (by PID), and removes the folders.
// It is safe to call more than once.
func (c *Cluster) Stop() {
	if c == nil || !c.stopOnce.CompareAndSwap(false, true) {
		return
	}
	c.extra.stopAll()
	c.api.stop()
	c.etcd.stop()
	if c.etcdDir != "" {
		_ = os.RemoveAll(c.etcdDir)
	}
	if c.dir != "" {
		_ = os.RemoveAll(c.dir)
	}
}

// Host is the apiserver's URL.
func (c *Cluster) Host() string { return c.host }

// AdminConfig returns a fresh copy of the admin client configuration
// (system:masters, no client-side rate limit).
func (c *Cluster) AdminConfig() *rest.Config { return rest.CopyConfig(c.admin) }

// Core is an admin clientset.
func (c *Cluster) Core() kubernetes.Interface { return c.core }

// Kube is an admin kubeclient.Core: the client toposcope itself uses.
func (c *Cluster) Kube() *kubeclient.Core { return c.kube }

// Dynamic is an admin dynamic client.
func (c *Cluster) Dynamic() dynamic.Interface { return c.dyn }

// TokenConfig returns a configuration that authenticates with token and
// nothing else.
func (c *Cluster) TokenConfig(token string) *rest.Config { return c.config(token) }

// shmOr returns /dev/shm when it is a writable folder, else fallback.
func shmOr(fallback string) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", ".toposcope-probe-"); err == nil {
			name := f.Name()
			_ = f.Close()
			_ = os.Remove(name)
			return "/dev/shm"
		}
	}
	return fallback
}

// FreePorts returns n distinct loopback ports that were free a moment ago.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("kubetest: free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// process is a child process whose output goes to a log file.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func startProcess(dir, name, bin string, args ...string) (*process, error) {
	return startProcessEdit(dir, name, bin, args)
}

// startProcessEdit is startProcess with edits applied to the command
// before it starts (environment, namespaces).
func startProcessEdit(dir, name, bin string, args []string, edits ...func(*exec.Cmd)) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = dir
	// The child dies with the test binary, even when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	for _, edit := range edits {
		edit(cmd)
	}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("kubetest: start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		if p.err == nil {
			p.err = errors.New("exit status 0")
		}
		_ = f.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process (by its PID), and SIGKILL after 10 s.
func (p *process) stop() {
	if p == nil {
		return
	}
	if exited, _ := p.exited(); exited {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail returns the last 3 KB of the process's log.
func (p *process) tail() string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	if len(data) > 3000 {
		data = data[len(data)-3000:]
	}
	return p.name + " log (tail):\n" + string(data)
}
