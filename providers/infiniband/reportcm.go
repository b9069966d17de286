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
	"k8s.io/client-go/kubernetes"

	"github.com/toposcope/toposcope/providers"
)

// The fabric report ConfigMap (Config.ConfigMap): `toposcope
// fabric-report` (package fabricreport) writes ibnetdiscover's output into
// it, gzip-compressed, and the provider reads it back.
const (
	// ReportKey is the binaryData key of the compressed output.
	ReportKey = "ibnetdiscover.gz"
	// ReportedAtAnnotation is when the output was written (RFC 3339).
	ReportedAtAnnotation = "toposcope.io/fabric-reported-at"
	// ReporterAnnotation is the node the output was taken on.
	ReporterAnnotation = "toposcope.io/fabric-reporter"
)

// ErrNoReport means the report ConfigMap holds no report yet.
var ErrNoReport = errors.New("no fabric report yet")

// ReportConfigMap is where a fabric report lives.
type ReportConfigMap struct {
	Core      kubernetes.Interface
	Namespace string
	Name      string
}

// Read returns the output the ConfigMap holds, at most
// providers.MaxSourceBytes once decompressed, and when it was written.
func (r ReportConfigMap) Read(ctx context.Context) ([]byte, time.Time, error) {
	where := "ConfigMap " + r.Namespace + "/" + r.Name
	cm, err := r.Core.CoreV1().ConfigMaps(r.Namespace).Get(ctx, r.Name, metav1.GetOptions{})
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
