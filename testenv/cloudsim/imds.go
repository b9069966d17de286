package cloudsim

import (
	"encoding/json"
	"net/http"
	"strings"
)

// IMDS emulates the metadata services of AWS (IMDSv2: PUT
// /latest/api/token, then GETs with the token), GCP (Metadata-Flavor:
// Google), OCI (/opc/v2 with Authorization: Bearer Oracle) and Nebius
// (/v1 with Metadata: true) for one instance.
type IMDS struct {
	// InstanceID, Name, Region and Zone are what the services answer.
	InstanceID, Name, Region, Zone string
	// GCPProjectNumber prefixes the GCP zone (projects/<n>/zones/<zone>).
	GCPProjectNumber string
	// NebiusProject and NebiusToken are what Nebius's service answers
	// for the project (parent_id) and the service account's token.
	NebiusProject, NebiusToken string
	// OCIHost is what OCI's /opc/v2/host/rdmaTopologyData answers (its
	// JSON fields: customerLocalBlock ...); nil for a host without one.
	OCIHost map[string]string
	// Role is the AWS instance role, whose credentials are RoleKey;
	// empty for an instance without one.
	Role    string
	RoleKey Key
}

// imdsToken is the IMDSv2 session token the emulator hands out.
const imdsToken = "sim-imds-token"

// ServeHTTP implements http.Handler.
func (m *IMDS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	var v string
	ok := false
	switch {
	case p == "/latest/api/token":
		if r.Method != http.MethodPut || r.Header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds") == "" {
			http.Error(w, "want PUT with a TTL", http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", r.Header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds"))
		v, ok = imdsToken, true
	case p == "/latest/dynamic/instance-identity/document":
		if r.Header.Get("X-Aws-Ec2-Metadata-Token") != imdsToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_ = json.NewEncoder(w).Encode(map[string]string{"instanceId": m.InstanceID, "region": m.Region,
			"availabilityZone": m.Zone, "accountId": "000000000000", "version": "2017-09-30"})
		return
	case strings.HasPrefix(p, "/latest/meta-data/"):
		if r.Header.Get("X-Aws-Ec2-Metadata-Token") != imdsToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if rest, isRole := strings.CutPrefix(p, "/latest/meta-data/iam/security-credentials/"); isRole {
			m.roleCredentials(w, rest)
			return
		}
		v, ok = map[string]string{"instance-id": m.InstanceID, "placement/region": m.Region,
			"placement/availability-zone": m.Zone}[strings.TrimPrefix(p, "/latest/meta-data/")]
	case strings.HasPrefix(p, "/computeMetadata/v1/instance/"):
		if r.Header.Get("Metadata-Flavor") != "Google" {
			http.Error(w, "Missing Metadata-Flavor:Google header", http.StatusForbidden)
			return
		}
		v, ok = map[string]string{"id": m.InstanceID, "name": m.Name,
			"zone": "projects/" + m.GCPProjectNumber + "/zones/" + m.Zone}[strings.TrimPrefix(p, "/computeMetadata/v1/instance/")]
	case strings.HasPrefix(p, "/v1/"):
		if r.Header.Get("Metadata") != "true" {
			http.Error(w, "missing Metadata: true", http.StatusForbidden)
			return
		}
		v, ok = map[string]string{"/v1/instance-data/parent_id": m.NebiusProject, "/v1/iam/sa/token/access_token": m.NebiusToken}[p]
		ok = ok && v != ""
	case p == "/opc/v2/host/rdmaTopologyData":
		if r.Header.Get("Authorization") != "Bearer Oracle" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if m.OCIHost == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(m.OCIHost)
		return
	case strings.HasPrefix(p, "/opc/v2/instance/"):
		if r.Header.Get("Authorization") != "Bearer Oracle" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		v, ok = map[string]string{"id": m.InstanceID, "region": m.Region,
			"displayName": m.Name}[strings.TrimPrefix(p, "/opc/v2/instance/")]
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(v))
}
