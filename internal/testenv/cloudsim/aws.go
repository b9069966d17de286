package cloudsim

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// AWS emulates EC2's DescribeInstanceTopology (query protocol, XML
// answers, API version 2016-11-15).
type AWS struct {
	*base
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
	if len(ids) > 0 {
		items = a.byID(ids)
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
		items, resp.NextToken, num, ok = a.tokenPage("o", f.Get("NextToken"), size)
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
