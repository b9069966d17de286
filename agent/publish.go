package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/keys"
	"github.com/toposcope/toposcope/providers"
)

// ReportPath is the server's endpoint for agent reports; the node name
// follows it: PUT /v1/agents/<node> with the providers.NodeFacts as JSON.
const ReportPath = "/v1/agents/"

// ErrPublish is wrapped when the facts cannot be written.
var ErrPublish = errors.New("publish node facts")

// Annotations returns the managed annotations of f; an empty value means
// "remove".
func Annotations(f providers.NodeFacts) map[string]string {
	hcas := make([]string, 0, len(f.HCAs))
	for _, h := range f.HCAs {
		if h.NodeGUID == "" {
			hcas = append(hcas, h.Name)
			continue
		}
		hcas = append(hcas, h.Name+"="+h.NodeGUID)
	}
	lldp := ""
	if len(f.LLDP) > 0 {
		if data, err := json.Marshal(f.LLDP); err == nil { // strings and slices: it cannot fail
			lldp = string(data)
		}
	}
	return map[string]string{
		keys.InstanceID:   f.InstanceID,
		keys.Region:       f.Region,
		keys.NVLinkClique: f.Clique,
		keys.NVLinkRack:   f.Rack,
		keys.HCAs:         strings.Join(hcas, ","),
		keys.LLDP:         lldp,
	}
}

// Nodes is what Annotate needs of a Nodes client: kubeclient.Core's
// Nodes, or client-go's typed one.
type Nodes interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Node, error)
}

// Annotate writes f's annotations on the Node f.Node with one merge
// patch, removing managed annotations that no longer apply. It reads the
// Node first and writes nothing when it is already up to date; it reports
// whether it wrote. It needs get and patch on nodes.
func Annotate(ctx context.Context, nodes Nodes, f providers.NodeFacts) (bool, error) {
	n, err := nodes.Get(ctx, f.Node, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("%w: get node %s: %w", ErrPublish, f.Node, err)
	}
	want := Annotations(f)
	patch := map[string]any{}
	for k, v := range want {
		old, had := n.Annotations[k]
		switch {
		case v == "" && had:
			patch[k] = nil
		case v != "" && old != v:
			patch[k] = v
		}
	}
	if len(patch) == 0 {
		return false, nil
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": patch}})
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrPublish, err)
	}
	if _, err := nodes.Patch(ctx, f.Node, types.MergePatchType, body,
		metav1.PatchOptions{FieldManager: kubeclient.FieldManager + "-agent"}); err != nil {
		return false, fmt.Errorf("%w: patch node %s: %w", ErrPublish, f.Node, err)
	}
	return true, nil
}

// Reporter sends providers.NodeFacts to the toposcope server.
type Reporter struct {
	// Server is the server's base URL (https://toposcope:8443).
	Server string
	// Token is the bearer token; it never appears in errors.
	Token string
	// Client is the HTTP client (http.DefaultClient when nil).
	Client *http.Client
}

// Report PUTs f to <Server>/v1/agents/<node>. Any status but 2xx is an
// error quoting the status and the start of the body.
func (r *Reporter) Report(ctx context.Context, f providers.NodeFacts) error {
	body, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPublish, err)
	}
	u := strings.TrimRight(r.Server, "/") + ReportPath + url.PathEscape(f.Node)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPublish, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	hc := r.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: PUT %s: %w", ErrPublish, u, err)
	}
	defer func() { _ = resp.Body.Close() }()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		text := strings.TrimSpace(string(msg))
		if r.Token != "" {
			text = strings.ReplaceAll(text, r.Token, "[REDACTED]")
		}
		return fmt.Errorf("%w: PUT %s: %s: %s", ErrPublish, u, resp.Status, text)
	}
	return nil
}
