package infiniband

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/providers"
)

// The fabric report ConfigMap (Config.ConfigMap), for a cluster with no
// host to run ibnetdiscover from: `toposcope fabric-report` checks
// ibnetdiscover's output with Parse and writes it, gzip-compressed, into
// the ConfigMap (Write), and the provider reads it back at each discovery
// (Read). The reporter's ServiceAccount may get and update that one
// ConfigMap and nothing else, so its credential is good for the fabric
// report alone: it is no node agent's token and no write token of the
// API.
const (
	// ReportKey is the binaryData key of the compressed output.
	ReportKey = "ibnetdiscover.gz"
	// ReportedAtAnnotation is when the output was written (RFC 3339).
	ReportedAtAnnotation = "toposcope.io/fabric-reported-at"
	// ReporterAnnotation is the node the output was taken on.
	ReporterAnnotation = "toposcope.io/fabric-reporter"
)

// Errors of the report ConfigMap.
var (
	// ErrNoReport means the report ConfigMap holds no report yet.
	ErrNoReport = errors.New("no fabric report yet")
	// ErrTooLarge means the compressed output does not fit a ConfigMap.
	ErrTooLarge = errors.New("fabric report too large for a ConfigMap")
)

// MaxCompressed is the largest compressed output Write writes: a
// ConfigMap holds at most 1 MiB, annotations included. ibnetdiscover
// output compresses about tenfold.
const MaxCompressed = 1000 << 10

// ReportConfigMap is where a fabric report lives.
type ReportConfigMap struct {
	Core      *kubeclient.Core
	Namespace string
	Name      string
}

// Read returns the output the ConfigMap holds, at most
// providers.MaxSourceBytes once decompressed, and when it was written.
func (r ReportConfigMap) Read(ctx context.Context) ([]byte, time.Time, error) {
	where := "ConfigMap " + r.Namespace + "/" + r.Name
	cm, err := r.Core.ConfigMaps(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, time.Time{}, fmt.Errorf("%s: %w: %w", where, ErrNoReport, err)
	case err != nil:
		return nil, time.Time{}, fmt.Errorf("get %s: %w: %w", where, providers.ErrUnavailable, err)
	}
	data, ok := cm.BinaryData[ReportKey]
	if !ok {
		return nil, time.Time{}, fmt.Errorf("%s has no %s: %w (has the fabric reporter run?)", where, ReportKey, ErrNoReport)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %s: %w", where, ReportKey, err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, providers.MaxSourceBytes+1))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %s: %w", where, ReportKey, err)
	}
	if len(out) > providers.MaxSourceBytes {
		return nil, time.Time{}, fmt.Errorf("%s: %s decompresses to more than %d bytes", where, ReportKey, providers.MaxSourceBytes)
	}
	at, _ := time.Parse(time.RFC3339, cm.Annotations[ReportedAtAnnotation])
	return out, at, nil
}

// Write checks output (ibnetdiscover's, named source in errors) with the
// parser (Parse) and writes it into the report ConfigMap r,
// which must exist (the chart creates it, so the reporter needs no right
// to create). Output the parser refuses, or too large, is an error and
// nothing is written. A concurrent writer makes the update fail rather
// than be overwritten.
func (r ReportConfigMap) Write(ctx context.Context, output []byte, source, reporter string, now time.Time) error {
	if _, err := Parse(bytes.NewReader(output), source); err != nil {
		return fmt.Errorf("fabric report not written: %w", err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(output); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if buf.Len() > MaxCompressed {
		return fmt.Errorf("%w: %d bytes compressed (%d of output), at most %d", ErrTooLarge, buf.Len(), len(output), MaxCompressed)
	}
	cms := r.Core.ConfigMaps(r.Namespace)
	cur, err := cms.Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get ConfigMap %s/%s: %w", r.Namespace, r.Name, err)
	}
	cm := cur.DeepCopy()
	if cm.BinaryData == nil {
		cm.BinaryData = map[string][]byte{}
	}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.BinaryData[ReportKey] = buf.Bytes()
	cm.Annotations[ReportedAtAnnotation] = now.UTC().Format(time.RFC3339)
	cm.Annotations[ReporterAnnotation] = reporter
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: kubeclient.FieldManager}); err != nil {
		return fmt.Errorf("update ConfigMap %s/%s: %w", r.Namespace, r.Name, err)
	}
	return nil
}
