package cloudsim

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// AWS emulates EC2's DescribeInstanceTopology (query protocol, XML
// answers, API version 2016-11-15). It reads the access key and region
// of each request's SigV4 credential scope: with RequireKeys, another key
// is refused (AuthFailure); with ByRegion, a region sees only its own
// instances (those whose zone is in it).
type AWS struct {
	*base
	mu       sync.Mutex
	keys     []string
	byRegion bool
	signed   []string
}

// RequireKeys refuses every request not signed with one of keys.
func (a *AWS) RequireKeys(keys ...string) { a.mu.Lock(); a.keys = keys; a.mu.Unlock() }

// ByRegion makes each region see only its own instances.
func (a *AWS) ByRegion() { a.mu.Lock(); a.byRegion = true; a.mu.Unlock() }

// Signed returns the "<access key>/<region>" of every request, in order.
func (a *AWS) Signed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.signed)
}

// sigv4Scope matches the credential scope of a SigV4 Authorization
// header: Credential=<key>/<date>/<region>/<service>/aws4_request.
var sigv4Scope = regexp.MustCompile(`Credential=([^/,\s]+)/\d{8}/([^/]+)/[^/]+/aws4_request`)

// signer checks the request's credential scope; it returns the region
// and false when the request is refused (already answered).
func (a *AWS) signer(w http.ResponseWriter, r *http.Request) (string, bool) {
	m := sigv4Scope.FindStringSubmatch(r.Header.Get("Authorization"))
	a.mu.Lock()
	defer a.mu.Unlock()
	if m == nil {
		if len(a.keys) > 0 {
			awsError(w, http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials")
			return "", false
		}
		return "", true
	}
	a.signed = append(a.signed, m[1]+"/"+m[2])
	if len(a.keys) > 0 && !slices.Contains(a.keys, m[1]) {
		awsError(w, http.StatusUnauthorized, "AuthFailure", "AWS was not able to validate the provided access credentials")
		return "", false
	}
	if !a.byRegion {
		return "", true
	}
	return m[2], true
}

// NewAWS returns the EC2 emulator of instances; serve it with
// httptest.NewServer.
func NewAWS(instances []Instance, f Faults) *AWS { return &AWS{base: newBase(instances, f)} }

var awsParam = regexp.MustCompile(`^(Action|Version|MaxResults|NextToken|DryRun|InstanceId\.\d+|GroupName\.\d+|Filter\.\d+\.(Name|Value\.\d+))$`)

type awsItem struct {
	InstanceID       string   `xml:"instanceId"`
	InstanceType     string   `xml:"instanceType,omitempty"`
	NetworkNodes     []string `xml:"networkNodeSet>item"`
	AvailabilityZone string   `xml:"availabilityZone,omitempty"`
	CapacityBlockID  string   `xml:"capacityBlockId,omitempty"`
}

type awsResponse struct {
	XMLName   xml.Name  `xml:"DescribeInstanceTopologyResponse"`
	Xmlns     string    `xml:"xmlns,attr"`
	RequestID string    `xml:"requestId"`
	Instances []awsItem `xml:"instanceSet>item"`
	NextToken string    `xml:"nextToken,omitempty"`
}

func awsError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>sim-req</RequestID></Response>`, code, msg)
}

// ServeHTTP implements http.Handler.
func (a *AWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		awsError(w, http.StatusBadRequest, "InvalidRequest", "want a form POST")
		return
	}
	if a.throttle() {
		awsError(w, http.StatusServiceUnavailable, "RequestLimitExceeded", "Request limit exceeded.")
		return
	}
	region, ok := a.signer(w, r)
	if !ok {
		return
	}
	f := r.PostForm
	if k := unknownParam(f, awsParam.MatchString); k != "" {
		awsError(w, http.StatusBadRequest, "UnknownParameter", "The parameter "+k+" is not recognized")
		return
	}
	if f.Get("Action") != "DescribeInstanceTopology" || f.Get("Version") != "2016-11-15" {
		awsError(w, http.StatusBadRequest, "InvalidAction", "unsupported action or version")
		return
	}
	var ids []string
	for k := range f {
		if strings.HasPrefix(k, "InstanceId.") {
			ids = append(ids, f.Get(k))
		}
	}
	if len(ids) > 100 {
		awsError(w, http.StatusBadRequest, "InvalidParameterValue", "at most 100 instance IDs")
		return
	}
	if len(ids) > 0 && f.Has("MaxResults") {
		awsError(w, http.StatusBadRequest, "InvalidParameterCombination", "MaxResults cannot be combined with InstanceIds")
		return
	}
	resp := awsResponse{Xmlns: "http://ec2.amazonaws.com/doc/2016-11-15/", RequestID: "sim-req"}
	var items []Instance
	b := a.base
	if region != "" {
		b = a.inRegion(region)
	}
	if len(ids) > 0 {
		items = b.byID(ids)
	} else {
		size := 20
		if v := f.Get("MaxResults"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 100 {
				awsError(w, http.StatusBadRequest, "InvalidParameterValue", "MaxResults must be 1-100")
				return
			}
			size = n
		}
		var num int
		var ok bool
		items, resp.NextToken, num, ok = b.tokenPage("o", f.Get("NextToken"), size)
		if !ok {
			awsError(w, http.StatusBadRequest, "InvalidParameterValue", "invalid NextToken")
			return
		}
		if num == a.faults.ServerErrorPage {
			awsError(w, http.StatusInternalServerError, "InternalError", "An internal error has occurred")
			return
		}
	}
	for _, in := range items {
		resp.Instances = append(resp.Instances, awsItem{InstanceID: in.ID, InstanceType: in.Type,
			NetworkNodes: reversed(in.Path), AvailabilityZone: in.Zone, CapacityBlockID: in.Domain})
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	_, _ = w.Write([]byte(xml.Header))
	_ = xml.NewEncoder(w).Encode(resp)
}

// inRegion returns the instances whose availability zone is in region
// (the zone is the region and one letter).
func (a *AWS) inRegion(region string) *base {
	out := &base{faults: a.faults}
	for _, in := range a.instances {
		if len(in.Zone) == len(region)+1 && strings.HasPrefix(in.Zone, region) {
			out.instances = append(out.instances, in)
		}
	}
	return out
}
